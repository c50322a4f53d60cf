//! The self-describing data file (issue 8): a header that names the database, its page size,
//! its capacity, the log it is bound to and a high-water mark, then InnoDB's doublewrite area,
//! then the data pages. `docs/datafile-format.md` draws the bytes.
//!
//! ```text
//! device page   contents
//! 0             header slot 0 (headers with an even sequence number)
//! 1             header slot 1 (odd sequence numbers)
//! 2 .. 130      the doublewrite area: 8 single-page slots, then 120 batch slots (InnoDB 5.7)
//! 130 ..        data page 0, 1, ... (the buffer pool sees only these, through a RegionDevice)
//! ```
//!
//! **Header slots.** Like the log's checkpoint slots: an update writes the slot the current
//! header does not occupy (`seq % 2`) and syncs, so a torn header write leaves the other slot
//! valid and opening falls back to it. Creating writes both slots (seq 1 then 2), so that the
//! header is found even when the file is read with another page size (the first 128 bytes of
//! device page 0 are then still slot 0) and a wrong page size is a clear error rather than a
//! blank-looking device.
//!
//! **High-water mark.** Data pages below it have been written and synced, so each must verify:
//! an all-zero page below it is a lost or zeroed write ([`verify_data_page`]). Raise it only
//! after the pages below the new mark are durable (e.g. at a checkpoint, after the data sync).
//!
//! **Classification without writing.** [`classify`] reads the two header pages (and, when they
//! are blank, the first doublewrite and data pages) and says: blank, ours, damaged, another
//! version, or foreign. [`DataFile::create`] formats only a blank device.
//!
//! Invariants: the in-memory header is the newest one known durable; an update that fails
//! leaves it unchanged (the slot it occupies was not touched). Lock order: `state` is a leaf;
//! header I/O (two pages, rare) is done under it so updates are serialized.

use parking_lot::Mutex;

use crate::device::region::RegionDevice;
use crate::device::{AlignedBuf, Device, SharedDevice};
use crate::error::{Error, FormatProblem, PageId, Result};
use crate::page::{self, Lsn};

/// Magic of a data-file header slot.
pub const DATAFILE_MAGIC: [u8; 4] = *b"FBDF";
/// The format version this build reads and writes.
pub const DATAFILE_VERSION: u32 = 1;
/// Meaningful bytes of a header slot (the rest of the slot page is zero).
pub const HEADER_BYTES: usize = 128;
/// Device pages holding header slots.
pub const HEADER_SLOTS: u64 = 2;
/// First device page of the doublewrite area.
pub const DOUBLEWRITE_START: u64 = HEADER_SLOTS;
/// Single-page doublewrite slots (InnoDB 5.7: for single-page flushes).
pub const DOUBLEWRITE_SINGLE_SLOTS: u64 = 8;
/// Batch doublewrite slots (InnoDB 5.7: for batch flushes).
pub const DOUBLEWRITE_BATCH_SLOTS: u64 = 120;
/// Pages of the doublewrite area.
pub const DOUBLEWRITE_PAGES: u64 = DOUBLEWRITE_SINGLE_SLOTS + DOUBLEWRITE_BATCH_SLOTS;
/// Device page of data page 0.
pub const DATA_START: u64 = DOUBLEWRITE_START + DOUBLEWRITE_PAGES;

const WHAT: &str = "data file";

/// The contents of a header slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataFileHeader {
    /// Page size in bytes (device pages and data pages alike).
    pub page_size: u32,
    /// Random, non-zero: names this database.
    pub database_id: u64,
    /// The `log_id` of the log this data file is bound to (0: none yet).
    pub log_id: u64,
    /// Data pages the file holds (after the doublewrite area).
    pub data_pages: u64,
    /// Data pages below this have been written and must verify.
    pub high_water_mark: u64,
    /// First device page of the doublewrite area.
    pub doublewrite_start: u64,
    /// Pages of the doublewrite area.
    pub doublewrite_pages: u64,
    /// Of those, single-page slots (the rest are batch slots).
    pub doublewrite_single_slots: u32,
    /// Device page of data page 0.
    pub data_start: u64,
    /// Header number; 1 and 2 at creation; stored in slot `seq % 2`.
    pub seq: u64,
}

