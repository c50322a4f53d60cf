//! Recovery: pick the newest valid checkpoint slot, then scan records forward from its redo LSN
//! until the first record that does not verify (issue 5; format in `docs/wal-format.md`).
//!
//! The record scan stops at: a zero or out-of-range length, an unknown type, a CRC mismatch, a
//! record stamped with another LSN, a record that does not chain on the CRC of the record
//! before it (from the second record on), a log page whose header is not the expected stream
//! page of this log (stale page from an earlier lap, or never written), or the capacity bound
//! `redo_lsn + capacity`. Where it stops (`X`) is either the torn or unwritten tail of the log
//! (the normal end) or corruption in log that was durable. To tell them apart, `find_proof`
//! reads the flush stamps of the ring pages from the one holding `X` to the end of the ring
//! window: a current page stamped with `flush_start > X` was written by a flush that began
//! when the log was already durable past `X`, so the bytes at `X` had been synced and the stop
//! is corruption ([`Error::CorruptLog`] naming `X`, the stop reason and the page that proves
//! it). The same holds when `X` is before the checkpoint's `durable_lsn`.
//!
//! **The window that cannot be told apart.** Let `S` be the flush start of the newest flush
//! any of whose pages reached the device with an intact stamp (or the newest checkpoint's
//! `durable_lsn`, if larger). Damage at `X >= S` looks exactly like a torn write of that last
//! flush and is taken as the end of the log. That is: the bytes written by the last flush
//! before a crash (acknowledged once its sync returned) are protected only by the next flush or
//! checkpoint. The database adds a cross-check for that window (a data page whose LSN is past
//! the end of the log proves lost log).
//!
//! Bounds: the scan reads at most `capacity` bytes of log, each record at most
//! `MAX_RECORD_BYTES`; the proof search reads at most the ring's pages once, in batches of
//! [`PROOF_BATCH_PAGES`]. Nothing here panics on any device content.

use crate::device::{AlignedBuf, Device, IoRequest, ticket::wait_all};
use crate::error::{Error, FormatProblem, Result};
use crate::page::Lsn;

use super::layout::{
    CheckpointSlot, FORMAT_VERSION, Geometry, HEADER_PAGES, LOG_PAGE_HEADER, WalConfig,
    flush_stamp, log_page_is_current,
};
use super::record::{self, DecodeError, FRAME_SIZE, LogRecord};

/// Ring pages the proof search reads per device batch.
pub const PROOF_BATCH_PAGES: u64 = 32;

/// One record found by recovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredRecord {
    /// LSN of the record's first byte.
    pub start: Lsn,
    /// LSN just past the record (the LSN `append` returned for it; start of the next record).
    pub end: Lsn,
    /// The record.
    pub record: LogRecord,
}

/// Why the scan ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The next record's bytes do not decode (zero length for an unwritten tail, bad CRC, ...).
    Record(DecodeError),
    /// The log page at `lsn` is not the expected page of this log (stale lap or never written).
    StalePage {
        /// First LSN of the page.
        lsn: Lsn,
    },
    /// The scan reached `redo_lsn + capacity`.
    CapacityReached,
}

/// What recovery found.
#[derive(Debug, Clone)]
pub struct Recovery {
    /// The checkpoint recovery started from.
    pub checkpoint: CheckpointSlot,
    /// Every valid record from the checkpoint's redo LSN to the end of the log, in order.
    pub records: Vec<RecoveredRecord>,
    /// End of the valid log; appending resumes here.
    pub end_lsn: Lsn,
    /// Why the scan stopped at `end_lsn`.
    pub stop: StopReason,
    /// The log is proven to have been durable up to here (the checkpoint's `durable_lsn` or the
    /// largest flush stamp found, whichever is larger; never past `end_lsn`). Log between this
    /// and `end_lsn` was written by the last flush before the crash: damage there cannot be
    /// told from a torn write (see the module docs).
    pub proven_durable_lsn: Lsn,
}

