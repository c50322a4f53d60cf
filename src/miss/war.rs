//! WAR: write-after-read with a temporary write buffer (algorithms.md section 3).
//!
//! On a read stall, the foreground thread copies dirty pages from the LRU tail into the TWB
//! (`lru_scan_depth` slots), frees their frames at once and reads its page; the cleaner later
//! writes the whole TWB in one batch and empties it. While the TWB is being written, threads
//! that need it wait; when it is full they wake the cleaner and wait.
//!
//! The three correctness rules the public prototype breaks, kept here:
//! 1. A page in the TWB still holds back the checkpoint: [`Twb::oldest_lsn`] is part of
//!    `BufferPool::oldest_unflushed_lsn` until its write is complete.
//! 2. The WAL rule: the log is flushed to the newest modification of the TWB before its write.
//! 3. A miss on a page in the TWB is served from the TWB copy ([`Twb::copy_out`]), not by
//!    sleeping until the write finishes; once the write completes the page is on the device.
//!
//! Victims are picked under the LRU mutex (claimed and latched shared) and copied after it is
//! released. Lock order: TWB mutex → page-table shard (nested); the flush-list and LRU mutexes
//! are taken after, not nested. Slots are immutable from the copy until the TWB is emptied, so
//! the batch write reads them without the mutex.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use parking_lot::{Condvar, Mutex};

use crate::device::{AlignedBuf, IoRequest};
use crate::error::{Error, PageId, Result};
use crate::page::Lsn;
use crate::pool::PoolInner;
use crate::pool::frame::{FrameId, IO_EVICT, NIL, NO_PAGE};
use crate::replacement::lru::LruList;

#[derive(Debug, Clone, Copy)]
struct TwbEntry {
    page: PageId,
    slot: usize,
    oldest: Lsn,
    newest: Lsn,
    /// Part of the batch being written now.
    writing: bool,
}

/// Invariants: `by_page` maps a page to its newest copy's slot; a page has at most one entry
/// not being written (a newer copy replaces an older one that is not in flight), so one batch
/// never writes two versions of a page.
#[derive(Debug, Default)]
struct TwbState {
    entries: HashMap<usize, TwbEntry>,
    by_page: HashMap<PageId, usize>,
    free_slots: Vec<usize>,
    writing: bool,
    /// Pages of the batch being written.
    in_flight: std::collections::HashSet<PageId>,
}

impl TwbState {
    /// Publishes a copy; a held older copy that is not in flight is replaced.
    fn publish(&mut self, mut entry: TwbEntry) {
        if let Some(&old_slot) = self.by_page.get(&entry.page)
            && let Some(old) = self.entries.get(&old_slot).copied()
            && !old.writing
        {
            entry.oldest = entry.oldest.min(old.oldest);
            self.entries.remove(&old_slot);
            self.free_slots.push(old_slot);
        }
        self.by_page.insert(entry.page, entry.slot);
        self.entries.insert(entry.slot, entry);
    }
}

/// The temporary write buffer.
#[derive(Debug)]
pub(crate) struct Twb {
    state: Mutex<TwbState>,
    changed: Condvar,
    slots: AlignedBuf,
    page_size: usize,
    capacity: usize,
}

impl Twb {
    /// A TWB of `capacity` page slots.
    pub(crate) fn new(capacity: usize, page_size: usize) -> Self {
        let state = TwbState {
            free_slots: (0..capacity).rev().collect(),
            ..TwbState::default()
        };
        Twb {
            state: Mutex::new(state),
            changed: Condvar::new(),
            slots: AlignedBuf::new(capacity * page_size),
            page_size,
            capacity,
        }
    }

    /// Pages held now.
    pub(crate) fn occupancy(&self, pool: &PoolInner) -> usize {
        pool.mutexes.twb.lock(&self.state).entries.len()
    }

    /// The oldest modification held (0 if empty).
    pub(crate) fn oldest_lsn(&self, pool: &PoolInner) -> Lsn {
        let state = pool.mutexes.twb.lock(&self.state);
        state
            .entries
            .values()
            .map(|entry| entry.oldest)
            .min()
            .unwrap_or(0)
    }

    fn slot_bytes(&self, slot: usize) -> &[u8] {
        // SAFETY: a slot is written only between reservation and publication (by its reserver,
        // under the TWB's reservation) and read only after publication.
        unsafe { self.slots.chunk_io_buffer(slot, self.page_size).as_slice() }
    }

    #[allow(clippy::mut_from_ref)]
    fn slot_bytes_mut(&self, slot: usize) -> &mut [u8] {
        // SAFETY: see `slot_bytes`: the reserving thread is the slot's only user until it
        // publishes the entry.
        unsafe {
            self.slots
                .chunk_io_buffer(slot, self.page_size)
                .as_mut_slice()
        }
    }