impl DataFileHeader {
    /// Device pages the file must hold.
    #[must_use]
    pub fn device_pages(&self) -> u64 {
        self.data_start.saturating_add(self.data_pages)
    }

    /// The slot (device page) this header goes to.
    #[must_use]
    pub fn slot(&self) -> u64 {
        self.seq % 2
    }

    /// Encodes into `page` (a whole page; everything after [`HEADER_BYTES`] is zeroed).
    pub fn encode(&self, page: &mut [u8]) {
        assert!(page.len() >= HEADER_BYTES, "a slot fits its page");
        page.fill(0);
        page[0..4].copy_from_slice(&DATAFILE_MAGIC);
        put_u32(page, 8, DATAFILE_VERSION);
        put_u32(page, 12, self.page_size);
        put_u64(page, 16, self.database_id);
        put_u64(page, 24, self.log_id);
        put_u64(page, 32, self.data_pages);
        put_u64(page, 40, self.high_water_mark);
        put_u64(page, 48, self.doublewrite_start);
        put_u64(page, 56, self.doublewrite_pages);
        put_u32(page, 64, self.doublewrite_single_slots);
        put_u64(page, 72, self.data_start);
        put_u64(page, 80, self.seq);
        let crc = crc32c::crc32c(&page[8..HEADER_BYTES]);
        put_u32(page, 4, crc);
    }
}

/// What one header page holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotContent {
    /// All zeros.
    Blank,
    /// A valid header of this format (its page size may differ from the page it was read in).
    Valid(DataFileHeader),
    /// A header that verifies under another format version.
    OtherVersion(u32),
    /// Our magic, but the slot does not verify (torn or damaged).
    Damaged(String),
    /// Not ours.
    Foreign,
}

/// Decodes one header page. Total: never panics, whatever the bytes.
#[must_use]
pub fn decode_slot(page: &[u8]) -> SlotContent {
    if page.iter().all(|&b| b == 0) {
        return SlotContent::Blank;
    }
    let Some(slot) = page.get(..HEADER_BYTES) else {
        return SlotContent::Foreign;
    };
    if slot[0..4] != DATAFILE_MAGIC {
        return SlotContent::Foreign;
    }
    if get_u32(slot, 4) != crc32c::crc32c(&slot[8..]) {
        return SlotContent::Damaged("header checksum mismatch".into());
    }
    let version = get_u32(slot, 8);
    if version != DATAFILE_VERSION {
        return SlotContent::OtherVersion(version);
    }
    let header = DataFileHeader {
        page_size: get_u32(slot, 12),
        database_id: get_u64(slot, 16),
        log_id: get_u64(slot, 24),
        data_pages: get_u64(slot, 32),
        high_water_mark: get_u64(slot, 40),
        doublewrite_start: get_u64(slot, 48),
        doublewrite_pages: get_u64(slot, 56),
        doublewrite_single_slots: get_u32(slot, 64),
        data_start: get_u64(slot, 72),
        seq: get_u64(slot, 80),
    };
    if let Some(reason) = layout_problem(&header, slot) {
        return SlotContent::Damaged(reason);
    }
    // The rest of the slot page is zero when it was read with the page size it was written
    // with; with another page size the caller reports the page size instead.
    if header.page_size as usize == page.len() && page[HEADER_BYTES..].iter().any(|&b| b != 0) {
        return SlotContent::Damaged("bytes after the header are not zero".into());
    }
    SlotContent::Valid(header)
}

