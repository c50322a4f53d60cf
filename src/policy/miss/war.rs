//! WAR: write-after-read with a temporary write buffer (docs/algorithms.md section 3).
//!
//! On a read stall, the foreground thread copies dirty pages from the LRU tail into the TWB
//! (`lru_scan_depth` slots), frees their frames at once and reads its page; the cleaner later
//! writes the whole TWB in one batch and empties it. While the TWB is being written, threads
//! that need it wait; when it is full they wake the cleaner and wait.
//!
//! The three correctness rules the public prototype breaks, kept here:
//! 1. A page in the TWB still holds back the checkpoint: `Twb::oldest_lsn` is part of
//!    `BufferPool::oldest_unflushed_lsn` until its write is complete.
//! 2. The WAL rule: the log is flushed to the newest modification of the TWB before its write.
//! 3. A miss on a page in the TWB is served from the TWB copy (`Twb::copy_out`), not by
//!    sleeping until the write finishes; once the write completes the page is on the device.
//!
//! Each pool instance has its own TWB (the prototype's is per instance). Victims are picked
//! under LRU-M (claimed and latched shared) and copied after it is released. The TWB is written
//! through the pool's write path (so the doublewrite covers it as in the prototype). Lock order:
//! TWB mutex → page-table shard (nested); the flush-list and LRU mutexes are taken after, not
//! nested. Slots are immutable from the copy until the TWB is emptied, so the batch write reads
//! them without the mutex.

use std::collections::HashMap;

use crate::core::frame::{FrameId, IO_EVICT, NO_PAGE};
use crate::core::instance::Instance;
use crate::core::order::Verdict;
use crate::core::parts::{Acquired, Acquisition, HeldCopy, MissPath};
use crate::core::pool::{Core, Scanner};
use crate::core::stats::ExtraStats;
use crate::core::stats::MutexCounters;
use crate::core::write_path::{PageWrite, WriteKind};
use crate::device::AlignedBuf;
use crate::error::{Error, PageId, Result};
use crate::page::Lsn;
use crate::sync::{AtomicU64, Condvar, Mutex, Ordering};

use super::{FreeBlockLoop, StallStep, raw_loop};

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

