//! The history-based prefetcher (`history`; ACE section IV's prefetcher): for each page, up to
//! [`CANDIDATES`] successor pages with weights, learned from consecutive accesses.
//!
//! On an access `prev -> cur` (hits and misses): in `prev`'s entry, a candidate equal to `cur`
//! gains weight (saturating at [`WEIGHT_MAX`]); otherwise a zero-weight slot takes `cur` with
//! weight 1; otherwise every weight decrements (so a page whose successor changed forgets the
//! old ones). On a miss of `cur`, the candidates of `cur` with weight at least the threshold are
//! prefetched, heaviest first.
//!
//! `prev` is **per thread** (the last page the calling thread accessed), not global: the pool
//! serves many worker threads at once and a global `prev` would learn the interleaving of their
//! streams rather than any thread's sequence. The map of threads is bounded
//! ([`MAX_THREADS`]; cleared when full).
//!
//! Memory is bounded: at most `entries` pages have an entry (ACE sizes the table at about 0.6%
//! of the database, [`History::entries_for`]); when full, the oldest entry is dropped (FIFO).
//! [`History::memory_bytes`] reports the table and the thread map.
//!
//! Concurrency: every access (hits too) updates the table, so one mutex serialised all workers
//! (25% of `ace-lru`'s throughput on `mu` at 64 clients, with 3 prefetches in the run). The table
//! is split into up to [`MAX_SHARDS`] shards by page (each with its own FIFO and `entries /
//! shards` capacity, so the total bound holds) and the thread map into [`THREAD_SHARDS`] by
//! thread. An access takes at most two locks, one after the other, never two at once: the
//! calling thread's map shard, then the table shard of `prev` (to learn), then, on a miss, the
//! table shard of `cur` (to predict).

use std::collections::{HashMap, VecDeque};
use std::thread::ThreadId;

use crate::core::parts::Prefetcher;
use crate::core::stats::ExtraStats;
use crate::error::PageId;
use crate::sync::{AtomicU64, Mutex, Ordering};

/// Successors remembered per page.
pub const CANDIDATES: usize = 3;
/// The largest weight.
pub const WEIGHT_MAX: u8 = 15;
/// The default weight a candidate needs to be prefetched.
pub const DEFAULT_THRESHOLD: u8 = 2;
/// Threads whose last page is remembered at once.
pub const MAX_THREADS: usize = 1024;
/// Most table shards (fewer for small tables: a shard holds at least 64 entries).
pub const MAX_SHARDS: usize = 64;
/// Shards of the thread map.
pub const THREAD_SHARDS: usize = 16;
/// Bytes per table entry: the page id, the candidates and weights, and its FIFO slot.
pub const ENTRY_BYTES: usize =
    std::mem::size_of::<(PageId, [(PageId, u8); CANDIDATES])>() + std::mem::size_of::<PageId>();

/// One shard of the successor table: its entries and their insertion order.
#[derive(Debug, Default)]
struct TableShard {
    table: HashMap<PageId, [(PageId, u8); CANDIDATES]>,
    fifo: VecDeque<PageId>,
}

/// The history-based prefetcher (see the module docs).
#[derive(Debug)]
pub struct History {
    entries: usize,
    entries_per_shard: usize,
    threshold: u8,
    tables: Box<[Mutex<TableShard>]>,
    prevs: Box<[Mutex<HashMap<ThreadId, PageId>>]>,
    predictions: AtomicU64,
    pages_asked: AtomicU64,
}

impl History {
    /// A table of at most `entries` pages; candidates prefetched from weight `threshold`.
    #[must_use]
    pub fn new(entries: usize, threshold: u8) -> Self {
        let entries = entries.max(1);
        let shards = (entries / 64).clamp(1, MAX_SHARDS);
        History {
            entries,
            entries_per_shard: entries / shards,
            threshold: threshold.max(1),
            tables: (0..shards)
                .map(|_| Mutex::new(TableShard::default()))
                .collect(),
            prevs: (0..THREAD_SHARDS)
                .map(|_| Mutex::new(HashMap::new()))
                .collect(),
            predictions: AtomicU64::new(0),
            pages_asked: AtomicU64::new(0),
        }
    }

    /// The table shard that holds `page`'s entry.
    fn table_of(&self, page: PageId) -> &Mutex<TableShard> {
        // Fibonacci hashing spreads consecutive page ids over the shards.
        let hash = page.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        &self.tables[(hash as usize) % self.tables.len()]
    }

    /// The thread-map shard of `thread`.
    fn prevs_of(&self, thread: ThreadId) -> &Mutex<HashMap<ThreadId, PageId>> {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(thread);
        &self.prevs[(hash as usize) % self.prevs.len()]
    }

    /// Records that the calling thread accessed `page`; returns the page it accessed before.
    fn swap_prev(&self, page: PageId) -> Option<PageId> {
        let thread = std::thread::current().id();
        let mut prevs = self.prevs_of(thread).lock();
        if prevs.len() >= MAX_THREADS / THREAD_SHARDS && !prevs.contains_key(&thread) {
            prevs.clear();
        }
        prevs.insert(thread, page)
    }

