//! Miss paths (docs/architecture.md's second decision): how a foreground thread gets a frame for a
//! page that is not cached. Each implements [`crate::core::parts::MissPath`].
//!
//! - [`raw::Raw`]: InnoDB's `buf_LRU_get_free_block` (docs/algorithms.md section 1): free list,
//!   scan from the eviction end for a clean page, then a single-page flush (the read stall).
//!   Vanilla and the InnoDB-emulated CF-LRU.
//! - [`lru_c::LruCPointer`]: the LRU-C pointer (section 2, Algorithm 1): the victim is always the
//!   least recently used clean page; a read stall only when no clean page is left.
//! - [`war::War`]: on a read stall, dirty tail pages are copied to a temporary write buffer
//!   instead of being written first (section 3).
//! - [`fused_rw::FusedRw`]: on a read stall, one fused command writes the victim and reads the
//!   page (section 4).
//! - [`pg::BackendWrite`]: PostgreSQL's backend: the first page the order offers is the victim;
//!   if dirty, the backend writes it itself (section 5b).
//! - [`ace::Ace`]: ACE's writer and evictor: when the victim is dirty, write the next `n_w`
//!   dirty pages in eviction order concurrently, keep them cached clean, evict the victim
//!   (section 5).
//!
//! This file holds the parts of InnoDB's loop that RAW, WAR and RW share: `raw_loop` (steps 1
//! to 4 with the scheme's step 4 passed in), the clean scan and the single-page flush.

pub mod ace;
pub mod fused_rw;
pub mod lru_c;
pub mod pg;
pub mod raw;
pub mod war;

use crate::core::frame::{FrameId, IO_WRITE};
use crate::core::instance::Instance;
use crate::core::order::Verdict;
use crate::core::parts::{Acquired, Acquisition};
use crate::core::pool::Core;
use crate::error::{Error, Result};
use crate::sync::Ordering;

/// Iterations of a miss loop before it reports that no frame can be had (each iteration either
/// takes a frame, frees one, or waits for the cleaner).
pub const MISS_ITERATIONS: usize = 1000;

/// What step 4 of the loop does when no clean page was found.
pub(crate) trait StallStep {
    /// Whether reaching step 4 is a read stall (WAR's copy to its TWB is not).
    fn is_read_stall(&self) -> bool;
    /// Step 4: free a frame (or give one for the miss). `Ok(None)`: loop again.
    fn step(&self, core: &Core, instance: &Instance) -> Result<Option<Acquired>>;
}

/// InnoDB's `buf_LRU_get_free_block`, per iteration n = 0, 1, ...: (1) take a free frame;
/// (2) scan at most `scan_depth` pages in eviction order (the whole order when n > 0) for a
/// clean, unpinned, idle page and evict it; (3) wake the cleaner, and if n > 1 sleep 10 ms;
/// (4) the scheme's `stall` step. The wait of a read stall is recorded from its start to the
/// frame. Bound: [`MISS_ITERATIONS`].
pub(crate) fn raw_loop(
    core: &Core,
    instance: &Instance,
    scan_depth: usize,
    stall: &dyn StallStep,
) -> Result<Acquisition> {
    let mut stall_began: Option<u64> = None;
    let done = |acquired: Acquired, stall_began: Option<u64>| Ok(acquired.after_stall(stall_began));
    for n in 0..MISS_ITERATIONS {
        if let Some(id) = core.pop_free(instance) {
            return done(Acquired::Free(id), stall_began);
        }
        let depth = if n == 0 { scan_depth } else { usize::MAX };
        if let Some(id) = scan_for_clean(core, instance, depth) {
            return done(Acquired::Free(id), stall_began);
        }
        // Freeing a frame now needs a write: after a failed write the pool refuses.
        core.check_poisoned()?;
        core.wake_cleaner();
        if n > 1 {
            crate::sync::sleep(core.device_ms(10));
        }
        if stall_began.is_none() && stall.is_read_stall() {
            stall_began = Some(core.now_us());
        }
        if let Some(acquired) = stall.step(core, instance)? {
            return done(acquired, stall_began);
        }
    }
    Err(no_frame_error(core))
}

/// Step 2: evicts the first clean, unpinned, idle page among the first `depth` the order
/// offers. The frame is returned on no list.
pub(crate) fn scan_for_clean(core: &Core, instance: &Instance, depth: usize) -> Option<FrameId> {
    let mut order = instance.lock_order();
    let mut scanned = 0;
    let mut victim = None;
    order.walk(&core.frames, &mut |id| {
        if scanned >= depth {
            return Verdict::Stop;
        }
        scanned += 1;
        if core.try_evict_clean(id) {
            victim = Some(id);
            return Verdict::Take;
        }
        Verdict::Skip
    });
    drop(order);
    // `NP_clean` of the self-tuning controller: every page this user-thread scan looked at.
    core.counters
        .user_scan_clean_pages
        .fetch_add(scanned as u64, Ordering::Relaxed);
    victim
}

/// Claims (`IO_WRITE`) the first dirty, unpinned page the order offers.
pub(crate) fn claim_dirty_victim(core: &Core, instance: &Instance) -> Option<FrameId> {
    let mut order = instance.lock_order();
    let mut found = None;
    let mut scanned = 0u64;
    order.walk(&core.frames, &mut |id| {
        scanned += 1;
        let frame = core.frame(id);
        if frame.is_dirty() && !frame.is_pinned() && frame.try_claim_io(IO_WRITE) {
            found = Some(id);
            return Verdict::Stop;
        }
        Verdict::Skip
    });
    drop(order);
    if found.is_some() {
        // `NP_dirty`: the pages scanned to find the dirty victim a user thread writes.
        core.counters
            .user_scan_dirty_pages
            .fetch_add(scanned, Ordering::Relaxed);
    }
    found
}

/// Step 4 of vanilla: InnoDB's `buf_flush_single_page_from_LRU`: write the first flushable
/// dirty page from the eviction end synchronously, then evict it. Returns the freed frame, or
/// `None` when nothing could be flushed and evicted (the caller loops).
pub(crate) fn single_page_flush(core: &Core, instance: &Instance) -> Result<Option<FrameId>> {
    let Some(victim) = claim_dirty_victim(core, instance) else {
        return Ok(None);
    };
    if !core.write_victim(victim)? {
        return Ok(None);
    }
    Ok(core.evict_written(instance, victim).then_some(victim))
}

/// The error of a miss loop that ran out of iterations.
pub(crate) fn no_frame_error(core: &Core) -> Error {
    core.counters.free_waits.fetch_add(1, Ordering::Relaxed);
    Error::NoFreeFrame {
        frames: core.frames.len(),
    }
}
