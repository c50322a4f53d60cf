//! On-disk layout of the log device: configuration, LSN arithmetic, log page headers and the
//! two checkpoint slots (issue 5; `docs/wal-format.md` draws the bytes).
//!
//! Device pages `0` and `1` are the checkpoint slots (written alternately, slot = seq % 2);
//! pages `2 .. 2 + ring_pages` are the ring. LSNs are byte positions in the infinite log
//! stream, page headers included: stream page `k` covers LSNs `[k * P, (k + 1) * P)` and lives in
//! ring slot `k % ring_pages`. Records never start inside a page header, so a record boundary
//! LSN always has `lsn % P >= LOG_PAGE_HEADER`.
//!
//! Invariants: every log page carries its stream position (`page_lsn`) and the log's random
//! `log_id`, both under the identity CRC, so a page from an earlier lap of the ring (or from an
//! earlier log formatted on the same device) is never taken for a current one. The identity
//! does not change when a partial page is rewritten with more records, so a torn rewrite keeps
//! the records that were already durable (only the per-record CRCs decide validity), even when
//! it tears inside the header. Each page also carries a *flush stamp* under its own CRC: the
//! LSN the log was durable to when the flush that wrote the page began (`flush_start`). A
//! current page stamped past the point where the record scan stops proves that the log was
//! durable past that point, so the stop is corruption and not a torn tail (`reader.rs`). A
//! torn stamp (old and new bytes mixed) fails its CRC and only removes that proof.

use std::time::Duration;

use super::crc::crc32c;
use crate::error::{Error, Result};
use crate::page::Lsn;

/// Size of a log page header in bytes.
pub const LOG_PAGE_HEADER: usize = 40;
/// Magic of a log page.
pub const LOG_PAGE_MAGIC: [u8; 4] = *b"FBLG";
/// Magic of a checkpoint slot.
pub const CHECKPOINT_MAGIC: [u8; 4] = *b"FBCK";
/// Format version written in checkpoint slots. Version 2 added the flush stamp to the log page
/// header (40 bytes instead of 32); version 1 logs do not open. Version 3 added records an
/// older reader does not know (the `Patch` page operation and the patched undo entry of an
/// update in place); its pages and records are framed as version 2's, so a version 2 log
/// opens and is continued (its next checkpoint is written as version 3).
pub const FORMAT_VERSION: u32 = 3;
/// The oldest format version that opens.
pub const OLDEST_READABLE_VERSION: u32 = 2;

fn readable(version: u32) -> bool {
    (OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version)
}
/// Number of device pages before the ring (the two checkpoint slots).
pub const HEADER_PAGES: u64 = 2;
/// LSNs at or above this are rejected as corrupt (2^62: centuries of log at 1 GB/s).
pub const MAX_LSN: u64 = 1 << 62;
/// Bytes of a checkpoint slot that are meaningful (the rest of the slot page is zero).
pub const CHECKPOINT_SLOT_BYTES: usize = 64;

/// Configuration of a redo log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalConfig {
    /// Bytes of the log region on its device: two checkpoint-slot pages plus the ring.
    pub log_size: u64,
    /// Log page size in bytes; must equal the log device's page size.
    pub page_size: usize,
    /// Bytes of the in-memory log buffer (a whole number of pages).
    pub buffer_size: usize,
    /// How long `append` waits for the checkpoint to free ring space before `Error::LogFull`.
    pub full_timeout: Duration,
}

impl Default for WalConfig {
    fn default() -> Self {
        WalConfig {
            log_size: 64 << 20,
            page_size: 4096,
            buffer_size: 1 << 20,
            full_timeout: Duration::from_secs(5),
        }
    }
}

