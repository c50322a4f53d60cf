//! A record workload's database image, built once per bench invocation (or once by
//! `flashbuf load` into a file that `flashbuf bench --db PATH` reads) and copied into every
//! scheme's fresh data device so that every scheme starts from the same bytes (issue 11 item 2).
//!
//! **What was loaded** is recorded in the image itself: a tree `bench.image` whose one row
//! holds [`RecordSpec::load_key`] (the workload and the parameters that shape the load: TPC-C
//! warehouses, scale and seed; YCSB records, row shape and seed; LinkBench nodes and seed).
//! [`Image::read_file`] reads it (a few pages, not the file) and refuses an image whose key
//! differs from the flags'.
//!
//! **Building** ([`Image::build`]): a key-value store on in-memory devices (data + log) is
//! created, the workload's tables are bulk-loaded, the trees are checked, and the store is
//! closed cleanly (every page written back and synced, a final checkpoint). The image is then
//! *unbound* (see `docs/datafile-format.md`, "Unbound images"): a new data file is formatted
//! with `log_id` 0 and a capacity of the loaded pages plus headroom, and every data page below
//! the loaded high-water mark is copied into it with its page LSN reset to 0 (the header
//! re-stamped, checksum recomputed). Resetting the LSNs is what makes the image safe to bind
//! to a NEW log: a fresh log starts at a small LSN, and recovery skips a redo record whose LSN
//! is not above the page's LSN, so pages carrying the loading log's (larger) LSNs would make
//! recovery skip committed changes after a crash. Only a clean close makes this valid: no
//! transaction is in flight and every change is in the data pages, so the old log is not
//! needed. The doublewrite area of the image is zero.
//!
//! **Building into a file** ([`Image::build_file`], `flashbuf load`): the same, with the store
//! on a shared mapping of the new file, unbound in place (LSNs reset page by page, the
//! doublewrite area zeroed, both header slots re-stamped). The page cache holds the pages, so
//! an image larger than RAM can be built (`docs/devices.md`, "Images larger than RAM").
//!
//! **Copying** ([`Image::copy_to`]): the image's device pages (header slots, doublewrite
//! area, data pages below the high-water mark) go to the device, which is synced; pages above
//! stay zero (never written). An image in RAM is written with `Device::bulk_load`; an image
//! file with `Device::load_file`, which RAM devices (`mem`, the emulated ones) satisfy by
//! putting the file under their store (read until written): every scheme starts from the same
//! file, and only the pages a run writes cost RAM.
//!
//! Bounds: an image built in RAM holds `DATA_START + loaded_pages` pages in memory, and its
//! build touches at most three copies (loading device, unbound device, bytes) at once; an
//! image file is never held in memory.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::driver::RecordSpec;
use crate::btree::check::PageSource;
use crate::datafile::{DATA_START, DataFile, DataFileHeader, read_header_of_file};
use crate::device::memory::MemoryDevice;
use crate::device::{AlignedBuf, SharedDevice};
use crate::error::{Error, Result};
use crate::page;
use crate::txn::{KvConfig, KvStore};
use crate::workload::record::{LoadProgress, LoadReport};

/// Pool frames of the store that loads the image (bulk loads bypass the pool).
const LOAD_FRAMES: usize = 2048;
/// Smallest headroom of the image's capacity above the loaded pages.
const HEADROOM_PAGES_MIN: u64 = 4096;
/// The room an image keeps for the run's inserts, in percent of its loaded pages, unless
/// `flashbuf load --room` says otherwise.
pub const DEFAULT_ROOM_PCT: u64 = 100;

/// What an image file holds, read from its header and its `bench.image` tree without reading
/// the rest ([`Image::peek_file`]): enough to refuse a wrong image or a bad `--buffer` or
/// `--page-size` before a large file is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFacts {
    /// Page size in bytes.
    pub page_size: usize,
    /// Data pages the file holds.
    pub capacity_pages: u64,
    /// Data pages the loaded database occupies (its high-water mark).
    pub loaded_pages: u64,
    /// The load parameters recorded in the image ([`RecordSpec::load_key`]).
    pub load_key: String,
}

