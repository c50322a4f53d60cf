//! InnoDB's page cleaner as a write-back policy (docs/algorithms.md sections 1 and 2), with the LRU
//! part chosen by the scheme and the amounts by a flush-rate controller (`policy::flushrate`).
//!
//! Each round (the controller's period, or at once when a miss wakes it), for every instance
//! (in parallel over `page_cleaners` threads, as MySQL 5.7's page cleaners serve the buffer pool
//! instances):
//! 1. Held copies (WAR's TWB): write them all.
//! 2. The LRU part, by [`LruFlush`]:
//!    - [`LruFlush::Tail`] (vanilla, CF-LRU, WAR, RW): InnoDB's `buf_flush_LRU_list`: walk at
//!      most `P_scan` pages from the eviction end while the free list is shorter than `P_scan`,
//!      free clean pages, write dirty ones as one batch, free each as its write completes.
//!    - [`LruFlush::DirtyRegion`] (the LRU-C family): write the dirty region from its tail, a
//!      fixed number of pages (basic LRU-C) or all of it (dynamic batch write), and free each page
//!      as its write completes. With the mutex split only LRU-D is taken.
//! 3. Checkpoint flushing: the oldest `P_io` dirty pages below the plan's LSN limit, shared
//!    among instances by their number of dirty pages. The controller plans `P_io` after the
//!    LRU part, on the dirty pages it left; `P_scan` for the next round's LRU part comes from
//!    the same plan. That is MySQL 5.6.26's order (the papers' host). With
//!    `cleaner_plans_first` the round follows MySQL 5.7's coordinator instead: the plan is made
//!    first, and each instance's flush-list part runs right after its own LRU part, so one
//!    instance's long LRU part (LRU-C's whole dirty region at a large pool) does not hold back
//!    the flush list of the others.
//!
//! The controller may pace the two parts separately (Percona's LRU manager and flush-list
//! flusher): an instance's LRU part runs only when [`FlushRate::lru_due`] says so, and the
//! controller's plan then sets the flush-list part (0 pages when it is not due) and the sleep
//! until the next due part. A controller that decides at the end of the round
//! ([`FlushRate::after_observe`], self-tuning) overrides `P_scan` and the sleep there.
//!
//! Lock order as in `core`; list mutexes are released before any write is submitted; the
//! controller's mutex is taken with no list mutex held.

use std::time::Instant;

use crate::core::frame::{FrameId, IO_WRITE, NIL};
use crate::core::instance::Instance;
use crate::core::lru_list::LruList;
use crate::core::order::Verdict;
use crate::core::parts::Writeback;
use crate::core::pool::{Core, Scanner};
use crate::core::stats::ExtraStats;
use crate::core::write_path::WriteKind;
use crate::error::{Error, Result};
use crate::policy::flushrate::{CleanerInputs, FlushPlan, FlushRate, RoundObservation};
use crate::sync::{AtomicU64, Mutex, Ordering};

/// InnoDB's `BUF_LRU_MIN_LEN`: the LRU flush leaves at least this many pages.
const LRU_MIN_LEN: usize = 256;

/// What the cleaner writes from the replacement order's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LruFlush {
    /// InnoDB's LRU tail flush.
    Tail,
    /// LRU-C's dirty-region flush: `Some(n)` pages per round (basic LRU-C) or the whole region
    /// (`None`, dynamic batch write).
    DirtyRegion(Option<usize>),
}

/// Counters the controller's observations are computed from, as of the previous round.
#[derive(Debug, Default)]
struct Previous {
    flushed: AtomicU64,
    user_writes: AtomicU64,
    sync_rec: AtomicU64,
    misses: AtomicU64,
    stalls: AtomicU64,
    dirty_scanned: AtomicU64,
    clean_scanned: AtomicU64,
}