impl WalConfig {
    /// Checks sizes and their relations.
    ///
    /// # Errors
    /// [`Error::Config`] naming the offending field.
    pub fn validate(&self) -> Result<()> {
        let page = self.page_size;
        // I/O buffers are IO_ALIGN-aligned page slices, so a log page is at least that big.
        if !page.is_power_of_two() || !(crate::device::IO_ALIGN..=65_536).contains(&page) {
            return Err(config(format!(
                "log page size {page} is not a power of two in {}..=65536",
                crate::device::IO_ALIGN
            )));
        }
        if !self.log_size.is_multiple_of(page as u64) {
            return Err(config(format!(
                "log size {} is not a multiple of the log page size {page}",
                self.log_size
            )));
        }
        let ring_pages = (self.log_size / page as u64).saturating_sub(HEADER_PAGES);
        if ring_pages < 8 {
            return Err(config(format!(
                "log size {} leaves {ring_pages} ring pages; at least 8 are needed",
                self.log_size
            )));
        }
        if !self.buffer_size.is_multiple_of(page) || self.buffer_size / page < 4 {
            return Err(config(format!(
                "log buffer size {} is not a multiple of the page size {page} of at least 4 pages",
                self.buffer_size
            )));
        }
        if (self.buffer_size / page) as u64 > ring_pages / 2 {
            return Err(config(format!(
                "log buffer of {} pages is more than half of the {ring_pages}-page ring",
                self.buffer_size / page
            )));
        }
        if self.full_timeout.is_zero() {
            return Err(config("full_timeout must be positive".into()));
        }
        Ok(())
    }

    /// The layout these settings describe (validate first).
    #[must_use]
    pub fn geometry(&self) -> Geometry {
        Geometry {
            page_size: self.page_size as u64,
            ring_pages: self.log_size / self.page_size as u64 - HEADER_PAGES,
        }
    }
}

fn config(message: String) -> Error {
    Error::Config(message)
}

/// LSN arithmetic of one log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Log page size in bytes.
    pub page_size: u64,
    /// Pages in the ring.
    pub ring_pages: u64,
}

impl Geometry {
    /// The first LSN of a fresh log (just past the header of stream page 0).
    #[must_use]
    pub fn start_lsn(&self) -> Lsn {
        LOG_PAGE_HEADER as Lsn
    }

    /// The stream page holding `lsn`.
    #[must_use]
    pub fn page_of(&self, lsn: Lsn) -> u64 {
        lsn / self.page_size
    }

    /// Offset of `lsn` inside its page.
    #[must_use]
    pub fn offset_in_page(&self, lsn: Lsn) -> usize {
        (lsn % self.page_size) as usize
    }

    /// The device page that holds stream page `stream_page`.
    #[must_use]
    pub fn device_page(&self, stream_page: u64) -> u64 {
        HEADER_PAGES + stream_page % self.ring_pages
    }

    /// Whether `lsn` can be a record boundary (not inside a page header).
    #[must_use]
    pub fn is_boundary(&self, lsn: Lsn) -> bool {
        self.offset_in_page(lsn) >= LOG_PAGE_HEADER
    }

    /// Moves an LSN that sits exactly on a page start past that page's header.
    #[must_use]
    pub fn normalize(&self, lsn: Lsn) -> Lsn {
        if self.offset_in_page(lsn) == 0 {
            lsn + LOG_PAGE_HEADER as Lsn
        } else {
            lsn
        }
    }

    /// Log bytes (headers included) that may lie between the checkpoint's redo LSN and the end
    /// of the log: one page less than the ring, so the page holding the redo LSN is never
    /// overwritten.
    #[must_use]
    pub fn capacity(&self) -> u64 {
        (self.ring_pages - 1) * self.page_size
    }

    /// Where a record of `len` bytes that starts at `start` ends (normalized).
    #[must_use]
    pub fn advance(&self, start: Lsn, len: usize) -> Lsn {
        debug_assert!(self.is_boundary(start), "records start at boundaries");
        let mut lsn = start;
        let mut left = len as u64;
        // Bounded: each pass consumes at least one byte or moves one page.
        while left > 0 {
            let room = self.page_size - lsn % self.page_size;
            let take = room.min(left);
            lsn += take;
            left -= take;
            if lsn.is_multiple_of(self.page_size) {
                lsn += LOG_PAGE_HEADER as u64;
            }
        }
        self.normalize(lsn)
    }
}

/// Writes the header of stream page `stream_page` into `page`'s first [`LOG_PAGE_HEADER`]
/// bytes (every header byte; the rest of `page` is left as it is), with a flush stamp of 0 (every flush restamps the pages it writes: [`stamp_flush_start`]).
pub fn stamp_log_page(page: &mut [u8], stream_page: u64, page_size: u64, log_id: u64) {
    assert!(page.len() >= LOG_PAGE_HEADER, "page holds a header");
    page[0..4].copy_from_slice(&LOG_PAGE_MAGIC);
    page[8..16].copy_from_slice(&(stream_page * page_size).to_le_bytes());
    page[16..24].copy_from_slice(&log_id.to_le_bytes());
    page[36..LOG_PAGE_HEADER].fill(0);
    let crc = crc32c(&page[8..24]);
    page[4..8].copy_from_slice(&crc.to_le_bytes());
    stamp_flush_start(page, 0);
}