/// A loaded, cleanly closed, unbound database image in memory.
#[derive(Debug)]
pub struct Image {
    /// Page size in bytes.
    pub page_size: usize,
    /// Data pages the image's data file holds (loaded pages plus headroom for the run's
    /// inserts).
    pub capacity_pages: u64,
    /// Data pages the loaded database occupies (its high-water mark).
    pub loaded_pages: u64,
    /// What the load wrote per table.
    pub load: LoadReport,
    /// Real seconds to build the image (load, check, close, unbind) or to read it.
    pub build_s: f64,
    /// The load parameters ([`RecordSpec::load_key`]) recorded in the image.
    pub load_key: String,
    /// Device pages `0 .. DATA_START + loaded_pages` of the image.
    contents: Contents,
}

/// Where an image's pages are.
#[derive(Debug)]
enum Contents {
    /// In RAM (an image built for one bench invocation).
    Memory(Vec<u8>),
    /// In an image file, laid out as the device (`flashbuf load`, `bench --db`): devices read
    /// it until they write a page, or copy it in chunks ([`crate::device::Device::load_file`]), so it is
    /// never read into RAM whole.
    File(std::fs::File),
}

impl Image {
    /// An image's capacity: its loaded pages plus as many again (at least
    /// 4,096 pages) for the run's inserts.
    #[must_use]
    pub fn capacity_for(loaded_pages: u64) -> u64 {
        Self::capacity_with_room(loaded_pages, DEFAULT_ROOM_PCT)
    }

    /// An image's capacity with `room_pct` percent of its loaded pages (at least 4,096 pages)
    /// as room for the run's inserts (`flashbuf load --room`).
    #[must_use]
    pub fn capacity_with_room(loaded_pages: u64, room_pct: u64) -> u64 {
        let room = u128::from(loaded_pages) * u128::from(room_pct) / 100;
        let room = u64::try_from(room).unwrap_or(u64::MAX);
        loaded_pages.saturating_add(room.max(HEADROOM_PAGES_MIN))
    }