/// InnoDB's page cleaner (see the module docs).
#[derive(Debug)]
pub struct PageCleaner {
    lru: LruFlush,
    rate: Mutex<Box<dyn FlushRate>>,
    page_cleaners: usize,
    /// MySQL 5.7's round order (plan first, each instance's two parts together).
    plans_first: bool,
    neighbors: bool,
    /// Pages per LRU tail batch (5.6.26: [`MYSQL56_LRU_CHUNK`]; 5.7: the whole scan depth).
    lru_chunk: usize,
    previous: Previous,
    /// `P_scan` as the controller planned it last round.
    last_lru_scan: AtomicU64,
    /// Flush-list pages the controller asked for, all rounds (`NP_req_flush` summed).
    requested_total: AtomicU64,
}

impl PageCleaner {
    /// A cleaner with this LRU part and controller, run by `page_cleaners` threads, in MySQL
    /// 5.7's round order when `plans_first` (else 5.6's); with `neighbors` every batch also
    /// writes the dirty pages of its pages' 64-page extents (`innodb_flush_neighbors`).
    #[must_use]
    pub fn new(
        lru: LruFlush,
        rate: Box<dyn FlushRate>,
        page_cleaners: usize,
        plans_first: bool,
        neighbors: bool,
    ) -> Self {
        let first_scan = rate.initial_lru_scan();
        PageCleaner {
            last_lru_scan: AtomicU64::new(first_scan as u64),
            lru,
            rate: Mutex::new(rate),
            page_cleaners: page_cleaners.max(1),
            plans_first,
            neighbors,
            lru_chunk: usize::MAX,
            previous: Previous::default(),
            requested_total: AtomicU64::new(0),
        }
    }

    /// The same cleaner writing the LRU tail in batches of at most `pages` (MySQL 5.6.26:
    /// [`MYSQL56_LRU_CHUNK`]).
    #[must_use]
    pub fn with_lru_chunk(mut self, pages: usize) -> Self {
        self.lru_chunk = pages.max(1);
        self
    }

    /// MySQL 5.6.26's order (the code this reproduces by default): every instance's LRU part,
    /// then the plan, made on the dirty pages the LRU part left, then every instance's
    /// flush-list part. Returns the LRU and flush-list results per instance and the plan.
    fn parts_planned_after_lru(
        &self,
        core: &Core,
        now_ms: u64,
        lru_scan: usize,
        due: &[bool],
    ) -> (Vec<Result<u64>>, Vec<Result<u64>>, FlushPlan) {
        let lru_results = for_each_instance(core, self.page_cleaners, &|instance| {
            self.lru_part(core, instance, lru_scan, due)
        });
        self.observe_lru_parts(core, due, &lru_results);
        let (plan, dirty_total) = self.plan(core, now_ms);
        let flush_results = for_each_instance(core, self.page_cleaners, &|instance| {
            self.flush_list_part(core, instance, &plan, dirty_total)
        });
        (lru_results, flush_results, plan)
    }

    /// MySQL 5.7's order (`pc_request`, `pc_flush_slot`): the plan first, then each
    /// instance's LRU part followed at once by its own flush-list part.
    fn parts_planned_first(
        &self,
        core: &Core,
        now_ms: u64,
        lru_scan: usize,
        due: &[bool],
    ) -> (Vec<Result<u64>>, Vec<Result<u64>>, FlushPlan) {
        let (plan, dirty_total) = self.plan(core, now_ms);
        let both = for_each_instance(core, self.page_cleaners, &|instance| {
            let lru = self.lru_part(core, instance, lru_scan, due)?;
            let flush = self.flush_list_part(core, instance, &plan, dirty_total)?;
            Ok((lru, flush))
        });
        let (lru_results, flush_results): (Vec<_>, Vec<_>) = both
            .into_iter()
            .map(|result| match result {
                Ok((lru, flush)) => (Ok(lru), Ok(flush)),
                Err(err) => (Err(err), Ok(0)),
            })
            .unzip();
        self.observe_lru_parts(core, due, &lru_results);
        (lru_results, flush_results, plan)
    }