/// Why a checksummed header is inconsistent (a bug or a forged header), if it is.
fn layout_problem(header: &DataFileHeader, slot: &[u8]) -> Option<String> {
    let page_size = header.page_size as usize;
    let problem = if !page_size.is_power_of_two() || !(4096..=65_536).contains(&page_size) {
        format!("page size {page_size} is not a power of two in 4096..=65536")
    } else if header.database_id == 0 {
        "database id 0".into()
    } else if header.seq == 0 {
        "sequence number 0".into()
    } else if header.doublewrite_start != DOUBLEWRITE_START
        || header.doublewrite_pages != DOUBLEWRITE_PAGES
        || u64::from(header.doublewrite_single_slots) != DOUBLEWRITE_SINGLE_SLOTS
        || header.data_start != DATA_START
    {
        format!(
            "layout (doublewrite {}+{} with {} single slots, data at {}) is not this format's",
            header.doublewrite_start,
            header.doublewrite_pages,
            header.doublewrite_single_slots,
            header.data_start
        )
    } else if header.data_pages == 0 || header.data_pages > u64::MAX / 2 {
        format!("data page capacity {}", header.data_pages)
    } else if header.high_water_mark > header.data_pages {
        format!(
            "high-water mark {} past the capacity {}",
            header.high_water_mark, header.data_pages
        )
    } else if slot[68..72] != [0u8; 4] || slot[88..HEADER_BYTES].iter().any(|&b| b != 0) {
        "reserved bytes are not zero".into()
    } else {
        return None;
    };
    Some(problem)
}

/// What a device holds, as far as the data-file format can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataFileContent {
    /// Both header pages, the first doublewrite page and data page 0 are all zeros.
    Blank,
    /// A data file of this format: its newest valid header.
    Ours(DataFileHeader),
    /// Our magic, but no header slot verifies (the reason of the newer-looking one).
    Damaged(String),
    /// A header of another format version.
    OtherVersion(u32),
    /// Something else.
    Foreign(String),
}

/// Classifies `device` without writing anything.
///
/// # Errors
/// Device read errors; [`Error::Format`] `Truncated` when the device has fewer than the two
/// header pages.
pub fn classify(device: &dyn Device) -> Result<DataFileContent> {
    let info = device.info();
    if info.pages < HEADER_SLOTS {
        return Err(format_error(
            device,
            FormatProblem::Truncated {
                needed_bytes: HEADER_SLOTS * info.page_size as u64,
                present_bytes: info.pages * info.page_size as u64,
            },
        ));
    }
    let mut buf = AlignedBuf::new(info.page_size);
    let mut slots = Vec::with_capacity(HEADER_SLOTS as usize);
    for slot_page in 0..HEADER_SLOTS {
        device.read_page(slot_page, &mut buf)?;
        slots.push(decode_slot(buf.as_slice()));
    }
    let newest = slots
        .iter()
        .enumerate()
        .filter_map(|(index, slot)| match slot {
            SlotContent::Valid(header) if header.slot() == index as u64 => Some(*header),
            _ => None,
        })
        .max_by_key(|header| header.seq);
    if let Some(header) = newest {
        return Ok(DataFileContent::Ours(header));
    }
    if let Some(version) = slots.iter().find_map(|slot| match slot {
        SlotContent::OtherVersion(version) => Some(*version),
        _ => None,
    }) {
        return Ok(DataFileContent::OtherVersion(version));
    }
    if let Some(reason) = slots.iter().find_map(|slot| match slot {
        SlotContent::Damaged(reason) => Some(reason.clone()),
        SlotContent::Valid(_) => Some("a header sits in the wrong slot".into()),
        _ => None,
    }) {
        return Ok(DataFileContent::Damaged(reason));
    }
    if slots.iter().all(|slot| *slot == SlotContent::Blank) {
        return classify_blank_headers(device, &mut buf);
    }
    Ok(DataFileContent::Foreign(
        "the header pages hold neither zeros nor a flashbuf data-file header".into(),
    ))
}

/// Both header pages are zeros: blank only if the first doublewrite and data pages are too
/// (a file whose header was zeroed over written pages is damaged, not blank).
fn classify_blank_headers(device: &dyn Device, buf: &mut AlignedBuf) -> Result<DataFileContent> {
    for probe in [DOUBLEWRITE_START, DATA_START] {
        if probe >= device.info().pages {
            continue;
        }
        device.read_page(probe, buf)?;
        if buf.as_slice().iter().any(|&b| b != 0) {
            return Ok(DataFileContent::Damaged(format!(
                "both header slots are zero but device page {probe} holds data"
            )));
        }
    }
    Ok(DataFileContent::Blank)
}

