//! PostgreSQL 11's background writing (docs/algorithms.md section 5b) as a write-back policy:
//!
//! - **bgwriter** (`BgBufferSync`): every `bgwriter_delay` (200 ms), estimate the buffers the
//!   backends will allocate before the next round (`bgwriter_lru_multiplier` (2.0) times the
//!   smoothed recent allocation rate, smoothed as PostgreSQL does: jump up at once, decay over
//!   16 rounds), and scan ahead in eviction order (for Clock Sweep: ahead of the hand, without
//!   touching usage counts) until that many reusable buffers (unpinned, usage count zero) are
//!   found, writing the dirty ones among them, at most `bgwriter_lru_maxpages` (100) per round.
//!   Written pages stay cached, clean.
//! - **checkpointer** (`CheckpointGuts` with `checkpoint_completion_target`): every
//!   `checkpoint_timeout`, or sooner when the log since the last checkpoint passes half its
//!   capacity (PostgreSQL's `max_wal_size` trigger), take the dirty pages below the current LSN
//!   and write them spread over `checkpoint_completion_target` of the interval, oldest first.
//!   The database's own checkpoint (its redo point) follows as those pages get written.
//!
//! Pages written here count as background LRU flushes (bgwriter) and flush-list flushes
//! (checkpointer).

use crate::core::frame::{FrameId, IO_WRITE};
use crate::core::instance::Instance;
use crate::core::parts::Writeback;
use crate::core::pool::Core;
use crate::core::stats::ExtraStats;
use crate::core::write_path::WriteKind;
use crate::error::Result;
use crate::page::Lsn;
use crate::sync::{Mutex, Ordering};

/// PostgreSQL's `smoothing_samples`.
const SMOOTHING_SAMPLES: f64 = 16.0;
/// The checkpointer writes (and holds) at most this many pages at once: PostgreSQL's writes
/// one buffer at a time; a bounded batch keeps the device busy without taking every frame.
const CHECKPOINT_BATCH: usize = 32;

/// The bgwriter and checkpointer settings (PostgreSQL's names).
#[derive(Debug, Clone, Copy)]
pub struct PgSettings {
    /// `bgwriter_delay`, device-time milliseconds.
    pub bgwriter_delay_ms: u64,
    /// `bgwriter_lru_maxpages`.
    pub bgwriter_lru_maxpages: usize,
    /// `bgwriter_lru_multiplier`.
    pub bgwriter_lru_multiplier: f64,
    /// `checkpoint_timeout`, device-time milliseconds.
    pub checkpoint_timeout_ms: u64,
    /// `checkpoint_completion_target`.
    pub checkpoint_completion_target: f64,
}

/// A spread checkpoint in progress.
#[derive(Debug, Clone, Copy)]
struct Spread {
    target_lsn: Lsn,
    total_pages: u64,
    written: u64,
    started_ms: u64,
}

#[derive(Debug, Default)]
struct PgState {
    smoothed_alloc: f64,
    last_misses: u64,
    last_checkpoint_ms: u64,
    last_checkpoint_lsn: Lsn,
    spread: Option<Spread>,
    bgwriter_pages: u64,
    checkpoint_pages: u64,
    checkpoints: u64,
}

/// PostgreSQL's bgwriter and checkpointer (see the module docs).
#[derive(Debug)]
pub struct PgBackground {
    settings: PgSettings,
    state: Mutex<PgState>,
}

impl PgBackground {
    /// The background writers with these settings.
    #[must_use]
    pub fn new(settings: PgSettings) -> Self {
        PgBackground {
            settings,
            state: Mutex::new(PgState::default()),
        }
    }

    /// Buffers the backends are expected to allocate before the next round, per instance.
    fn upcoming_allocations(&self, core: &Core, state: &mut PgState) -> usize {
        let misses = core.counters.misses.load(Ordering::Relaxed);
        let recent = misses.saturating_sub(state.last_misses) as f64;
        state.last_misses = misses;
        if state.smoothed_alloc <= recent {
            state.smoothed_alloc = recent;
        } else {
            state.smoothed_alloc += (recent - state.smoothed_alloc) / SMOOTHING_SAMPLES;
        }
        let upcoming = state.smoothed_alloc * self.settings.bgwriter_lru_multiplier;
        (upcoming / core.instances.len() as f64).ceil() as usize
    }

