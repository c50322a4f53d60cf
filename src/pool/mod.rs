//! The buffer pool: a fixed set of frames over a [`Device`], a sharded page table, per-frame
//! latches and pins, the free list, the LRU list (for LRU-C: the mixed region and the dirty
//! region) and the flush list; the miss path and write-back are chosen by the [`Scheme`].
//!
//! ```
//! use std::sync::Arc;
//! use flashbuf::device::{memory::MemoryDevice, SharedDevice};
//! use flashbuf::pool::{BufferPool, PoolConfig, Scheme};
//!
//! let device: SharedDevice = Arc::new(MemoryDevice::new(4096, 1024).unwrap());
//! let pool = BufferPool::open(device, PoolConfig::for_scheme(Scheme::LruC, 64)).unwrap();
//! {
//!     let mut page = pool.write(7).unwrap();
//!     flashbuf::page::payload_mut(page.data_mut())[0] = 42;
//! } // the write guard marks the page dirty
//! assert_eq!(flashbuf::page::payload(pool.read(7).unwrap().data())[0], 42);
//! pool.shutdown().unwrap();
//! ```
//!
//! **Lock order** (never take an earlier one while holding a later one):
//! `lru_m` (LRU list / mixed region) → `lru_d` (dirty region) → `flush` (flush list) → `twb`
//! → `free` → page-table shard. A page latch may be taken blocking only while holding none of
//! these; under a list mutex only `try_latch_*` is used. No I/O is issued while holding any of
//! them (rule of the house); waiting for I/O happens with at most page latches held.
//!
//! Frames in flight (being read in, evicted, or moved) are on no list; the invariant checker
//! accounts for them through their I/O state and pins.

pub mod config;
pub mod flush_list;
pub mod frame;
mod guard;
pub(crate) mod invariants;
pub mod log;
pub mod page_table;
pub mod stats;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

pub use config::{PoolConfig, Scheme};
pub use guard::{PageReadGuard, PageWriteGuard};
pub use log::{NullLog, RedoLog};
pub use stats::{MutexStats, PoolStats};

use crate::device::{AlignedBuf, IoBuffer, SharedDevice};
use crate::error::{DeviceError, Error, PageId, Result};
use crate::miss::war::Twb;
use crate::replacement::lru::LruList;
use flush_list::FlushList;
use frame::{Frame, FrameId, IO_READ, NO_PAGE, Region};
use page_table::PageTable;
use stats::MutexCounters;

/// Retries of the fetch loop before giving up (each retry follows a frame reuse race).
const FETCH_RETRIES: usize = 10_000;

/// Live counters.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub read_stalls: AtomicU64,
    pub fused_reads: AtomicU64,
    pub sync_replacement_writes: AtomicU64,
    pub sync_recoverability_writes: AtomicU64,
    pub lru_flushes: AtomicU64,
    pub flush_list_flushes: AtomicU64,
    pub flush_batches: AtomicU64,
    pub evictions: AtomicU64,
    pub pointer_moves: AtomicU64,
    pub pointer_scans: AtomicU64,
    pub pointer_scan_len: AtomicU64,
    pub dirty_region_hits: AtomicU64,
    pub max_flush_batch: AtomicU64,
    pub twb_copies: AtomicU64,
    pub twb_waits: AtomicU64,
    pub twb_reads: AtomicU64,
    pub twb_writes: AtomicU64,
    pub cleaner_rounds: AtomicU64,
    pub free_waits: AtomicU64,
}

/// Mutex counters per list mutex.
#[derive(Debug, Default)]
pub(crate) struct MutexSet {
    pub lru_m: MutexCounters,
    pub lru_d: MutexCounters,
    pub flush: MutexCounters,
    pub free: MutexCounters,
    pub twb: MutexCounters,
}

