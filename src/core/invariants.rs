//! The debug invariant checker (run by tests, ideally when the pool is quiet):
//! - every list of every instance is well linked, and its frames say they are on it;
//! - every frame is on at most one list, of its own instance; frames on no list are in flight
//!   (I/O claimed or pinned);
//! - the page table maps each page to a frame that holds it, in the page's instance, on the
//!   order or the side list or in flight; free frames hold no page and are clean;
//! - each flush list holds exactly its instance's dirty frames.

use std::collections::HashSet;

use crate::core::frame::{FrameId, IO_IDLE, NO_PAGE, Region};
use crate::core::instance::Instance;
use crate::core::pool::Core;
use crate::sync::Ordering;

/// Checks the pool; returns the first violation.
pub(crate) fn check(core: &Core) -> Result<(), String> {
    let mut on_list: HashSet<FrameId> = HashSet::new();
    for instance in &core.instances {
        check_instance(core, instance, &mut on_list)?;
    }
    for (index, frame) in core.frames.iter().enumerate() {
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
    for (page, id) in core.table.entries() {
        let frame = core.frame(id);
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
        if !core.instance_of_page(page).owns(id) {
            return Err(format!(
                "page {page} maps to frame {id} of another instance"
            ));
        }
    }
    Ok(())
}

fn check_instance(
    core: &Core,
    instance: &Instance,
    on_list: &mut HashSet<FrameId>,
) -> Result<(), String> {
    let (order, side, flush, free) = instance.raw_lists();
    let order = order.lock();
    let side = side.lock();
    let flush = flush.lock();
    let free = free.lock();
    let name = instance.index;
    order
        .check(&core.frames)
        .map_err(|e| format!("instance {name} order: {e}"))?;
    side.check(&core.frames)
        .map_err(|e| format!("instance {name} side list: {e}"))?;
    flush
        .check(&core.frames)
        .map_err(|e| format!("instance {name} flush list: {e}"))?;
    let lists = [
        (Region::Order, order.members(&core.frames)),
        (Region::Side, side.iter_from_tail(&core.frames).collect()),
        (Region::Free, free.clone()),
    ];
    for (region, ids) in &lists {
        for &id in ids {
            if !instance.owns(id) {
                return Err(format!(
                    "frame {id} on a list of instance {name}, not its own"
                ));
            }
            if !on_list.insert(id) {
                return Err(format!("frame {id} is on two lists"));
            }
            if core.frame(id).region() != *region {
                return Err(format!(
                    "frame {id} on {region:?} says {:?}",
                    core.frame(id).region()
                ));
            }
        }
    }
    for &id in free.iter() {
        let frame = core.frame(id);
        if frame.page_id() != NO_PAGE || frame.is_dirty() {
            return Err(format!("free frame {id} holds page or is dirty: {frame:?}"));
        }
    }
    let dirty = (0..instance.frame_count)
        .map(|offset| core.frame(instance.first_frame + offset as FrameId))
        .filter(|frame| frame.is_dirty())
        .count();
    if flush.len() != dirty {
        return Err(format!(
            "instance {name}: flush list has {} frames, {dirty} are dirty",
            flush.len()
        ));
    }
    Ok(())
}
