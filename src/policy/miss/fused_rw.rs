//! RW: the fused read-write command on a read stall (docs/algorithms.md section 4, An et al.,
//! PVLDB 15(9) 2022).
//!
//! Where the RAW path would write the dirty tail page and then read, RW sends one command that
//! carries both: the device takes the victim's data into its buffer and reads the missing page
//! into the same host frame, so the read does not wait for the flash program. The frame then
//! goes straight to the LRU head.
//!
//! **Protocol.** The victim is claimed (`IO_EVICT`) and then, under the page-table shard's
//! writer lock of the page it holds, checked to be pinned by nobody (the evictor's half of the
//! pin handshake in `core::frame`), and latched exclusive while still mapped; the new page is
//! mapped to the same frame before the command, so concurrent misses on it find it. A thread
//! that pins the frame afterwards sees `IO_EVICT` and backs off instead of waiting for the
//! latch: the frame is about to hold another page, and its next holder may wait
//! for a page that thread holds (issue 8's deadlock: a transaction holding page 20 pinned the
//! victim for page 31; the frame became page 15 and was held by a transaction waiting for page
//! 20). After completion the victim is marked clean and unmapped and the frame's page id becomes
//! the new page; threads that backed off look again and read the victim back from the device,
//! which has it. On a device error the pool is poisoned and the victim stays cached and dirty.
//!
//! **The victim's protection.** By default the victim is protected as any single-page flush
//! (the doublewrite copies it to a slot and syncs; the data file is synced after the command),
//! so the miss waits for two syncs. With `unsynced_victim` (the scheme part `+unsynced-victim`)
//! the command is all there is, as in the RW paper's MySQL (its public prototype's
//! `buf_flush_page_with_rw_cmd`): the WAL rule still holds (the log is flushed to the victim's
//! newest change first), the write is counted on the data file's sync gate so that the next
//! checkpoint's sync covers it, and nothing else: no doublewrite copy, no sync
//! (docs/policies.md, "RW as its paper ran it", which also says why the loop keeps its sleep
//! where the prototype spins).

use crate::core::frame::{FrameId, IO_EVICT, NO_PAGE};
use crate::core::instance::Instance;
use crate::core::order::{Placement, Verdict};
use crate::core::parts::{Acquired, Acquisition, MissPath};
use crate::core::pool::{Core, Scanner};
use crate::device::IoRequest;
use crate::error::{Error, PageId, Result};
use crate::sync::Ordering;

use super::{FreeBlockLoop, StallStep, raw_loop};

/// The RW miss path: RAW whose step 4 is the fused command.
#[derive(Debug, Clone)]
pub struct FusedRw {
    /// Pages scanned from the eviction end in step 2 of the first iteration.
    pub scan_depth: usize,
    /// The victim is written by the command only: no doublewrite copy, no sync.
    pub unsynced_victim: bool,
    /// MySQL 5.6's or 5.7's loop.
    pub host: FreeBlockLoop,
}

impl MissPath for FusedRw {
    fn name(&self) -> &'static str {
        "rw"
    }

    fn acquire(
        &self,
        core: &Core,
        instance: &Instance,
        page: PageId,
        read: bool,
    ) -> Result<Acquisition> {
        if read {
            let fused = Fused {
                page,
                unsynced_victim: self.unsynced_victim,
            };
            raw_loop(core, instance, self.scan_depth, self.host, &fused)
        } else {
            // A new page is not read: a plain single-page flush frees a frame for it.
            raw_loop(
                core,
                instance,
                self.scan_depth,
                self.host,
                &super::raw::SinglePageFlush,
            )
        }
    }
}

struct Fused {
    page: PageId,
    unsynced_victim: bool,
}

impl StallStep for Fused {
    fn is_read_stall(&self) -> bool {
        true
    }

    fn step(&self, core: &Core, instance: &Instance) -> Result<Option<Acquired>> {
        let Some((frame, victim_page)) = pick_victim(core, instance) else {
            return Ok(None);
        };
        fused_miss(core, instance, self, frame, victim_page).map(Some)
    }
}

/// Picks the first dirty, unpinned, idle page the order offers, claims it, latches it and takes
/// it out of the order (see the module docs for the order of claim and pin check).
fn pick_victim(core: &Core, instance: &Instance) -> Option<(FrameId, PageId)> {
    let mut order = instance.lock_order();
    let mut found = None;
    core.walk_charged(&mut **order, Scanner::Foreground, &mut |id| {
        let frame = core.frame(id);
        if !frame.is_dirty() || frame.is_pinned() {
            return Verdict::Skip;
        }
        let page = frame.page_id();
        if page == NO_PAGE {
            return Verdict::Skip;
        }
        // The evictor's half of the pin handshake (`core::frame`): claim, then check pins.
        if !frame.try_claim_io(IO_EVICT) {
            return Verdict::Skip;
        }
        let shard = core.table.write(page);
        if frame.is_pinned() || shard.get(page) != Some(id) {
            drop(shard);
            frame.release_io(IO_EVICT);
            return Verdict::Skip;
        }
        // Never wait for a latch while holding a list mutex: skip busy pages. Re-check
        // dirtiness once claimed: a flusher may have cleaned the page meanwhile.
        if frame.try_latch_exclusive() {
            if frame.is_dirty() {
                drop(shard);
                found = Some((id, page));
                return Verdict::Take;
            }
            // SAFETY: taken just above.
            unsafe { frame.unlatch_exclusive() };
        }
        frame.release_io(IO_EVICT);
        Verdict::Skip
    });
    found
}