    /// Plans the flush list (and the next round's scan depth) on the pool as it is now;
    /// returns the plan and the dirty pages it was made on (at least 1), which the instances'
    /// shares divide.
    fn plan(&self, core: &Core, now_ms: u64) -> (FlushPlan, u64) {
        let inputs = self.inputs(core, now_ms);
        let plan = self.rate.lock().plan(&inputs);
        self.requested_total
            .fetch_add(plan.flush_list_pages, Ordering::Relaxed);
        self.last_lru_scan
            .store(plan.lru_scan as u64, Ordering::Relaxed);
        (plan, inputs.dirty_pages.max(1) as u64)
    }

    /// One instance's LRU part (held copies first); nothing from the LRU end when the
    /// controller says it is not due.
    fn lru_part(
        &self,
        core: &Core,
        instance: &Instance,
        lru_scan: usize,
        due: &[bool],
    ) -> Result<u64> {
        let held = core.parts.miss.write_held(core, instance)? as u64;
        if !due.get(instance.index).copied().unwrap_or(true) {
            return Ok(held);
        }
        let lru = match self.lru {
            LruFlush::Tail => {
                flush_lru_tail(core, instance, lru_scan, self.lru_chunk, self.neighbors)?
            }
            // Basic LRU-C's fixed batch is `P_scan` (the configured scan depth unless a
            // controller tunes it).
            LruFlush::DirtyRegion(limit) => {
                flush_dirty_region(core, instance, limit.map(|_| lru_scan))?
            }
        };
        Ok(held + lru)
    }

    /// Tells the controller what each due instance's LRU part did.
    fn observe_lru_parts(&self, core: &Core, due: &[bool], results: &[Result<u64>]) {
        let after_ms = core.now_ms();
        let mut rate = self.rate.lock();
        for (instance, result) in core.instances.iter().zip(results) {
            if due.get(instance.index).copied().unwrap_or(true) {
                let flushed = result.as_ref().map_or(0, |pages| *pages);
                let lru_len = instance.lock_order().len();
                rate.observe_lru_instance(
                    instance.index,
                    after_ms,
                    flushed,
                    instance.free_len(),
                    lru_len,
                );
            }
        }
    }

    /// One instance's flush-list part: its share of the plan's pages, by its dirty pages.
    fn flush_list_part(
        &self,
        core: &Core,
        instance: &Instance,
        plan: &FlushPlan,
        dirty_total: u64,
    ) -> Result<u64> {
        // A pool shutting down writes back (or abandons) its dirty pages itself.
        if plan.flush_list_pages == 0 || core.shutting_down() {
            return Ok(0);
        }
        let dirty = instance.lock_flush().len() as u64;
        let share = (plan.flush_list_pages * dirty).div_ceil(dirty_total);
        let stop = || core.shutting_down();
        let flushed = core.flush_oldest_ext(
            instance,
            share as usize,
            plan.lsn_limit,
            self.neighbors,
            &stop,
        )?;
        // 5.6's `buf_flush_end`: any batch of the instance makes tail scans worth trying again.
        instance.lru_batch.batch_ended();
        core.counters
            .flush_list_flushes
            .fetch_add(flushed, Ordering::Relaxed);
        Ok(flushed)
    }

    fn inputs(&self, core: &Core, now_ms: u64) -> CleanerInputs {
        let mut inputs = CleanerInputs {
            pool_pages: core.frames.len(),
            current_lsn: core.log.current_lsn(),
            log_capacity: core.log.capacity(),
            last_flush_list_pages: self.previous.flushed.load(Ordering::Relaxed),
            instances: core.instances.len(),
            now_ms,
            ..CleanerInputs::default()
        };
        for instance in &core.instances {
            let flush = instance.lock_flush();
            inputs.dirty_pages += flush.len();
            let oldest = flush.oldest_lsn(&core.frames);
            if oldest != 0 && (inputs.oldest_lsn == 0 || oldest < inputs.oldest_lsn) {
                inputs.oldest_lsn = oldest;
            }
            drop(flush);
            inputs.free_pages += instance.free_len();
            inputs.lru_pages += instance.lock_order().len();
        }
        inputs
    }

