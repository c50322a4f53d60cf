//! LRU-C's miss path (algorithms.md section 2, paper Algorithm 1).
//!
//! The pointer to the least-recently-used clean page is the tail of the mixed region: on a miss
//! with an empty free list, under LRU-M, dirty pages at the mixed tail are passed over (moved to
//! the head of the dirty region, which is the pointer moving toward the LRU head), and the first
//! clean, unpinned, idle page is re-validated and evicted. Scanning starts at the pointer, not at
//! the tail, so it is short. Pinned or busy clean pages are skipped in place. Only when no clean
//! page is left in the mixed region does the miss fall back to a single-page flush from the
//! dirty region's tail (a read stall).
//!
//! Invariant: every page in the dirty region was dirty (or being written) when the pointer
//! passed it. Lock order: LRU-M, then LRU-D for the splice.

use std::sync::atomic::Ordering;

use crate::error::Result;
use crate::miss::MISS_ITERATIONS;
use crate::pool::PoolInner;
use crate::pool::frame::{FrameId, IO_WRITE, NIL, Region};
use crate::replacement::lru::LruList;

impl PoolInner {
    pub(crate) fn lru_c_get_free_frame(&self) -> Result<FrameId> {
        let mut stalled = false;
        for n in 0..MISS_ITERATIONS {
            if let Some(id) = self.pop_free() {
                return Ok(id);
            }
            if let Some(id) = self.evict_at_pointer() {
                return Ok(id);
            }
            // Freeing a frame now needs a write: after a failed write the pool refuses.
            self.check_poisoned()?;
            self.wake_cleaner();
            if n > 1 {
                std::thread::sleep(self.device_ms(10));
            }
            if !stalled {
                stalled = true;
                self.counters.read_stalls.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(id) = self.single_page_flush_from_dirty_region()? {
                return Ok(id);
            }
        }
        Err(self.no_frame_error())
    }

    /// Advances the pointer past dirty pages and evicts the LRU clean page.
    fn evict_at_pointer(&self) -> Option<FrameId> {
        let mut mixed = self.mutexes.lru_m.lock(&self.lru_m);
        let mut passed = Vec::new();
        let mut victim = None;
        let mut cursor = mixed.tail();
        let mut scanned = 0u64;
        // Bound: the mixed region's length.
        while cursor != NIL {
            let prev = LruList::prev(&self.frames, cursor);
            let frame = self.frame(cursor);
            scanned += 1;
            if frame.is_dirty() || frame.io_state() == IO_WRITE {
                mixed.remove(&self.frames, cursor);
                passed.push(cursor);
            } else if self.try_evict_from(&mut mixed, cursor) {
                victim = Some(cursor);
                break;
            }
            cursor = prev;
        }
        self.counters.pointer_scans.fetch_add(1, Ordering::Relaxed);
        self.counters
            .pointer_scan_len
            .fetch_add(scanned, Ordering::Relaxed);
        if !passed.is_empty() {
            self.counters
                .pointer_moves
                .fetch_add(passed.len() as u64, Ordering::Relaxed);
            let mut dirty = self.mutexes.lru_d.lock(&self.lru_d);
            for &id in &passed {
                dirty.push_head(&self.frames, id);
            }
            self.dirty_region_len.store(dirty.len(), Ordering::Release);
        }
        victim
    }

    /// The read-stall fallback: write the dirty region's tail page synchronously and evict it.
    fn single_page_flush_from_dirty_region(&self) -> Result<Option<FrameId>> {
        let claimed = self.with_dirty_region(|dirty| {
            let mut cursor = dirty.tail();
            while cursor != NIL {
                let frame = self.frame(cursor);
                if frame.is_dirty() && !frame.is_pinned() && frame.try_claim_io(IO_WRITE) {
                    return Some(cursor);
                }
                cursor = LruList::prev(&self.frames, cursor);
            }
            None
        });
        let Some(victim) = claimed else {
            return Ok(None);
        };
        if !self.write_victim(victim)? {
            return Ok(None);
        }
        let evicted = self.with_dirty_region(|dirty| {
            let ok = self.frame(victim).region() == Region::Dirty
                && self.unmap_if_evictable(victim, IO_WRITE);
            if ok {
                dirty.remove(&self.frames, victim);
            }
            ok
        });
        self.frame(victim).release_io(IO_WRITE);
        Ok(evicted.then_some(victim))
    }
}
