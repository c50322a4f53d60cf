//! Recovery: pick the newest valid checkpoint slot, then scan records forward from its redo LSN
//! until the first record that does not verify (issue 5; format in `docs/wal-format.md`).
//!
//! The scan stops cleanly (it is the normal end of the log, not an error) at: a zero or
//! out-of-range length, an unknown type, a CRC mismatch, a record stamped with another LSN, a
//! record that does not chain on the CRC of the record before it (from the second record on),
//! a log page whose header is not the expected stream page of this log (stale page from an earlier
//! lap, or never written), or the capacity bound `redo_lsn + capacity`. It is an error only when
//! the device fails to read, or when the scan stops before the `durable_lsn` the checkpoint
//! recorded (log that was durable has been lost: [`Error::CorruptLog`]).
//!
//! Bounds: the scan reads at most `capacity` bytes of log, each record at most
//! `MAX_RECORD_BYTES`. Nothing here panics on any device content.

use crate::device::{AlignedBuf, Device};
use crate::error::{Error, Result};
use crate::page::Lsn;

use super::layout::{CheckpointSlot, Geometry, HEADER_PAGES, LOG_PAGE_HEADER, WalConfig};
use super::record::{self, DecodeError, FRAME_SIZE, LogRecord};

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
}

/// Reads both checkpoint slots and returns the newest valid one for this configuration.
/// `Ok(None)` when both slots are all zeros (an unformatted log).
///
/// # Errors
/// Device errors; [`Error::CorruptLog`] when no slot is valid but the header is not blank;
/// [`Error::Config`] when the log was formatted with another page or log size.
pub fn read_checkpoint(device: &dyn Device, config: &WalConfig) -> Result<Option<CheckpointSlot>> {
    let mut buf = AlignedBuf::new(config.page_size);
    let mut best: Option<CheckpointSlot> = None;
    let mut blank = true;
    for slot_page in 0..HEADER_PAGES {
        device.read_page(slot_page, &mut buf)?;
        blank &= buf.as_slice().iter().all(|&b| b == 0);
        let Some(slot) = CheckpointSlot::decode(buf.as_slice()) else {
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
        return if blank {
            Ok(None)
        } else {
            Err(Error::CorruptLog {
                offset: 0,
                reason: "neither checkpoint slot is valid".into(),
            })
        };
    };
    let geometry = config.geometry();
    if slot.page_size as usize != config.page_size || slot.log_size != config.log_size {
        return Err(Error::Config(format!(
            "the log was formatted with page size {} and log size {}, not {} and {}",
            slot.page_size, slot.log_size, config.page_size, config.log_size
        )));
    }
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
    Ok(Some(slot))
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
        let current = super::layout::log_page_is_current(
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
    // A record ended inside this page, so its header verified during the scan.
    if !cursor.load(cursor.geometry.page_of(end))? {
        return Err(Error::CorruptLog {
            offset: end,
            reason: "the page holding the end of the log changed during recovery".into(),
        });
    }
    Ok(cursor.buf.as_slice()[..offset].to_vec())
}