/// Verifies a data page read from the data region: [`page::verify`], and an all-zero page
/// below the high-water mark is corruption (a write that was synced is gone).
///
/// # Errors
/// [`Error::CorruptPage`].
pub fn verify_data_page(bytes: &[u8], page_id: PageId, high_water_mark: u64) -> Result<Lsn> {
    if page_id < high_water_mark && bytes.iter().all(|&b| b == 0) {
        return Err(Error::CorruptPage {
            page: page_id,
            reason: format!(
                "the page is all zeros but lies below the high-water mark {high_water_mark} \
                 (it was written and synced: a lost or zeroed write)"
            ),
        });
    }
    page::verify(bytes, page_id)
}

/// A data file on a device: its header and views of its regions.
#[derive(Debug)]
pub struct DataFile {
    device: SharedDevice,
    state: Mutex<HeaderState>,
}

#[derive(Debug)]
struct HeaderState {
    header: DataFileHeader,
    page: AlignedBuf,
}

impl DataFile {
    /// Formats a blank device ([`classify`] says `Blank`): both header slots, bound to log
    /// `log_id` (0: not bound yet), with `data_pages` data pages (`None`: all the device holds
    /// after the doublewrite area). Writes only the two header pages.
    ///
    /// # Errors
    /// [`Error::Format`] when the device is not blank (never formats over anything) or too
    /// small; [`Error::Config`] for a page size the format does not take; device errors.
    pub fn create(device: SharedDevice, log_id: u64, data_pages: Option<u64>) -> Result<DataFile> {
        let info = device.info().clone();
        let page_size = u32::try_from(info.page_size)
            .ok()
            .filter(|size| size.is_power_of_two() && (4096..=65_536).contains(size))
            .ok_or_else(|| {
                Error::Config(format!(
                    "page size {} is not a power of two in 4096..=65536",
                    info.page_size
                ))
            })?;
        let room = info.pages.saturating_sub(DATA_START);
        let data_pages = data_pages.unwrap_or(room);
        if data_pages == 0 || data_pages > room {
            return Err(format_error(
                device.as_ref(),
                FormatProblem::Truncated {
                    needed_bytes: (DATA_START + data_pages.max(1)) * u64::from(page_size),
                    present_bytes: info.pages * u64::from(page_size),
                },
            ));
        }
        match classify(device.as_ref())? {
            DataFileContent::Blank => {}
            other => return Err(refuse_create(device.as_ref(), other)),
        }
        let mut header = DataFileHeader {
            page_size,
            database_id: rand::random::<u64>() | 1,
            log_id,
            data_pages,
            high_water_mark: 0,
            doublewrite_start: DOUBLEWRITE_START,
            doublewrite_pages: DOUBLEWRITE_PAGES,
            doublewrite_single_slots: DOUBLEWRITE_SINGLE_SLOTS as u32,
            data_start: DATA_START,
            seq: 1,
        };
        let mut page = AlignedBuf::new(info.page_size);
        for _slot in 0..HEADER_SLOTS {
            write_header(device.as_ref(), &header, &mut page)?;
            header.seq += 1;
        }
        header.seq -= 1;
        Ok(DataFile {
            device,
            state: Mutex::new(HeaderState { header, page }),
        })
    }

