//! The buffer pool core: frames over a [`Device`](crate::device::Device), a sharded page table,
//! per-frame latches and pins, pool instances with their lists, the hit and miss flow, and the
//! primitives every policy builds on (eviction, flushing, the free lists). Which frame a miss gets,
//! what the cleaner writes, in which order pages leave and what is read ahead are decided by the
//! composition's parts (`core::order`, `core::parts`, `core::write_path`); the core knows none of
//! them.
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
//! pool.close().unwrap();
//! ```
//!
//! **A miss**, one straight walk: core → instance of the page → miss path (which walks the
//! replacement order for a victim, and writes it through the write path if it must) → a frame →
//! core maps the page and reads it (with any prefetched pages, in one submission) → order.
//!
//! **Lock order** (never take an earlier one while holding a later one): page latches (only
//! blocking while holding none of the following) → an instance's `order` (LRU-M) → its `side`
//! (LRU-D) → its `flush` → a policy's own mutex (WAR's TWB) → its `free` → a page-table shard →
//! the sync gate. Never two instances' mutexes at once, never two shards. No I/O is issued while
//! holding any of them; waiting for I/O happens with at most page latches held.
//!
//! Frames in flight (being read in, evicted, or moved) are on no list; the invariant checker
//! accounts for them through their I/O state and pins.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::core::arena::FrameArena;
use crate::core::frame::{Frame, FrameId, IO_EVICT, IO_IDLE, IO_READ, IO_WRITE, NO_PAGE, Region};
use crate::core::guard::{PageReadGuard, PageWriteGuard};
use crate::core::instance::{Instance, instance_of};
use crate::core::order::{
    CoarseClock, HitContext, OrderState, Placement, ReplacementOrder, Verdict,
};
use crate::core::page_table::PageTable;
use crate::core::parts::{Acquired, MissPath, Prefetcher, Writeback};
use crate::core::redo::{NullLog, RedoLog};
use crate::core::stats::ExtraStats;
use crate::core::stats::{MutexStats, PoolStats, StripedCounter, WaitRecorder};
use crate::core::tail_profile::TailCounters;
use crate::core::write_path::WritePath;
use crate::device::{AlignedBuf, IoBuffer, IoRequest, SharedDevice};
use crate::error::{DeviceError, Error, PageId, Result};
use crate::page::Lsn;
use crate::spare;
use crate::sync::{AtomicBool, AtomicU64, Condvar, JoinHandle, Mutex, Ordering};

/// Retries of the fetch loop after a frame-reuse race or a concurrent miss on the same page.
const FETCH_RETRIES: usize = 10_000;
/// How long a hit waits, in real time, for a frame that is being repurposed (fused command,
/// eviction) before giving up.
const BUSY_WAIT_LIMIT: Duration = Duration::from_mins(1);
/// Most pages read ahead with one miss.
const MAX_PREFETCH: usize = 64;
/// Pools over at most this many pages remember the LSN they last wrote to each page (8 bytes a
/// page), to catch lost and misdirected writes when the page is read back.
const WRITTEN_LSN_MAX_PAGES: u64 = 1 << 24;

/// The core's own settings (the policies carry theirs).
#[derive(Debug, Clone)]
pub struct CoreConfig {
    /// Frames in the pool (all instances).
    pub frames: usize,
    /// Buffer pool instances (InnoDB's `innodb_buffer_pool_instances`).
    pub instances: usize,
    /// Verify page checksums on read.
    pub verify_checksums: bool,
    /// Run the background cleaner thread (off only in model tests that drive rounds by hand).
    pub background: bool,
    /// The composition's name, for stats and errors.
    pub scheme: String,
    /// Device-time ns a list scan holds its list's mutex per page inspected
    /// ([`Core::hold_list_scan`]; 0 = none).
    pub list_scan_ns: f64,
    /// The background time-constant scale: a background scan's price per page is
    /// `list_scan_ns` times this ([`Scanner::Background`]).
    pub background_time_scale: f64,
    /// Ask for transparent huge pages for the frames' memory ([`FrameArena`]).
    pub huge_pages: bool,
}

/// Who scans a list, for the emulated host's CPU ([`Core::hold_list_scan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scanner {
    /// A query thread's miss (its scan's price is set against the device's latencies).
    Foreground,
    /// The page cleaner or LRU-C's flusher, whose period and per-round budgets run on the
    /// scaled background clock (`time_constant_scale`): its CPU per page is scaled with them,
    /// so that a round's scan keeps the paper's share of the round's period.
    Background,
}

/// The policies a composition chose (see `engine::compose`).
#[derive(Debug, Clone)]
pub struct Parts {
    /// The replacement order.
    pub order: Arc<dyn ReplacementOrder>,
    /// The miss path.
    pub miss: Arc<dyn MissPath>,
    /// What the background cleaner does.
    pub writeback: Arc<dyn Writeback>,
    /// Read-ahead, if any.
    pub prefetch: Option<Arc<dyn Prefetcher>>,
    /// How writes reach the device (torn-page protection, fsync rules).
    pub write_path: Arc<dyn WritePath>,
}

/// Live counters of the core (policies keep their own and report them through `extra_stats`).
#[derive(Debug, Default)]
pub struct Counters {
    /// Page requests that had to read the page.
    pub misses: AtomicU64,
    /// Misses that waited for a write before their read.
    pub read_stalls: AtomicU64,
    /// Misses served by the fused command.
    pub fused_reads: AtomicU64,
    /// Pages written by foreground threads to free a frame.
    pub sync_replacement_writes: AtomicU64,
    /// Pages written by foreground threads because the log was full.
    pub sync_recoverability_writes: AtomicU64,
    /// Pages written by background flushing of the LRU tail / dirty region.
    pub lru_flushes: AtomicU64,
    /// Pages written by flush-list (checkpoint) flushing.
    pub flush_list_flushes: AtomicU64,
    /// Write batches handed to the write path.
    pub flush_batches: AtomicU64,
    /// The largest batch a flusher built (before chunking).
    pub max_flush_batch: AtomicU64,
    /// Pages read ahead.
    pub prefetches: AtomicU64,
    /// Cleaner rounds.
    pub cleaner_rounds: AtomicU64,
    /// Miss loops that ran out of iterations.
    pub free_waits: AtomicU64,
    /// Hits that backed off from a frame being repurposed.
    pub busy_backoffs: AtomicU64,
    /// Optimistic reads that failed their validation or found the page latched exclusive
    /// (`core::optimistic`; counted only on failure, so a validated read writes no shared line).
    pub optimistic_failures: AtomicU64,
    /// Pages user threads scanned to find a dirty victim to write synchronously (the
    /// self-tuning paper's `NP_dirty`).
    pub user_scan_dirty_pages: AtomicU64,
    /// Pages user threads scanned to find a clean victim (`NP_clean`).
    pub user_scan_clean_pages: AtomicU64,
    /// Clean pages the page cleaner's LRU part freed without writing them (its written pages
    /// are `lru_flushes`, freed as their writes complete).
    pub cleaner_freed_clean: AtomicU64,
    /// Misses (of the RAW miss loop) served by the free list without a read stall.
    pub misses_from_free_list: AtomicU64,
    /// Misses (of the RAW miss loop) served by their own scan for a clean page at the LRU
    /// tail, without a read stall.
    pub misses_from_own_scan: AtomicU64,
    /// Waits of query threads that found the free list empty under the `backoff` policy
    /// (Percona's `innodb_empty_free_list_algorithm = backoff`).
    pub backoff_waits: AtomicU64,
    /// Misses that waited for the page cleaner's LRU batch of their instance to end (MySQL
    /// 5.6's `buf_flush_wait_batch_end` in `buf_LRU_get_free_block`).
    pub lru_batch_waits: AtomicU64,
    /// Device microseconds those waits took.
    pub lru_batch_wait_us: AtomicU64,
    /// Device nanoseconds list scans held their mutex for the emulated host's CPU
    /// ([`Core::hold_list_scan`]).
    pub list_scan_hold_ns: AtomicU64,
    /// Misses that slept in their miss loop (5.6: 100 ms, 5.7: 10 ms, from the third
    /// iteration on).
    pub miss_loop_sleeps: AtomicU64,
}