/// Reads both checkpoint slots and returns the newest valid one for this configuration.
/// `Ok(None)` when both slots are all zeros (an unformatted log). Writes nothing.
///
/// # Errors
/// Device errors; [`Error::Format`] when a slot has another format version or page size, or
/// the device is shorter than the log the slot describes (truncated); [`Error::CorruptLog`]
/// when no slot is valid but the header is not blank; [`Error::Config`] when the log was
/// formatted with another log size.
pub fn read_checkpoint(device: &dyn Device, config: &WalConfig) -> Result<Option<CheckpointSlot>> {
    let info = device.info();
    if info.pages < HEADER_PAGES {
        return Err(format_error(
            device,
            FormatProblem::Truncated {
                needed_bytes: HEADER_PAGES * config.page_size as u64,
                present_bytes: info.pages * info.page_size as u64,
            },
        ));
    }
    let mut buf = AlignedBuf::new(info.page_size);
    let mut best: Option<CheckpointSlot> = None;
    let mut blank = true;
    let mut other_version = None;
    for slot_page in 0..HEADER_PAGES {
        device.read_page(slot_page, &mut buf)?;
        blank &= buf.as_slice().iter().all(|&b| b == 0);
        let Some(slot) = CheckpointSlot::decode(buf.as_slice()) else {
            other_version = other_version.or(CheckpointSlot::foreign_version(buf.as_slice()));
            continue;
        };
        if slot.slot() != slot_page {
            continue; // a slot in the wrong page is not one we wrote
        }
        if best.is_none_or(|b| slot.seq > b.seq) {
            best = Some(slot);
        }
    }
    let Some(slot) = best else {
        if let Some(found) = other_version {
            return Err(format_error(
                device,
                FormatProblem::UnsupportedVersion {
                    found,
                    supported: FORMAT_VERSION,
                },
            ));
        }
        return if blank {
            Ok(None)
        } else {
            Err(Error::CorruptLog {
                offset: 0,
                reason: "neither checkpoint slot is valid".into(),
            })
        };
    };
    check_slot_fits(device, config, &slot)?;
    Ok(Some(slot))
}

/// Checks a valid slot against the device and the configuration.
fn check_slot_fits(device: &dyn Device, config: &WalConfig, slot: &CheckpointSlot) -> Result<()> {
    let info = device.info();
    if u64::from(slot.page_size) != info.page_size as u64 {
        return Err(format_error(
            device,
            FormatProblem::PageSize {
                found: u64::from(slot.page_size),
                expected: info.page_size as u64,
            },
        ));
    }
    let present_bytes = info.pages.saturating_mul(info.page_size as u64);
    if slot.log_size > present_bytes {
        return Err(format_error(
            device,
            FormatProblem::Truncated {
                needed_bytes: slot.log_size,
                present_bytes,
            },
        ));
    }
    if slot.page_size as usize != config.page_size || slot.log_size != config.log_size {
        return Err(Error::Config(format!(
            "the log was formatted with page size {} and log size {}, not {} and {}",
            slot.page_size, slot.log_size, config.page_size, config.log_size
        )));
    }
    let geometry = config.geometry();
    if !geometry.is_boundary(slot.redo_lsn)
        || slot.durable_lsn - slot.redo_lsn > geometry.capacity()
    {
        return Err(Error::CorruptLog {
            offset: slot.slot() * config.page_size as u64,
            reason: format!(
                "checkpoint {} has redo LSN {} and durable LSN {} that do not fit the log",
                slot.seq, slot.redo_lsn, slot.durable_lsn
            ),
        });
    }
    Ok(())
}

fn format_error(device: &dyn Device, problem: FormatProblem) -> Error {
    Error::Format {
        device: device.info().name.clone(),
        problem,
    }
}

/// What a log device holds, found without writing anything ([`inspect`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogDeviceContent {
    /// The checkpoint slots and the first ring page are all zeros: no log was ever flushed
    /// here, so formatting loses nothing.
    Blank,
    /// Both checkpoint slots are blank but the first ring page holds a log page: a log lived
    /// here and lost its header. Never format over it silently.
    HeaderLost,
    /// A log of this format; its newest valid checkpoint.
    Formatted(CheckpointSlot),
}

