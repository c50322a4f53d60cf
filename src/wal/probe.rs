//! What a log device says about itself, read without writing anything: the settings it was
//! formatted with (page size and log size, from its checkpoint slots) and whether it holds
//! changes past its newest checkpoint (a database that was not closed cleanly).
//!
//! Recovery needs the log's own page size and log size, whatever settings the process that
//! wrote it ran with (`flashbuf bench --log-size 1MiB`, a library user's `WalConfig`): the
//! checkpoint slots record both (`docs/wal-format.md`, "Checkpoint slot"). Slot 0 sits at byte
//! 0; slot 1 at byte `P`, the log page size, which is found by trying every page size the
//! format allows. The in-memory log buffer is not on disk (it does not change the format):
//! [`LogSettings::config`] keeps the caller's, shrunk to what the log's ring allows.
//!
//! A cleanly closed database ends with a checkpoint whose redo LSN is the end of the log, so
//! the only record past it is that checkpoint's own `Checkpoint` record. Any other record there
//! (or a log that ends before the checkpoint's durable LSN) is work recovery has to do.

use crate::device::{AlignedBuf, Device, IO_ALIGN};
use crate::error::{Error, Result};
use crate::page::Lsn;

use super::layout::{CheckpointSlot, HEADER_PAGES, WalConfig};
use super::reader::{self, StopReason};
use super::record::LogRecord;

/// The largest log page size the format allows (see [`WalConfig::validate`]).
const MAX_LOG_PAGE: usize = 65_536;

/// The settings a log was formatted with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSettings {
    /// Log page size in bytes.
    pub page_size: usize,
    /// Bytes of the log region (two checkpoint-slot pages plus the ring).
    pub log_size: u64,
}

impl LogSettings {
    /// `base` with this log's page size and log size; its buffer is kept when the ring allows
    /// it, else shrunk to half of the ring (at least the 4 pages [`WalConfig::validate`] asks).
    #[must_use]
    pub fn config(&self, base: &WalConfig) -> WalConfig {
        let ring_pages = (self.log_size / self.page_size as u64).saturating_sub(HEADER_PAGES);
        let most = usize::try_from(ring_pages / 2).unwrap_or(usize::MAX).max(4);
        let pages = (base.buffer_size / self.page_size).clamp(4, most);
        WalConfig {
            log_size: self.log_size,
            page_size: self.page_size,
            buffer_size: pages * self.page_size,
            full_timeout: base.full_timeout,
        }
    }
}

/// Reads the settings from the newest valid checkpoint slot. `device` may have any page size
/// up to [`IO_ALIGN`] (open a log file with [`IO_ALIGN`] when its page size is unknown).
/// `Ok(None)` when no slot is valid (a blank, damaged, foreign or other-version header: opening
/// the log with [`super::Wal::open`] says which).
///
/// # Errors
/// [`Error::Config`] for a device page size above [`IO_ALIGN`] or not dividing it; device
/// read errors.
pub fn read_settings(device: &dyn Device) -> Result<Option<LogSettings>> {
    let unit = device.info().page_size;
    if unit == 0 || unit > IO_ALIGN || !IO_ALIGN.is_multiple_of(unit) {
        return Err(Error::Config(format!(
            "reading a log's settings needs a device page size dividing {IO_ALIGN}, not {unit}"
        )));
    }
    let mut newest: Option<CheckpointSlot> = None;
    // Slot 0 at byte 0, then slot 1 at byte P for each page size P the format allows.
    let candidates = std::iter::once((0, None))
        .chain(page_sizes().map(|page_size| (page_size, Some(page_size))));
    for (offset, page_size) in candidates {
        let Some(slot) = read_slot(device, offset)? else {
            continue;
        };
        let fits = match page_size {
            None => slot.slot() == 0,
            Some(page_size) => slot.slot() == 1 && slot.page_size as usize == page_size,
        };
        if fits && newest.is_none_or(|best| slot.seq > best.seq) {
            newest = Some(slot);
        }
    }
    Ok(newest.map(|slot| LogSettings {
        page_size: slot.page_size as usize,
        log_size: slot.log_size,
    }))
}

/// The log page sizes the format allows: powers of two from [`IO_ALIGN`] to 64 KiB.
fn page_sizes() -> impl Iterator<Item = usize> {
    (IO_ALIGN.trailing_zeros()..=MAX_LOG_PAGE.trailing_zeros()).map(|shift| 1usize << shift)
}

/// The slot whose bytes start at byte `offset` of the device (`None`: past its end or not a
/// valid slot).
fn read_slot(device: &dyn Device, offset: usize) -> Result<Option<CheckpointSlot>> {
    let info = device.info();
    let page = (offset / info.page_size) as u64;
    if page >= info.pages {
        return Ok(None);
    }
    let mut buf = AlignedBuf::new(info.page_size);
    device.read_page(page, &mut buf)?;
    Ok(CheckpointSlot::decode(buf.as_slice()))
}

/// What a log holds past its newest checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingLog {
    /// The newest checkpoint.
    pub checkpoint: CheckpointSlot,
    /// Records past its redo LSN other than `Checkpoint` records: changes not yet known to be
    /// in the data pages, or transactions to roll back.
    pub changes: usize,
    /// Where the valid log ends.
    pub end_lsn: Lsn,
    /// Why the scan stopped there.
    pub stop: StopReason,
}