/// Whether a fetch wants the latch shared or exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatchMode {
    /// Readers.
    Shared,
    /// Writers.
    Exclusive,
}

/// What a page-table lookup found.
enum Lookup {
    Hit(FrameId),
    Missing,
    /// The frame is being repurposed while still mapped: do not wait for its latch.
    Busy,
    /// The mapping changed between the lookup and the pin: look again.
    Stale,
}

/// One miss's reads and their results, kept from one miss to the next on a thread (a miss then
/// allocates nothing of its own beyond what the device's submission needs).
#[derive(Default)]
struct MissScratch {
    /// (frame, page, read from the device): the demand page first, then prefetched ones.
    reads: Vec<(FrameId, PageId, bool)>,
    /// One per entry of `reads`, set by `Core::fill_frames`.
    results: Vec<Result<()>>,
    /// The indexes in `reads` that go to the device.
    device_reads: Vec<usize>,
}

std::thread_local! {
    static MISS_SCRATCH: std::cell::Cell<Option<MissScratch>> = const { std::cell::Cell::new(None) };
}

/// The shared state of a pool (the cleaner thread holds an `Arc` of it).
#[derive(Debug)]
pub struct Core {
    /// The core's settings.
    pub config: CoreConfig,
    /// The data device (the pool's pages are its pages `0..pages`).
    pub device: SharedDevice,
    /// The redo log's view for the WAL rule and log-age flushing.
    pub log: Arc<dyn RedoLog>,
    /// The composition.
    pub parts: Parts,
    /// Page size in bytes.
    pub page_size: usize,
    /// Pages on the device.
    pub pages: u64,
    /// Device time runs this many times slower than real time.
    pub time_scale: f64,
    epoch: Instant,
    /// The device-time milliseconds hits on old pages compare with (`hit_context`).
    coarse_clock: CoarseClock,
    arena: FrameArena,
    /// Every frame, instance after instance.
    pub frames: Box<[Frame]>,
    /// Page id to frame.
    pub table: PageTable,
    /// The instances.
    pub instances: Box<[Instance]>,
    /// Counters.
    pub counters: Counters,
    /// Page requests served from the pool (striped: every hit counts, on its own cache line).
    pub hits: StripedCounter,
    /// Read-stall waits (device-time microseconds).
    pub read_stall_wait: WaitRecorder,
    /// The eviction end's profile, sampled on request ([`Core::sample_tail`]).
    tail: TailCounters,
    /// Data pages below this have been written and must not read back as all zeros.
    high_water: AtomicU64,
    /// Per page, the LSN this pool last wrote to it (0: not written since the pool opened);
    /// empty for pools over more than [`WRITTEN_LSN_MAX_PAGES`] pages.
    written_lsn: Box<[AtomicU64]>,
    poisoned: Mutex<Option<DeviceError>>,
    poisoned_flag: AtomicBool,
    cleaner_wakeup: Mutex<bool>,
    cleaner_cv: Condvar,
    /// Held by the cleaner during a round, so the invariant checker can run between rounds.
    pub cleaner_round: Mutex<()>,
    shutting_down: AtomicBool,
    /// Moves of dirty pages between the flush lists and the miss path's held copies (WAR's
    /// TWB) started and finished: [`Core::oldest_unflushed_lsn`] retries when one overlaps it.
    held_moves_started: AtomicU64,
    held_moves_finished: AtomicU64,
}

/// A move of a dirty page between a flush list and a held copy (see
/// [`Core::begin_held_move`]); the move is finished when this is dropped.
#[must_use = "the move lasts as long as the guard"]
pub struct HeldMove<'a>(&'a AtomicU64);

impl Drop for HeldMove<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

/// The frames, instance after instance, in memory given the huge-page advice (when asked) before
/// any frame is written, as the pages' arena is: the hit path reads a frame before its page.
fn frame_slots(
    frames: usize,
    per_instance: usize,
    instances: usize,
    huge_pages: bool,
) -> Box<[Frame]> {
    let mut slots: Vec<Frame> = Vec::with_capacity(frames);
    if huge_pages {
        crate::device::mapping::advise_huge_pages(
            slots.as_ptr().cast::<u8>(),
            frames * std::mem::size_of::<Frame>(),
        );
    }
    slots.extend(
        (0..frames).map(|id| Frame::of_instance((id / per_instance).min(instances - 1) as u32)),
    );
    slots.into_boxed_slice()
}

impl Core {
    /// Builds the core over `device` with `parts`.
    ///
    /// # Errors
    /// [`Error::Config`] for a pool the device or memory cannot hold.
    pub fn new(
        device: SharedDevice,
        log: Arc<dyn RedoLog>,
        config: CoreConfig,
        parts: Parts,
    ) -> Result<Core> {
        let info = device.info().clone();
        let frames = config.frames;
        if config.instances == 0 || config.instances > frames / 16 && config.instances > 1 {
            return Err(Error::Config(format!(
                "instances = {}: each of them needs at least 16 of the {frames} frames",
                config.instances
            )));
        }
        let arena = FrameArena::new(frames, info.page_size, config.huge_pages)?;
        let per_instance = frames / config.instances;
        let instances: Box<[Instance]> = (0..config.instances)
            .map(|index| {
                let first = index * per_instance;
                let count = if index + 1 == config.instances {
                    frames - first
                } else {
                    per_instance
                };
                let mut instance = Instance::new(
                    index,
                    first as FrameId,
                    count,
                    parts.order.new_state(first as FrameId, count),
                );
                instance.young_window = parts.order.young_window(count);
                instance
            })
            .collect();
        let core = Core {
            device,
            log,
            page_size: info.page_size,
            pages: info.pages,
            time_scale: info.time_scale.max(f64::MIN_POSITIVE),
            epoch: Instant::now(),
            coarse_clock: CoarseClock::default(),
            arena,
            frames: frame_slots(frames, per_instance, config.instances, config.huge_pages),
            table: PageTable::new(info.pages),
            instances,
            counters: Counters::default(),
            hits: StripedCounter::default(),
            read_stall_wait: WaitRecorder::default(),
            tail: TailCounters::default(),
            high_water: AtomicU64::new(0),
            written_lsn: if info.pages <= WRITTEN_LSN_MAX_PAGES {
                (0..info.pages).map(|_| AtomicU64::new(0)).collect()
            } else {
                Box::new([])
            },
            poisoned: Mutex::new(None),
            poisoned_flag: AtomicBool::new(false),
            cleaner_wakeup: Mutex::new(false),
            cleaner_cv: Condvar::new(),
            cleaner_round: Mutex::new(()),
            shutting_down: AtomicBool::new(false),
            held_moves_started: AtomicU64::new(0),
            held_moves_finished: AtomicU64::new(0),
            parts,
            config,
        };
        for instance in &core.instances {
            // Every frame starts free (last frame popped first: the order is irrelevant).
            for offset in (0..instance.frame_count).rev() {
                core.push_free(instance, instance.first_frame + offset as FrameId);
            }
        }
        Ok(core)
    }