    /// Hands the round's observation to the controller; returns the sleep it decided then, if
    /// it overrides the plan's (and stores its `P_scan` for the next round).
    fn observe(
        &self,
        core: &Core,
        lru: u64,
        flush: u64,
        requested: u64,
        began: Instant,
    ) -> Option<u64> {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let swap = |previous: &AtomicU64, now: u64| {
            now.saturating_sub(previous.swap(now, Ordering::Relaxed))
        };
        let misses = swap(&self.previous.misses, load(&core.counters.misses));
        let stalls = swap(&self.previous.stalls, load(&core.counters.read_stalls));
        let observation = RoundObservation {
            lru_pages: lru,
            flush_pages: flush,
            user_dirty_writes: swap(
                &self.previous.user_writes,
                load(&core.counters.sync_replacement_writes),
            ),
            user_clean_victims: misses.saturating_sub(stalls),
            free_pages: core.instances.iter().map(Instance::free_len).sum(),
            lru_pages_listed: core
                .instances
                .iter()
                .map(|instance| instance.lock_order().len())
                .sum(),
            requested_flush_pages: requested,
            sync_recoverability_writes: swap(
                &self.previous.sync_rec,
                load(&core.counters.sync_recoverability_writes),
            ),
            flushing_ms: (began.elapsed().as_secs_f64() * 1000.0 / core.time_scale) as u64,
            user_dirty_scanned: swap(
                &self.previous.dirty_scanned,
                load(&core.counters.user_scan_dirty_pages),
            ),
            user_clean_scanned: swap(
                &self.previous.clean_scanned,
                load(&core.counters.user_scan_clean_pages),
            ),
        };
        // InnoDB's adaptive flushing averages the flush-list part's pages only.
        self.previous.flushed.store(flush, Ordering::Relaxed);
        let mut rate = self.rate.lock();
        rate.observe(&observation);
        let after = rate.after_observe()?;
        self.last_lru_scan
            .store(after.lru_scan as u64, Ordering::Relaxed);
        Some(after.sleep_ms)
    }
}

impl Writeback for PageCleaner {
    fn name(&self) -> &'static str {
        match self.lru {
            LruFlush::Tail => "innodb-cleaner",
            LruFlush::DirtyRegion(Some(_)) => "lru-c-fixed",
            LruFlush::DirtyRegion(None) => "lru-c-dbw",
        }
    }

    fn round(&self, core: &Core) -> Result<u64> {
        let began = Instant::now();
        let now_ms = core.now_ms();
        // The LRU part uses the scan depth the controller planned last round.
        let lru_scan = self.last_lru_scan.load(Ordering::Relaxed) as usize;
        let due: Vec<bool> = {
            let mut rate = self.rate.lock();
            (0..core.instances.len())
                .map(|index| rate.lru_due(index, now_ms))
                .collect()
        };
        let (lru_results, flush_results, requested) = if self.plans_first {
            self.parts_planned_first(core, now_ms, lru_scan, &due)
        } else {
            self.parts_planned_after_lru(core, now_ms, lru_scan, &due)
        };
        let mut first_error = None;
        let mut sum = |results: Vec<Result<u64>>| {
            results
                .into_iter()
                .map(|result| {
                    result.unwrap_or_else(|err| {
                        first_error.get_or_insert(err);
                        0
                    })
                })
                .sum::<u64>()
        };
        let lru = sum(lru_results);
        let flush = sum(flush_results);
        let sleep_ms = self.observe(core, lru, flush, requested.flush_list_pages, began);
        first_error.map_or(Ok(sleep_ms.unwrap_or(requested.sleep_ms)), Err)
    }

    fn extra_stats(&self, core: &Core, out: &mut ExtraStats) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed) as f64;
        out.counter("flush_requested_pages", load(&self.requested_total));
        out.counter(
            "user_scan_dirty_pages",
            load(&core.counters.user_scan_dirty_pages),
        );
        out.counter(
            "user_scan_clean_pages",
            load(&core.counters.user_scan_clean_pages),
        );
        for (name, counter) in [
            (
                "cleaner_freed_clean_pages",
                &core.counters.cleaner_freed_clean,
            ),
            (
                "misses_from_free_list",
                &core.counters.misses_from_free_list,
            ),
            ("misses_from_own_scan", &core.counters.misses_from_own_scan),
        ] {
            out.counter(name, load(counter));
        }
        out.counter("backoff_waits", load(&core.counters.backoff_waits));
        out.counter("lru_batch_waits", load(&core.counters.lru_batch_waits));
        out.counter(
            "lru_batch_wait_ms",
            load(&core.counters.lru_batch_wait_us) / 1000.0,
        );
        out.counter("miss_loop_sleeps", load(&core.counters.miss_loop_sleeps));
        self.rate.lock().extra_stats(out);
    }
}

