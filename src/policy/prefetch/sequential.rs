//! The sequential prefetcher (`seq`): a table-based stream detector in the style of TaP
//! (table-based prefetching). Each entry is a stream: the page it expects next and how many
//! accesses in a row it has seen.
//!
//! - A miss on a page no entry expects inserts a stream expecting `page + 1` (the oldest entry
//!   is replaced when the table is full: FIFO, so stale streams age out).
//! - An access (hit or miss) to an expected page extends its stream: count + 1, expecting
//!   `page + 1`.
//! - A miss that extends a stream whose count reached `trigger` (`prefetch_trigger`, 4 by
//!   default) prefetches the next `pages` (`prefetch_pages`) pages. Those are then hits that
//!   extend the stream, so a long scan misses once every `pages + 1` pages.
//!
//! Random access inserts one entry per miss and never reaches the trigger (an entry is extended
//! only by the exact next page). Memory: at most [`Sequential::entries`] entries of
//! [`ENTRY_BYTES`] bytes.

use crate::core::parts::Prefetcher;
use crate::core::stats::ExtraStats;
use crate::error::PageId;
use crate::sync::{AtomicU64, Mutex, Ordering};

/// Streams tracked at once by default (TaP keeps a small table; 32 covers the worker threads
/// of a typical run scanning at once).
pub const DEFAULT_ENTRIES: usize = 32;
/// Bytes per table entry (expected page and count).
pub const ENTRY_BYTES: usize = std::mem::size_of::<Stream>();

#[derive(Debug, Clone, Copy)]
struct Stream {
    expected: PageId,
    count: u64,
}

#[derive(Debug, Default)]
struct Table {
    streams: Vec<Stream>,
    /// The slot the next new stream replaces when the table is full (FIFO order).
    next_victim: usize,
}

/// The sequential prefetcher (see the module docs).
#[derive(Debug)]
pub struct Sequential {
    trigger: u64,
    pages: usize,
    entries: usize,
    table: Mutex<Table>,
    triggered: AtomicU64,
    pages_asked: AtomicU64,
}

impl Sequential {
    /// A prefetcher that reads `pages` pages after `trigger` accesses in sequence, tracking up to
    /// `entries` streams.
    #[must_use]
    pub fn new(trigger: usize, pages: usize, entries: usize) -> Self {
        Sequential {
            trigger: trigger.max(1) as u64,
            pages,
            entries: entries.max(1),
            table: Mutex::new(Table::default()),
            triggered: AtomicU64::new(0),
            pages_asked: AtomicU64::new(0),
        }
    }

    /// The table's capacity in streams.
    #[must_use]
    pub fn entries(&self) -> usize {
        self.entries
    }
}

impl Prefetcher for Sequential {
    fn name(&self) -> &'static str {
        "seq"
    }

    fn on_access(&self, page: PageId, hit: bool, max: usize, out: &mut Vec<PageId>) {
        let mut table = self.table.lock();
        if let Some(stream) = table.streams.iter_mut().find(|s| s.expected == page) {
            stream.count += 1;
            stream.expected = page.saturating_add(1);
            if !hit && stream.count >= self.trigger {
                let wanted = self.pages.min(max);
                out.extend((1..=wanted as u64).map(|d| page.saturating_add(d)));
                self.triggered.fetch_add(1, Ordering::Relaxed);
                self.pages_asked.fetch_add(wanted as u64, Ordering::Relaxed);
            }
            return;
        }
        if hit {
            return;
        }
        let stream = Stream {
            expected: page.saturating_add(1),
            count: 1,
        };
        if table.streams.len() < self.entries {
            table.streams.push(stream);
        } else {
            let victim = table.next_victim;
            table.streams[victim] = stream;
            table.next_victim = (victim + 1) % self.entries;
        }
    }

    fn memory_bytes(&self) -> usize {
        self.table.lock().streams.len() * ENTRY_BYTES
    }

    fn extra_stats(&self, out: &mut ExtraStats) {
        out.gauge("seq_prefetch_pages", self.pages as f64);
        out.counter(
            "seq_triggers",
            self.triggered.load(Ordering::Relaxed) as f64,
        );
        out.counter(
            "seq_pages_asked",
            self.pages_asked.load(Ordering::Relaxed) as f64,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(p: &Sequential, page: PageId, hit: bool) -> Vec<PageId> {
        let mut out = Vec::new();
        p.on_access(page, hit, 64, &mut out);
        out
    }

    #[test]
    fn a_scan_triggers_after_the_threshold_and_continues() {
        let p = Sequential::new(4, 8, 32);
        for page in 100..103 {
            assert!(access(&p, page, false).is_empty(), "page {page}");
        }
        assert_eq!(access(&p, 103, false), (104..=111).collect::<Vec<_>>());
        // The prefetched pages are hits that extend the stream; the next miss prefetches again.
        for page in 104..=111 {
            assert!(access(&p, page, true).is_empty());
        }
        assert_eq!(access(&p, 112, false), (113..=120).collect::<Vec<_>>());
        // `max` bounds the request.
        let mut out = Vec::new();
        p.on_access(113, false, 3, &mut out);
        assert_eq!(out, vec![114, 115, 116]);
    }

    #[test]
    fn random_access_never_triggers_and_the_table_stays_bounded() {
        let p = Sequential::new(4, 8, 16);
        let mut x: u64 = 12345;
        for _ in 0..10_000 {
            // A linear congruential sequence: never the next page twice in a row.
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1) % 1_000_003;
            assert!(access(&p, x * 2, false).is_empty());
        }
        assert!(p.memory_bytes() <= 16 * ENTRY_BYTES);
        assert_eq!(p.memory_bytes(), 16 * ENTRY_BYTES);
    }

    #[test]
    fn interleaved_scans_are_tracked_apart_and_stale_streams_age_out() {
        let p = Sequential::new(2, 4, 2);
        assert!(access(&p, 10, false).is_empty());
        assert!(access(&p, 500, false).is_empty());
        assert_eq!(access(&p, 11, false), vec![12, 13, 14, 15]);
        assert_eq!(access(&p, 501, false), vec![502, 503, 504, 505]);
        // A third stream replaces the oldest entry (FIFO): the stream at 12 is gone.
        assert!(access(&p, 900, false).is_empty());
        assert!(access(&p, 12, false).is_empty(), "a new stream, count 1");
    }
}