/// Writes the flush stamp of a stamped page: the log was durable up to `flush_start` when the
/// flush writing this page began. The identity part of the header is left as it is.
pub fn stamp_flush_start(page: &mut [u8], flush_start: Lsn) {
    assert!(page.len() >= LOG_PAGE_HEADER, "page holds a header");
    assert!(flush_start < MAX_LSN, "flush stamps are LSNs");
    page[24..32].copy_from_slice(&flush_start.to_le_bytes());
    let crc = crc32c(&page[8..32]);
    page[32..36].copy_from_slice(&crc.to_le_bytes());
}

/// Whether `page` is stream page `stream_page` of log `log_id` (magic, identity CRC, position,
/// id, zero reserved bytes). The flush stamp is not part of this check.
#[must_use]
pub fn log_page_is_current(page: &[u8], stream_page: u64, page_size: u64, log_id: u64) -> bool {
    let Some(header) = page.get(..LOG_PAGE_HEADER) else {
        return false;
    };
    header[0..4] == LOG_PAGE_MAGIC
        && read_u32(header, 4) == crc32c(&header[8..24])
        && read_u64(header, 8) == stream_page.wrapping_mul(page_size)
        && read_u64(header, 16) == log_id
        && header[36..LOG_PAGE_HEADER] == [0u8; 4]
}

/// The flush stamp of a page whose identity was checked ([`log_page_is_current`]); `None` when
/// the stamp fails its CRC (a torn rewrite of the header, or damage) or is not a sane LSN.
#[must_use]
pub fn flush_stamp(page: &[u8]) -> Option<Lsn> {
    let header = page.get(..LOG_PAGE_HEADER)?;
    let stamp = read_u64(header, 24);
    (read_u32(header, 32) == crc32c(&header[8..32]) && stamp < MAX_LSN).then_some(stamp)
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    let mut raw = [0u8; 4];
    raw.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(raw)
}

fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(raw)
}

/// The contents of a checkpoint slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointSlot {
    /// Random id of this log, chosen when it was formatted.
    pub log_id: u64,
    /// Log page size the log was formatted with.
    pub page_size: u32,
    /// Log region size the log was formatted with.
    pub log_size: u64,
    /// Checkpoint number, 1 for the one written at format time; slot = seq % 2.
    pub seq: u64,
    /// Redo starts here: every change before it is in the data pages.
    pub redo_lsn: Lsn,
    /// The log was durable up to here when the checkpoint was written; recovery that stops
    /// before it has lost durable log and reports corruption.
    pub durable_lsn: Lsn,
}

impl CheckpointSlot {
    /// The slot (device page) this checkpoint goes to.
    #[must_use]
    pub fn slot(&self) -> u64 {
        self.seq % 2
    }

