//! The background flusher thread.
//!
//! Each round (every `cleaner_period_ms` of device time, or at once when a miss signals it):
//! 1. WAR: write the whole TWB in one batch and empty it.
//! 2. RAW family (vanilla, CF-LRU, WAR, RW): InnoDB's LRU tail flush (`buf_flush_LRU_list`):
//!    walk at most the scan depth from the tail while the free list is shorter than the scan
//!    depth, free clean pages, write dirty ones as one batch, free them when written.
//!    LRU-C family: flush the dirty region from its tail, the fixed `lru_scan_depth` pages
//!    (basic) or all of it (dynamic batch write), and return the written frames to the free
//!    list. With the mutex split (`lru-c`) only LRU-D is taken; otherwise LRU-M as well, which
//!    is the single LRU mutex of basic LRU-C and DBW.
//! 3. Checkpoint flushing: InnoDB's adaptive flush-list flushing, for every scheme.
//!
//! Lock order as in `pool`; list mutexes are released before any write is submitted.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::error::Result;
use crate::pool::frame::{FrameId, IO_WRITE, NIL, Region};
use crate::pool::{PoolInner, Scheme};
use crate::replacement::lru::LruList;
use crate::writeback::adaptive::{AdaptiveState, FlushInputs};

/// InnoDB's `BUF_LRU_MIN_LEN`: the LRU flush leaves at least this many pages.
const LRU_MIN_LEN: usize = 256;

impl PoolInner {
    /// The cleaner thread's body; returns when the pool shuts down.
    pub(crate) fn cleaner_loop(&self) {
        let mut adaptive = AdaptiveState::default();
        let mut last_flushed = 0;
        while !self.shutting_down.load(Ordering::Acquire) {
            let start = Instant::now();
            self.counters.cleaner_rounds.fetch_add(1, Ordering::Relaxed);
            last_flushed = if self.check_poisoned().is_ok() {
                let _round = self.cleaner_round.lock();
                self.cleaner_round(&mut adaptive, last_flushed).unwrap_or(0)
            } else {
                0
            };
            let deadline = start + self.device_ms(self.config.cleaner_period_ms);
            let mut woken = self.cleaner_wakeup.lock();
            if !*woken && !self.shutting_down.load(Ordering::Acquire) {
                let _ = self.cleaner_cv.wait_until(&mut woken, deadline);
            }
            *woken = false;
        }
    }

    fn cleaner_round(&self, adaptive: &mut AdaptiveState, last_flushed: u64) -> Result<u64> {
        let mut flushed = 0;
        if let Some(twb) = &self.twb {
            flushed += twb.write_out(self)? as u64;
        }
        flushed += if self.is_lru_c() {
            self.flush_dirty_region()?
        } else {
            self.flush_lru_tail()?
        };
        flushed += self.flush_list_round(adaptive, last_flushed)?;
        Ok(flushed)
    }

    /// InnoDB's LRU tail flush. Returns pages written.
    fn flush_lru_tail(&self) -> Result<u64> {
        let depth = self.config.effective_scan_depth();
        let mut freed = Vec::new();
        let mut batch = Vec::new();
        {
            let mut lru = self.mutexes.lru_m.lock(&self.lru_m);
            let mut cursor = lru.tail();
            let mut scanned = 0;
            // InnoDB stops at BUF_LRU_MIN_LEN (256) pages left in the LRU.
            let min_len = LRU_MIN_LEN.min(self.frames.len() / 2);
            while cursor != NIL
                && scanned < depth
                && self.free_len.load(Ordering::Relaxed) + freed.len() + batch.len() < depth
                && lru.len().saturating_sub(freed.len() + batch.len()) > min_len
            {
                let prev = LruList::prev(&self.frames, cursor);
                let frame = self.frame(cursor);
                if frame.is_dirty() {
                    if frame.try_claim_io(IO_WRITE) {
                        batch.push(cursor);
                    }
                } else if self.try_evict_from(&mut lru, cursor) {
                    freed.push(cursor);
                }
                scanned += 1;
                cursor = prev;
            }
        }
        for id in freed {
            self.push_free(id);
        }
        // Each written page is freed as soon as its own write completes (InnoDB 5.7 frees LRU
        // flushed pages in the write completion).
        self.write_and_free(batch)
    }

    /// LRU-C's flusher: the dirty region, fixed batch (basic) or whole (DBW). Returns pages
    /// written.
    fn flush_dirty_region(&self) -> Result<u64> {
        let limit = if self.config.scheme == Scheme::LruCBasic {
            self.config.lru_scan_depth
        } else {
            usize::MAX
        };
        let mut freed = Vec::new();
        let batch = self.with_dirty_region(|dirty| {
            let mut batch = Vec::new();
            let mut cursor = dirty.tail();
            // Bound: the region's length.
            while cursor != NIL && batch.len() < limit {
                let prev = LruList::prev(&self.frames, cursor);
                let frame = self.frame(cursor);
                if frame.is_dirty() {
                    if frame.try_claim_io(IO_WRITE) {
                        batch.push(cursor);
                    }
                } else if self.try_evict_from(dirty, cursor) {
                    // Cleaned meanwhile by checkpoint flushing: free it at once.
                    freed.push(cursor);
                }
                cursor = prev;
            }
            batch
        });
        for id in freed {
            self.push_free(id);
        }
        // Frames go back to the free list as their writes complete, not at the end of the
        // whole (possibly large) batch.
        self.write_and_free(batch)
    }