/// Classifies a log device without writing: blank, a log whose header was lost, or a log
/// (its newest checkpoint).
///
/// # Errors
/// As [`read_checkpoint`] (damaged slots, other version, truncated device, device errors).
pub fn inspect(device: &dyn Device, config: &WalConfig) -> Result<LogDeviceContent> {
    if let Some(slot) = read_checkpoint(device, config)? {
        return Ok(LogDeviceContent::Formatted(slot));
    }
    // Every log that flushed anything wrote stream page 0 (later laps: k * ring_pages) to the
    // first ring page, and nothing ever zeros it.
    let first_ring_page = HEADER_PAGES;
    if device.info().pages <= first_ring_page {
        return Ok(LogDeviceContent::Blank);
    }
    let mut buf = AlignedBuf::new(device.info().page_size);
    device.read_page(first_ring_page, &mut buf)?;
    if buf.as_slice().iter().all(|&b| b == 0) {
        Ok(LogDeviceContent::Blank)
    } else {
        Ok(LogDeviceContent::HeaderLost)
    }
}

/// Reads log bytes page by page, checking each page's header once.
struct PageCursor<'a> {
    device: &'a dyn Device,
    geometry: Geometry,
    log_id: u64,
    buf: AlignedBuf,
    /// The stream page in `buf`, if it verified.
    loaded: Option<u64>,
}

impl PageCursor<'_> {
    /// Makes stream page `page` current; `Ok(false)` when its header is not the expected one.
    fn load(&mut self, page: u64) -> Result<bool> {
        if self.loaded == Some(page) {
            return Ok(true);
        }
        self.loaded = None;
        self.device
            .read_page(self.geometry.device_page(page), &mut self.buf)?;
        let current = log_page_is_current(
            self.buf.as_slice(),
            page,
            self.geometry.page_size,
            self.log_id,
        );
        if current {
            self.loaded = Some(page);
        }
        Ok(current)
    }

    /// Appends `n` log bytes starting at boundary `lsn` to `out`, skipping page headers.
    /// Returns the LSN after them, or the stop reason.
    fn read(&mut self, lsn: Lsn, n: usize, out: &mut Vec<u8>) -> Result<Result<Lsn, StopReason>> {
        let page_size = self.geometry.page_size;
        let mut lsn = lsn;
        let mut left = n;
        // Bounded: n <= MAX_RECORD_BYTES, and each pass consumes the rest of one page.
        while left > 0 {
            let page = self.geometry.page_of(lsn);
            if !self.load(page)? {
                return Ok(Err(StopReason::StalePage {
                    lsn: page * page_size,
                }));
            }
            let offset = self.geometry.offset_in_page(lsn);
            let take = (page_size as usize - offset).min(left);
            out.extend_from_slice(&self.buf.as_slice()[offset..offset + take]);
            left -= take;
            lsn = self.geometry.normalize(lsn + take as u64);
        }
        Ok(Ok(lsn))
    }
}

/// The result of scanning the log from a checkpoint.
#[derive(Debug)]
pub(crate) struct Scan {
    pub(crate) records: Vec<RecoveredRecord>,
    pub(crate) end_lsn: Lsn,
    pub(crate) stop: StopReason,
    /// The bytes of the page holding `end_lsn` before `end_lsn` (empty when `end_lsn` is right
    /// after a page header: the writer starts that page afresh).
    pub(crate) tail_page: Vec<u8>,
    /// CRC of the last record found (0 when none): the next record chains on it.
    pub(crate) last_crc: u32,
}

/// Scans records from `checkpoint.redo_lsn` to the end of the valid log.
///
/// # Errors
/// Device read errors.
pub(crate) fn scan(
    device: &dyn Device,
    geometry: Geometry,
    checkpoint: &CheckpointSlot,
) -> Result<Scan> {
    let mut cursor = PageCursor {
        device,
        geometry,
        log_id: checkpoint.log_id,
        buf: AlignedBuf::new(geometry.page_size as usize),
        loaded: None,
    };
    let limit = checkpoint.redo_lsn.saturating_add(geometry.capacity());
    let mut records = Vec::new();
    let mut lsn = checkpoint.redo_lsn;
    let mut bytes = Vec::with_capacity(FRAME_SIZE);
    // The first record is not chain-checked: its predecessor lies before the redo LSN. It is
    // current log all the same: at the time the slot was written the log was durable past
    // `redo_lsn`, and the page holding the durable end was on disk with zeros after it.
    let mut prev_crc: Option<u32> = None;
    // Bounded: every record advances `lsn` by at least FRAME_SIZE and `lsn` stays below `limit`.
    let stop = loop {
        bytes.clear();
        let after_frame = match cursor.read(lsn, FRAME_SIZE, &mut bytes)? {
            Ok(next) => next,
            Err(stop) => break stop,
        };
        let header = match record::check_frame(&bytes, lsn) {
            Ok(header) => header,
            Err(err) => break StopReason::Record(err),
        };
        let end = geometry.advance(lsn, header.total_len);
        if end > limit {
            break StopReason::CapacityReached;
        }
        if let Err(stop) = cursor.read(after_frame, header.total_len - FRAME_SIZE, &mut bytes)? {
            break stop;
        }
        match record::decode(&bytes, lsn, prev_crc) {
            Ok(record) => {
                records.push(RecoveredRecord {
                    start: lsn,
                    end,
                    record,
                });
                prev_crc = Some(header.crc);
                lsn = end;
            }
            Err(err) => break StopReason::Record(err),
        }
    };
    let tail_page = tail_page(&mut cursor, lsn)?;
    Ok(Scan {
        records,
        end_lsn: lsn,
        stop,
        tail_page,
        last_crc: prev_crc.unwrap_or(0),
    })
}