    /// Device-time milliseconds since the pool opened.
    /// Each reading advances the hits' [`CoarseClock`].
    pub fn now_ms(&self) -> u64 {
        self.now_us() / 1000
    }

    /// Device-time microseconds since the pool opened. Each reading advances the hits'
    /// [`CoarseClock`].
    pub fn now_us(&self) -> u64 {
        let us = (self.epoch.elapsed().as_secs_f64() * 1e6 / self.time_scale) as u64;
        self.coarse_clock.advance(us / 1000);
        us
    }

    /// The emulated host's CPU for a list scan that inspected `pages` pages: holds the caller
    /// (who holds the list's mutex) for `pages x list_scan_ns` of device time, so that the
    /// threads queueing on that mutex wait as the paper's did behind its scans
    /// (RR-serialization; `core::host_cpu`). Nothing when `list_scan_ns` is 0.
    pub fn hold_list_scan(&self, pages: u64, scanner: Scanner) {
        let per_page = match scanner {
            Scanner::Foreground => self.config.list_scan_ns,
            Scanner::Background => self.config.list_scan_ns * self.config.background_time_scale,
        };
        if per_page <= 0.0 || pages == 0 {
            return;
        }
        let device_ns = per_page * pages as f64;
        self.counters
            .list_scan_hold_ns
            .fetch_add(device_ns as u64, Ordering::Relaxed);
        crate::core::host_cpu::hold(Duration::from_secs_f64(device_ns * 1e-9 * self.time_scale));
    }

    /// Walks a replacement order whose mutex the caller holds (`order` borrowed from its guard)
    /// and then charges the emulated host's CPU for every page the visitor inspected (all it
    /// was offered but a final `Stop`; [`Core::hold_list_scan`]), still under the mutex. The
    /// InnoDB family's scans use it; PostgreSQL's clock sweep and ACE's evictor do not
    /// (PostgreSQL advances its hand with an atomic, under no list mutex).
    pub fn walk_charged(
        &self,
        order: &mut dyn OrderState,
        scanner: Scanner,
        visit: &mut dyn FnMut(FrameId) -> Verdict,
    ) {
        let mut inspected = 0u64;
        order.walk(&self.frames, &mut |id| {
            let verdict = visit(id);
            // A visitor that stops at a frame has not looked at it (its bound was reached).
            if verdict != Verdict::Stop {
                inspected += 1;
            }
            verdict
        });
        self.hold_list_scan(inspected, scanner);
    }

    /// Real duration of `ms` device-time milliseconds.
    pub fn device_ms(&self, ms: u64) -> Duration {
        Duration::from_secs_f64(ms as f64 / 1000.0 * self.time_scale)
    }

    /// The frame `id`.
    pub fn frame(&self, id: FrameId) -> &Frame {
        &self.frames[id as usize]
    }

    /// The frame's page buffer.
    pub fn frame_buffer(&self, id: FrameId) -> IoBuffer {
        self.arena.page(id as usize)
    }

