//! LRU-C's miss path (docs/algorithms.md section 2, paper Algorithm 1).
//!
//! The pointer to the least-recently-used clean page is the eviction end of the mixed region
//! (the instance's replacement order): on a miss with an empty free list, under LRU-M, dirty
//! pages the order offers are passed over (detached and moved to the head of the dirty region,
//! the instance's side list: this is the pointer moving toward the LRU head), and the first
//! clean, unpinned, idle page is re-validated and evicted. Scanning starts at the pointer, not
//! at the tail of the whole list, so it is short. Pinned or busy clean pages are skipped in
//! place. Only when no clean page is left in the mixed region does the miss fall back to a
//! single-page flush from the dirty region's tail (a read stall).
//!
//! Invariant: every page in the dirty region was dirty (or being written) when the pointer
//! passed it. Lock order: LRU-M, then LRU-D for the splice. With `split_mutex` (the `lru-c`
//! preset) the flusher works under LRU-D alone and a hit in the dirty region takes LRU-M then
//! LRU-D; without it (basic LRU-C, DBW) every dirty-region access also takes LRU-M.

use crate::core::frame::{FrameId, IO_WRITE, NIL, Region};
use crate::core::instance::Instance;
use crate::core::lru_list::LruList;
use crate::core::order::{Placement, Verdict};
use crate::core::parts::{Acquired, Acquisition, MissPath};
use crate::core::pool::{Core, Scanner};
use crate::core::stats::ExtraStats;
use crate::error::{PageId, Result};
use crate::sync::{AtomicU64, Ordering};

use super::{MISS_ITERATIONS, no_frame_error};

/// The LRU-C pointer.
#[derive(Debug, Default)]
pub struct LruCPointer {
    /// LRU-M / LRU-D split.
    pub split: bool,
    pointer_moves: AtomicU64,
    pointer_scans: AtomicU64,
    pointer_scan_len: AtomicU64,
    dirty_region_hits: AtomicU64,
}

impl LruCPointer {
    /// The pointer, with or without the mutex split.
    #[must_use]
    pub fn new(split: bool) -> Self {
        LruCPointer {
            split,
            ..LruCPointer::default()
        }
    }

    /// Advances the pointer past dirty pages and evicts the LRU clean page.
    fn evict_at_pointer(&self, core: &Core, instance: &Instance) -> Option<FrameId> {
        let mut mixed = instance.lock_order();
        let mut passed = Vec::new();
        let mut victim = None;
        let mut scanned = 0u64;
        core.walk_charged(&mut **mixed, Scanner::Foreground, &mut |id| {
            let frame = core.frame(id);
            scanned += 1;
            if frame.is_dirty() || frame.io_state() == IO_WRITE {
                passed.push(id);
                return Verdict::Detach;
            }
            if core.try_evict_clean(id) {
                victim = Some(id);
                return Verdict::Take;
            }
            Verdict::Skip
        });
        self.pointer_scans.fetch_add(1, Ordering::Relaxed);
        self.pointer_scan_len.fetch_add(scanned, Ordering::Relaxed);
        if !passed.is_empty() {
            self.pointer_moves
                .fetch_add(passed.len() as u64, Ordering::Relaxed);
            let mut dirty = instance.lock_side();
            for &id in &passed {
                dirty.push_head(&core.frames, id);
            }
            instance.set_side_len(dirty.len());
        }
        victim
    }

    /// The read-stall fallback: write the dirty region's tail page synchronously and evict it.
    fn flush_from_dirty_region(core: &Core, instance: &Instance) -> Result<Option<FrameId>> {
        let claimed = core.with_side(instance, |dirty| {
            let mut cursor = dirty.tail();
            let mut scanned = 0u64;
            let mut claimed = None;
            // Bound: the region's length.
            while cursor != NIL {
                scanned += 1;
                let frame = core.frame(cursor);
                if frame.is_dirty() && !frame.is_pinned() && frame.try_claim_io(IO_WRITE) {
                    claimed = Some(cursor);
                    break;
                }
                cursor = LruList::prev(&core.frames, cursor);
            }
            core.hold_list_scan(scanned, Scanner::Foreground);
            claimed
        });
        let Some(victim) = claimed else {
            return Ok(None);
        };
        if !core.write_victim(victim)? {
            return Ok(None);
        }
        Ok(core.evict_written(instance, victim).then_some(victim))
    }
}

impl MissPath for LruCPointer {
    fn name(&self) -> &'static str {
        "lru-c"
    }

    fn acquire(
        &self,
        core: &Core,
        instance: &Instance,
        _page: PageId,
        _read: bool,
    ) -> Result<Acquisition> {
        let mut stall_began: Option<u64> = None;
        let done =
            |id: FrameId, stall_began: Option<u64>| Ok(Acquired::Free(id).after_stall(stall_began));
        for n in 0..MISS_ITERATIONS {
            if let Some(id) = core.pop_free(instance) {
                return done(id, stall_began);
            }
            if let Some(id) = self.evict_at_pointer(core, instance) {
                return done(id, stall_began);
            }
            // Freeing a frame now needs a write: after a failed write the pool refuses.
            core.check_poisoned()?;
            core.wake_cleaner();
            if n > 1 {
                crate::sync::sleep(core.device_ms(10));
            }
            if stall_began.is_none() {
                stall_began = Some(core.now_us());
            }
            if let Some(id) = Self::flush_from_dirty_region(core, instance)? {
                return done(id, stall_began);
            }
        }
        Err(no_frame_error(core))
    }

    fn uses_side_list(&self) -> bool {
        true
    }

    fn split_mutex(&self) -> bool {
        self.split
    }

    /// A hit in the dirty region (rare): LRU-M then LRU-D, back to the head of the mixed
    /// region.
    fn side_hit(&self, core: &Core, instance: &Instance, id: FrameId) {
        let frame = core.frame(id);
        let context = core.hit_context(instance);
        let mut mixed = instance.lock_order();
        let mut dirty = instance.lock_side();
        if frame.region() == Region::Side {
            dirty.remove(&core.frames, id);
            instance.set_side_len(dirty.len());
            mixed.insert(&core.frames, id, Placement::Head, &context);
            self.dirty_region_hits.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn extra_stats(&self, core: &Core, out: &mut ExtraStats) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed) as f64;
        out.counter("pointer_moves", load(&self.pointer_moves));
        out.counter("pointer_scans", load(&self.pointer_scans));
        out.counter("pointer_scan_len", load(&self.pointer_scan_len));
        out.counter("dirty_region_hits", load(&self.dirty_region_hits));
        let region: usize = core.instances.iter().map(Instance::side_len).sum();
        out.gauge("dirty_region_pages", region as f64);
    }
}