/// Completes a miss on `page` with the fused command on `id` (holding `victim_page`).
fn fused_miss(
    core: &Core,
    instance: &Instance,
    fused: &Fused,
    id: FrameId,
    victim_page: PageId,
) -> Result<Acquired> {
    let page = fused.page;
    let frame = core.frame(id);
    {
        let mut shard = core.table.write(page);
        if shard.contains(page) {
            drop(shard);
            restore_victim(core, instance, id);
            return Ok(Acquired::Retry);
        }
        shard.insert(page, id);
        frame.pin();
    }
    let newest = frame.newest_modification.load(Ordering::Acquire);
    let result = core.log.flush_to(newest).and_then(|()| {
        // SAFETY: latched exclusive by us.
        crate::page::stamp(unsafe { core.frame_bytes_mut(id) }, victim_page, newest);
        fused_command(core, id, victim_page, page, fused.unsynced_victim).map_err(|err| {
            core.poison(&err);
            Error::Device(err)
        })
    });
    if let Err(err) = result {
        core.table.write(page).remove(page);
        frame.unpin();
        restore_victim(core, instance, id);
        return Err(err);
    }
    core.note_written(victim_page, newest);
    instance.lock_flush().remove(&core.frames, id);
    {
        let mut shard = core.table.write(victim_page);
        shard.remove(victim_page);
        frame.page.store(page, Ordering::Release);
    }
    frame.newest_modification.store(0, Ordering::Release);
    instance.evictions.fetch_add(1, Ordering::Relaxed);
    core.counters.fused_reads.fetch_add(1, Ordering::Relaxed);
    core.counters
        .sync_replacement_writes
        .fetch_add(1, Ordering::Relaxed);
    if core.config.verify_checksums
        && let Err(err) = core.verify_image(core.frame_bytes(id), page)
    {
        give_up_frame(core, instance, id, page);
        return Err(err);
    }
    frame
        .first_access_ms
        .store(core.now_ms().max(1), Ordering::Relaxed);
    core.insert_order(instance, id, Placement::Head);
    frame.release_io(IO_EVICT);
    Ok(Acquired::Ready(id))
}

/// The fused command writes the victim in place and reads `page` into the frame. By default
/// the victim is protected as any single-page flush is (the doublewrite copies it to a slot and
/// syncs first, the data file is synced after); `unsynced_victim`: the command alone, the
/// write counted for the next sync (see the module docs).
fn fused_command(
    core: &Core,
    id: FrameId,
    victim_page: PageId,
    page: PageId,
    unsynced_victim: bool,
) -> std::result::Result<(), crate::error::DeviceError> {
    let path = &core.parts.write_path;
    let token = if unsynced_victim {
        None
    } else {
        Some(path.before_single(victim_page, core.frame_buffer(id))?)
    };
    let request = IoRequest::fused(victim_page, page, core.frame_buffer(id));
    // SAFETY: the frame stays latched exclusive until the wait returns.
    let tickets = unsafe { core.device.submit(vec![request]) };
    let written = crate::device::ticket::wait_all(tickets);
    if let Some(token) = token {
        return written.and(path.after_single(token));
    }
    if written.is_ok() {
        path.count_unprotected_write();
    }
    written
}

/// After a fused read that does not verify: unmap the new page and return the frame to the
/// free list once nobody holds it (waiters on either page see `NO_PAGE` and retry).
fn give_up_frame(core: &Core, instance: &Instance, id: FrameId, page: PageId) {
    let frame = core.frame(id);
    core.table.write(page).remove(page);
    frame.page.store(NO_PAGE, Ordering::Release);
    frame.release_io(IO_EVICT);
    // SAFETY: latched exclusive by us.
    unsafe { frame.unlatch_exclusive() };
    frame.unpin();
    // Bound: waiters hold the pin for a few instructions before they see NO_PAGE.
    for spin in 0..1_000_000u32 {
        if !frame.is_pinned() {
            core.push_free(instance, id);
            return;
        }
        if spin > 100 {
            crate::sync::yield_now();
        }
    }
    // Leaked rather than risk handing out a frame someone still holds.
}

/// Puts an unused victim back at the eviction end, unlatched and idle.
fn restore_victim(core: &Core, instance: &Instance, id: FrameId) {
    let frame = core.frame(id);
    core.insert_order(instance, id, Placement::Tail);
    frame.release_io(IO_EVICT);
    // SAFETY: latched exclusive by `pick_victim`.
    unsafe { frame.unlatch_exclusive() };
}