    /// Encodes into the first [`CHECKPOINT_SLOT_BYTES`] of `page` (the rest is zeroed).
    pub fn encode(&self, page: &mut [u8]) {
        assert!(page.len() >= CHECKPOINT_SLOT_BYTES, "slot fits the page");
        page.fill(0);
        page[0..4].copy_from_slice(&CHECKPOINT_MAGIC);
        page[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        page[12..16].copy_from_slice(&self.page_size.to_le_bytes());
        page[16..24].copy_from_slice(&self.log_id.to_le_bytes());
        page[24..32].copy_from_slice(&self.log_size.to_le_bytes());
        page[32..40].copy_from_slice(&self.seq.to_le_bytes());
        page[40..48].copy_from_slice(&self.redo_lsn.to_le_bytes());
        page[48..56].copy_from_slice(&self.durable_lsn.to_le_bytes());
        let crc = crc32c(&page[8..CHECKPOINT_SLOT_BYTES]);
        page[4..8].copy_from_slice(&crc.to_le_bytes());
    }

    /// The version of a slot that verifies (magic and CRC) but is of another format version;
    /// `None` for anything else.
    #[must_use]
    pub fn foreign_version(page: &[u8]) -> Option<u32> {
        let slot = page.get(..CHECKPOINT_SLOT_BYTES)?;
        let version = read_u32(slot, 8);
        (slot[0..4] == CHECKPOINT_MAGIC
            && read_u32(slot, 4) == crc32c(&slot[8..])
            && !readable(version))
        .then_some(version)
    }

    /// Decodes a slot page; `None` when it is not a valid, checksummed slot of this format.
    #[must_use]
    pub fn decode(page: &[u8]) -> Option<Self> {
        let slot = page.get(..CHECKPOINT_SLOT_BYTES)?;
        if slot[0..4] != CHECKPOINT_MAGIC
            || read_u32(slot, 4) != crc32c(&slot[8..])
            || !readable(read_u32(slot, 8))
            || slot[56..64] != [0u8; 8]
        {
            return None;
        }
        let decoded = CheckpointSlot {
            page_size: read_u32(slot, 12),
            log_id: read_u64(slot, 16),
            log_size: read_u64(slot, 24),
            seq: read_u64(slot, 32),
            redo_lsn: read_u64(slot, 40),
            durable_lsn: read_u64(slot, 48),
        };
        // LSNs stay far below u64::MAX so LSN arithmetic cannot overflow on crafted slots.
        let sane = decoded.seq > 0
            && decoded.redo_lsn <= decoded.durable_lsn
            && decoded.durable_lsn < MAX_LSN;
        sane.then_some(decoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_skips_page_headers() {
        let g = Geometry {
            page_size: 4096,
            ring_pages: 16,
        };
        let start = g.start_lsn();
        assert_eq!(g.advance(start, 10), start + 10);
        let room = 4096 - LOG_PAGE_HEADER;
        let header = LOG_PAGE_HEADER as u64;
        // Exactly filling the first page lands after the next page's header.
        assert_eq!(g.advance(start, room), 4096 + header);
        // One byte more: the rest of page 0, 1 in page 1.
        assert_eq!(g.advance(start, room + 1), 4096 + header + 1);
        // Spanning several pages skips every header.
        assert_eq!(g.advance(start, 3 * room + 5), 3 * 4096 + header + 5);
        assert!(g.is_boundary(g.advance(start, 2000)));
    }

    #[test]
    fn slots_round_trip_and_reject_damage() {
        let slot = CheckpointSlot {
            log_id: 9,
            page_size: 4096,
            log_size: 1 << 20,
            seq: 3,
            redo_lsn: 100,
            durable_lsn: 200,
        };
        let mut page = vec![0u8; 4096];
        slot.encode(&mut page);
        assert_eq!(CheckpointSlot::decode(&page), Some(slot));
        page[45] ^= 1;
        assert_eq!(CheckpointSlot::decode(&page), None);
        assert_eq!(CheckpointSlot::decode(&[0u8; 10]), None);
    }

    #[test]
    fn flush_stamps_are_separate_from_the_identity() {
        let mut page = vec![0u8; 4096];
        stamp_log_page(&mut page, 5, 4096, 77);
        assert!(log_page_is_current(&page, 5, 4096, 77));
        assert_eq!(flush_stamp(&page), Some(0));
        stamp_flush_start(&mut page, 12_345);
        assert!(
            log_page_is_current(&page, 5, 4096, 77),
            "identity unchanged"
        );
        assert_eq!(flush_stamp(&page), Some(12_345));
        // A torn stamp loses the proof, not the page.
        page[26] ^= 4;
        assert!(log_page_is_current(&page, 5, 4096, 77));
        assert_eq!(flush_stamp(&page), None);
        assert!(!log_page_is_current(&page, 6, 4096, 77), "other position");
        assert!(!log_page_is_current(&page, 5, 4096, 78), "other log");
        page[10] ^= 1;
        assert!(!log_page_is_current(&page, 5, 4096, 77), "identity damaged");
    }

    #[test]
    fn config_validation_names_the_problem() {
        assert!(WalConfig::default().validate().is_ok());
        let bad = [
            WalConfig {
                page_size: 1000,
                ..WalConfig::default()
            },
            WalConfig {
                log_size: 4096 * 5,
                ..WalConfig::default()
            },
            WalConfig {
                buffer_size: 4096 * 3,
                ..WalConfig::default()
            },
            WalConfig {
                log_size: 4096 * 20,
                buffer_size: 4096 * 10,
                ..WalConfig::default()
            },
        ];
        for config in bad {
            assert!(
                matches!(config.validate(), Err(Error::Config(_))),
                "{config:?}"
            );
        }
    }
}