impl PendingLog {
    /// Whether opening the database has work to do: changes to replay or roll back, or a log
    /// that ends before the checkpoint said it was durable (recovery reports that).
    #[must_use]
    pub fn needs_recovery(&self) -> bool {
        self.changes > 0 || self.end_lsn < self.checkpoint.durable_lsn
    }
}

/// Scans the log on `device` (opened with `config`'s page size) from its newest checkpoint,
/// writing nothing. `Ok(None)` for a blank log.
///
/// # Errors
/// As [`reader::read_checkpoint`]: another format version or page size, a truncated device,
/// damaged slots, a log size other than `config`'s; device read errors.
pub fn pending(device: &dyn Device, config: &WalConfig) -> Result<Option<PendingLog>> {
    config.validate()?;
    let Some(checkpoint) = reader::read_checkpoint(device, config)? else {
        return Ok(None);
    };
    let scan = reader::scan(device, config.geometry(), &checkpoint)?;
    let changes = scan
        .records
        .iter()
        .filter(|found| !matches!(found.record, LogRecord::Checkpoint { .. }))
        .count();
    Ok(Some(PendingLog {
        checkpoint,
        changes,
        end_lsn: scan.end_lsn,
        stop: scan.stop,
    }))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::device::SharedDevice;
    use crate::device::memory::MemoryDevice;
    use crate::wal::Wal;

    fn config(page_size: usize, log_size: u64) -> WalConfig {
        WalConfig {
            log_size,
            page_size,
            buffer_size: 4 * page_size,
            full_timeout: Duration::from_secs(5),
        }
    }

    /// The bytes of `log` seen through a device of `unit`-byte pages.
    fn reread(log: &SharedDevice, unit: usize) -> SharedDevice {
        let info = log.info();
        let bytes = info.pages * info.page_size as u64;
        let copy = MemoryDevice::new(unit, bytes / unit as u64).unwrap();
        let mut page = AlignedBuf::new(info.page_size);
        let mut piece = AlignedBuf::new(unit);
        for index in 0..info.pages {
            log.read_page(index, &mut page).unwrap();
            for (part, chunk) in page.as_slice().chunks(unit).enumerate() {
                piece.as_mut_slice().copy_from_slice(chunk);
                let at = index * (info.page_size / unit) as u64 + part as u64;
                copy.write_page(at, &piece).unwrap();
            }
        }
        Arc::new(copy)
    }

    fn memory(page_size: usize, pages: u64) -> SharedDevice {
        Arc::new(MemoryDevice::new(page_size, pages).unwrap())
    }

    #[test]
    fn finds_page_and_log_size_from_either_slot() {
        for page_size in [4096, 16_384, 65_536] {
            let log = memory(page_size, 40);
            let wal =
                Wal::create(Arc::clone(&log), config(page_size, 20 * page_size as u64)).unwrap();
            let expected = LogSettings {
                page_size,
                log_size: 20 * page_size as u64,
            };
            // Fresh: only slot 1 (seq 1) is valid.
            assert_eq!(
                read_settings(reread(&log, 4096).as_ref()).unwrap(),
                Some(expected)
            );
            wal.write_checkpoint(wal.current_lsn()).unwrap();
            // Now slot 0 (seq 2) is the newest.
            assert_eq!(
                read_settings(reread(&log, 4096).as_ref()).unwrap(),
                Some(expected)
            );
        }
    }

    #[test]
    fn a_blank_device_has_no_settings() {
        assert_eq!(read_settings(memory(4096, 16).as_ref()).unwrap(), None);
        assert_eq!(
            pending(memory(4096, 16).as_ref(), &config(4096, 16 * 4096)).unwrap(),
            None
        );
    }

    #[test]
    fn the_config_fits_the_buffer_to_the_ring() {
        let base = WalConfig::default();
        let small = LogSettings {
            page_size: 4096,
            log_size: 1 << 20,
        };
        let fitted = small.config(&base);
        assert_eq!((fitted.page_size, fitted.log_size), (4096, 1 << 20));
        assert_eq!(fitted.buffer_size, 127 * 4096, "half of the 254-page ring");
        fitted.validate().unwrap();
        let large = LogSettings {
            page_size: 4096,
            log_size: 256 << 20,
        };
        assert_eq!(large.config(&base).buffer_size, base.buffer_size);
        let tiny = LogSettings {
            page_size: 4096,
            log_size: 10 * 4096,
        };
        tiny.config(&base).validate().unwrap();
    }

    #[test]
    fn pending_counts_changes_past_the_checkpoint() {
        let wal_config = config(4096, 32 * 4096);
        let log = memory(4096, 32);
        let wal = Wal::create(Arc::clone(&log), wal_config.clone()).unwrap();
        wal.write_checkpoint(wal.current_lsn()).unwrap();
        let clean = pending(log.as_ref(), &wal_config).unwrap().unwrap();
        assert_eq!(clean.changes, 0, "{clean:?}");
        assert!(!clean.needs_recovery());
        let lsn = wal.append(&[LogRecord::Commit { txn: 7 }]).unwrap();
        wal.flush_to(lsn).unwrap();
        let crashed = pending(log.as_ref(), &wal_config).unwrap().unwrap();
        assert_eq!(crashed.changes, 1, "{crashed:?}");
        assert!(crashed.needs_recovery());
    }
}
