//! The debug invariant checker (run by tests, ideally when the pool is quiet):
//! - every list is well linked, and its frames say they are on it;
//! - every frame is on at most one list; frames on no list are in flight (I/O claimed or pinned);
//! - the page table maps each page to a frame that holds it, and every mapped frame is on the
//!   LRU or in LRU-C's dirty region or in flight; free frames hold no page and are clean;
//! - the flush list is ordered and holds exactly the dirty frames;
//! - LRU-C: the dirty region holds only dirty pages or pages written since the pointer passed
//!   them (clean and about to be freed), never a page that was clean when passed.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use super::PoolInner;
use super::frame::{FrameId, IO_IDLE, NO_PAGE, Region};

/// Checks the pool; returns the first violation.
pub(crate) fn check(pool: &PoolInner) -> Result<(), String> {
    let lru = pool.lru_m.lock();
    let dirty = pool.lru_d.lock();
    let flush = pool.flush.lock();
    let free = pool.free.lock();
    lru.check(&pool.frames)?;
    dirty.check(&pool.frames)?;
    flush.check(&pool.frames)?;
    let mut on_list: HashSet<FrameId> = HashSet::new();
    let lists = [
        (
            Region::Lru,
            lru.iter_from_tail(&pool.frames).collect::<Vec<_>>(),
        ),
        (Region::Dirty, dirty.iter_from_tail(&pool.frames).collect()),
        (Region::Free, free.clone()),
    ];
    for (region, ids) in &lists {
        for &id in ids {
            if !on_list.insert(id) {
                return Err(format!("frame {id} is on two lists"));
            }
            if pool.frame(id).region() != *region {
                return Err(format!(
                    "frame {id} on {region:?} says {:?}",
                    pool.frame(id).region()
                ));
            }
        }
    }
    for &id in free.iter() {
        let frame = pool.frame(id);
        if frame.page_id() != NO_PAGE || frame.is_dirty() {
            return Err(format!("free frame {id} holds page or is dirty: {frame:?}"));
        }
    }
    for (index, frame) in pool.frames.iter().enumerate() {
        let id = index as FrameId;
        let in_flight = frame.io_state() != IO_IDLE || frame.is_pinned();
        if !on_list.contains(&id) && !in_flight {
            return Err(format!(
                "frame {id} is lost: on no list and not in flight: {frame:?}"
            ));
        }
        let flagged = frame.on_flush_list.load(Ordering::Relaxed);
        if frame.is_dirty() != flagged {
            return Err(format!(
                "frame {id}: dirty {} but on flush list {flagged}",
                frame.is_dirty()
            ));
        }
    }
    for (page, id) in pool.table.entries() {
        let frame = pool.frame(id);
        let holds = frame.page_id() == page;
        let in_flight = frame.io_state() != IO_IDLE || frame.is_pinned();
        if !holds && !in_flight {
            return Err(format!(
                "page {page} maps to frame {id} holding {}",
                frame.page_id()
            ));
        }
        if frame.region() == Region::Free {
            return Err(format!("page {page} maps to free frame {id}"));
        }
    }
    if flush.len() != pool.frames.iter().filter(|frame| frame.is_dirty()).count() {
        return Err("flush list length differs from the number of dirty frames".into());
    }
    Ok(())
}