    /// Builds the image of `spec` with pages of `page_size` bytes and the default room
    /// ([`DEFAULT_ROOM_PCT`]); `progress` sees the load.
    ///
    /// # Errors
    /// Configuration errors, a load that does not fit the estimated capacity, a tree check
    /// that fails on the fresh image.
    pub fn build(
        spec: &RecordSpec,
        page_size: usize,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<Image> {
        Self::build_with_room(spec, page_size, DEFAULT_ROOM_PCT, progress)
    }

    /// [`Image::build`] keeping `room_pct` percent of the loaded pages (at least 4,096 pages)
    /// as room for the run's inserts (`flashbuf bench --room`).
    ///
    /// # Errors
    /// As [`Image::build`].
    pub fn build_with_room(
        spec: &RecordSpec,
        page_size: usize,
        room_pct: u64,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<Image> {
        let began = Instant::now();
        let load_capacity = estimate_pages(spec, page_size);
        let data: SharedDevice =
            Arc::new(MemoryDevice::new(page_size, DATA_START + load_capacity)?);
        let (load, loaded, loaded_pages) = load_into(spec, &data, progress)?;
        let capacity_pages = Image::capacity_with_room(loaded_pages, room_pct);
        let bytes = unbind(
            &loaded.data_device()?,
            page_size,
            loaded_pages,
            capacity_pages,
        )?;
        Ok(Image {
            page_size,
            capacity_pages,
            loaded_pages,
            load,
            build_s: began.elapsed().as_secs_f64(),
            load_key: spec.load_key(),
            contents: Contents::Memory(bytes),
        })
    }

    /// Builds the image of `spec` straight into a new file `path` (refuses an existing one),
    /// for images larger than RAM: the store loads into a shared mapping of the file, so the
    /// page cache, not the process, holds the pages, and the image is unbound in place (its
    /// data pages' LSNs reset, the doublewrite area zeroed, the header re-stamped with no log
    /// and the image's capacity). The file ends up exactly as [`Image::write_file`] writes it.
    /// On an error the partial file is removed.
    ///
    /// # Errors
    /// As [`Image::build`]; [`Error::Io`] naming the file.
    pub fn build_file(
        spec: &RecordSpec,
        page_size: usize,
        room_pct: u64,
        path: &Path,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<Image> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|err| {
                Error::io(
                    format!("creating image {} (it must not exist)", path.display()),
                    err,
                )
            })?;
        let built = Self::build_into(spec, page_size, room_pct, path, file, progress);
        if built.is_err() {
            let _ = std::fs::remove_file(path);
        }
        built
    }

    fn build_into(
        spec: &RecordSpec,
        page_size: usize,
        room_pct: u64,
        path: &Path,
        file: std::fs::File,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<Image> {
        let began = Instant::now();
        let context = |what: &str| format!("{what} image {}", path.display());
        let load_capacity = estimate_pages(spec, page_size);
        let bytes_for = |pages: u64| (DATA_START + pages) * page_size as u64;
        file.set_len(bytes_for(load_capacity))
            .map_err(|err| Error::io(context("sizing"), err))?;
        let data: SharedDevice = Arc::new(MemoryDevice::on_file(
            page_size,
            DATA_START + load_capacity,
            &file,
        )?);
        let (load, loaded, loaded_pages) = load_into(spec, &data, progress)?;
        let capacity_pages = Image::capacity_with_room(loaded_pages, room_pct);
        unbind_in_place(&loaded, loaded_pages, capacity_pages)?;
        drop(loaded);
        drop(data);
        file.set_len(bytes_for(capacity_pages))
            .and_then(|()| file.sync_all())
            .map_err(|err| Error::io(context("writing"), err))?;
        Ok(Image {
            page_size,
            capacity_pages,
            loaded_pages,
            load,
            build_s: began.elapsed().as_secs_f64(),
            load_key: spec.load_key(),
            contents: Contents::File(file),
        })
    }

    /// Writes the image to a new file `path` (refuses an existing one): the data-file layout
    /// with the loaded pages, extended (sparsely) to its capacity, synced.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file (it exists, or cannot be written).
    pub fn write_file(&self, path: &Path) -> Result<()> {
        use std::io::Write as _;
        let context = |what: &str| format!("{what} image {}", path.display());
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|err| Error::io(context("creating (it must not exist)"), err))?;
        let Contents::Memory(bytes) = &self.contents else {
            return Err(Error::Config(format!(
                "image {}: this image is already a file",
                path.display()
            )));
        };
        file.write_all(bytes)
            .and_then(|()| file.set_len((DATA_START + self.capacity_pages) * self.page_size as u64))
            .and_then(|()| file.sync_all())
            .map_err(|err| Error::io(context("writing"), err))
    }

    /// Reads an image file written by [`Image::write_file`] (`flashbuf load`) and checks that
    /// it was loaded with the parameters of `spec` (its [`RecordSpec::load_key`], recorded in
    /// the image's `bench.image` tree).
    ///
    /// # Errors
    /// [`Error::Io`] for an unreadable file; [`Error::Format`] / [`Error::CorruptPage`] for a
    /// file that is not a data file; [`Error::Config`] for a data file bound to a log (not an
    /// image), one without the record of its load, or one loaded with other parameters.
    pub fn read_file(path: &Path, spec: &RecordSpec) -> Result<Image> {
        let began = Instant::now();
        let (header, facts) = peek(path)?;
        let wanted = spec.load_key();
        if facts.load_key != wanted {
            return Err(Error::Config(format!(
                "image {}: it was loaded with `{}`, the flags ask for `{wanted}`",
                path.display(),
                facts.load_key
            )));
        }
        let page_size = header.page_size as usize;
        let total = (DATA_START + header.data_pages) as usize * page_size;
        let length = std::fs::metadata(path)
            .map_err(|err| Error::io(format!("reading image {}", path.display()), err))?
            .len();
        if length < total as u64 {
            return Err(Error::Config(format!(
                "image {}: {length} bytes, the header says {total} (truncated)",
                path.display(),
            )));
        }
        // Only the pages below the high-water mark hold data; the file is not read here:
        // each scheme's device maps or reads it (`copy_to`).
        let file = std::fs::File::open(path)
            .map_err(|err| Error::io(format!("opening image {}", path.display()), err))?;
        Ok(Image {
            page_size,
            capacity_pages: header.data_pages,
            loaded_pages: header.high_water_mark.min(header.data_pages),
            load: LoadReport::default(),
            build_s: began.elapsed().as_secs_f64(),
            load_key: facts.load_key,
            contents: Contents::File(file),
        })
    }

    /// What the image file at `path` holds, from its header and its `bench.image` tree (a few
    /// pages; the file is not read whole).
    ///
    /// # Errors
    /// As [`Image::read_file`], except a load that differs from the flags.
    pub fn peek_file(path: &Path) -> Result<ImageFacts> {
        peek(path).map(|(_, facts)| facts)
    }

    /// A generous upper bound on the data pages `spec`'s image has with pages of `page_size`
    /// bytes (a buffer that is too small even for it is refused before loading).
    #[must_use]
    pub fn pages_at_most(spec: &RecordSpec, page_size: usize) -> u64 {
        estimate_bytes(spec) / page_size as u64
    }

    /// Whether the image is a file (`bench --db`), which RAM devices map instead of copying.
    #[must_use]
    pub fn is_file(&self) -> bool {
        matches!(self.contents, Contents::File(_))
    }

    /// Bytes of the loaded database (its high-water mark times the page size).
    #[must_use]
    pub fn loaded_bytes(&self) -> u64 {
        self.loaded_pages * self.page_size as u64
    }

    /// Writes the image into a fresh device of at least `DATA_START + capacity_pages` pages of
    /// the image's page size, and syncs it.
    ///
    /// # Errors
    /// [`Error::Config`] for a device of another page size or too small; device errors.
    pub fn copy_to(&self, device: &SharedDevice) -> Result<()> {
        let info = device.info();
        if info.page_size != self.page_size || info.pages < DATA_START + self.capacity_pages {
            return Err(Error::Config(format!(
                "device {} ({} pages of {} bytes) cannot hold the image ({} pages of {} bytes)",
                info.name,
                info.pages,
                info.page_size,
                DATA_START + self.capacity_pages,
                self.page_size
            )));
        }
        match &self.contents {
            Contents::Memory(bytes) => device.bulk_load(0, bytes)?,
            Contents::File(file) => device.load_file(0, file, DATA_START + self.loaded_pages)?,
        }
        device.sync()?;
        Ok(())
    }
}

/// The header and facts of an image file (see [`Image::peek_file`]).
fn peek(path: &Path) -> Result<(DataFileHeader, ImageFacts)> {
    let header = read_header_of_file(path).map_err(|err| match err {
        Error::Format { problem, .. } => Error::Config(format!(
            "{} is not a flashbuf image (made by `flashbuf load`): {problem}",
            path.display()
        )),
        other => other,
    })?;
    if header.log_id != 0 {
        return Err(Error::Config(format!(
            "image {}: the data file is bound to log {:#x}: it is a database, not an unbound \
             image made by `flashbuf load`",
            path.display(),
            header.log_id
        )));
    }
    let source = FilePages::open(path, &header)?;
    let value = crate::btree::check::lookup(&source, IMAGE_TREE, IMAGE_KEY)?.ok_or_else(|| {
        Error::Config(format!(
            "image {}: no record of its load (tree {IMAGE_TREE}): not made by `flashbuf load`",
            path.display()
        ))
    })?;
    let load_key = String::from_utf8(value).map_err(|_| {
        Error::Config(format!(
            "image {}: the record in tree {IMAGE_TREE} is not text",
            path.display()
        ))
    })?;
    let facts = ImageFacts {
        page_size: header.page_size as usize,
        capacity_pages: header.data_pages,
        loaded_pages: header.high_water_mark,
        load_key,
    };
    Ok((header, facts))
}

/// The data pages of a closed data file, read with positioned reads (checksums verified).
struct FilePages {
    file: std::fs::File,
    page_size: usize,
    /// Data pages below the high-water mark (the rest was never written).
    pages: u64,
}

impl FilePages {
    fn open(path: &Path, header: &DataFileHeader) -> Result<FilePages> {
        let file = std::fs::File::open(path)
            .map_err(|err| Error::io(format!("opening image {}", path.display()), err))?;
        Ok(FilePages {
            file,
            page_size: header.page_size as usize,
            pages: header.high_water_mark,
        })
    }
}

impl PageSource for FilePages {
    fn page_size(&self) -> usize {
        self.page_size
    }
    fn pages(&self) -> u64 {
        self.pages
    }
    fn read(&self, page: crate::error::PageId, out: &mut [u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        if page >= self.pages {
            return Err(Error::CorruptPage {
                page,
                reason: format!("past the image's high-water mark {}", self.pages),
            });
        }
        let offset = (DATA_START + page) * self.page_size as u64;
        self.file
            .read_exact_at(out, offset)
            .map_err(|err| Error::io(format!("reading data page {page} of the image"), err))?;
        page::verify(out, page).map(|_| ())
    }
}

/// The tree holding what an image was loaded with.
pub const IMAGE_TREE: &str = "bench.image";
/// Its one key.
const IMAGE_KEY: &[u8] = b"load";

fn record_spec_in(kv: &KvStore, key: &str) -> Result<()> {
    use crate::kv::KvEngine as _;
    let tree = kv.open_tree(IMAGE_TREE)?;
    let mut txn = kv.begin()?;
    txn.put(tree, IMAGE_KEY, key.as_bytes())?;
    txn.commit()
}

/// Loads `spec`'s tables into a fresh store on `data`, records the load, checks the trees and
/// closes the store cleanly; returns what was loaded, the closed data file and its loaded pages.
fn load_into(
    spec: &RecordSpec,
    data: &SharedDevice,
    progress: &mut dyn FnMut(LoadProgress),
) -> Result<(LoadReport, DataFile, u64)> {
    let workload = spec.build()?;
    let mut config = KvConfig::new(LOAD_FRAMES);
    config.database.flush_log_at_trx_commit = 0;
    let log: SharedDevice = Arc::new(MemoryDevice::new(
        config.database.wal.page_size,
        config.database.wal.log_size / config.database.wal.page_size as u64,
    )?);
    let (kv, _) = KvStore::open(Arc::clone(data), log, &config)?;
    let load = workload.load(&kv, progress)?;
    record_spec_in(&kv, &spec.load_key())?;
    let trees = kv.check()?;
    if !trees.is_ok() {
        return Err(Error::Config(format!(
            "the freshly loaded {} image fails the tree check: {}",
            spec.name(),
            trees.problems.join("; ")
        )));
    }
    kv.close()?;
    let loaded = DataFile::open(Arc::clone(data))?;
    let loaded_pages = loaded.header().high_water_mark.max(trees.high_water);
    Ok((load, loaded, loaded_pages))
}

/// Unbinds a cleanly closed data file in place: resets the LSN of every data page below
/// `loaded_pages` (see the module docs for why), zeroes the doublewrite area, raises the
/// high-water mark to `loaded_pages` and re-stamps both header slots with no log and
/// `capacity_pages` data pages.
fn unbind_in_place(datafile: &DataFile, loaded_pages: u64, capacity_pages: u64) -> Result<()> {
    let data = datafile.data_device()?;
    let page_size = data.info().page_size;
    copy_with_lsns_reset(&data, &data, loaded_pages)?;
    let mut buf = AlignedBuf::new(page_size);
    let doublewrite = datafile.doublewrite_device()?;
    let zeros = AlignedBuf::new(page_size);
    // Bound: the doublewrite area's pages.
    for slot in 0..doublewrite.info().pages {
        doublewrite.read_page(slot, &mut buf)?;
        if buf.as_slice().iter().any(|&b| b != 0) {
            doublewrite.write_page(slot, &zeros)?;
        }
    }
    datafile.device().sync()?;
    datafile.raise_high_water_mark(loaded_pages)?;
    datafile.unbind(capacity_pages)
}

/// Writes the data pages below `loaded_pages` of `source` to the same pages of `target` (the
/// same device for an unbinding in place) with their LSN reset to 0, checksums verified and
/// recomputed; all-zero pages are skipped.
fn copy_with_lsns_reset(
    source: &SharedDevice,
    target: &SharedDevice,
    loaded_pages: u64,
) -> Result<()> {
    let mut buf = AlignedBuf::new(source.info().page_size);
    // Bound: `loaded_pages` iterations.
    for page_id in 0..loaded_pages {
        source.read_page(page_id, &mut buf)?;
        if buf.as_slice().iter().all(|&b| b == 0) {
            continue;
        }
        page::verify(buf.as_slice(), page_id)?;
        page::stamp(buf.as_mut_slice(), page_id, 0);
        target.write_page(page_id, &buf)?;
    }
    Ok(())
}

/// Formats a new unbound data file of `capacity_pages`, copies the data pages below
/// `loaded_pages` from `source` with their LSN reset to 0, raises the high-water mark, and
/// returns device pages `0 .. DATA_START + loaded_pages`.
fn unbind(
    source: &SharedDevice,
    page_size: usize,
    loaded_pages: u64,
    capacity_pages: u64,
) -> Result<Vec<u8>> {
    let device: SharedDevice = Arc::new(MemoryDevice::new(page_size, DATA_START + capacity_pages)?);
    let datafile = DataFile::create(Arc::clone(&device), 0, Some(capacity_pages))?;
    copy_with_lsns_reset(source, &datafile.data_device()?, loaded_pages)?;
    device.sync()?;
    datafile.raise_high_water_mark(loaded_pages)?;
    drop(datafile);
    let total = DATA_START + loaded_pages;
    let mut bytes = Vec::with_capacity(total as usize * page_size);
    let mut buf = AlignedBuf::new(page_size);
    // Bound: `total` iterations.
    for device_page in 0..total {
        device.read_page(device_page, &mut buf)?;
        bytes.extend_from_slice(buf.as_slice());
    }
    Ok(bytes)
}

/// A generous upper bound on the pages a load needs (the in-memory device is zero-filled
/// lazily, so unused capacity costs address space, not memory).
fn estimate_pages(spec: &RecordSpec, page_size: usize) -> u64 {
    (estimate_bytes(spec) / page_size as u64).max(HEADROOM_PAGES_MIN * 4)
}

/// A generous upper bound on the bytes of a load's pages (see [`estimate_pages`]).
fn estimate_bytes(spec: &RecordSpec) -> u64 {
    match spec {
        // About 100 MB of rows per warehouse at specification scale; trees and the indexes
        // at most triple it. The reduced scale shrinks ITEM, STOCK and the per-district rows.
        RecordSpec::Tpcc(c) => {
            let share = f64::from(c.scale.customers_per_district) / 3000.0;
            let stock = f64::from(c.scale.items) / 100_000.0;
            let per_warehouse = 300e6 * share.max(stock);
            (per_warehouse * f64::from(c.warehouses)) as u64 + 60_000_000
        }
        RecordSpec::Ycsb(c) => c.record_count * (c.row_bytes() as u64 + 64) * 3,
        RecordSpec::LinkBench(c) => c.nodes * 4096,
    }
}