    /// Opens a data file: classifies the device and validates the header against it.
    ///
    /// # Errors
    /// [`Error::Format`]: `Blank`, `Foreign`, `Damaged`, `UnsupportedVersion`, `PageSize` (the
    /// device's page size differs from the header's), `Truncated` (the device is shorter than
    /// the header says, naming both sizes); device errors. Writes nothing.
    pub fn open(device: SharedDevice) -> Result<DataFile> {
        let header = match classify(device.as_ref())? {
            DataFileContent::Ours(header) => header,
            other => return Err(content_error(device.as_ref(), other)),
        };
        let info = device.info();
        if header.page_size as usize != info.page_size {
            return Err(format_error(
                device.as_ref(),
                FormatProblem::PageSize {
                    found: u64::from(header.page_size),
                    expected: info.page_size as u64,
                },
            ));
        }
        if info.pages < header.device_pages() {
            return Err(format_error(
                device.as_ref(),
                FormatProblem::Truncated {
                    needed_bytes: header.device_pages().saturating_mul(info.page_size as u64),
                    present_bytes: info.pages.saturating_mul(info.page_size as u64),
                },
            ));
        }
        let page = AlignedBuf::new(info.page_size);
        Ok(DataFile {
            device,
            state: Mutex::new(HeaderState { header, page }),
        })
    }

    /// The newest header.
    pub fn header(&self) -> DataFileHeader {
        self.state.lock().header
    }

    /// The whole device (header, doublewrite area, data).
    pub fn device(&self) -> &SharedDevice {
        &self.device
    }

    /// The data pages as a device of their own (page 0 = device page [`DATA_START`]).
    ///
    /// # Errors
    /// Cannot fail for an opened file (the region was validated); kept fallible for safety.
    pub fn data_device(&self) -> Result<SharedDevice> {
        let header = self.header();
        Ok(RegionDevice::new(Self::shared(self), header.data_start, header.data_pages)?.shared())
    }

    /// The doublewrite area as a device of its own: pages `0 .. DOUBLEWRITE_SINGLE_SLOTS` are
    /// the single-page slots, the rest the batch slots.
    ///
    /// # Errors
    /// As [`DataFile::data_device`].
    pub fn doublewrite_device(&self) -> Result<SharedDevice> {
        let header = self.header();
        Ok(RegionDevice::new(
            Self::shared(self),
            header.doublewrite_start,
            header.doublewrite_pages,
        )?
        .shared())
    }

    fn shared(&self) -> SharedDevice {
        std::sync::Arc::clone(&self.device)
    }

    /// Checks that this data file is bound to log `log_id`.
    ///
    /// # Errors
    /// [`Error::Format`] `WrongLog` naming both ids.
    pub fn check_log(&self, log_id: u64) -> Result<()> {
        let bound = self.header().log_id;
        if bound == log_id {
            return Ok(());
        }
        Err(format_error(
            self.device.as_ref(),
            FormatProblem::WrongLog {
                expected: bound,
                found: log_id,
            },
        ))
    }

    /// Raises the high-water mark (never lowers it): writes the other header slot and syncs.
    /// Call it only once the data pages below `mark` are durable.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a mark past the capacity; device errors (the header in
    /// memory and on the device then stay as they were).
    pub fn raise_high_water_mark(&self, mark: u64) -> Result<()> {
        self.update(|header| {
            if mark > header.data_pages {
                return Err(Error::InvalidArgument(format!(
                    "high-water mark {mark} past the capacity of {} data pages",
                    header.data_pages
                )));
            }
            header.high_water_mark = header.high_water_mark.max(mark);
            Ok(())
        })
    }

    /// Binds the data file to log `log_id` (after a new log was created for it): writes the
    /// other header slot and syncs.
    ///
    /// # Errors
    /// Device errors (nothing changes then).
    pub fn bind_log(&self, log_id: u64) -> Result<()> {
        self.update(|header| {
            header.log_id = log_id;
            Ok(())
        })
    }

    /// Makes a cleanly closed data file an unbound image in place: no log, `data_pages` data
    /// pages (at least the high-water mark), written to both header slots so that neither
    /// keeps the old log's id. The caller has reset the data pages' LSNs and zeroed the
    /// doublewrite area (`docs/datafile-format.md`, "Unbound images").
    ///
    /// # Errors
    /// [`Error::Config`] for `data_pages` below the high-water mark; device errors.
    pub fn unbind(&self, data_pages: u64) -> Result<()> {
        self.update(|header| {
            if data_pages < header.high_water_mark {
                return Err(Error::Config(format!(
                    "cannot unbind to {data_pages} data pages: {} are in use",
                    header.high_water_mark
                )));
            }
            header.log_id = 0;
            header.data_pages = data_pages;
            Ok(())
        })?;
        let mut state = self.state.lock();
        let mut again = state.header;
        again.seq += 1;
        write_header(self.device.as_ref(), &again, &mut state.page)?;
        state.header = again;
        Ok(())
    }