    /// Hints the CPU to start loading the first cache line of the frame's bytes (a no-op off
    /// x86-64). A hint only: it never faults and changes no memory.
    #[inline]
    pub fn prefetch_page(&self, id: FrameId) {
        #[cfg(target_arch = "x86_64")]
        {
            let first = self.frame_buffer(id).as_ptr();
            // SAFETY: a prefetch is a hint; it does not fault and writes nothing (and the
            // address lies inside the frame arena anyway).
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    first.cast::<i8>(),
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = id;
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

    /// The instance `page` maps to.
    pub fn instance_of_page(&self, page: PageId) -> &Instance {
        &self.instances[instance_of(page, self.instances.len())]
    }

    /// The instance owning frame `id`.
    pub fn instance_of_frame(&self, id: FrameId) -> &Instance {
        let instance = &self.instances[self.frame(id).instance as usize];
        debug_assert!(instance.owns(id));
        instance
    }

    /// What an order's lock-free hit decision may look at, for `instance`.
    pub fn hit_context(&self, instance: &Instance) -> HitContext {
        HitContext {
            instance_frames: instance.frame_count,
            evictions: instance.evictions.load(Ordering::Relaxed),
            now_ms: self.coarse_clock.load(),
        }
    }

    /// Fails with [`Error::Poisoned`] after a write or sync failure.
    ///
    /// # Errors
    /// The first failure's cause.
    pub fn check_poisoned(&self) -> Result<()> {
        if self.poisoned_flag.load(Ordering::Acquire) {
            let cause = self.poisoned.lock().clone();
            if let Some(cause) = cause {
                return Err(Error::Poisoned(cause));
            }
        }
        Ok(())
    }

    /// Records a write or sync failure: the pool refuses further writes from now on.
    pub fn poison(&self, err: &DeviceError) {
        let mut slot = self.poisoned.lock();
        if slot.is_none() {
            *slot = Some(err.clone());
        }
        self.poisoned_flag.store(true, Ordering::Release);
    }

    /// The failure that poisoned the pool, if any.
    pub fn poison_cause(&self) -> Option<DeviceError> {
        self.poisoned.lock().clone()
    }

    /// Sets the high-water mark: data pages below it have been written at least once, so an
    /// all-zero image of one is corruption, not a new page.
    pub fn set_high_water(&self, pages: u64) {
        self.high_water.fetch_max(pages, Ordering::AcqRel);
    }

    /// The high-water mark.
    pub fn high_water(&self) -> u64 {
        self.high_water.load(Ordering::Acquire)
    }

    /// Records that a write of `page` stamped with `lsn` completed (every write path calls
    /// it).
    pub fn note_written(&self, page: PageId, lsn: Lsn) {
        if let Some(slot) = self.written_lsn.get(page as usize) {
            slot.store(lsn, Ordering::Release);
        }
    }

    /// Checks an image of `page` against what this pool wrote: a page LSN older than the LSN
    /// this pool last wrote there means the write was lost or went to another page.
    fn check_not_stale(&self, page: PageId, lsn: Lsn) -> Result<()> {
        let written = self
            .written_lsn
            .get(page as usize)
            .map_or(0, |slot| slot.load(Ordering::Acquire));
        if lsn < written {
            return Err(Error::CorruptPage {
                page,
                reason: format!(
                    "stale image: the pool wrote LSN {written} to this page, the device returned \
                     LSN {lsn} (a lost or misdirected write)"
                ),
            });
        }
        Ok(())
    }

    /// Reads every page from the device (not from the cache) and checks it as a miss would
    /// (checksum, page id, no all-zero page below the high-water mark, no LSN past the end of
    /// the log, not older than what this pool wrote). Returns one line per problem found (at
    /// most `limit`) and the number of pages read.
    ///
    /// # Errors
    /// Device read errors other than the page problems it reports.
    pub fn scrub(&self, limit: usize) -> Result<(Vec<String>, u64)> {
        let mut buf = AlignedBuf::new(self.page_size);
        let mut problems = Vec::new();
        for page in 0..self.pages {
            self.device.read_page(page, &mut buf)?;
            if let Err(err) = self.verify_image(buf.as_slice(), page)
                && problems.len() < limit
            {
                problems.push(err.to_string());
            }
        }
        Ok((problems, self.pages))
    }

    /// How far the high-water mark may rise from `mark`: past every page from `mark` on that
    /// this pool has written, up to the first it has not (pages written by an earlier run above
    /// the mark stop it there: conservative, never wrong). After a sync every page written is
    /// durable, so a database may raise its mark to this. Pools too large to track per-page
    /// writes return `mark`.
    pub fn written_prefix(&self, mark: u64) -> u64 {
        let mut end = mark;
        // Bound: the number of pages.
        while let Some(slot) = self.written_lsn.get(end as usize) {
            if slot.load(Ordering::Acquire) == 0 {
                break;
            }
            end += 1;
        }
        end
    }

    /// Puts a frame (holding no page, clean) on its instance's free list.
    pub fn push_free(&self, instance: &Instance, id: FrameId) {
        let frame = self.frame(id);
        assert!(instance.owns(id), "frame {id} freed to the wrong instance");
        assert_eq!(
            frame.page_id(),
            NO_PAGE,
            "free frame {id} still holds a page"
        );
        assert!(!frame.is_dirty(), "free frame {id} is dirty");
        let mut free = instance.lock_free();
        frame.set_region(Region::Free);
        free.push(id);
        instance.set_free_len(free.len());
    }

    /// Takes a frame from the instance's free list.
    pub fn pop_free(&self, instance: &Instance) -> Option<FrameId> {
        if instance.free_len() == 0 {
            return None;
        }
        let mut free = instance.lock_free();
        let id = free.pop()?;
        instance.set_free_len(free.len());
        self.frame(id).set_region(Region::None);
        Some(id)
    }

    /// Wakes the cleaner for a round now.
    pub fn wake_cleaner(&self) {
        let mut flag = self.cleaner_wakeup.lock();
        *flag = true;
        self.cleaner_cv.notify_one();
    }

    /// Whether the pool is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }

    // ----- the hit and miss flow -----

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
        let mut busy_since: Option<Instant> = None;
        let mut busy_spins = 0u32;
        let mut retries = 0;
        // Bound: FETCH_RETRIES lookups that found nothing or lost a race, plus busy waits of
        // at most BUSY_WAIT_LIMIT in total.
        while retries < FETCH_RETRIES {
            match self.try_hit(page, mode) {
                Lookup::Hit(id) => return Ok(id),
                Lookup::Busy => {
                    let since = *busy_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > BUSY_WAIT_LIMIT {
                        return Err(Error::NoFreeFrame {
                            frames: self.frames.len(),
                        });
                    }
                    self.counters.busy_backoffs.fetch_add(1, Ordering::Relaxed);
                    // A repurposed frame is busy for one device command (tens to hundreds of
                    // device microseconds): yield a few times, then sleep instead of spinning.
                    busy_spins += 1;
                    if busy_spins < 8 {
                        crate::sync::yield_now();
                    } else {
                        crate::sync::sleep(Duration::from_micros(20));
                    }
                    continue;
                }
                Lookup::Stale => {
                    retries += 1;
                    continue;
                }
                Lookup::Missing => {}
            }
            if let Some(id) = self.miss(page, mode, read_from_disk)? {
                return Ok(id);
            }
            retries += 1;
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

    /// The hit path: a lock-free lookup, then pin and validate (the handshake of
    /// `core::frame`: pin first, then check the frame's I/O state and page).
    fn try_hit(&self, page: PageId, mode: LatchMode) -> Lookup {
        let Some(id) = self.table.lookup(page) else {
            return Lookup::Missing;
        };
        // Overlap the miss on the page's first line with the frame's (as `Core::optimistic`).
        self.prefetch_page(id);
        let frame = self.frame(id);
        frame.pin();
        if frame.io_state() == IO_EVICT {
            // The frame may become another page while we wait for its latch; whoever holds it
            // then may wait for a page we hold (the rw deadlock of issue 8). Never wait here.
            frame.unpin();
            return Lookup::Busy;
        }
        if frame.page_id() != page {
            // Evicted or reused between the lookup and the pin.
            frame.unpin();
            return Lookup::Stale;
        }
        self.latch(id, mode);
        if frame.page_id() != page {
            // Reused while we waited for the latch (a failed read gave it up): look again.
            self.release(id, mode);
            return Lookup::Missing;
        }
        self.hits.add(1);
        self.touch(self.instance_of_frame(id), id);
        if let Some(prefetch) = &self.parts.prefetch {
            prefetch.on_access(page, true, 0, &mut Vec::new());
        }
        Lookup::Hit(id)
    }

    /// The hit path's list maintenance: the order's lock-free decision, LRU-M only if needed.
    pub(crate) fn touch(&self, instance: &Instance, id: FrameId) {
        let frame = self.frame(id);
        match frame.region() {
            Region::Order => {
                // The common hit: a young page inside the order's young window stays put, and
                // so does every page before the instance's first eviction.
                if let Some(window) = instance.young_window {
                    let evictions = instance.evictions.load(Ordering::Relaxed);
                    if evictions == 0
                        || (!frame.old.load(Ordering::Relaxed)
                            && evictions < frame.order_clock.load(Ordering::Relaxed) + window)
                    {
                        return;
                    }
                }
                let context = self.hit_context(instance);
                if !self.parts.order.on_hit(frame, &context) {
                    return;
                }
                let mut order = instance.lock_order();
                if frame.region() == Region::Order {
                    order.hit(&self.frames, id, &context);
                }
            }
            Region::Side => self.parts.miss.side_hit(self, instance, id),
            Region::None | Region::Free => {}
        }
    }

    /// A miss: get a frame from the miss path, map the page (and any prefetched pages) to
    /// frames, fill them. `Ok(None)` means "look again" (someone else mapped the page first).
    fn miss(&self, page: PageId, mode: LatchMode, read_from_disk: bool) -> Result<Option<FrameId>> {
        let instance = self.instance_of_page(page);
        let acquisition = self
            .parts
            .miss
            .acquire(self, instance, page, read_from_disk)?;
        let id = match acquisition.acquired {
            Acquired::Free(id) => id,
            Acquired::Ready(id) => {
                self.count_miss(acquisition.stall_began_us);
                if mode == LatchMode::Shared {
                    // SAFETY: a Ready frame is latched exclusive by this thread.
                    unsafe { self.frame(id).downgrade() };
                }
                return Ok(Some(id));
            }
            Acquired::Retry => return Ok(None),
        };
        if !self.map_new(instance, page, id) {
            return Ok(None);
        }
        self.count_miss(acquisition.stall_began_us);
        let mut scratch = spare::take(&MISS_SCRATCH);
        scratch.reads.clear();
        scratch.reads.push((id, page, read_from_disk));
        if read_from_disk {
            let prefetched = self.map_prefetch(instance, page);
            scratch
                .reads
                .extend(prefetched.iter().map(|&(frame, p)| (frame, p, true)));
        }
        self.fill_frames(instance, &mut scratch);
        let mut demand = Ok(());
        let MissScratch { reads, results, .. } = &mut scratch;
        for (&(frame, p, _), result) in reads.iter().zip(results.drain(..)) {
            match result {
                Ok(()) if frame == id => {}
                Ok(()) => self.finish_prefetch(instance, frame),
                Err(err) => {
                    self.abandon_read(instance, frame, p, frame == id);
                    if frame == id {
                        demand = Err(err);
                    }
                }
            }
        }
        spare::keep(&MISS_SCRATCH, scratch);
        demand?;
        self.frame(id)
            .first_access_ms
            .store(self.now_ms().max(1), Ordering::Relaxed);
        self.insert_order(instance, id, Placement::Missed);
        self.frame(id).release_io(IO_READ);
        if mode == LatchMode::Shared {
            // SAFETY: we hold it exclusive since the mapping was installed.
            unsafe { self.frame(id).downgrade() };
        }
        Ok(Some(id))
    }

    /// Maps `page` to the free frame `id`, latched exclusive, pinned, `IO_READ` claimed.
    /// Returns false (and frees the frame) when the page got mapped meanwhile.
    pub fn map_new(&self, instance: &Instance, page: PageId, id: FrameId) -> bool {
        let frame = self.frame(id);
        let mut shard = self.table.write(page);
        if shard.contains(page) {
            drop(shard);
            self.push_free(instance, id);
            return false;
        }
        assert!(frame.try_latch_exclusive(), "a free frame is unlatched");
        assert!(frame.try_claim_io(IO_READ), "a free frame has no I/O");
        frame.pin();
        frame.page.store(page, Ordering::Release);
        shard.insert(page, id);
        true
    }

    /// Asks the prefetcher which pages to read with a miss on `page`, and maps those that are
    /// not cached (same instance only) to frames the miss path can give without writing.
    fn map_prefetch(&self, instance: &Instance, page: PageId) -> Vec<(FrameId, PageId)> {
        let Some(prefetch) = &self.parts.prefetch else {
            return Vec::new();
        };
        let mut wanted = Vec::new();
        prefetch.on_access(page, false, MAX_PREFETCH, &mut wanted);
        wanted.retain(|&p| {
            p < self.pages
                && p != page
                && std::ptr::eq(self.instance_of_page(p), instance)
                && self.table.lookup(p).is_none()
        });
        wanted.dedup();
        if wanted.is_empty() {
            return Vec::new();
        }
        let frames = self
            .parts
            .miss
            .acquire_for_prefetch(self, instance, wanted.len());
        let mut mapped = Vec::with_capacity(frames.len());
        let mut spare = Vec::new();
        for (id, p) in frames.into_iter().zip(wanted.iter().copied()) {
            if self.map_new_for_prefetch(p, id) {
                mapped.push((id, p));
            } else {
                spare.push(id);
            }
        }
        for id in spare {
            self.push_free(instance, id);
        }
        mapped
    }

    /// Like [`Core::map_new`] but leaves the frame unpinned (no caller waits on it) and does not
    /// free it on failure (the caller does).
    fn map_new_for_prefetch(&self, page: PageId, id: FrameId) -> bool {
        let frame = self.frame(id);
        let mut shard = self.table.write(page);
        if shard.contains(page) {
            return false;
        }
        assert!(frame.try_latch_exclusive(), "a free frame is unlatched");
        assert!(frame.try_claim_io(IO_READ), "a free frame has no I/O");
        frame.page.store(page, Ordering::Release);
        shard.insert(page, id);
        true
    }

    fn finish_prefetch(&self, instance: &Instance, id: FrameId) {
        self.counters.prefetches.fetch_add(1, Ordering::Relaxed);
        self.insert_order(instance, id, Placement::Prefetched);
        let frame = self.frame(id);
        frame.release_io(IO_READ);
        // SAFETY: latched exclusive by `map_new_for_prefetch`.
        unsafe { frame.unlatch_exclusive() };
    }

    /// Adds `id` to the instance's order at `placement` (takes LRU-M).
    pub fn insert_order(&self, instance: &Instance, id: FrameId, placement: Placement) {
        let context = self.hit_context(instance);
        let mut order = instance.lock_order();
        order.insert(&self.frames, id, placement, &context);
    }

    /// Fills the freshly mapped frames of `scratch.reads`: from a held dirty copy (WAR's TWB),
    /// from the device (one submission for all), or zeroed (a new page). Sets
    /// `scratch.results` to one result per entry.
    fn fill_frames(&self, instance: &Instance, scratch: &mut MissScratch) {
        let MissScratch {
            reads,
            results,
            device_reads,
        } = scratch;
        results.clear();
        device_reads.clear();
        for (index, &(id, page, from_disk)) in reads.iter().enumerate() {
            // SAFETY: we hold the frame's latch exclusive and own its I/O state.
            let bytes = unsafe { self.frame_bytes_mut(id) };
            let moving = self
                .parts
                .miss
                .holds_copies()
                .then(|| self.begin_held_move());
            if let Some(copy) = self.parts.miss.fill_from_held(self, instance, page, bytes) {
                // The held copy is newer than the device's: the frame takes over its dirtiness
                // (and its place in the checkpoint) before the copy is let go.
                self.frame(id)
                    .newest_modification
                    .store(copy.newest, Ordering::Release);
                self.mark_dirty_range(id, copy.oldest, copy.newest);
                self.parts.miss.release_held(self, instance, page, copy);
                drop(moving);
            } else if from_disk {
                device_reads.push(index);
            } else {
                bytes.fill(0);
            }
            // The device reads' results replace theirs below.
            results.push(Ok(()));
        }
        if !device_reads.is_empty() {
            let requests = device_reads
                .iter()
                .map(|&index| IoRequest::read(reads[index].1, self.frame_buffer(reads[index].0)))
                .collect();
            // SAFETY: every frame is latched exclusive by us until the waits return.
            let tickets = unsafe { self.device.submit(requests) };
            for (&index, ticket) in device_reads.iter().zip(tickets) {
                let (id, page, _) = reads[index];
                let result = ticket
                    .wait()
                    .map_err(Error::Device)
                    .and_then(|()| self.verify_read(id, page));
                results[index] = result;
            }
        }
        debug_assert_eq!(results.len(), reads.len(), "one result per read");
    }

    /// Checks a page image just read: checksum, page id, an all-zero page only at or above the
    /// high-water mark, and a page LSN not past the end of the log (a page is only ever written
    /// after the log is durable past its LSN, so a larger one means the log lost records).
    fn verify_read(&self, id: FrameId, page: PageId) -> Result<()> {
        if !self.config.verify_checksums {
            return Ok(());
        }
        self.verify_image(self.frame_bytes(id), page)
    }

    /// The checks of a read on any image of `page` (every path that reads a page uses them):
    /// checksum and page id, not older than what this pool wrote, not all zeros below the
    /// high-water mark, not past the end of the log.
    ///
    /// # Errors
    /// [`Error::CorruptPage`] or [`Error::CorruptLog`] saying which.
    pub fn verify_image(&self, bytes: &[u8], page: PageId) -> Result<()> {
        let lsn = crate::page::verify(bytes, page)?;
        self.check_not_stale(page, lsn)?;
        if lsn == 0 && page < self.high_water() && bytes.iter().all(|&b| b == 0) {
            return Err(Error::CorruptPage {
                page,
                reason: format!(
                    "all zeros below the high-water mark {} (the page was written before)",
                    self.high_water()
                ),
            });
        }
        let log_end = self.log.current_lsn();
        if self.log.bounds_page_lsns() && lsn > log_end {
            return Err(Error::CorruptLog {
                offset: log_end,
                reason: format!(
                    "data page {page} carries LSN {lsn}, past the end of the redo log \
                     ({log_end}): the log lost records that were durable when the page was \
                     written"
                ),
            });
        }
        Ok(())
    }

    /// Undoes a mapping whose read failed; waiters see the page id change and retry.
    fn abandon_read(&self, instance: &Instance, id: FrameId, page: PageId, pinned: bool) {
        let frame = self.frame(id);
        {
            let mut shard = self.table.write(page);
            shard.remove(page);
            frame.page.store(NO_PAGE, Ordering::Release);
        }
        frame.newest_modification.store(0, Ordering::Release);
        frame.release_io(IO_READ);
        // SAFETY: held exclusive since the mapping was installed.
        unsafe { frame.unlatch_exclusive() };
        if pinned {
            frame.unpin();
        }
        // Waiters that pinned the frame before the mapping was removed release it as soon as
        // they see NO_PAGE; the frame goes back to the free list only once they have, so its
        // next user finds the latch free. Bound: waiters hold the pin for a few instructions.
        for spin in 0..1_000_000u32 {
            if !frame.is_pinned() {
                break;
            }
            if spin > 100 {
                crate::sync::yield_now();
            }
        }
        if frame.is_pinned() {
            // Leaked rather than risk handing out a frame someone still holds.
            return;
        }
        self.push_free(instance, id);
    }

    // ----- eviction primitives for policies -----

    /// Removes a clean, unpinned frame whose I/O state the caller holds as `claimed` from the
    /// page table. The caller holds the mutex of the list the frame is on and unlinks it after.
    /// Returns false (and changes nothing) if the frame is pinned, dirty, busy or empty.
    pub fn unmap_if_evictable(&self, id: FrameId, claimed: u8) -> bool {
        let frame = self.frame(id);
        let page = frame.page_id();
        if page == NO_PAGE || frame.io_state() != claimed {
            return false;
        }
        // The evictor's half of the pin handshake (`core::frame`): claim IO_EVICT, then look at
        // the pins, so a pinner either is seen here or sees IO_EVICT and backs off.
        if claimed != IO_EVICT {
            frame.change_io(claimed, IO_EVICT);
        }
        let unmapped = {
            let mut shard = self.table.write(page);
            let evictable = !frame.is_pinned() && !frame.is_dirty() && shard.get(page) == Some(id);
            if evictable {
                shard.remove(page);
                frame.page.store(NO_PAGE, Ordering::Release);
                frame.note_remap();
            }
            evictable
        };
        if claimed != IO_EVICT {
            frame.change_io(IO_EVICT, claimed);
        }
        if !unmapped {
            return false;
        }
        frame.newest_modification.store(0, Ordering::Release);
        frame.first_access_ms.store(0, Ordering::Relaxed);
        self.instance_of_frame(id)
            .evictions
            .fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Evicts a clean, unpinned, idle page (called by a walk's visitor under the list mutex);
    /// on true the visitor answers `Take` or `Detach` so the list unlinks it.
    pub fn try_evict_clean(&self, id: FrameId) -> bool {
        let frame = self.frame(id);
        if frame.is_dirty() || frame.is_pinned() || !frame.try_claim_io(IO_EVICT) {
            return false;
        }
        let evicted = self.unmap_if_evictable(id, IO_EVICT);
        frame.release_io(IO_EVICT);
        evicted
    }

    /// Up to `max` frames without any write: free frames, then clean pages evicted in the
    /// order's eviction sequence (within one walk).
    pub fn acquire_clean(&self, instance: &Instance, max: usize) -> Vec<FrameId> {
        let mut got = Vec::with_capacity(max);
        while got.len() < max {
            match self.pop_free(instance) {
                Some(id) => got.push(id),
                None => break,
            }
        }
        if got.len() < max {
            let mut order = instance.lock_order();
            order.walk(&self.frames, &mut |id| {
                if got.len() >= max {
                    return Verdict::Stop;
                }
                if self.try_evict_clean(id) {
                    got.push(id);
                    return Verdict::Detach;
                }
                Verdict::Skip
            });
        }
        for &id in &got {
            self.frame(id).set_region(Region::None);
        }
        got
    }

    /// Evicts a frame the caller has just written (`IO_WRITE` still claimed) if it is still
    /// clean and unpinned on the order or the side list, and releases the claim. Returns
    /// whether it was evicted (the frame is then on no list, and the caller owns it).
    pub fn evict_written(&self, instance: &Instance, id: FrameId) -> bool {
        let frame = self.frame(id);
        let evicted = match frame.region() {
            Region::Order => {
                let mut order = instance.lock_order();
                let ok = frame.region() == Region::Order && self.unmap_if_evictable(id, IO_WRITE);
                if ok {
                    order.remove(&self.frames, id);
                }
                ok
            }
            Region::Side => self.with_side(instance, |side| {
                let ok = frame.region() == Region::Side && self.unmap_if_evictable(id, IO_WRITE);
                if ok {
                    side.remove(&self.frames, id);
                }
                ok
            }),
            Region::None | Region::Free => false,
        };
        frame.release_io(IO_WRITE);
        evicted
    }

    /// Runs `f` on the instance's side list under LRU-D, and under LRU-M first unless the
    /// miss path splits the mutex (basic LRU-C and DBW have one LRU mutex).
    pub fn with_side<T>(
        &self,
        instance: &Instance,
        f: impl FnOnce(&mut crate::core::lru_list::LruList) -> T,
    ) -> T {
        let outer = (!self.parts.miss.split_mutex()).then(|| instance.lock_order());
        let mut side = instance.lock_side();
        let result = f(&mut side);
        instance.set_side_len(side.len());
        drop(side);
        drop(outer);
        result
    }

    /// Counts a miss that goes on to read its page and, if its acquisition stalled (since
    /// device time `stall_began_us`, `now_us`), the read stall and its wait: a stall is counted
    /// only with its miss, so read stalls never outnumber misses (see
    /// [`crate::core::parts::Acquisition`]).
    fn count_miss(&self, stall_began_us: Option<u64>) {
        self.counters.misses.fetch_add(1, Ordering::Relaxed);
        if let Some(began) = stall_began_us {
            self.counters.read_stalls.fetch_add(1, Ordering::Relaxed);
            self.read_stall_wait
                .record(self.now_us().saturating_sub(began));
        }
    }

    // ----- dirtiness and the checkpoint -----

    /// Marks a frame (latched exclusive by the caller) modified by log records spanning
    /// `oldest..newest`.
    pub fn mark_dirty_range(&self, id: FrameId, oldest: Lsn, newest: Lsn) {
        let frame = self.frame(id);
        if frame.note_modification(newest) {
            let instance = self.instance_of_frame(id);
            let mut flush = instance.lock_flush();
            flush.insert(&self.frames, id, oldest);
        }
    }

    /// The LSN below which every change is on the device: the oldest modification of any dirty
    /// page in the pool or held outside it (WAR's TWB), or the log's current LSN when nothing
    /// is dirty. A checkpoint may never pass it.
    pub fn oldest_unflushed_lsn(&self) -> Lsn {
        // A page moving between a flush list and the held copies is in one of them at every
        // instant, but two reads at different instants can miss it: retry when a move
        // overlapped the reads (moves are short; after many retries, wait for a quiet moment).
        let mut attempt = 0u32;
        let oldest = loop {
            let finished = self.held_moves_finished.load(Ordering::Acquire);
            let started = self.held_moves_started.load(Ordering::Acquire);
            let oldest = self.oldest_in_lists_and_held();
            let quiet =
                started == finished && self.held_moves_started.load(Ordering::Acquire) == started;
            if quiet {
                break oldest;
            }
            attempt += 1;
            if attempt > 64 {
                crate::sync::yield_now();
            }
        };
        if oldest == 0 {
            self.log.current_lsn()
        } else {
            oldest
        }
    }

    fn oldest_in_lists_and_held(&self) -> Lsn {
        let mut oldest = self.parts.miss.held_oldest_lsn(self);
        for instance in &self.instances {
            let lsn = instance.lock_flush().oldest_lsn(&self.frames);
            if lsn != 0 && (oldest == 0 || lsn < oldest) {
                oldest = lsn;
            }
        }
        oldest
    }

    /// Starts a move of a dirty page between a flush list and the miss path's held copies
    /// (WAR's TWB, in either direction); it lasts until the guard is dropped. The page must be
    /// in the destination before it leaves the source.
    pub fn begin_held_move(&self) -> HeldMove<'_> {
        self.held_moves_started.fetch_add(1, Ordering::AcqRel);
        HeldMove(&self.held_moves_finished)
    }

    /// Dirty pages now (all instances).
    pub fn dirty_pages(&self) -> usize {
        self.instances
            .iter()
            .map(|instance| instance.lock_flush().len())
            .sum()
    }

    // ----- stats -----

    /// A snapshot of the counters.
    pub fn stats(&self) -> PoolStats {
        let c = &self.counters;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let mut order = MutexStats::default();
        let mut side = MutexStats::default();
        let mut flush = MutexStats::default();
        let mut free = MutexStats::default();
        let hits = self.hits.sum();
        let (mut evictions, mut free_frames) = (0, 0);
        for instance in &self.instances {
            order.add(&instance.mutexes.order.snapshot());
            side.add(&instance.mutexes.side.snapshot());
            flush.add(&instance.mutexes.flush.snapshot());
            free.add(&instance.mutexes.free.snapshot());
            evictions += load(&instance.evictions);
            free_frames += instance.free_len() as u64;
        }
        let mut mutexes = BTreeMap::new();
        if self.parts.miss.uses_side_list() {
            mutexes.insert("lru_m".to_string(), order);
            mutexes.insert("lru_d".to_string(), side);
        } else {
            mutexes.insert("lru".to_string(), order);
        }
        mutexes.insert("flush".to_string(), flush);
        mutexes.insert("free".to_string(), free);
        let mut extra = ExtraStats::default();
        extra.gauge("max_flush_batch", load(&c.max_flush_batch) as f64);
        extra.counter("cleaner_rounds", load(&c.cleaner_rounds) as f64);
        extra.counter("free_waits", load(&c.free_waits) as f64);
        extra.counter("busy_backoffs", load(&c.busy_backoffs) as f64);
        if self.config.list_scan_ns > 0.0 {
            extra.counter("list_scan_hold_ms", load(&c.list_scan_hold_ns) as f64 / 1e6);
        }
        self.parts.miss.extra_stats(self, &mut extra);
        self.parts.writeback.extra_stats(self, &mut extra);
        self.tail.report(&mut extra);
        if let Some(prefetch) = &self.parts.prefetch {
            prefetch.extra_stats(&mut extra);
            extra.gauge("prefetch_memory_bytes", prefetch.memory_bytes() as f64);
        }
        let (extra, extra_gauges) = extra.into_parts();
        PoolStats {
            hits,
            misses: load(&c.misses),
            read_stalls: load(&c.read_stalls),
            fused_reads: load(&c.fused_reads),
            sync_replacement_writes: load(&c.sync_replacement_writes),
            sync_recoverability_writes: load(&c.sync_recoverability_writes),
            lru_flushes: load(&c.lru_flushes),
            flush_list_flushes: load(&c.flush_list_flushes),
            flush_batches: load(&c.flush_batches),
            evictions,
            prefetches: load(&c.prefetches),
            free_frames,
            dirty_pages: self.dirty_pages() as u64,
            frames: self.frames.len() as u64,
            mutexes,
            read_stall_wait: self.read_stall_wait.snapshot(),
            write_path: self.parts.write_path.stats(),
            instances: self.instances.len() as u64,
            huge_pages: self.arena.huge_pages(),
            extra,
            extra_gauges,
        }
    }

    /// Profiles every instance's eviction end against a first tail scan of `scan_depth` pages
    /// ([`crate::core::tail_profile`]); the profile accumulates in [`Core::stats`]' extras.
    /// Takes each instance's order mutex for one walk of a quarter of its order.
    pub fn sample_tail(&self, scan_depth: usize) {
        let walk = super::tail_profile::walk_limit(self.instances.len(), scan_depth);
        for instance in &self.instances {
            let order = instance.lock_order();
            self.tail.sample(&self.frames, &**order, scan_depth, walk);
        }
    }

    /// One line per frame that is pinned, latched or in I/O, for hang diagnostics.
    pub fn dump_busy_frames(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        for (index, frame) in self.frames.iter().enumerate() {
            if frame.is_pinned() || frame.io_state() != IO_IDLE || frame.is_latched() {
                let _ = writeln!(out, "frame {index}: {frame:?}");
            }
        }
        if out.is_empty() {
            out.push_str("no frame is pinned, latched or in I/O\n");
        }
        out
    }

    // ----- the cleaner thread -----

    /// The cleaner thread's body: a write-back round, then sleep what it asked for or until
    /// woken; returns when the pool shuts down.
    pub(crate) fn cleaner_loop(&self) {
        while !self.shutting_down() {
            let start = Instant::now();
            // Keeps the hits' coarse clock within a round of the precise one while idle.
            self.now_ms();
            self.counters.cleaner_rounds.fetch_add(1, Ordering::Relaxed);
            let sleep_ms = if self.check_poisoned().is_ok() {
                let _round = self.cleaner_round.lock();
                self.parts.writeback.round(self).unwrap_or(1000)
            } else {
                1000
            };
            let deadline = start + self.device_ms(sleep_ms);
            let mut woken = self.cleaner_wakeup.lock();
            if !*woken && !self.shutting_down() {
                let _ = self.cleaner_cv.wait_until(&mut woken, deadline);
            }
            *woken = false;
        }
    }

    fn stop_cleaner(&self) {
        self.shutting_down.store(true, Ordering::Release);
        self.wake_cleaner();
    }
}

/// A buffer pool: the public handle of a [`Core`] and its cleaner thread.
///
/// Close it with [`BufferPool::close`] (or [`BufferPool::shutdown`]) to write back every dirty
/// page and learn about errors. Dropping it without closing stops the cleaner and writes back
/// what it can, reporting a failure on standard error; [`BufferPool::abandon`] stops it without
/// writing anything (a simulated crash, for tests).
#[derive(Debug)]
pub struct BufferPool {
    core: Arc<Core>,
    cleaner: Mutex<Option<JoinHandle<()>>>,
    closed: AtomicBool,
}

impl BufferPool {
    /// Opens a pool over `device` from its parts, with `log` for the WAL rule.
    ///
    /// # Errors
    /// A pool the device or memory cannot hold; the cleaner thread could not start.
    pub fn with_parts(
        device: SharedDevice,
        log: Arc<dyn RedoLog>,
        config: CoreConfig,
        parts: Parts,
    ) -> Result<Self> {
        let background = config.background;
        let core = Arc::new(Core::new(device, log, config, parts)?);
        let cleaner = if background {
            let cleaner_core = Arc::clone(&core);
            Some(
                crate::sync::spawn("flashbuf-cleaner", move || cleaner_core.cleaner_loop())
                    .map_err(|err| Error::io("starting the page cleaner thread", err))?,
            )
        } else {
            None
        };
        Ok(BufferPool {
            core,
            cleaner: Mutex::new(cleaner),
            closed: AtomicBool::new(false),
        })
    }

    /// A pool with no redo log (LSNs are counted, never logged).
    ///
    /// # Errors
    /// As [`BufferPool::with_parts`].
    pub fn with_parts_unlogged(
        device: SharedDevice,
        config: CoreConfig,
        parts: Parts,
    ) -> Result<Self> {
        Self::with_parts(device, Arc::new(NullLog::default()), config, parts)
    }

    /// Latches `page` shared, reading it in on a miss.
    ///
    /// # Errors
    /// Page out of range, corrupt page, device error, no frame available.
    pub fn read(&self, page: PageId) -> Result<PageReadGuard<'_>> {
        let frame = self.core.fetch(page, LatchMode::Shared, true)?;
        Ok(PageReadGuard::new(&self.core, frame))
    }

    /// Runs `read` on the bytes of `page` without pin or latch when it is cached (validated,
    /// retried, and falling back to a shared latch: [`Core::read_optimistic`]).
    ///
    /// # Errors
    /// As [`BufferPool::read`] on the fallback path.
    pub fn read_optimistic<R>(
        &self,
        page: PageId,
        read: impl FnMut(crate::core::optimistic::PageView<'_>) -> R,
    ) -> Result<R> {
        self.core.read_optimistic(page, read)
    }

    /// Latches `page` exclusive, reading it in on a miss; the guard marks it dirty if modified.
    ///
    /// # Errors
    /// As [`BufferPool::read`], plus [`Error::Poisoned`] after a failed write.
    pub fn write(&self, page: PageId) -> Result<PageWriteGuard<'_>> {
        self.core.check_poisoned()?;
        let frame = self.core.fetch(page, LatchMode::Exclusive, true)?;
        Ok(PageWriteGuard::new(&self.core, frame))
    }

    /// Latches `page` exclusive without reading it: the frame starts zeroed (a new page, as
    /// InnoDB's `buf_page_create`). If the page is cached, its cached contents are kept.
    ///
    /// # Errors
    /// As [`BufferPool::write`].
    pub fn create(&self, page: PageId) -> Result<PageWriteGuard<'_>> {
        self.core.check_poisoned()?;
        let frame = self.core.fetch(page, LatchMode::Exclusive, false)?;
        Ok(PageWriteGuard::new(&self.core, frame))
    }

    /// Pages on the device (valid ids are `0..pages()`).
    pub fn pages(&self) -> u64 {
        self.core.pages
    }

    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.core.page_size
    }

    /// The composition's name.
    pub fn scheme(&self) -> &str {
        &self.core.config.scheme
    }

    /// The core's settings.
    pub fn core_config(&self) -> &CoreConfig {
        &self.core.config
    }

    /// The device.
    pub fn device(&self) -> &SharedDevice {
        &self.core.device
    }

    /// The core (for policies, the engine and diagnostics).
    pub fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> PoolStats {
        self.core.stats()
    }

    /// Profiles each instance's eviction end once (see [`Core::sample_tail`]); the samples
    /// accumulate in [`BufferPool::stats`]' extras, from which
    /// [`crate::core::tail_profile::TailProfile::from_extra`] makes a window's profile.
    pub fn sample_tail(&self, scan_depth: usize) {
        self.core.sample_tail(scan_depth);
    }

    /// The LSN below which every change is on the device (see [`Core::oldest_unflushed_lsn`]).
    pub fn oldest_unflushed_lsn(&self) -> Lsn {
        self.core.oldest_unflushed_lsn()
    }

    /// Sets the high-water mark (see [`Core::set_high_water`]).
    pub fn set_high_water(&self, pages: u64) {
        self.core.set_high_water(pages);
    }

    /// Reads and checks every page on the device (see [`Core::scrub`]).
    ///
    /// # Errors
    /// Device read errors.
    pub fn scrub(&self, limit: usize) -> Result<(Vec<String>, u64)> {
        self.core.scrub(limit)
    }

    /// Writes, in the calling thread, every dirty page whose oldest modification is below
    /// `lsn_limit`: a synchronous recoverability write (docs/algorithms.md section 1), counted as
    /// such. Returns the pages written.
    ///
    /// # Errors
    /// A write error (the pool is then poisoned).
    pub fn preflush(&self, lsn_limit: Lsn) -> Result<u64> {
        self.core.preflush(lsn_limit)
    }

    /// Syncs the data device through the write path's gate: every write completed before the
    /// call is durable when it returns. A failure poisons the pool (and is sticky).
    ///
    /// # Errors
    /// The sync failed now or earlier.
    pub fn sync_data(&self) -> Result<()> {
        self.core.check_poisoned()?;
        self.core.parts.write_path.sync().map_err(|err| {
            self.core.poison(&err);
            Error::Poisoned(err)
        })
    }

    /// Writes every dirty page (and held copies) and syncs the device.
    ///
    /// # Errors
    /// The first write or sync error (the pool is then poisoned).
    pub fn flush_all(&self) -> Result<()> {
        self.core.flush_all()
    }

    /// Checks every structural invariant (lists, page table, flush list, side lists); meant for
    /// tests, when no foreground thread is inside the pool (it waits for the cleaner to finish
    /// its round). Returns the first violation found.
    ///
    /// # Errors
    /// A description of the violated invariant.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        let _round = self.core.cleaner_round.lock();
        crate::core::invariants::check(&self.core)
    }