    /// Serves a miss from the TWB: copies the page's newest held copy into `out` and returns
    /// its slot and modification LSNs. The caller must make its frame dirty with them and then
    /// call [`Twb::take_over`], so that the pool copy is the one written.
    pub(crate) fn copy_out(
        &self,
        pool: &PoolInner,
        page: PageId,
        out: &mut [u8],
    ) -> Option<(usize, Lsn, Lsn)> {
        let state = pool.mutexes.twb.lock(&self.state);
        let slot = *state.by_page.get(&page)?;
        let entry = state.entries.get(&slot)?;
        out.copy_from_slice(self.slot_bytes(slot));
        Some((slot, entry.oldest, entry.newest))
    }

    /// Drops the copy in `slot` now that the pool holds the page dirty, unless it is being
    /// written (then the write goes on, and the pool's write of the page waits for it).
    pub(crate) fn take_over(&self, pool: &PoolInner, page: PageId, slot: usize) {
        let mut state = pool.mutexes.twb.lock(&self.state);
        let removable = state
            .entries
            .get(&slot)
            .is_some_and(|entry| entry.page == page && !entry.writing);
        if removable {
            state.entries.remove(&slot);
            if state.by_page.get(&page) == Some(&slot) {
                state.by_page.remove(&page);
            }
            state.free_slots.push(slot);
            drop(state);
            self.changed.notify_all();
        }
    }

    /// Whether a copy of `page` is being written now: the pool must not write its own copy
    /// until that write completes, or the older version could land last.
    pub(crate) fn in_flight(&self, pool: &PoolInner, page: PageId) -> bool {
        pool.mutexes.twb.lock(&self.state).in_flight.contains(&page)
    }

    /// Reserves up to `want` slots. While the TWB is being written or full, wakes the cleaner
    /// and waits once (until the TWB changes, at most one cleaner period), then returns what it
    /// got, possibly nothing: the miss loop goes round again (WAR's "when it is full they loop";
    /// the miss loop bounds the retries).
    fn reserve(&self, pool: &PoolInner, want: usize) -> Vec<usize> {
        let mut state = pool.mutexes.twb.lock(&self.state);
        for attempt in 0..2 {
            if !state.writing && !state.free_slots.is_empty() {
                let take = want.min(state.free_slots.len());
                let at = state.free_slots.len() - take;
                return state.free_slots.split_off(at);
            }
            if attempt == 1 {
                break;
            }
            pool.counters.twb_waits.fetch_add(1, Ordering::Relaxed);
            drop(state);
            pool.wake_cleaner();
            state = self.state.lock();
            if state.writing || state.free_slots.is_empty() {
                let timeout = pool.device_ms(pool.config.cleaner_period_ms);
                let _ = self.changed.wait_for(&mut state, timeout);
            }
        }
        Vec::new()
    }

    fn unreserve(&self, pool: &PoolInner, slots: impl IntoIterator<Item = usize>) {
        let mut state = pool.mutexes.twb.lock(&self.state);
        state.free_slots.extend(slots);
        drop(state);
        self.changed.notify_all();
    }

    /// Writes every held page in one batch and empties the TWB. Returns pages written.
    pub(crate) fn write_out(&self, pool: &PoolInner) -> Result<usize> {
        let entries = {
            let mut state = pool.mutexes.twb.lock(&self.state);
            if state.writing || state.entries.is_empty() {
                return Ok(0);
            }
            state.writing = true;
            for entry in state.entries.values_mut() {
                entry.writing = true;
            }
            let batch = state.entries.values().copied().collect::<Vec<_>>();
            state.in_flight = batch.iter().map(|entry| entry.page).collect();
            batch
        };
        let result = self.write_entries(pool, &entries);
        let mut state = pool.mutexes.twb.lock(&self.state);
        state.writing = false;
        state.in_flight.clear();
        for entry in &entries {
            if result.is_ok() {
                state.entries.remove(&entry.slot);
                if state.by_page.get(&entry.page) == Some(&entry.slot) {
                    state.by_page.remove(&entry.page);
                }
                state.free_slots.push(entry.slot);
            } else if let Some(held) = state.entries.get_mut(&entry.slot) {
                held.writing = false;
            }
        }
        assert!(
            state.free_slots.len() + state.entries.len() <= self.capacity,
            "TWB slot leak"
        );
        drop(state);
        self.changed.notify_all();
        result.map(|()| {
            pool.counters
                .twb_writes
                .fetch_add(entries.len() as u64, Ordering::Relaxed);
            entries.len()
        })
    }