    /// Applies `change` to a copy of the header, writes it with the next sequence number into
    /// the slot the current header does not occupy, syncs, and only then makes it current.
    fn update(&self, change: impl FnOnce(&mut DataFileHeader) -> Result<()>) -> Result<()> {
        let mut state = self.state.lock();
        let mut next = state.header;
        change(&mut next)?;
        if next == state.header {
            return Ok(());
        }
        next.seq = state.header.seq + 1;
        assert_ne!(
            next.slot(),
            state.header.slot(),
            "the current slot is never overwritten"
        );
        write_header(self.device.as_ref(), &next, &mut state.page)?;
        state.header = next;
        Ok(())
    }
}

/// Writes `header` into its slot and syncs.
fn write_header(device: &dyn Device, header: &DataFileHeader, page: &mut AlignedBuf) -> Result<()> {
    header.encode(page.as_mut_slice());
    device.write_page(header.slot(), page)?;
    device.sync()?;
    Ok(())
}

/// The page sizes the format takes.
pub const PAGE_SIZES: [usize; 5] = [4096, 8192, 16_384, 32_768, 65_536];

/// The newest valid header of the data file at `path`, found without knowing its page size:
/// slot 0 names it, and when slot 0 is damaged slot 1 is looked for at each page size of
/// [`PAGE_SIZES`] (so a file whose first header write tore still opens, as [`DataFile::open`]
/// would open it). Plain positioned reads of at most a few hundred bytes; writes nothing.
///
/// # Errors
/// [`Error::Io`] naming the file when it cannot be read; [`Error::Format`] naming it when it
/// is empty, blank, foreign, damaged or of another version.
pub fn read_header_of_file(path: &std::path::Path) -> Result<DataFileHeader> {
    use std::io::{Seek, SeekFrom};
    use std::os::unix::fs::FileExt;
    let context = |what: &str| format!("{what} {}", path.display());
    let mut file = std::fs::File::open(path).map_err(|err| Error::io(context("opening"), err))?;
    let file_error = |problem: FormatProblem| Error::Format {
        device: format!("file:{}", path.display()),
        problem,
    };
    if path.is_dir() {
        return Err(file_error(FormatProblem::Foreign {
            what: WHAT,
            reason: "it is a directory".into(),
        }));
    }
    // Seeking to the end also sizes block devices, whose metadata length is 0.
    let len = file
        .seek(SeekFrom::End(0))
        .map_err(|err| Error::io(context("sizing"), err))?;
    if len == 0 {
        return Err(file_error(FormatProblem::Foreign {
            what: WHAT,
            reason: "the file is empty (0 bytes)".into(),
        }));
    }
    let read_slot = |offset: u64| -> Result<Option<SlotContent>> {
        if offset >= len {
            return Ok(None);
        }
        let mut slot = vec![0u8; HEADER_BYTES.min(usize::try_from(len - offset).unwrap_or(0))];
        file.read_exact_at(&mut slot, offset)
            .map_err(|err| Error::io(context("reading the header of"), err))?;
        Ok(Some(decode_slot(&slot)))
    };
    let first = read_slot(0)?.unwrap_or(SlotContent::Blank);
    let mut found: Vec<DataFileHeader> = Vec::new();
    if let SlotContent::Valid(header) = first
        && header.slot() == 0
    {
        found.push(header);
    }
    let sizes: Vec<usize> = match found.first() {
        Some(header) => vec![header.page_size as usize],
        None => PAGE_SIZES.to_vec(),
    };
    for size in sizes {
        if let Some(SlotContent::Valid(header)) = read_slot(size as u64)?
            && header.slot() == 1
            && header.page_size as usize == size
        {
            found.push(header);
        }
    }
    if let Some(newest) = found.into_iter().max_by_key(|header| header.seq) {
        return Ok(newest);
    }
    Err(file_error(match first {
        SlotContent::Blank => FormatProblem::Blank,
        SlotContent::Damaged(reason) => FormatProblem::Damaged { what: WHAT, reason },
        SlotContent::OtherVersion(found) => FormatProblem::UnsupportedVersion {
            found,
            supported: DATAFILE_VERSION,
        },
        SlotContent::Valid(_) => FormatProblem::Damaged {
            what: WHAT,
            reason: "a header sits in the wrong slot".into(),
        },
        SlotContent::Foreign => FormatProblem::Foreign {
            what: WHAT,
            reason: "it does not start with a flashbuf data-file header".into(),
        },
    }))
}