fn tail_page(cursor: &mut PageCursor<'_>, end: Lsn) -> Result<Vec<u8>> {
    let offset = cursor.geometry.offset_in_page(end);
    if offset <= LOG_PAGE_HEADER {
        return Ok(Vec::new());
    }
    // A record ended inside this page, so its header verified during the scan; reading it
    // again differently means the device does not return what it holds.
    if !cursor.load(cursor.geometry.page_of(end))? {
        return Err(Error::CorruptLog {
            offset: end,
            reason: format!(
                "the log page holding the end of the log (LSN {end}) read back differently \
                 during recovery (device {})",
                cursor.device.info().name
            ),
        });
    }
    Ok(cursor.buf.as_slice()[..offset].to_vec())
}

/// What the flush stamps of the ring say about the end of the record scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StampSurvey {
    /// The largest valid flush stamp of a current page at or below `end` (0: none).
    pub(crate) highest_at_or_below_end: Lsn,
    /// The first current page stamped past `end`: (its stream page, its stamp).
    pub(crate) proof: Option<(u64, Lsn)>,
}

/// Reads the ring pages from the one holding `end` to the last one the checkpoint's window can
/// hold (`page_of(redo_lsn) + ring_pages - 1`) and looks for a current page (this log, the
/// right stream position) whose flush stamp is past `end`. Stops at the first such proof.
/// Reads at most `ring_pages` pages, [`PROOF_BATCH_PAGES`] per batch.
///
/// # Errors
/// Device read errors.
pub(crate) fn find_proof(
    device: &dyn Device,
    geometry: Geometry,
    checkpoint: &CheckpointSlot,
    end: Lsn,
) -> Result<StampSurvey> {
    let page_size = geometry.page_size as usize;
    let first = geometry.page_of(end);
    let last = geometry.page_of(checkpoint.redo_lsn) + geometry.ring_pages - 1;
    assert!(
        first <= last,
        "the end of the scan lies inside the ring window"
    );
    let mut survey = StampSurvey {
        highest_at_or_below_end: 0,
        proof: None,
    };
    let buf = AlignedBuf::new(PROOF_BATCH_PAGES as usize * page_size);
    let mut batch_first = first;
    // Bounded: `batch_first` grows by up to PROOF_BATCH_PAGES each turn up to `last`.
    while batch_first <= last {
        let count = (last - batch_first + 1).min(PROOF_BATCH_PAGES);
        let requests = (0..count)
            .map(|index| {
                let device_page = geometry.device_page(batch_first + index);
                IoRequest::read(device_page, buf.chunk_io_buffer(index as usize, page_size))
            })
            .collect();
        // SAFETY: `buf` outlives the batch, nothing else touches it, and every ticket is
        // waited for before the buffer is read.
        let tickets = unsafe { device.submit(requests) };
        wait_all(tickets)?;
        for index in 0..count {
            let stream_page = batch_first + index;
            let at = index as usize * page_size;
            let page = &buf.as_slice()[at..at + page_size];
            if !log_page_is_current(page, stream_page, geometry.page_size, checkpoint.log_id) {
                continue;
            }
            let Some(stamp) = flush_stamp(page) else {
                continue;
            };
            if stamp > end {
                survey.proof = Some((stream_page, stamp));
                return Ok(survey);
            }
            survey.highest_at_or_below_end = survey.highest_at_or_below_end.max(stamp);
        }
        batch_first += count;
    }
    Ok(survey)
}
