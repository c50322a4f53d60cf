//! Counters every buffer pool reports (algorithms.md section 8).
//!
//! [`PoolCounters`] is the live, lock-free set the pool increments; [`PoolStats`] is a plain,
//! serializable snapshot of it. `PoolStats::since` gives the counters of a measured phase.
//! Scheme-specific figures (pointer moves, TWB waits, ...) go in `extra` by name.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::Serialize;

/// Acquisitions of and waiting time on one list mutex.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct MutexStats {
    /// Times the mutex was taken.
    pub acquisitions: u64,
    /// Times a taker found it held and had to wait.
    pub contended: u64,
    /// Total real time spent waiting for it, in nanoseconds.
    pub wait_ns: u64,
}

/// A mutex's live counters.
#[derive(Debug, Default)]
pub struct MutexCounters {
    acquisitions: AtomicU64,
    contended: AtomicU64,
    wait_ns: AtomicU64,
}

impl MutexCounters {
    /// Locks `mutex`, counting the acquisition and any wait.
    pub fn lock<'a, T>(&self, mutex: &'a parking_lot::Mutex<T>) -> parking_lot::MutexGuard<'a, T> {
        self.acquisitions.fetch_add(1, Ordering::Relaxed);
        if let Some(guard) = mutex.try_lock() {
            return guard;
        }
        let start = Instant::now();
        let guard = mutex.lock();
        self.contended.fetch_add(1, Ordering::Relaxed);
        self.wait_ns
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        guard
    }

    /// A snapshot.
    #[must_use]
    pub fn snapshot(&self) -> MutexStats {
        MutexStats {
            acquisitions: self.acquisitions.load(Ordering::Relaxed),
            contended: self.contended.load(Ordering::Relaxed),
            wait_ns: self.wait_ns.load(Ordering::Relaxed),
        }
    }
}

/// A snapshot of a pool's counters.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PoolStats {
    /// Page requests served from the pool.
    pub hits: u64,
    /// Page requests that had to read the page.
    pub misses: u64,
    /// Misses that had to wait for a write before their read (single-page flush): read stalls.
    pub read_stalls: u64,
    /// Misses served by the fused read-write command (RW scheme).
    pub fused_reads: u64,
    /// Pages written by foreground threads to free a frame (synchronous replacement writes).
    pub sync_replacement_writes: u64,
    /// Pages written by foreground threads because the redo log was full
    /// (synchronous recoverability writes).
    pub sync_recoverability_writes: u64,
    /// Pages written by background flushing from the LRU tail / dirty region.
    pub lru_flushes: u64,
    /// Pages written by background flush-list (checkpoint) flushing.
    pub flush_list_flushes: u64,
    /// Background flush batches submitted.
    pub flush_batches: u64,
    /// Pages evicted (clean victims reused).
    pub evictions: u64,
    /// Pages read ahead (prefetch).
    pub prefetches: u64,
    /// Current free-list length.
    pub free_frames: u64,
    /// Current number of dirty pages.
    pub dirty_pages: u64,
    /// Frames in the pool.
    pub frames: u64,
    /// Per list mutex: name to counters (e.g. `lru`, `lru_m`, `lru_d`, `free`, `flush`).
    pub mutexes: BTreeMap<String, MutexStats>,
    /// Scheme-specific counters (pointer moves, scan lengths, TWB waits, ...).
    pub extra: BTreeMap<String, f64>,
}

impl PoolStats {
    /// Hits / (hits + misses); 1.0 when nothing was asked.
    #[must_use]
    pub fn hit_ratio(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            1.0
        } else {
            self.hits as f64 / total as f64
        }
    }

    /// Read stalls / misses (algorithms.md section 1); 0 when there were no misses.
    #[must_use]
    pub fn read_stall_ratio(&self) -> f64 {
        if self.misses == 0 {
            0.0
        } else {
            self.read_stalls as f64 / self.misses as f64
        }
    }

    /// Synchronous writes (replacement + recoverability) as a percentage of all page writes.
    #[must_use]
    pub fn sync_write_pct(&self) -> f64 {
        let sync = self.sync_replacement_writes + self.sync_recoverability_writes;
        let all = sync + self.lru_flushes + self.flush_list_flushes;
        if all == 0 {
            0.0
        } else {
            100.0 * sync as f64 / all as f64
        }
    }

    /// Counters accumulated since `earlier` (gauges such as `free_frames` keep their current value).
    #[must_use]
    pub fn since(&self, earlier: &PoolStats) -> PoolStats {
        let mutexes = self
            .mutexes
            .iter()
            .map(|(name, now)| {
                let before = earlier.mutexes.get(name).cloned().unwrap_or_default();
                let delta = MutexStats {
                    acquisitions: now.acquisitions.saturating_sub(before.acquisitions),
                    contended: now.contended.saturating_sub(before.contended),
                    wait_ns: now.wait_ns.saturating_sub(before.wait_ns),
                };
                (name.clone(), delta)
            })
            .collect();
        PoolStats {
            hits: self.hits.saturating_sub(earlier.hits),
            misses: self.misses.saturating_sub(earlier.misses),
            read_stalls: self.read_stalls.saturating_sub(earlier.read_stalls),
            fused_reads: self.fused_reads.saturating_sub(earlier.fused_reads),
            sync_replacement_writes: self
                .sync_replacement_writes
                .saturating_sub(earlier.sync_replacement_writes),
            sync_recoverability_writes: self
                .sync_recoverability_writes
                .saturating_sub(earlier.sync_recoverability_writes),
            lru_flushes: self.lru_flushes.saturating_sub(earlier.lru_flushes),
            flush_list_flushes: self
                .flush_list_flushes
                .saturating_sub(earlier.flush_list_flushes),
            flush_batches: self.flush_batches.saturating_sub(earlier.flush_batches),
            evictions: self.evictions.saturating_sub(earlier.evictions),
            prefetches: self.prefetches.saturating_sub(earlier.prefetches),
            free_frames: self.free_frames,
            dirty_pages: self.dirty_pages,
            frames: self.frames,
            mutexes,
            extra: self.extra.clone(),
        }
    }
}