fn format_error(device: &dyn Device, problem: FormatProblem) -> Error {
    Error::Format {
        device: device.info().name.clone(),
        problem,
    }
}

/// The error for opening a device whose content is not a valid data file.
fn content_error(device: &dyn Device, content: DataFileContent) -> Error {
    let problem = match content {
        DataFileContent::Blank => FormatProblem::Blank,
        DataFileContent::Damaged(reason) => FormatProblem::Damaged { what: WHAT, reason },
        DataFileContent::OtherVersion(found) => FormatProblem::UnsupportedVersion {
            found,
            supported: DATAFILE_VERSION,
        },
        DataFileContent::Foreign(reason) => FormatProblem::Foreign { what: WHAT, reason },
        DataFileContent::Ours(_) => FormatProblem::Damaged {
            what: WHAT,
            reason: "internal: a valid header was refused".into(),
        },
    };
    format_error(device, problem)
}

/// The error for creating over a device that is not blank.
fn refuse_create(device: &dyn Device, content: DataFileContent) -> Error {
    let problem = match content {
        DataFileContent::Ours(header) => FormatProblem::Foreign {
            what: WHAT,
            reason: format!(
                "refusing to format: the device already holds database {:#x}",
                header.database_id
            ),
        },
        other => return content_error(device, other),
    };
    format_error(device, problem)
}

fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

fn put_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

fn get_u32(bytes: &[u8], at: usize) -> u32 {
    let mut raw = [0u8; 4];
    raw.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(raw)
}

fn get_u64(bytes: &[u8], at: usize) -> u64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> DataFileHeader {
        DataFileHeader {
            page_size: 4096,
            database_id: 0xabc1,
            log_id: 0x77,
            data_pages: 100,
            high_water_mark: 10,
            doublewrite_start: DOUBLEWRITE_START,
            doublewrite_pages: DOUBLEWRITE_PAGES,
            doublewrite_single_slots: DOUBLEWRITE_SINGLE_SLOTS as u32,
            data_start: DATA_START,
            seq: 3,
        }
    }

    #[test]
    fn headers_round_trip_and_damage_is_caught() {
        let mut page = vec![0u8; 4096];
        header().encode(&mut page);
        assert_eq!(decode_slot(&page), SlotContent::Valid(header()));
        let mut flipped = page.clone();
        flipped[41] ^= 2;
        assert!(matches!(decode_slot(&flipped), SlotContent::Damaged(_)));
        let mut tail = page.clone();
        tail[3000] = 1;
        assert!(matches!(decode_slot(&tail), SlotContent::Damaged(_)));
        assert_eq!(decode_slot(&[0u8; 4096]), SlotContent::Blank);
        assert_eq!(decode_slot(b"\x7fELF and more"), SlotContent::Foreign);
        assert_eq!(decode_slot(b"FBDF"), SlotContent::Foreign, "too short");
    }

    #[test]
    fn zero_pages_below_the_mark_are_corrupt() {
        let zero = vec![0u8; 4096];
        assert!(verify_data_page(&zero, 3, 4).is_err());
        assert_eq!(verify_data_page(&zero, 4, 4).ok(), Some(0));
    }
}