/// One instance's temporary write buffer.
#[derive(Debug)]
pub(crate) struct Twb {
    state: Mutex<TwbState>,
    changed: Condvar,
    slots: AlignedBuf,
    page_size: usize,
    capacity: usize,
    mutex: MutexCounters,
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
            mutex: MutexCounters::default(),
        }
    }

    /// Pages held now.
    pub(crate) fn occupancy(&self) -> usize {
        self.mutex.lock(&self.state).entries.len()
    }

    /// The oldest modification held (0 if empty).
    pub(crate) fn oldest_lsn(&self) -> Lsn {
        let state = self.mutex.lock(&self.state);
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
    pub(crate) fn copy_out(&self, page: PageId, out: &mut [u8]) -> Option<(usize, Lsn, Lsn)> {
        let state = self.mutex.lock(&self.state);
        let slot = *state.by_page.get(&page)?;
        let entry = state.entries.get(&slot)?;
        out.copy_from_slice(self.slot_bytes(slot));
        Some((slot, entry.oldest, entry.newest))
    }

    /// Drops the copy in `slot` now that the pool holds the page dirty, unless it is being
    /// written (then the write goes on, and the pool's write of the page waits for it).
    pub(crate) fn take_over(&self, page: PageId, slot: usize) {
        let mut state = self.mutex.lock(&self.state);
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
    pub(crate) fn in_flight(&self, page: PageId) -> bool {
        self.mutex.lock(&self.state).in_flight.contains(&page)
    }

    /// Reserves up to `want` slots. While the TWB is being written or full, wakes the cleaner
    /// and waits once (until the TWB changes, at most one cleaner period), then returns what it
    /// got, possibly nothing: the miss loop goes round again (WAR's "when it is full they loop";
    /// the miss loop bounds the retries).
    fn reserve(&self, core: &Core, waits: &AtomicU64, want: usize) -> Vec<usize> {
        let mut state = self.mutex.lock(&self.state);
        for attempt in 0..2 {
            if !state.writing && !state.free_slots.is_empty() {
                let take = want.min(state.free_slots.len());
                let at = state.free_slots.len() - take;
                return state.free_slots.split_off(at);
            }
            if attempt == 1 {
                break;
            }
            waits.fetch_add(1, Ordering::Relaxed);
            drop(state);
            core.wake_cleaner();
            state = self.state.lock();
            if state.writing || state.free_slots.is_empty() {
                // At most one cleaner period (InnoDB's second).
                let timeout = core.device_ms(1000);
                let _ = self.changed.wait_for(&mut state, timeout);
            }
        }
        Vec::new()
    }

    fn unreserve(&self, slots: impl IntoIterator<Item = usize>) {
        let mut state = self.mutex.lock(&self.state);
        state.free_slots.extend(slots);
        drop(state);
        self.changed.notify_all();
    }

    /// Writes every held page in one batch and empties the TWB. Returns pages written.
    pub(crate) fn write_out(&self, core: &Core) -> Result<usize> {
        let entries = {
            let mut state = self.mutex.lock(&self.state);
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
        let result = self.write_entries(core, &entries);
        let mut state = self.mutex.lock(&self.state);
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
        result.map(|()| entries.len())
    }

    /// Writes the entries through the pool's write path, after the WAL rule.
    fn write_entries(&self, core: &Core, entries: &[TwbEntry]) -> Result<()> {
        let newest = entries.iter().map(|entry| entry.newest).max().unwrap_or(0);
        core.log.flush_to(newest)?;
        let pages: Vec<PageWrite> = entries
            .iter()
            .map(|entry| PageWrite {
                page: entry.page,
                buf: self.slots.chunk_io_buffer(entry.slot, self.page_size),
            })
            .collect();
        let path = &core.parts.write_path;
        let mut failed = None;
        for chunk in pages.chunks(path.max_batch().max(1)) {
            core.counters.flush_batches.fetch_add(1, Ordering::Relaxed);
            // SAFETY (buffers): slots stay untouched until `writing` is cleared after this.
            let result = path.write(chunk, WriteKind::Batch, &mut |index, result| match result {
                Ok(()) => {
                    if let Some(write) = chunk.get(index) {
                        // SAFETY: the slot is immutable until the TWB is emptied.
                        let lsn = crate::page::page_lsn(unsafe { write.buf.as_slice() });
                        core.note_written(write.page, lsn);
                    }
                }
                Err(err) => {
                    failed.get_or_insert(err);
                }
            });
            if let Err(err) = result {
                failed.get_or_insert(err);
            }
            if failed.is_some() {
                break;
            }
        }
        match failed {
            None => Ok(()),
            Some(err) => {
                core.poison(&err);
                Err(Error::Device(err))
            }
        }
    }
}

/// WAR: the RAW loop whose step 4 copies dirty pages into the instance's TWB.
#[derive(Debug)]
pub struct War {
    scan_depth: usize,
    host: FreeBlockLoop,
    copy_batch: usize,
    twbs: Vec<Twb>,
    copies: AtomicU64,
    waits: AtomicU64,
    reads: AtomicU64,
    writes: AtomicU64,
}

impl War {
    /// WAR for `instances` instances, each with a TWB of `slots` pages of `page_size` bytes;
    /// a stall copies up to `copy_batch` pages; step 2 scans `scan_depth` pages.
    #[must_use]
    pub fn new(
        instances: usize,
        slots: usize,
        page_size: usize,
        copy_batch: usize,
        scan_depth: usize,
    ) -> Self {
        assert!(slots > 0 && copy_batch > 0, "a TWB holds pages");
        War {
            scan_depth,
            host: FreeBlockLoop::default(),
            copy_batch,
            twbs: (0..instances).map(|_| Twb::new(slots, page_size)).collect(),
            copies: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            reads: AtomicU64::new(0),
            writes: AtomicU64::new(0),
        }
    }

    /// The same WAR on MySQL `host`'s miss loop (5.7's by default).
    #[must_use]
    pub fn with_host(mut self, host: FreeBlockLoop) -> Self {
        self.host = host;
        self
    }

    fn twb(&self, instance: &Instance) -> &Twb {
        &self.twbs[instance.index]
    }

    /// WAR's step 4: move dirty tail pages into the TWB, freeing their frames.
    fn copy_tail_to_twb(&self, core: &Core, instance: &Instance) {
        let twb = self.twb(instance);
        let slots = twb.reserve(core, &self.waits, self.copy_batch);
        if slots.is_empty() {
            return;
        }
        // Under LRU-M only pick the victims (claim them and latch them shared); the copies
        // into the TWB are made after releasing it.
        let victims = claim_tail_for_twb(core, instance, slots.len());
        let mut slots = slots.into_iter();
        let mut freed = Vec::new();
        for &id in &victims {
            let Some(slot) = slots.next() else { break };
            if move_to_twb(core, instance, twb, id, slot) {
                freed.push(id);
            } else {
                twb.unreserve(std::iter::once(slot));
            }
        }
        twb.unreserve(slots);
        self.copies.fetch_add(freed.len() as u64, Ordering::Relaxed);
        for id in freed {
            core.push_free(instance, id);
        }
    }
}

/// Claims (`IO_EVICT`) and latches shared up to `want` dirty, unpinned pages in eviction order.
fn claim_tail_for_twb(core: &Core, instance: &Instance, want: usize) -> Vec<FrameId> {
    let mut order = instance.lock_order();
    let mut victims = Vec::with_capacity(want);
    core.walk_charged(&mut **order, Scanner::Foreground, &mut |id| {
        if victims.len() >= want {
            return Verdict::Stop;
        }
        let frame = core.frame(id);
        if frame.is_dirty() && !frame.is_pinned() && frame.try_claim_io(IO_EVICT) {
            // Re-check dirtiness once claimed and latched: a flusher may have cleaned the page
            // between the check and the claim.
            if frame.try_latch_shared() {
                if frame.is_dirty() {
                    victims.push(id);
                    return Verdict::Skip;
                }
                // SAFETY: taken just above.
                unsafe { frame.unlatch_shared() };
            }
            frame.release_io(IO_EVICT);
        }
        Verdict::Skip
    });
    victims
}

/// Copies a claimed, shared-latched dirty page into `slot`, publishes it in the TWB, unmaps it
/// and unlinks it from the order. Releases the latch and the claim either way; false if the
/// page was pinned meanwhile (it stays in the pool, nothing changed).
fn move_to_twb(core: &Core, instance: &Instance, twb: &Twb, id: FrameId, slot: usize) -> bool {
    let frame = core.frame(id);
    let page = frame.page_id();
    let oldest = frame.oldest_modification.load(Ordering::Acquire);
    let newest = frame.newest_modification.load(Ordering::Acquire);
    let copy = twb.slot_bytes_mut(slot);
    copy.copy_from_slice(core.frame_bytes(id));
    crate::page::stamp(copy, page, newest);
    // Unmap and publish under the TWB mutex, so a miss finds the page in the pool or, once it
    // is unmapped, waits for the mutex and finds it in the TWB. The shared latch is held until
    // then, so no writer changes the page after the copy: a writer would have to pin it first,
    // and the pin check below sees that.
    // Published in the TWB before it leaves the flush list: a checkpoint sees it in one.
    let moving = core.begin_held_move();
    let published = {
        let mut state = twb.mutex.lock(&twb.state);
        let mut shard = core.table.write(page);
        let ok = !frame.is_pinned() && shard.get(page) == Some(id);
        if ok {
            shard.remove(page);
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
    instance.lock_flush().remove(&core.frames, id);
    drop(moving);
    frame.newest_modification.store(0, Ordering::Release);
    frame.first_access_ms.store(0, Ordering::Relaxed);
    instance.lock_order().remove(&core.frames, id);
    instance.evictions.fetch_add(1, Ordering::Relaxed);
    frame.release_io(IO_EVICT);
    true
}

struct CopyToTwb<'a>(&'a War);

impl StallStep for CopyToTwb<'_> {
    fn is_read_stall(&self) -> bool {
        // WAR's step 4 copies instead of writing: not a read stall.
        false
    }

    fn step(&self, core: &Core, instance: &Instance) -> Result<Option<Acquired>> {
        self.0.copy_tail_to_twb(core, instance);
        Ok(None)
    }
}

impl MissPath for War {
    fn name(&self) -> &'static str {
        "war"
    }

    fn acquire(
        &self,
        core: &Core,
        instance: &Instance,
        _page: PageId,
        _read: bool,
    ) -> Result<Acquisition> {
        raw_loop(core, instance, self.scan_depth, self.host, &CopyToTwb(self))
    }

    fn holds_copies(&self) -> bool {
        true
    }

    fn fill_from_held(
        &self,
        _core: &Core,
        instance: &Instance,
        page: PageId,
        bytes: &mut [u8],
    ) -> Option<HeldCopy> {
        let (slot, oldest, newest) = self.twb(instance).copy_out(page, bytes)?;
        self.reads.fetch_add(1, Ordering::Relaxed);
        Some(HeldCopy {
            slot,
            oldest,
            newest,
        })
    }

    fn release_held(&self, _core: &Core, instance: &Instance, page: PageId, copy: HeldCopy) {
        self.twb(instance).take_over(page, copy.slot);
    }

    fn held_write_in_flight(&self, _core: &Core, instance: &Instance, page: PageId) -> bool {
        self.twb(instance).in_flight(page)
    }

    fn held_oldest_lsn(&self, _core: &Core) -> Lsn {
        self.twbs
            .iter()
            .map(Twb::oldest_lsn)
            .filter(|&lsn| lsn != 0)
            .min()
            .unwrap_or(0)
    }

    fn held_pages(&self, _core: &Core) -> usize {
        self.twbs.iter().map(Twb::occupancy).sum()
    }

    fn write_held(&self, core: &Core, instance: &Instance) -> Result<usize> {
        let written = self.twb(instance).write_out(core)?;
        self.writes.fetch_add(written as u64, Ordering::Relaxed);
        Ok(written)
    }

    fn extra_stats(&self, core: &Core, out: &mut ExtraStats) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed) as f64;
        out.counter("twb_copies", load(&self.copies));
        out.counter("twb_waits", load(&self.waits));
        out.counter("twb_reads", load(&self.reads));
        out.counter("twb_writes", load(&self.writes));
        out.gauge("twb_occupancy", self.held_pages(core) as f64);
        let mut mutex = crate::core::stats::MutexStats::default();
        for twb in &self.twbs {
            mutex.add(&twb.mutex.snapshot());
        }
        out.counter("twb_mutex_wait_ms", mutex.wait_ns as f64 / 1e6);
    }
}