    /// One instance's bgwriter pass: returns pages written.
    fn bgwriter(core: &Core, instance: &Instance, wanted: usize, max_writes: usize) -> Result<u64> {
        if wanted == 0 || max_writes == 0 {
            return Ok(0);
        }
        let mut batch: Vec<FrameId> = Vec::new();
        {
            let order = instance.lock_order();
            let mut reusable = instance.free_len();
            order.peek(&core.frames, &mut |id| {
                if reusable >= wanted || batch.len() >= max_writes {
                    return false;
                }
                reusable += 1;
                let frame = core.frame(id);
                if frame.is_dirty() && frame.try_claim_io(IO_WRITE) {
                    batch.push(id);
                }
                true
            });
        }
        let written = core.write_frames(batch, WriteKind::Batch, false)?;
        for &id in &written {
            core.frame(id).release_io(IO_WRITE);
        }
        core.counters
            .lru_flushes
            .fetch_add(written.len() as u64, Ordering::Relaxed);
        Ok(written.len() as u64)
    }

    /// Starts a checkpoint when its time or the log's size says so; advances a running one.
    fn checkpointer(&self, core: &Core, state: &mut PgState) -> Result<u64> {
        let now = core.now_ms();
        let current = core.log.current_lsn();
        if state.spread.is_none() {
            let by_time =
                now.saturating_sub(state.last_checkpoint_ms) >= self.settings.checkpoint_timeout_ms;
            let by_size = core.log.capacity().is_some_and(|capacity| {
                current.saturating_sub(state.last_checkpoint_lsn) > capacity / 2
            });
            if !(by_time || by_size) {
                return Ok(0);
            }
            state.spread = Some(Spread {
                target_lsn: current,
                total_pages: core.dirty_pages() as u64,
                written: 0,
                started_ms: now,
            });
            state.checkpoints += 1;
        }
        let Some(mut spread) = state.spread else {
            return Ok(0);
        };
        let window_ms = (self.settings.checkpoint_timeout_ms as f64
            * self.settings.checkpoint_completion_target)
            .max(1.0);
        let progress = (now.saturating_sub(spread.started_ms) as f64 / window_ms).min(1.0);
        let due =
            ((spread.total_pages as f64 * progress).ceil() as u64).saturating_sub(spread.written);
        let mut written = 0;
        if due > 0 {
            let share = due.div_ceil(core.instances.len() as u64) as usize;
            for instance in &core.instances {
                let mut left = share;
                // Bound: share / CHECKPOINT_BATCH batches, each writing at least one page.
                while left > 0 {
                    let wrote =
                        core.flush_oldest(instance, left.min(CHECKPOINT_BATCH), spread.target_lsn)?;
                    if wrote == 0 {
                        break;
                    }
                    written += wrote;
                    left = left.saturating_sub(wrote as usize);
                }
            }
            core.counters
                .flush_list_flushes
                .fetch_add(written, Ordering::Relaxed);
        }
        spread.written += written;
        let remaining = core.oldest_unflushed_lsn() < spread.target_lsn;
        if progress >= 1.0 && (!remaining || written == 0) {
            state.spread = None;
            state.last_checkpoint_ms = now;
            state.last_checkpoint_lsn = spread.target_lsn;
        } else {
            state.spread = Some(spread);
        }
        Ok(written)
    }
}

impl Writeback for PgBackground {
    fn name(&self) -> &'static str {
        "pg-bgwriter"
    }

    fn round(&self, core: &Core) -> Result<u64> {
        let mut state = self.state.lock();
        let wanted = self.upcoming_allocations(core, &mut state);
        let per_instance_writes = self
            .settings
            .bgwriter_lru_maxpages
            .div_ceil(core.instances.len());
        let mut bgwriter = 0;
        for instance in &core.instances {
            bgwriter += Self::bgwriter(core, instance, wanted, per_instance_writes)?;
        }
        state.bgwriter_pages += bgwriter;
        let checkpoint = self.checkpointer(core, &mut state)?;
        state.checkpoint_pages += checkpoint;
        Ok(self.settings.bgwriter_delay_ms)
    }

    fn extra_stats(&self, _core: &Core, out: &mut ExtraStats) {
        let state = self.state.lock();
        out.counter("bgwriter_pages", state.bgwriter_pages as f64);
        out.counter("checkpointer_pages", state.checkpoint_pages as f64);
        out.counter("checkpoints_spread", state.checkpoints as f64);
        out.gauge("bgwriter_smoothed_alloc", state.smoothed_alloc);
    }
}