    /// ACE's size: about 0.6% of a database of `db_pages` pages of `page_size` bytes, in
    /// entries (at least 64).
    #[must_use]
    pub fn entries_for(db_pages: u64, page_size: usize) -> usize {
        let bytes = db_pages.saturating_mul(page_size as u64) * 6 / 1000;
        usize::try_from(bytes / ENTRY_BYTES as u64)
            .unwrap_or(usize::MAX)
            .max(64)
    }

    /// The table's capacity in pages.
    #[must_use]
    pub fn entries(&self) -> usize {
        self.entries
    }

    fn learn(&self, prev: PageId, cur: PageId) {
        if prev == cur {
            return;
        }
        let mut guard = self.table_of(prev).lock();
        let state = &mut *guard;
        if !state.table.contains_key(&prev) {
            if state.table.len() >= self.entries_per_shard {
                // Bound: the FIFO holds exactly the table's keys.
                if let Some(oldest) = state.fifo.pop_front() {
                    state.table.remove(&oldest);
                }
            }
            state.table.insert(prev, [(0, 0); CANDIDATES]);
            state.fifo.push_back(prev);
        }
        let Some(slots) = state.table.get_mut(&prev) else {
            return;
        };
        if let Some(slot) = slots.iter_mut().find(|(p, w)| *w > 0 && *p == cur) {
            slot.1 = (slot.1 + 1).min(WEIGHT_MAX);
        } else if let Some(slot) = slots.iter_mut().find(|(_, w)| *w == 0) {
            *slot = (cur, 1);
        } else {
            for slot in slots.iter_mut() {
                slot.1 -= 1;
            }
        }
    }
}

impl Prefetcher for History {
    fn name(&self) -> &'static str {
        "history"
    }

    fn on_access(&self, page: PageId, hit: bool, max: usize, out: &mut Vec<PageId>) {
        if let Some(prev) = self.swap_prev(page) {
            self.learn(prev, page);
        }
        if hit || max == 0 {
            return;
        }
        let mut wanted: Vec<(PageId, u8)> = {
            let shard = self.table_of(page).lock();
            let Some(slots) = shard.table.get(&page) else {
                return;
            };
            slots
                .iter()
                .copied()
                .filter(|&(_, w)| w >= self.threshold)
                .collect()
        };
        wanted.sort_by_key(|&(_, weight)| std::cmp::Reverse(weight));
        let before = out.len();
        out.extend(wanted.into_iter().take(max).map(|(p, _)| p));
        let asked = (out.len() - before) as u64;
        if asked > 0 {
            self.predictions.fetch_add(1, Ordering::Relaxed);
            self.pages_asked.fetch_add(asked, Ordering::Relaxed);
        }
    }

    fn memory_bytes(&self) -> usize {
        let table: usize = self
            .tables
            .iter()
            .map(|shard| shard.lock().table.len() * ENTRY_BYTES)
            .sum();
        let threads: usize = self.prevs.iter().map(|shard| shard.lock().len()).sum();
        table + threads * std::mem::size_of::<(ThreadId, PageId)>()
    }

    fn extra_stats(&self, out: &mut ExtraStats) {
        out.counter(
            "history_predictions",
            self.predictions.load(Ordering::Relaxed) as f64,
        );
        out.counter(
            "history_pages_asked",
            self.pages_asked.load(Ordering::Relaxed) as f64,
        );
        out.gauge("history_entries_max", self.entries as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn miss(p: &History, page: PageId) -> Vec<PageId> {
        let mut out = Vec::new();
        p.on_access(page, false, 64, &mut out);
        out
    }

    #[test]
    fn a_repeated_sequence_is_learned() {
        let p = History::new(1000, 2);
        let sequence = [7, 42, 3, 99, 15];
        // First pass: nothing known.
        for &page in &sequence {
            assert!(miss(&p, page).is_empty());
        }
        // Second pass: each successor has weight 1, below the threshold (and 15 -> 7 learned).
        for &page in &sequence {
            miss(&p, page);
        }
        // Third pass: each page predicts its successor.
        for window in sequence.windows(2) {
            assert_eq!(miss(&p, window[0]), vec![window[1]], "after {}", window[0]);
        }
    }

    #[test]
    fn a_changed_successor_displaces_the_old_ones() {
        let p = History::new(1000, 1);
        // 1 -> 2, 1 -> 3, 1 -> 4 fill the three slots with weight 1.
        for next in [2, 3, 4] {
            miss(&p, 1);
            miss(&p, next);
        }
        let mut predicted = miss(&p, 1);
        predicted.sort_unstable();
        assert_eq!(predicted, vec![2, 3, 4]);
        // 1 -> 5 with all slots taken: every weight decrements to 0; then 1 -> 5 takes a slot.
        miss(&p, 5);
        assert!(miss(&p, 1).is_empty());
        miss(&p, 5);
        assert_eq!(miss(&p, 1), vec![5]);
    }

    #[test]
    fn memory_stays_bounded() {
        let p = History::new(100, 2);
        for page in 0..100_000u64 {
            miss(&p, page * 7 % 65_537);
        }
        assert!(
            p.memory_bytes() <= 100 * ENTRY_BYTES + 64,
            "{}",
            p.memory_bytes()
        );
        assert!(History::entries_for(65_536, 16_384) > 64);
    }
}
