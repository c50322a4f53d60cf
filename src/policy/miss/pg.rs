//! PostgreSQL's miss path (docs/algorithms.md section 5b; `BufferAlloc` and `StrategyGetBuffer` in
//! PostgreSQL 11): the victim is the first page the replacement order offers (for Clock Sweep:
//! the first unpinned buffer whose usage count reached zero), clean or dirty. A clean victim is
//! evicted; a dirty one is written by the backend itself (`FlushBuffer`, after flushing the WAL
//! to its LSN, which the core's write mechanism does) and then evicted. A miss that writes is
//! counted as a read stall, like InnoDB's single-page flush: it waited for a write before its
//! read.

use crate::core::frame::{FrameId, IO_WRITE};
use crate::core::instance::Instance;
use crate::core::order::Verdict;
use crate::core::parts::{Acquired, Acquisition, MissPath};
use crate::core::pool::Core;
use crate::error::{PageId, Result};

use super::{MISS_ITERATIONS, no_frame_error};

/// The top page the order offered.
pub(crate) enum Top {
    /// Clean, evicted: the frame is the caller's.
    Evicted(FrameId),
    /// Dirty, `IO_WRITE` claimed by the caller.
    Dirty(FrameId),
}

/// Offers the order's eviction sequence and stops at its first usable page: a clean one is
/// evicted, a dirty one is claimed for writing. Pinned or busy pages are passed.
pub(crate) fn take_top(core: &Core, instance: &Instance) -> Option<Top> {
    let mut order = instance.lock_order();
    let mut top = None;
    order.walk(&core.frames, &mut |id| {
        let frame = core.frame(id);
        if frame.is_pinned() {
            return Verdict::Skip;
        }
        if !frame.is_dirty() {
            if core.try_evict_clean(id) {
                top = Some(Top::Evicted(id));
                return Verdict::Take;
            }
            return Verdict::Skip;
        }
        if frame.try_claim_io(IO_WRITE) {
            top = Some(Top::Dirty(id));
            return Verdict::Stop;
        }
        Verdict::Skip
    });
    top
}

/// PostgreSQL's backend: evict the order's top page, writing it first if it is dirty.
#[derive(Debug, Clone, Copy, Default)]
pub struct BackendWrite;

impl MissPath for BackendWrite {
    fn name(&self) -> &'static str {
        "pg"
    }

    fn acquire(
        &self,
        core: &Core,
        instance: &Instance,
        _page: PageId,
        _read: bool,
    ) -> Result<Acquisition> {
        let mut stall_began: Option<u64> = None;
        // Bound: MISS_ITERATIONS; each takes a frame, writes, or waits (a short sleep from the
        // third on, as InnoDB's loop does: frames may all be busy in a background write).
        for n in 0..MISS_ITERATIONS {
            if let Some(id) = core.pop_free(instance) {
                return Ok(finish(id, stall_began));
            }
            match take_top(core, instance) {
                Some(Top::Evicted(id)) => return Ok(finish(id, stall_began)),
                Some(Top::Dirty(id)) => {
                    core.check_poisoned()?;
                    if stall_began.is_none() {
                        stall_began = Some(core.now_us());
                    }
                    if core.write_victim(id)? && core.evict_written(instance, id) {
                        return Ok(finish(id, stall_began));
                    }
                }
                None => {
                    core.check_poisoned()?;
                    core.wake_cleaner();
                    if n > 1 {
                        crate::sync::sleep(core.device_ms(1));
                    } else {
                        crate::sync::yield_now();
                    }
                }
            }
        }
        Err(no_frame_error(core))
    }
}

fn finish(id: FrameId, stall_began: Option<u64>) -> Acquisition {
    Acquired::Free(id).after_stall(stall_began)
}
