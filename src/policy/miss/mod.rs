//! Miss paths (docs/architecture.md's second decision): how a foreground thread gets a frame for a
//! page that is not cached. Each implements [`crate::core::parts::MissPath`].
//!
//! - [`raw::Raw`]: InnoDB's `buf_LRU_get_free_block` (docs/algorithms.md section 1): free list,
//!   scan from the eviction end for a clean page, then a single-page flush (the read stall).
//!   Vanilla and the InnoDB-emulated CF-LRU.
//! - [`lru_c::LruCPointer`]: the LRU-C pointer (section 2, Algorithm 1): the victim is always the
//!   least recently used clean page; a read stall only when no clean page is left.
//! - [`war::War`]: on a read stall, dirty tail pages are copied to a temporary write buffer
//!   instead of being written first (section 3).
//! - [`fused_rw::FusedRw`]: on a read stall, one fused command writes the victim and reads the
//!   page (section 4).
//! - [`pg::BackendWrite`]: PostgreSQL's backend: the first page the order offers is the victim;
//!   if dirty, the backend writes it itself (section 5b).
//! - [`ace::Ace`]: ACE's writer and evictor: when the victim is dirty, write the next `n_w`
//!   dirty pages in eviction order concurrently, keep them cached clean, evict the victim
//!   (section 5).
//!
//! This file holds the parts of InnoDB's loop that RAW, WAR and RW share: `raw_loop` (steps 1
//! to 4 with the scheme's step 4 passed in, in MySQL 5.6's or 5.7's version:
//! [`FreeBlockLoop`]), the clean scan and the single-page flush.

pub mod ace;
pub mod fused_rw;
pub mod lru_c;
pub mod pg;
pub mod raw;
pub mod war;

use crate::core::frame::{FrameId, IO_WRITE};
use crate::core::instance::Instance;
use crate::core::order::Verdict;
use crate::core::parts::{Acquired, Acquisition};
use crate::core::pool::{Core, Scanner};
use crate::error::{Error, Result};
use crate::sync::{AtomicU64, Ordering};
use serde::{Deserialize, Serialize};

/// Iterations of a miss loop before it reports that no frame can be had (each iteration either
/// takes a frame, frees one, or waits for the cleaner).
pub const MISS_ITERATIONS: usize = 1000;

/// What step 4 of the loop does when no clean page was found.
pub(crate) trait StallStep {
    /// Whether reaching step 4 is a read stall (WAR's copy to its TWB is not).
    fn is_read_stall(&self) -> bool;
    /// Step 4: free a frame (or give one for the miss). `Ok(None)`: loop again.
    fn step(&self, core: &Core, instance: &Instance) -> Result<Option<Acquired>>;
    /// Whether MySQL puts the frame step 4 freed on the free list, "up for grabs for all user
    /// threads" (`buf_flush_single_page_from_LRU`), rather than giving it to the thread that
    /// freed it. The 5.6 loop does so; see [`FreeBlockLoop`].
    fn frees_to_free_list(&self) -> bool {
        false
    }
    /// Whether the thread scans the LRU tail itself (steps 2-3) before step 4. Percona's
    /// backoff does not: a query thread only looks at the free list and waits for the LRU
    /// manager to fill it (`buf_LRU_get_free_block` loops back before the scan).
    fn scans_lru(&self) -> bool {
        true
    }
}

/// Which MySQL's `buf_LRU_get_free_block` the InnoDB miss loop follows (pool-config key
/// `free_block_loop`; docs/algorithms.md, "The host's miss loop: 5.6 or 5.7").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum FreeBlockLoop {
    /// MySQL 5.6.26, the LRU-C prototype's host: with the doublewrite on, a thread that finds
    /// the free list empty while the page cleaner's LRU batch of its instance is being set up
    /// waits for that batch's writes to end; a failed first tail scan clears `try_LRU_scan`,
    /// so the next threads skip it until a batch ends; no signal to the cleaner; from the
    /// third iteration on it sleeps 100 ms; a single-page flush puts the frame it freed on the
    /// free list, where any thread may take it, and loops.
    #[serde(rename = "5.6")]
    Mysql56,
    /// flashbuf's earlier loop, after MySQL 5.7's: no batch wait, every first iteration scans,
    /// the cleaner is signalled, the sleep is 10 ms; the frame a single-page flush freed goes
    /// to the thread that flushed it (MySQL 5.7 puts it on the free list, as 5.6 does).
    #[default]
    #[serde(rename = "5.7")]
    Mysql57,
}

impl FreeBlockLoop {
    /// The sleep from the third iteration on, in device milliseconds.
    #[must_use]
    pub fn sleep_ms(self) -> u64 {
        match self {
            FreeBlockLoop::Mysql56 => 100,
            FreeBlockLoop::Mysql57 => 10,
        }
    }
}

impl std::fmt::Display for FreeBlockLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FreeBlockLoop::Mysql56 => "5.6",
            FreeBlockLoop::Mysql57 => "5.7",
        })
    }
}