/// Runs `work` on every instance, on up to `workers` threads (each takes the instances
/// `i, i + workers, ...`), and returns the results in instance order.
pub(crate) fn for_each_instance<T: Send>(
    core: &Core,
    workers: usize,
    work: &(dyn Fn(&Instance) -> Result<T> + Sync),
) -> Vec<Result<T>> {
    let count = core.instances.len();
    let workers = workers.min(count).max(1);
    if workers == 1 {
        return core.instances.iter().map(work).collect();
    }
    let mut results: Vec<Option<Result<T>>> = (0..count).map(|_| None).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                scope.spawn(move || {
                    (worker..count)
                        .step_by(workers)
                        .map(|index| (index, work(&core.instances[index])))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for handle in handles {
            // A panicking cleaner thread already printed its message; its instances report it.
            if let Ok(done) = handle.join() {
                for (index, result) in done {
                    results[index] = Some(result);
                }
            }
        }
    });
    results
        .into_iter()
        .map(|result| {
            result.unwrap_or_else(|| Err(Error::Config("a page cleaner thread panicked".into())))
        })
        .collect()
}

/// MySQL 5.6.26's `PAGE_CLEANER_LRU_BATCH_CHUNK_SIZE`: its page cleaner flushes an instance's
/// LRU tail in batches of at most this many pages, "to reduce the wait time for the threads
/// waiting for a clean block" (`buf_flush_LRU_tail`). Not scaled with the scan depth: each
/// chunk is one doublewrite batch (at most 120 pages), and the batch structure of the write
/// path is what the waiters see.
pub const MYSQL56_LRU_CHUNK: usize = 100;

/// InnoDB's LRU tail flush for one instance, in batches of at most `chunk` pages handled (freed
/// or written; 5.6.26: [`MYSQL56_LRU_CHUNK`] pages and `depth / chunk` rounded up batches; 5.7:
/// one batch of `depth`). Each batch marks the instance's LRU batch as initialising while it
/// scans (what a 5.6 miss waits on) and running until its writes are done. Returns pages
/// written.
fn flush_lru_tail(
    core: &Core,
    instance: &Instance,
    depth: usize,
    chunk: usize,
    neighbors: bool,
) -> Result<u64> {
    let chunk = chunk.clamp(1, depth.max(1));
    let mut written = 0;
    // Bound: `depth / chunk` rounded up batches.
    for _ in 0..depth.div_ceil(chunk) {
        let running = instance.lru_batch.begin();
        let (freed, mut batch) = scan_lru_tail(core, instance, depth, chunk);
        let handled = freed.len() + batch.len();
        core.counters
            .cleaner_freed_clean
            .fetch_add(freed.len() as u64, Ordering::Relaxed);
        for id in freed {
            core.push_free(instance, id);
        }
        if neighbors {
            core.claim_neighbors(&mut batch);
        }
        running.dispatched();
        // Each written page is freed as soon as its own write completes (InnoDB frees LRU
        // flushed pages in the write completion).
        written += write_and_free(core, instance, batch)?;
        drop(running);
        if handled < chunk || core.shutting_down() {
            break;
        }
    }
    Ok(written)
}