    /// Stops the cleaner, flushes everything and syncs. The pool stays usable for reads.
    ///
    /// # Errors
    /// A write or sync error, or a poisoned pool.
    pub fn shutdown(&self) -> Result<()> {
        self.stop_cleaner();
        self.closed.store(true, Ordering::Release);
        self.core.flush_all()
    }

    /// Closes the pool: stops the cleaner, writes back every dirty page and syncs.
    ///
    /// # Errors
    /// As [`BufferPool::shutdown`].
    #[must_use = "close() returns the errors of the final write-back; dropping can only print them"]
    pub fn close(self) -> Result<()> {
        self.shutdown()
    }

    /// Stops the cleaner without writing anything back: what a crash leaves (for tests).
    pub fn abandon(self) {
        self.abandon_in_place();
    }

    /// [`BufferPool::abandon`] for a pool shared with others (the database's): stops the
    /// cleaner, and dropping the pool later writes nothing back.
    pub(crate) fn abandon_in_place(&self) {
        self.stop_cleaner();
        self.closed.store(true, Ordering::Release);
    }

    fn stop_cleaner(&self) {
        self.core.stop_cleaner();
        if let Some(handle) = self.cleaner.lock().take() {
            // A panicking cleaner already printed its message; nothing more to do here.
            let _ = handle.join();
        }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        self.stop_cleaner();
        if !self.closed.load(Ordering::Acquire)
            && self.core.check_poisoned().is_ok()
            && let Err(err) = self.core.flush_all()
        {
            eprintln!(
                "flashbuf: buffer pool dropped without close(); writing back its dirty pages \
                 failed: {err}"
            );
        }
    }
}