/// InnoDB's `buf_LRU_get_free_block`, per iteration n = 0, 1, ...: (1) take a free frame;
/// (5.6: if the cleaner's LRU batch of this instance is being set up, wait for it to end and
/// go to 1); (2) scan at most `scan_depth` pages in eviction order (the whole order when
/// n > 0; 5.6 skips the first scan while `try_LRU_scan` is clear) for a clean, unpinned,
/// idle page and evict it; (3) 5.7: wake the cleaner; if n > 1 sleep (5.6: 100 ms, 5.7:
/// 10 ms); (4) the scheme's `stall` step. The wait of a read stall is recorded from its start
/// to the frame. Bound: [`MISS_ITERATIONS`].
pub(crate) fn raw_loop(
    core: &Core,
    instance: &Instance,
    scan_depth: usize,
    host: FreeBlockLoop,
    stall: &dyn StallStep,
) -> Result<Acquisition> {
    let mut stall_began: Option<u64> = None;
    let done = |acquired: Acquired, stall_began: Option<u64>| Ok(acquired.after_stall(stall_began));
    let mysql56 = host == FreeBlockLoop::Mysql56;
    // 5.6 waits for a running LRU batch only with the doublewrite on (`srv_use_doublewrite_buf`).
    let waits_for_batches = mysql56 && core.parts.write_path.is_doublewrite();
    // The loop's iteration: a batch wait starts it again without counting (5.6's `goto loop`).
    let mut n = 0usize;
    let scans = stall.scans_lru();
    for _ in 0..MISS_ITERATIONS {
        if let Some(id) = core.pop_free(instance) {
            count_unstalled(&core.counters.misses_from_free_list, stall_began);
            return done(Acquired::Free(id), stall_began);
        }
        if scans && waits_for_batches {
            let began = core.now_us();
            if instance.lru_batch.wait_if_initialising() {
                core.counters
                    .lru_batch_waits
                    .fetch_add(1, Ordering::Relaxed);
                core.counters
                    .lru_batch_wait_us
                    .fetch_add(core.now_us().saturating_sub(began), Ordering::Relaxed);
                continue;
            }
        }
        if scans && (!mysql56 || n > 0 || instance.lru_batch.try_lru_scan()) {
            let depth = if n == 0 { scan_depth } else { usize::MAX };
            if let Some(id) = scan_for_clean(core, instance, depth) {
                count_unstalled(&core.counters.misses_from_own_scan, stall_began);
                return done(Acquired::Free(id), stall_began);
            }
            if mysql56 && n == 0 {
                instance.lru_batch.scan_found_nothing();
            }
        }
        // Freeing a frame now needs a write: after a failed write the pool refuses.
        core.check_poisoned()?;
        if !mysql56 {
            core.wake_cleaner();
        }
        if scans && n > 1 {
            core.counters
                .miss_loop_sleeps
                .fetch_add(1, Ordering::Relaxed);
            crate::sync::sleep(core.device_ms(host.sleep_ms()));
        }
        if stall_began.is_none() && stall.is_read_stall() {
            stall_began = Some(core.now_us());
        }
        match stall.step(core, instance)? {
            // 5.6: the flushed frame joins the free list, and this thread starts its loop
            // again like any other: another thread may take the frame first.
            Some(Acquired::Free(id)) if mysql56 && stall.frees_to_free_list() => {
                core.push_free(instance, id);
            }
            Some(acquired) => return done(acquired, stall_began),
            None => {}
        }
        n += 1;
    }
    Err(no_frame_error(core))
}

/// Counts a miss served without a read stall (`stall_began` unset) in `counter`: with the
/// read stalls, the two such counters split the RAW loop's misses by where their frame came
/// from (docs/regime.md, "Where vanilla's frames come from").
fn count_unstalled(counter: &AtomicU64, stall_began: Option<u64>) {
    if stall_began.is_none() {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Step 2: evicts the first clean, unpinned, idle page among the first `depth` the order
/// offers. The frame is returned on no list.
pub(crate) fn scan_for_clean(core: &Core, instance: &Instance, depth: usize) -> Option<FrameId> {
    let mut order = instance.lock_order();
    let mut scanned = 0;
    let mut victim = None;
    core.walk_charged(&mut **order, Scanner::Foreground, &mut |id| {
        if scanned >= depth {
            return Verdict::Stop;
        }
        scanned += 1;
        if core.try_evict_clean(id) {
            victim = Some(id);
            return Verdict::Take;
        }
        Verdict::Skip
    });
    drop(order);
    // `NP_clean` of the self-tuning controller: every page this user-thread scan looked at.
    core.counters
        .user_scan_clean_pages
        .fetch_add(scanned as u64, Ordering::Relaxed);
    victim
}

/// Claims (`IO_WRITE`) the first dirty, unpinned page the order offers.
pub(crate) fn claim_dirty_victim(core: &Core, instance: &Instance) -> Option<FrameId> {
    let mut order = instance.lock_order();
    let mut found = None;
    let mut scanned = 0u64;
    core.walk_charged(&mut **order, Scanner::Foreground, &mut |id| {
        scanned += 1;
        let frame = core.frame(id);
        if frame.is_dirty() && !frame.is_pinned() && frame.try_claim_io(IO_WRITE) {
            found = Some(id);
            return Verdict::Stop;
        }
        Verdict::Skip
    });
    drop(order);
    if found.is_some() {
        // `NP_dirty`: the pages scanned to find the dirty victim a user thread writes.
        core.counters
            .user_scan_dirty_pages
            .fetch_add(scanned, Ordering::Relaxed);
    }
    found
}

/// Step 4 of vanilla: InnoDB's `buf_flush_single_page_from_LRU`: write the first flushable
/// dirty page from the eviction end synchronously, then evict it. Returns the freed frame, or
/// `None` when nothing could be flushed and evicted (the caller loops).
pub(crate) fn single_page_flush(core: &Core, instance: &Instance) -> Result<Option<FrameId>> {
    let Some(victim) = claim_dirty_victim(core, instance) else {
        return Ok(None);
    };
    if !core.write_victim(victim)? {
        return Ok(None);
    }
    Ok(core.evict_written(instance, victim).then_some(victim))
}

/// The error of a miss loop that ran out of iterations.
pub(crate) fn no_frame_error(core: &Core) -> Error {
    core.counters.free_waits.fetch_add(1, Ordering::Relaxed);
    Error::NoFreeFrame {
        frames: core.frames.len(),
    }
}
