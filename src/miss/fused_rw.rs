//! RW: the fused read-write command on a read stall (algorithms.md section 4, An et al.,
//! PVLDB 15(9) 2022).
//!
//! Where the RAW path would write the dirty tail page and then read, RW sends one command that
//! carries both: the device takes the victim's data into its buffer and reads the missing page
//! into the same host frame, so the read does not wait for the flash program. The frame then
//! goes straight to the LRU head.
//!
//! Protocol: the victim is claimed (`IO_EVICT`), unlinked from the LRU and latched exclusive
//! while still mapped, so hits on it wait; the new page is mapped to the same frame before the
//! command, so concurrent misses on it wait too. After completion the victim is marked clean and
//! unmapped and the frame's page id becomes the new page; waiters on the victim see the id
//! change and retry (and read it back from the device, which has it).
//! On a device error the pool is poisoned and the victim stays cached and dirty.

use std::sync::atomic::Ordering;

use crate::device::IoRequest;
use crate::error::{Error, PageId, Result};
use crate::pool::frame::{FrameId, IO_EVICT, NIL};
use crate::pool::{LatchMode, PoolInner};
use crate::replacement::lru::LruList;

impl PoolInner {
    /// Picks the first dirty, unpinned, idle page from the LRU tail and takes it out of the LRU.
    pub(crate) fn rw_pick_victim(&self) -> Option<(FrameId, PageId)> {
        let victim = {
            let mut lru = self.mutexes.lru_m.lock(&self.lru_m);
            let mut cursor = lru.tail();
            let mut found = None;
            // Bound: the list length.
            while cursor != NIL {
                let frame = self.frame(cursor);
                if frame.is_dirty() && !frame.is_pinned() && frame.try_claim_io(IO_EVICT) {
                    // Never wait for a latch while holding the LRU mutex: skip busy pages.
                    // Re-check dirtiness once claimed: a flusher may have cleaned the page
                    // between the check above and the claim.
                    if frame.try_latch_exclusive() {
                        if frame.is_dirty() {
                            lru.remove(&self.frames, cursor);
                            found = Some(cursor);
                            break;
                        }
                        // SAFETY: taken just above.
                        unsafe { frame.unlatch_exclusive() };
                    }
                    frame.release_io(IO_EVICT);
                }
                cursor = LruList::prev(&self.frames, cursor);
            }
            found
        }?;
        Some((victim, self.frame(victim).page_id()))
    }

    /// Completes a miss on `page` with the fused command on `frame` (holding `victim_page`).
    /// `Ok(None)` means "retry" (someone else mapped the page first).
    pub(crate) fn fused_miss(
        &self,
        page: PageId,
        id: FrameId,
        victim_page: PageId,
        mode: LatchMode,
    ) -> Result<Option<FrameId>> {
        let frame = self.frame(id);
        {
            let mut shard = self.table.write(page);
            if shard.contains_key(&page) {
                drop(shard);
                self.rw_restore_victim(id);
                return Ok(None);
            }
            shard.insert(page, id);
            frame.pin();
        }
        self.counters.misses.fetch_add(1, Ordering::Relaxed);
        let newest = frame.newest_modification.load(Ordering::Acquire);
        let result = self.log.flush_to(newest).and_then(|()| {
            // SAFETY: latched exclusive by us.
            crate::page::stamp(unsafe { self.frame_bytes_mut(id) }, victim_page, newest);
            let request = IoRequest::fused(victim_page, page, self.frame_buffer(id));
            // SAFETY: the frame stays latched exclusive until the wait returns.
            let tickets = unsafe { self.device.submit(vec![request]) };
            crate::device::ticket::wait_all(tickets).map_err(|err| {
                self.poison(&err);
                Error::Device(err)
            })
        });
        if let Err(err) = result {
            self.table.write(page).remove(&page);
            frame.unpin();
            self.rw_restore_victim(id);
            return Err(err);
        }
        {
            let mut flush = self.mutexes.flush.lock(&self.flush);
            flush.remove(&self.frames, id);
        }
        {
            let mut shard = self.table.write(victim_page);
            shard.remove(&victim_page);
            frame.page.store(page, Ordering::Release);
        }
        frame.newest_modification.store(0, Ordering::Release);
        self.freed_page_clock.fetch_add(1, Ordering::Relaxed);
        self.counters.evictions.fetch_add(1, Ordering::Relaxed);
        self.counters.fused_reads.fetch_add(1, Ordering::Relaxed);
        self.counters
            .sync_replacement_writes
            .fetch_add(1, Ordering::Relaxed);
        if self.config.verify_checksums
            && let Err(err) = crate::page::verify(self.frame_bytes(id), page)
        {
            self.table.write(page).remove(&page);
            frame
                .page
                .store(crate::pool::frame::NO_PAGE, Ordering::Release);
            frame.release_io(IO_EVICT);
            // SAFETY: latched exclusive by us.
            unsafe { frame.unlatch_exclusive() };
            frame.unpin();
            // Waiters (on either page) see NO_PAGE and retry; the frame leaves circulation
            // until then, like a failed read (see `abandon_read`).
            return Err(err);
        }
        frame
            .first_access_ms
            .store(self.now_ms().max(1), Ordering::Relaxed);
        {
            let mut lru = self.mutexes.lru_m.lock(&self.lru_m);
            lru.push_head(&self.frames, id);
            self.note_made_young(frame);
        }
        frame.release_io(IO_EVICT);
        if mode == LatchMode::Shared {
            // SAFETY: held exclusive.
            unsafe { frame.downgrade() };
        }
        Ok(Some(id))
    }

    /// Puts an unused victim back at the LRU tail, unlatched and idle.
    fn rw_restore_victim(&self, id: FrameId) {
        let frame = self.frame(id);
        {
            let mut lru = self.mutexes.lru_m.lock(&self.lru_m);
            lru.push_tail(&self.frames, id);
        }
        frame.release_io(IO_EVICT);
        // SAFETY: latched exclusive by `rw_pick_victim`.
        unsafe { frame.unlatch_exclusive() };
    }
}