/// Shared state of a pool (the cleaner thread holds an `Arc` of it).
#[derive(Debug)]
pub(crate) struct PoolInner {
    pub config: PoolConfig,
    pub device: SharedDevice,
    pub log: Arc<dyn RedoLog>,
    pub page_size: usize,
    pub pages: u64,
    pub time_scale: f64,
    epoch: Instant,
    arena: AlignedBuf,
    pub frames: Box<[Frame]>,
    pub table: PageTable,
    pub free: Mutex<Vec<FrameId>>,
    pub free_len: AtomicUsize,
    /// The LRU list; for LRU-C, its mixed region (head .. pointer).
    pub lru_m: Mutex<LruList>,
    /// LRU-C's dirty region (pointer .. tail); empty for other schemes.
    pub lru_d: Mutex<LruList>,
    pub dirty_region_len: AtomicUsize,
    pub flush: Mutex<FlushList>,
    pub twb: Option<Twb>,
    pub counters: Counters,
    pub mutexes: MutexSet,
    /// InnoDB's `freed_page_clock`: evictions so far.
    pub freed_page_clock: AtomicU64,
    poisoned: Mutex<Option<DeviceError>>,
    poisoned_flag: AtomicBool,
    pub cleaner_wakeup: Mutex<bool>,
    /// Held by the cleaner during a round, so the invariant checker can run between rounds.
    pub cleaner_round: Mutex<()>,
    pub cleaner_cv: Condvar,
    pub shutting_down: AtomicBool,
}

/// A buffer pool. Dropping it stops its background thread; call [`BufferPool::shutdown`] to
/// also learn about errors and to flush.
#[derive(Debug)]
pub struct BufferPool {
    inner: Arc<PoolInner>,
    cleaner: Mutex<Option<JoinHandle<()>>>,
}

/// Whether a fetch wants the latch shared or exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LatchMode {
    Shared,
    Exclusive,
}

impl BufferPool {
    /// Opens a pool over `device` with no redo log (LSNs are counted, never logged).
    ///
    /// # Errors
    /// Bad configuration, or a scheme the device cannot run (`rw` needs the fused command).
    pub fn open(device: SharedDevice, config: PoolConfig) -> Result<Self> {
        Self::open_with_log(device, config, Arc::new(NullLog::default()))
    }

    /// Opens a pool whose page writes obey the WAL rule of `log`.
    ///
    /// # Errors
    /// As [`BufferPool::open`].
    pub fn open_with_log(
        device: SharedDevice,
        config: PoolConfig,
        log: Arc<dyn RedoLog>,
    ) -> Result<Self> {
        config.validate()?;
        let info = device.info().clone();
        if config.scheme == Scheme::Rw && !info.supports_fused_rw {
            return Err(Error::Config(format!(
                "scheme `rw` needs the fused read-write command, which device {} does not \
                 support (use an emulated SSD, e.g. emu:ssd-a)",
                info.name
            )));
        }
        let frames = config.frames;
        let arena_bytes = frames
            .checked_mul(info.page_size)
            .ok_or_else(|| Error::Config(format!("{frames} frames do not fit in memory")))?;
        let lru_m = LruList::new(Region::Lru, config.old_blocks_pct);
        let twb =
            (config.scheme == Scheme::War).then(|| Twb::new(config.lru_scan_depth, info.page_size));
        let inner = PoolInner {
            device,
            log,
            page_size: info.page_size,
            pages: info.pages,
            time_scale: info.time_scale.max(f64::MIN_POSITIVE),
            epoch: Instant::now(),
            arena: AlignedBuf::new(arena_bytes),
            frames: (0..frames).map(|_| Frame::default()).collect(),
            table: PageTable::new(frames),
            free: Mutex::new(Vec::with_capacity(frames)),
            free_len: AtomicUsize::new(0),
            lru_m: Mutex::new(lru_m),
            lru_d: Mutex::new(LruList::new(Region::Dirty, 0)),
            dirty_region_len: AtomicUsize::new(0),
            flush: Mutex::new(FlushList::new()),
            twb,
            counters: Counters::default(),
            mutexes: MutexSet::default(),
            freed_page_clock: AtomicU64::new(0),
            poisoned: Mutex::new(None),
            poisoned_flag: AtomicBool::new(false),
            cleaner_wakeup: Mutex::new(false),
            cleaner_round: Mutex::new(()),
            cleaner_cv: Condvar::new(),
            shutting_down: AtomicBool::new(false),
            config,
        };
        // Every frame starts on the free list (last frame popped first: order is irrelevant).
        for id in (0..frames as FrameId).rev() {
            inner.push_free(id);
        }
        let inner = Arc::new(inner);
        let cleaner_inner = Arc::clone(&inner);
        let cleaner = std::thread::Builder::new()
            .name("flashbuf-cleaner".into())
            .spawn(move || cleaner_inner.cleaner_loop())
            .map_err(|err| Error::io("starting the page cleaner thread", err))?;
        Ok(BufferPool {
            inner,
            cleaner: Mutex::new(Some(cleaner)),
        })
    }