/// One LRU batch's scan: walks the tail while fewer than `depth` pages were scanned, fewer than
/// `chunk` pages handled, the free list (with what this scan freed) is shorter than `depth` and
/// more than `BUF_LRU_MIN_LEN` pages stay; frees clean pages and claims dirty ones.
fn scan_lru_tail(
    core: &Core,
    instance: &Instance,
    depth: usize,
    chunk: usize,
) -> (Vec<FrameId>, Vec<FrameId>) {
    let mut freed = Vec::new();
    let mut batch = Vec::new();
    let mut order = instance.lock_order();
    let start_len = order.len();
    let mut scanned = 0;
    // InnoDB stops at BUF_LRU_MIN_LEN (256) pages left in the LRU.
    let min_len = LRU_MIN_LEN.min(instance.frame_count / 2);
    core.walk_charged(&mut **order, Scanner::Background, &mut |id| {
        // The LRU's length now, as 5.6's `lru_len`: freed pages have left it; claimed dirty
        // ones stay until their writes complete.
        let live_len = start_len.saturating_sub(freed.len());
        if scanned >= depth
            || freed.len() + batch.len() >= chunk
            || instance.free_len() + freed.len() + batch.len() >= depth
            || live_len <= min_len
        {
            return Verdict::Stop;
        }
        scanned += 1;
        let frame = core.frame(id);
        if frame.is_dirty() {
            if frame.try_claim_io(IO_WRITE) {
                batch.push(id);
            }
            Verdict::Skip
        } else if core.try_evict_clean(id) {
            freed.push(id);
            Verdict::Detach
        } else {
            Verdict::Skip
        }
    });
    (freed, batch)
}

/// LRU-C's flusher for one instance: the dirty region, `limit` pages (basic) or all (DBW).
/// Returns pages written.
fn flush_dirty_region(core: &Core, instance: &Instance, limit: Option<usize>) -> Result<u64> {
    let limit = limit.unwrap_or(usize::MAX);
    let mut freed = Vec::new();
    let batch = core.with_side(instance, |dirty| {
        let mut batch = Vec::new();
        let mut cursor = dirty.tail();
        let mut scanned = 0u64;
        // Bound: the region's length.
        while cursor != NIL && batch.len() < limit {
            scanned += 1;
            let prev = LruList::prev(&core.frames, cursor);
            let frame = core.frame(cursor);
            if frame.is_dirty() {
                if frame.try_claim_io(IO_WRITE) {
                    batch.push(cursor);
                }
            } else if core.try_evict_clean(cursor) {
                // Cleaned meanwhile by checkpoint flushing: free it at once.
                dirty.remove(&core.frames, cursor);
                freed.push(cursor);
            }
            cursor = prev;
        }
        // The emulated host's CPU for the walk, under LRU-D (and LRU-M without the split).
        core.hold_list_scan(scanned, Scanner::Background);
        batch
    });
    for id in freed {
        core.push_free(instance, id);
    }
    // Frames go back to the free list as their writes complete, not at the end of the whole
    // (possibly large) batch.
    write_and_free(core, instance, batch)
}

/// Writes a background batch, returning each written frame to the free list as its own write
/// completes (if it is still unpinned and clean on the order or the side list). Returns pages
/// written. A pool that shuts down meanwhile ends the batch after the chunk in flight (the
/// rest stays dirty): a whole dirty region can take minutes to write.
#[allow(clippy::needless_pass_by_value)] // the claims are handed over with the list
fn write_and_free(core: &Core, instance: &Instance, batch: Vec<FrameId>) -> Result<u64> {
    let mut written = 0u64;
    let stop = || core.shutting_down();
    let result = core.write_frames_until(&batch, WriteKind::Batch, false, &stop, &mut |id| {
        written += 1;
        if core.evict_written(instance, id) {
            core.push_free(instance, id);
        }
    });
    core.counters
        .lru_flushes
        .fetch_add(written, Ordering::Relaxed);
    result.map(|()| written)
}
