//! InnoDB's miss path, `buf_LRU_get_free_block` (MySQL 5.7), as algorithms.md section 1:
//!
//! per iteration n = 0, 1, ...: (1) take a free frame; (2) scan at most `lru_scan_depth` pages
//! from the LRU tail (the whole list when n > 0) for a clean, unpinned, idle page and evict it;
//! (3) wake the page cleaner, and if n > 1 sleep 10 ms; (4) single-page flush: write the first
//! flushable dirty page from the tail synchronously, then evict it. A miss that reaches (4) and
//! writes is a read stall. CF-LRU is this path with the scan depth set to its window.
//! WAR and RW replace step (4) (see `war` and `fused_rw`).

use std::sync::atomic::Ordering;

use crate::error::Result;
use crate::miss::{Acquired, MISS_ITERATIONS};
use crate::pool::frame::{FrameId, IO_WRITE, NIL};
use crate::pool::{PoolInner, Scheme};
use crate::replacement::lru::LruList;

impl PoolInner {
    pub(crate) fn raw_get_free_frame(&self) -> Result<Acquired> {
        let mut stalled = false;
        for n in 0..MISS_ITERATIONS {
            if let Some(id) = self.pop_free() {
                return Ok(Acquired::Free(id));
            }
            let depth = if n == 0 {
                self.config.effective_scan_depth()
            } else {
                usize::MAX
            };
            if let Some(id) = self.scan_tail_for_clean(depth) {
                return Ok(Acquired::Free(id));
            }
            // Freeing a frame now needs a write: after a failed write the pool refuses.
            self.check_poisoned()?;
            self.wake_cleaner();
            if n > 1 {
                std::thread::sleep(self.device_ms(10));
            }
            if !stalled && self.config.scheme != Scheme::War {
                // WAR's step 4 copies to its TWB instead of writing: not a read stall.
                stalled = true;
                self.counters.read_stalls.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(acquired) = self.on_read_stall()? {
                return Ok(acquired);
            }
        }
        Err(self.no_frame_error())
    }

    /// Step 2: evicts the first clean, unpinned, idle page within `depth` pages of the tail.
    pub(crate) fn scan_tail_for_clean(&self, depth: usize) -> Option<FrameId> {
        let mut lru = self.mutexes.lru_m.lock(&self.lru_m);
        let mut cursor = lru.tail();
        let mut scanned = 0;
        while cursor != NIL && scanned < depth {
            let prev = LruList::prev(&self.frames, cursor);
            if self.try_evict_from(&mut lru, cursor) {
                return Some(cursor);
            }
            scanned += 1;
            cursor = prev;
        }
        None
    }

    /// Step 4: InnoDB's `buf_flush_single_page_from_LRU`. Returns the freed frame, or `None`
    /// when nothing could be flushed and evicted (the caller loops).
    pub(crate) fn single_page_flush(&self) -> Result<Option<FrameId>> {
        let Some(victim) = self.claim_dirty_tail_page() else {
            return Ok(None);
        };
        if !self.write_victim(victim)? {
            return Ok(None);
        }
        let evicted = {
            let mut lru = self.mutexes.lru_m.lock(&self.lru_m);
            let frame = self.frame(victim);
            let ok = frame.region() == crate::pool::frame::Region::Lru
                && self.unmap_if_evictable(victim, IO_WRITE);
            if ok {
                lru.remove(&self.frames, victim);
            }
            ok
        };
        self.frame(victim).release_io(IO_WRITE);
        Ok(evicted.then_some(victim))
    }

    /// Writes a claimed victim in the calling thread (a synchronous replacement write, the
    /// read stall); returns whether it was written.
    pub(crate) fn write_victim(&self, victim: FrameId) -> Result<bool> {
        let written = self.write_frames(vec![victim], false)?;
        self.counters
            .sync_replacement_writes
            .fetch_add(written.len() as u64, Ordering::Relaxed);
        Ok(!written.is_empty())
    }

    /// Finds the first dirty page from the LRU tail whose I/O can be claimed for a write.
    fn claim_dirty_tail_page(&self) -> Option<FrameId> {
        let lru = self.mutexes.lru_m.lock(&self.lru_m);
        let mut cursor = lru.tail();
        // Bound: at most the list length.
        for _ in 0..lru.len() {
            if cursor == NIL {
                break;
            }
            let frame = self.frame(cursor);
            if frame.is_dirty() && !frame.is_pinned() && frame.try_claim_io(IO_WRITE) {
                return Some(cursor);
            }
            cursor = LruList::prev(&self.frames, cursor);
        }
        None
    }
}