    /// Latches `page` shared, reading it in on a miss.
    ///
    /// # Errors
    /// Page out of range, corrupt page, device error, no frame available.
    pub fn read(&self, page: PageId) -> Result<PageReadGuard<'_>> {
        let frame = self.inner.fetch(page, LatchMode::Shared, true)?;
        Ok(PageReadGuard::new(&self.inner, frame))
    }

    /// Latches `page` exclusive, reading it in on a miss; the guard marks it dirty if modified.
    ///
    /// # Errors
    /// As [`BufferPool::read`], plus [`Error::Poisoned`] after a failed write.
    pub fn write(&self, page: PageId) -> Result<PageWriteGuard<'_>> {
        self.inner.check_poisoned()?;
        let frame = self.inner.fetch(page, LatchMode::Exclusive, true)?;
        Ok(PageWriteGuard::new(&self.inner, frame))
    }

    /// Latches `page` exclusive without reading it: the frame starts zeroed (a new page, as
    /// InnoDB's `buf_page_create`). If the page is cached, its cached contents are kept.
    ///
    /// # Errors
    /// As [`BufferPool::write`].
    pub fn create(&self, page: PageId) -> Result<PageWriteGuard<'_>> {
        self.inner.check_poisoned()?;
        let frame = self.inner.fetch(page, LatchMode::Exclusive, false)?;
        Ok(PageWriteGuard::new(&self.inner, frame))
    }

    /// Pages on the device (valid ids are `0..pages()`).
    pub fn pages(&self) -> u64 {
        self.inner.pages
    }

    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.inner.page_size
    }

    /// The configuration.
    pub fn config(&self) -> &PoolConfig {
        &self.inner.config
    }

    /// The device.
    pub fn device(&self) -> &SharedDevice {
        &self.inner.device
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> PoolStats {
        self.inner.stats()
    }

    /// The LSN below which every change is on the device: the oldest modification of any dirty
    /// page in the pool or in WAR's TWB, or the log's current LSN when nothing is dirty. A
    /// checkpoint may never pass it.
    pub fn oldest_unflushed_lsn(&self) -> crate::page::Lsn {
        self.inner.oldest_unflushed_lsn()
    }

    /// Writes, in the calling thread, every dirty page whose oldest modification is below
    /// `lsn_limit`: a synchronous recoverability write (algorithms.md section 1), counted as
    /// such. Returns the pages written.
    ///
    /// # Errors
    /// A write error (the pool is then poisoned).
    pub fn preflush(&self, lsn_limit: crate::page::Lsn) -> Result<u64> {
        self.inner.preflush(lsn_limit)
    }

    /// Writes every dirty page (and WAR's TWB) and syncs the device.
    ///
    /// # Errors
    /// The first write or sync error (the pool is then poisoned).
    pub fn flush_all(&self) -> Result<()> {
        self.inner.flush_all()
    }

    /// Checks every structural invariant (lists, page table, flush list, LRU-C regions);
    /// meant for tests, when no foreground thread is inside the pool (it waits for the cleaner
    /// to finish its round). Returns the first violation found.
    ///
    /// # Errors
    /// A description of the violated invariant.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        let _round = self.inner.cleaner_round.lock();
        invariants::check(&self.inner)
    }

    /// Stops the cleaner, flushes everything and syncs.
    ///
    /// # Errors
    /// A write or sync error, or a poisoned pool.
    pub fn shutdown(&self) -> Result<()> {
        self.stop_cleaner();
        self.inner.flush_all()
    }

    fn stop_cleaner(&self) {
        self.inner.shutting_down.store(true, Ordering::Release);
        self.inner.wake_cleaner();
        if let Some(handle) = self.cleaner.lock().take() {
            // A panicking cleaner already printed its message; nothing more to do here.
            let _ = handle.join();
        }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        self.stop_cleaner();
    }
}

impl crate::workload::PageAccess for BufferPool {
    fn pages(&self) -> u64 {
        self.inner.pages
    }
    fn page_size(&self) -> usize {
        self.inner.page_size
    }
    fn read_with(&self, page: PageId, f: &mut dyn FnMut(&[u8])) -> Result<()> {
        let guard = self.read(page)?;
        f(guard.data());
        Ok(())
    }
    fn update_with(&self, page: PageId, f: &mut dyn FnMut(&mut [u8])) -> Result<()> {
        let mut guard = self.write(page)?;
        f(guard.data_mut());
        Ok(())
    }
}