    fn write_entries(&self, pool: &PoolInner, entries: &[TwbEntry]) -> Result<()> {
        let newest = entries.iter().map(|entry| entry.newest).max().unwrap_or(0);
        pool.log.flush_to(newest)?;
        let requests = entries
            .iter()
            .map(|entry| {
                IoRequest::write(
                    entry.page,
                    self.slots.chunk_io_buffer(entry.slot, self.page_size),
                )
            })
            .collect();
        // SAFETY: slots stay untouched until `writing` is cleared after these complete.
        let tickets = unsafe { pool.device.submit(requests) };
        pool.counters.flush_batches.fetch_add(1, Ordering::Relaxed);
        crate::device::ticket::wait_all(tickets).map_err(|err| {
            pool.poison(&err);
            Error::Device(err)
        })
    }
}

impl PoolInner {
    /// WAR's step 4: move dirty tail pages into the TWB, freeing their frames.
    pub(crate) fn war_copy_tail_to_twb(&self) {
        let Some(twb) = &self.twb else {
            return;
        };
        let slots = twb.reserve(self, self.config.war_copy_batch);
        if slots.is_empty() {
            return;
        }
        // Under the LRU mutex only pick the victims (claim them and latch them shared); the
        // copies into the TWB are made after releasing it.
        let victims = self.claim_tail_for_twb(slots.len());
        let mut slots = slots.into_iter();
        let mut freed = Vec::new();
        for &id in &victims {
            let Some(slot) = slots.next() else { break };
            if self.move_to_twb(twb, id, slot) {
                freed.push(id);
            } else {
                twb.unreserve(self, std::iter::once(slot));
            }
        }
        twb.unreserve(self, slots);
        self.counters
            .twb_copies
            .fetch_add(freed.len() as u64, Ordering::Relaxed);
        for id in freed {
            self.push_free(id);
        }
    }

    /// Claims (`IO_EVICT`) and latches shared up to `want` dirty, unpinned pages from the LRU
    /// tail. Bound: the LRU length.
    fn claim_tail_for_twb(&self, want: usize) -> Vec<FrameId> {
        let lru = self.mutexes.lru_m.lock(&self.lru_m);
        let mut victims = Vec::with_capacity(want);
        let mut cursor = lru.tail();
        while cursor != NIL && victims.len() < want {
            let frame = self.frame(cursor);
            if frame.is_dirty() && !frame.is_pinned() && frame.try_claim_io(IO_EVICT) {
                // Re-check dirtiness once claimed and latched: a flusher may have cleaned the
                // page between the check and the claim.
                if frame.try_latch_shared() {
                    if frame.is_dirty() {
                        victims.push(cursor);
                        cursor = LruList::prev(&self.frames, cursor);
                        continue;
                    }
                    // SAFETY: taken just above.
                    unsafe { frame.unlatch_shared() };
                }
                frame.release_io(IO_EVICT);
            }
            cursor = LruList::prev(&self.frames, cursor);
        }
        victims
    }

    /// Copies a claimed, shared-latched dirty page into `slot`, publishes it in the TWB, unmaps
    /// it and unlinks it from the LRU. Releases the latch and the claim either way; false if the
    /// page was pinned meanwhile (it stays in the pool, nothing changed).
    fn move_to_twb(&self, twb: &Twb, id: FrameId, slot: usize) -> bool {
        let frame = self.frame(id);
        let page = frame.page_id();
        let oldest = frame.oldest_modification.load(Ordering::Acquire);
        let newest = frame.newest_modification.load(Ordering::Acquire);
        let copy = twb.slot_bytes_mut(slot);
        copy.copy_from_slice(self.frame_bytes(id));
        crate::page::stamp(copy, page, newest);
        // Unmap and publish under the TWB mutex, so a miss finds the page in the pool or,
        // once it is unmapped, waits for the mutex and finds it in the TWB. The shared latch is
        // held until then, so no writer changes the page after the copy: a writer would have
        // to pin it first, and the pin check below sees that.
        let published = {
            let mut state = self.mutexes.twb.lock(&twb.state);
            let mut shard = self.table.write(page);
            let ok = !frame.is_pinned() && shard.get(&page) == Some(&id);
            if ok {
                shard.remove(&page);
                frame.page.store(NO_PAGE, Ordering::Release);
                drop(shard);
                state.publish(TwbEntry {
                    page,
                    slot,
                    oldest,
                    newest,
                    writing: false,
                });
            }
            ok
        };
        // SAFETY: latched shared by `claim_tail_for_twb`.
        unsafe { frame.unlatch_shared() };
        if !published {
            frame.release_io(IO_EVICT);
            return false;
        }
        {
            let mut flush = self.mutexes.flush.lock(&self.flush);
            flush.remove(&self.frames, id);
        }
        frame.newest_modification.store(0, Ordering::Release);
        frame.first_access_ms.store(0, Ordering::Relaxed);
        {
            let mut lru = self.mutexes.lru_m.lock(&self.lru_m);
            lru.remove(&self.frames, id);
        }
        self.freed_page_clock.fetch_add(1, Ordering::Relaxed);
        self.counters.evictions.fetch_add(1, Ordering::Relaxed);
        frame.release_io(IO_EVICT);
        true
    }
}