    /// Writes a background batch, returning each written frame to the free list as its own
    /// write completes (if it is still unpinned and clean in the LRU or the dirty region).
    /// Returns pages written.
    fn write_and_free(&self, batch: Vec<FrameId>) -> Result<u64> {
        let mut written = 0u64;
        let result = self.write_frames_then(batch, false, &mut |id| {
            written += 1;
            self.free_written(id);
        });
        self.counters
            .lru_flushes
            .fetch_add(written, Ordering::Relaxed);
        result.map(|()| written)
    }

    /// Evicts a frame the flusher just wrote (`IO_WRITE` claimed) from whichever list holds it,
    /// releases its I/O state and frees it.
    fn free_written(&self, id: FrameId) {
        let evict_from = |list: &mut LruList, region: Region| {
            let ok = self.frame(id).region() == region && self.unmap_if_evictable(id, IO_WRITE);
            if ok {
                list.remove(&self.frames, id);
            }
            ok
        };
        let evicted = match self.frame(id).region() {
            Region::Lru => evict_from(&mut self.mutexes.lru_m.lock(&self.lru_m), Region::Lru),
            Region::Dirty => self.with_dirty_region(|dirty| evict_from(dirty, Region::Dirty)),
            Region::None | Region::Free => false,
        };
        self.frame(id).release_io(IO_WRITE);
        if evicted {
            self.push_free(id);
        }
    }

    /// Runs `f` on the dirty region under LRU-D, and under LRU-M first unless the mutex is
    /// split (basic LRU-C and DBW have one LRU mutex).
    pub(crate) fn with_dirty_region<T>(&self, f: impl FnOnce(&mut LruList) -> T) -> T {
        let outer = (!self.split_mutex()).then(|| self.mutexes.lru_m.lock(&self.lru_m));
        let mut dirty = self.mutexes.lru_d.lock(&self.lru_d);
        let result = f(&mut dirty);
        self.dirty_region_len.store(dirty.len(), Ordering::Release);
        drop(dirty);
        drop(outer);
        result
    }

    fn release_and_free(&self, written: &[FrameId], freed: Vec<FrameId>) {
        for &id in written {
            self.frame(id).release_io(IO_WRITE);
        }
        for id in freed {
            self.push_free(id);
        }
    }

    /// Adaptive flush-list (checkpoint) flushing. Returns pages written.
    fn flush_list_round(&self, adaptive: &mut AdaptiveState, last_flushed: u64) -> Result<u64> {
        let (dirty_pages, oldest_lsn) = {
            let flush = self.mutexes.flush.lock(&self.flush);
            (flush.len(), flush.oldest_lsn(&self.frames))
        };
        let inputs = FlushInputs {
            dirty_pages,
            pool_pages: self.frames.len(),
            current_lsn: self.log.current_lsn(),
            oldest_lsn,
            log_capacity: self.log.capacity(),
            last_pages_flushed: last_flushed,
        };
        let recommendation = adaptive.recommend(&self.config, &inputs);
        if recommendation.pages == 0 {
            return Ok(0);
        }
        self.flush_oldest(recommendation.pages as usize, recommendation.lsn_limit)
    }

    /// Writes up to `pages` of the oldest dirty pages below `lsn_limit`; they stay cached.
    pub(crate) fn flush_oldest(&self, pages: usize, lsn_limit: crate::page::Lsn) -> Result<u64> {
        let written = self.write_oldest(pages, lsn_limit)?;
        self.counters
            .flush_list_flushes
            .fetch_add(written, Ordering::Relaxed);
        Ok(written)
    }

    /// A synchronous recoverability write: every dirty page (and TWB page) older than
    /// `lsn_limit`, written by the calling thread. Bound: a fixed number of rounds, each
    /// writing what is dirty at its start.
    pub(crate) fn preflush(&self, lsn_limit: crate::page::Lsn) -> Result<u64> {
        let mut total = 0;
        for _ in 0..16 {
            if let Some(twb) = &self.twb
                && twb.oldest_lsn(self) != 0
                && twb.oldest_lsn(self) < lsn_limit
            {
                total += twb.write_out(self)? as u64;
            }
            let written = self.write_oldest(usize::MAX, lsn_limit)?;
            total += written;
            let oldest = self.oldest_unflushed_lsn();
            if written == 0 || oldest >= lsn_limit {
                break;
            }
        }
        self.counters
            .sync_recoverability_writes
            .fetch_add(total, Ordering::Relaxed);
        Ok(total)
    }

    fn write_oldest(&self, pages: usize, lsn_limit: crate::page::Lsn) -> Result<u64> {
        let candidates = {
            let flush = self.mutexes.flush.lock(&self.flush);
            flush.oldest(&self.frames, pages, lsn_limit)
        };
        let claimed = self.claim_for_write(candidates);
        let written = self.write_frames(claimed, false)?;
        self.release_and_free(&written, Vec::new());
        Ok(written.len() as u64)
    }
}