impl PoolInner {
    /// Device-time milliseconds since the pool opened.
    pub fn now_ms(&self) -> u64 {
        (self.epoch.elapsed().as_secs_f64() * 1000.0 / self.time_scale) as u64
    }

    /// Real duration of `ms` device-time milliseconds.
    pub fn device_ms(&self, ms: u64) -> Duration {
        Duration::from_secs_f64(ms as f64 / 1000.0 * self.time_scale)
    }

    /// The frame's page bytes.
    pub fn frame_buffer(&self, id: FrameId) -> IoBuffer {
        self.arena.chunk_io_buffer(id as usize, self.page_size)
    }

    /// The frame's bytes, read-only. The caller holds the latch (any mode) or owns the frame.
    pub fn frame_bytes(&self, id: FrameId) -> &[u8] {
        // SAFETY: the caller holds the frame's latch or owns it (see the module docs).
        unsafe { self.frame_buffer(id).as_slice() }
    }

    /// The frame's bytes, mutably.
    ///
    /// # Safety
    /// The caller holds the latch exclusive or owns the frame outright.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn frame_bytes_mut(&self, id: FrameId) -> &mut [u8] {
        // SAFETY: forwarded.
        unsafe { self.frame_buffer(id).as_mut_slice() }
    }

    pub fn frame(&self, id: FrameId) -> &Frame {
        &self.frames[id as usize]
    }

    pub fn check_poisoned(&self) -> Result<()> {
        if self.poisoned_flag.load(Ordering::Acquire) {
            let cause = self.poisoned.lock().clone();
            if let Some(cause) = cause {
                return Err(Error::Poisoned(cause));
            }
        }
        Ok(())
    }

    /// Records a write or sync failure: the pool refuses further writes.
    pub fn poison(&self, err: &DeviceError) {
        let mut slot = self.poisoned.lock();
        if slot.is_none() {
            *slot = Some(err.clone());
        }
        self.poisoned_flag.store(true, Ordering::Release);
    }

    pub fn is_lru_c(&self) -> bool {
        matches!(
            self.config.scheme,
            Scheme::LruCBasic | Scheme::LruCDbw | Scheme::LruC
        )
    }

    /// Whether LRU-D is a mutex of its own (parallel LRU-list manipulation).
    pub fn split_mutex(&self) -> bool {
        self.config.scheme == Scheme::LruC
    }

    pub fn push_free(&self, id: FrameId) {
        let frame = self.frame(id);
        assert_eq!(
            frame.page_id(),
            NO_PAGE,
            "free frame {id} still holds a page"
        );
        assert!(!frame.is_dirty(), "free frame {id} is dirty");
        let mut free = self.mutexes.free.lock(&self.free);
        frame.set_region(Region::Free);
        free.push(id);
        self.free_len.store(free.len(), Ordering::Release);
    }

    pub fn pop_free(&self) -> Option<FrameId> {
        if self.free_len.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut free = self.mutexes.free.lock(&self.free);
        let id = free.pop()?;
        self.free_len.store(free.len(), Ordering::Release);
        self.frame(id).set_region(Region::None);
        Some(id)
    }

    pub fn wake_cleaner(&self) {
        let mut flag = self.cleaner_wakeup.lock();
        *flag = true;
        self.cleaner_cv.notify_one();
    }

    /// Finds `page` or reads it in; returns its frame pinned and latched in `mode`.
    pub(crate) fn fetch(
        &self,
        page: PageId,
        mode: LatchMode,
        read_from_disk: bool,
    ) -> Result<FrameId> {
        if page >= self.pages {
            return Err(Error::InvalidArgument(format!(
                "page {page} is past the end of the database ({} pages)",
                self.pages
            )));
        }
        for _ in 0..FETCH_RETRIES {
            if let Some(id) = self.try_hit(page, mode) {
                return Ok(id);
            }
            if let Some(id) = self.miss(page, mode, read_from_disk)? {
                return Ok(id);
            }
        }
        Err(Error::NoFreeFrame {
            frames: self.frames.len(),
        })
    }

    fn latch(&self, id: FrameId, mode: LatchMode) {
        match mode {
            LatchMode::Shared => self.frame(id).latch_shared(),
            LatchMode::Exclusive => self.frame(id).latch_exclusive(),
        }
    }

    /// Releases a latch taken by `fetch` and the pin.
    pub(crate) fn release(&self, id: FrameId, mode: LatchMode) {
        let frame = self.frame(id);
        // SAFETY: `fetch` returned the frame latched in `mode`.
        unsafe {
            match mode {
                LatchMode::Shared => frame.unlatch_shared(),
                LatchMode::Exclusive => frame.unlatch_exclusive(),
            }
        }
        frame.unpin();
    }

    fn try_hit(&self, page: PageId, mode: LatchMode) -> Option<FrameId> {
        let id = {
            let shard = self.table.read(page);
            let id = *shard.get(&page)?;
            self.frame(id).pin();
            id
        };
        self.latch(id, mode);
        if self.frame(id).page_id() != page {
            // The frame was reused while we waited for its latch (e.g. a fused RW command
            // replaced the page, or a failed read gave it up): look again.
            self.release(id, mode);
            return None;
        }
        self.counters.hits.fetch_add(1, Ordering::Relaxed);
        self.touch(id);
        Some(id)
    }

    /// A miss: get a frame, map the page to it, fill it. `Ok(None)` means "retry" (someone
    /// else mapped the page first).
    fn miss(&self, page: PageId, mode: LatchMode, read_from_disk: bool) -> Result<Option<FrameId>> {
        let acquired = self.get_free_frame(page)?;
        let id = match acquired {
            crate::miss::Acquired::Free(id) => id,
            crate::miss::Acquired::Fused { frame, victim_page } => {
                return self.fused_miss(page, frame, victim_page, mode);
            }
        };
        let frame = self.frame(id);
        {
            let mut shard = self.table.write(page);
            if shard.contains_key(&page) {
                drop(shard);
                self.push_free(id);
                return Ok(None);
            }
            assert!(frame.try_latch_exclusive(), "a free frame is unlatched");
            assert!(frame.try_claim_io(IO_READ), "a free frame has no I/O");
            frame.pin();
            frame.page.store(page, Ordering::Release);
            shard.insert(page, id);
        }
        self.counters.misses.fetch_add(1, Ordering::Relaxed);
        if let Err(err) = self.fill_frame(id, page, read_from_disk) {
            self.abandon_read(id, page);
            return Err(err);
        }
        frame
            .first_access_ms
            .store(self.now_ms().max(1), Ordering::Relaxed);
        {
            let mut lru = self.mutexes.lru_m.lock(&self.lru_m);
            lru.push_midpoint(&self.frames, id);
            if !frame.old.load(Ordering::Relaxed) {
                self.note_made_young(frame);
            }
        }
        frame.release_io(IO_READ);
        if mode == LatchMode::Shared {
            // SAFETY: we hold it exclusive since the mapping was installed.
            unsafe { frame.downgrade() };
        }
        Ok(Some(id))
    }

    /// Fills a freshly mapped frame: from WAR's TWB, from the device, or zeroed (new page).
    fn fill_frame(&self, id: FrameId, page: PageId, read_from_disk: bool) -> Result<()> {
        // SAFETY: we hold the frame's latch exclusive and own its I/O state.
        let bytes = unsafe { self.frame_bytes_mut(id) };
        if let Some(twb) = &self.twb
            && let Some((slot, oldest, newest)) = twb.copy_out(self, page, bytes)
        {
            // The TWB copy is newer than the device's: the frame takes over its dirtiness
            // (and its place in the checkpoint) before the TWB lets go of it.
            self.counters.twb_reads.fetch_add(1, Ordering::Relaxed);
            self.frame(id)
                .newest_modification
                .store(newest, Ordering::Release);
            self.mark_dirty(id, oldest);
            twb.take_over(self, page, slot);
            return Ok(());
        }
        if !read_from_disk {
            bytes.fill(0);
            return Ok(());
        }
        let request = crate::device::IoRequest::read(page, self.frame_buffer(id));
        // SAFETY: the frame is latched exclusive by us and stays so until the wait returns.
        let tickets = unsafe { self.device.submit(vec![request]) };
        crate::device::ticket::wait_all(tickets)?;
        if self.config.verify_checksums {
            crate::page::verify(bytes, page)?;
        }
        Ok(())
    }

    /// Undoes a mapping whose read failed; waiters see the page id change and retry.
    fn abandon_read(&self, id: FrameId, page: PageId) {
        let frame = self.frame(id);
        {
            let mut shard = self.table.write(page);
            shard.remove(&page);
            frame.page.store(NO_PAGE, Ordering::Release);
        }
        frame.release_io(IO_READ);
        // SAFETY: held exclusive since the mapping was installed.
        unsafe { frame.unlatch_exclusive() };
        frame.unpin();
        // Waiters that pinned the frame before the mapping was removed release it as soon as
        // they see NO_PAGE; the frame goes back to the free list only once they have, so its
        // next user finds the latch free. Bound: waiters hold the pin for a few instructions.
        for spin in 0..1_000_000u32 {
            if !frame.is_pinned() {
                break;
            }
            if spin > 100 {
                std::thread::yield_now();
            }
        }
        if frame.is_pinned() {
            // Leaked rather than risk handing out a frame someone still holds.
            return;
        }
        self.push_free(id);
    }

    /// The hit path's LRU maintenance (InnoDB's `buf_page_make_young_if_needed`, plus LRU-C's
    /// rare hit in the dirty region).
    fn touch(&self, id: FrameId) {
        let frame = self.frame(id);
        match frame.region() {
            Region::Lru => {
                if self.too_young_to_move(frame) {
                    return;
                }
                let mut lru = self.mutexes.lru_m.lock(&self.lru_m);
                if frame.region() == Region::Lru {
                    lru.make_young(&self.frames, id);
                    self.note_made_young(frame);
                }
            }
            Region::Dirty => {
                let mut lru = self.mutexes.lru_m.lock(&self.lru_m);
                let mut dirty = self.mutexes.lru_d.lock(&self.lru_d);
                if frame.region() == Region::Dirty {
                    dirty.remove(&self.frames, id);
                    self.dirty_region_len.store(dirty.len(), Ordering::Release);
                    lru.push_head(&self.frames, id);
                    self.note_made_young(frame);
                    self.counters
                        .dirty_region_hits
                        .fetch_add(1, Ordering::Relaxed);
                }
            }
            Region::None | Region::Free => {}
        }
    }

    /// Records the eviction clock when a page reaches the LRU head (InnoDB sets
    /// `freed_page_clock` in `buf_LRU_add_block_low` for head insertions).
    pub fn note_made_young(&self, frame: &Frame) {
        frame.freed_page_clock.store(
            self.freed_page_clock.load(Ordering::Relaxed),
            Ordering::Relaxed,
        );
    }

    /// InnoDB's `buf_page_peek_if_too_old` negated: true when the page should stay put.
    fn too_young_to_move(&self, frame: &Frame) -> bool {
        if frame.old.load(Ordering::Relaxed) {
            let time_ms = self.config.old_blocks_time_ms;
            if time_ms == 0 {
                return false;
            }
            let first = frame.first_access_ms.load(Ordering::Relaxed);
            return first != 0 && self.now_ms().saturating_sub(first) < time_ms;
        }
        // Young page: move only if it has drifted into the older quarter of the young part.
        let clock = self.freed_page_clock.load(Ordering::Relaxed);
        let young_quarter =
            self.frames.len() as u64 * (100 - self.config.old_blocks_pct as u64) / 400;
        clock < frame.freed_page_clock.load(Ordering::Relaxed) + young_quarter
    }

    /// Removes a clean, unpinned frame from the page table. The caller holds the mutex of the
    /// list the frame is on and unlinks it afterwards. Returns false (and changes nothing) if
    /// the frame is pinned, dirty, busy or empty.
    pub fn unmap_if_evictable(&self, id: FrameId, claimed: u8) -> bool {
        let frame = self.frame(id);
        let page = frame.page_id();
        if page == NO_PAGE || frame.io_state() != claimed {
            return false;
        }
        let mut shard = self.table.write(page);
        if frame.is_pinned() || frame.is_dirty() || shard.get(&page) != Some(&id) {
            return false;
        }
        shard.remove(&page);
        frame.page.store(NO_PAGE, Ordering::Release);
        frame.newest_modification.store(0, Ordering::Release);
        frame.first_access_ms.store(0, Ordering::Relaxed);
        self.freed_page_clock.fetch_add(1, Ordering::Relaxed);
        self.counters.evictions.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Evicts `id` from `list` (whose mutex the caller holds) if it is a clean, unpinned,
    /// idle page. Returns whether it was evicted; the frame is then on no list.
    pub fn try_evict_from(&self, list: &mut LruList, id: FrameId) -> bool {
        let frame = self.frame(id);
        if frame.is_dirty() || frame.is_pinned() || !frame.try_claim_io(frame::IO_EVICT) {
            return false;
        }
        let evicted = self.unmap_if_evictable(id, frame::IO_EVICT);
        if evicted {
            list.remove(&self.frames, id);
        }
        frame.release_io(frame::IO_EVICT);
        evicted
    }

    pub fn oldest_unflushed_lsn(&self) -> crate::page::Lsn {
        let flush_oldest = {
            let flush = self.mutexes.flush.lock(&self.flush);
            flush.oldest_lsn(&self.frames)
        };
        let twb_oldest = self.twb.as_ref().map_or(0, |twb| twb.oldest_lsn(self));
        [flush_oldest, twb_oldest]
            .into_iter()
            .filter(|&lsn| lsn != 0)
            .min()
            .unwrap_or_else(|| self.log.current_lsn())
    }

    /// Marks a frame (latched exclusive by the caller) modified at `lsn`.
    pub fn mark_dirty(&self, id: FrameId, lsn: crate::page::Lsn) {
        self.mark_dirty_range(id, lsn, lsn);
    }

    /// Marks a frame (latched exclusive by the caller) modified by log records spanning
    /// `oldest..newest`.
    pub fn mark_dirty_range(
        &self,
        id: FrameId,
        oldest: crate::page::Lsn,
        newest: crate::page::Lsn,
    ) {
        let frame = self.frame(id);
        if frame.note_modification(newest) {
            let mut flush = self.mutexes.flush.lock(&self.flush);
            flush.insert(&self.frames, id, oldest);
        }
    }

    pub fn stats(&self) -> PoolStats {
        let c = &self.counters;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let mut mutexes = std::collections::BTreeMap::new();
        let lru_name = if self.is_lru_c() { "lru_m" } else { "lru" };
        mutexes.insert(lru_name.to_string(), self.mutexes.lru_m.snapshot());
        if self.is_lru_c() {
            mutexes.insert("lru_d".to_string(), self.mutexes.lru_d.snapshot());
        }
        mutexes.insert("flush".to_string(), self.mutexes.flush.snapshot());
        mutexes.insert("free".to_string(), self.mutexes.free.snapshot());
        if self.twb.is_some() {
            mutexes.insert("twb".to_string(), self.mutexes.twb.snapshot());
        }
        let mut extra = std::collections::BTreeMap::new();
        let mut put = |name: &str, value: u64| {
            extra.insert(name.to_string(), value as f64);
        };
        if self.is_lru_c() {
            put("pointer_moves", load(&c.pointer_moves));
            put("pointer_scans", load(&c.pointer_scans));
            put("pointer_scan_len", load(&c.pointer_scan_len));
            put("dirty_region_hits", load(&c.dirty_region_hits));
            put(
                "dirty_region_pages",
                self.dirty_region_len.load(Ordering::Relaxed) as u64,
            );
        }
        put("max_flush_batch", load(&c.max_flush_batch));
        put("cleaner_rounds", load(&c.cleaner_rounds));
        put("free_waits", load(&c.free_waits));
        if let Some(twb) = &self.twb {
            put("twb_copies", load(&c.twb_copies));
            put("twb_waits", load(&c.twb_waits));
            put("twb_reads", load(&c.twb_reads));
            put("twb_writes", load(&c.twb_writes));
            put("twb_occupancy", twb.occupancy(self) as u64);
        }
        PoolStats {
            hits: load(&c.hits),
            misses: load(&c.misses),
            read_stalls: load(&c.read_stalls),
            fused_reads: load(&c.fused_reads),
            sync_replacement_writes: load(&c.sync_replacement_writes),
            sync_recoverability_writes: load(&c.sync_recoverability_writes),
            lru_flushes: load(&c.lru_flushes),
            flush_list_flushes: load(&c.flush_list_flushes),
            flush_batches: load(&c.flush_batches),
            evictions: load(&c.evictions),
            prefetches: 0,
            free_frames: self.free_len.load(Ordering::Relaxed) as u64,
            dirty_pages: self.flush.lock().len() as u64,
            frames: self.frames.len() as u64,
            mutexes,
            extra,
        }
    }
}
