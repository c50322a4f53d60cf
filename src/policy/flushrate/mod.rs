//! Flush-rate control (docs/architecture.md's fourth decision; docs/algorithms.md section 6): how
//! many pages the page cleaner writes from the LRU end (`P_scan`) and from the flush list (`P_io`)
//! each round, and how long it sleeps between rounds.
//!
//! A [`FlushRate`] controller plans each round from [`CleanerInputs`] and then observes what
//! happened ([`RoundObservation`]); the InnoDB page cleaner (`policy::writeback::innodb`) carries
//! the plan out. Controllers:
//! - [`fixed::MysqlFixed`]: MySQL 5.7's: `P_scan` = `lru_scan_depth` every second, `P_io` from
//!   InnoDB's adaptive flushing (the arithmetic is in [`adaptive`]).
//! - [`percona::Percona`]: Percona Server 5.6's: the LRU manager paces each instance's LRU
//!   flush by its free-list length, the flush-list flusher sleeps 0 past
//!   `max_modified_age_sync` ("furious flushing"), else 1 s. The two parts have separate
//!   pacing ([`FlushRate::lru_due`], [`FlushRate::observe_lru_instance`]).
//! - [`self_tuning::SelfTuning`]: the self-tuning paper's Algorithm 3: `P_scan` and `P_io`
//!   tuned from synchronous writes, surplus free pages and `T_flushing`, with its stable-state
//!   memory ([`FlushRate::after_observe`] applies its decisions at once).

pub mod adaptive;
pub mod fixed;
pub mod percona;
pub mod self_tuning;

use std::fmt::Debug;

use crate::core::stats::ExtraStats;
use crate::page::Lsn;

/// What a controller sees before a round.
#[derive(Debug, Clone, Copy, Default)]
pub struct CleanerInputs {
    /// Dirty pages now (all instances).
    pub dirty_pages: usize,
    /// Frames in the pool.
    pub pool_pages: usize,
    /// Free frames now.
    pub free_pages: usize,
    /// Pages on the replacement orders now.
    pub lru_pages: usize,
    /// Current LSN.
    pub current_lsn: Lsn,
    /// Oldest modification in the pool (0 if none).
    pub oldest_lsn: Lsn,
    /// Log capacity, if the log is bounded.
    pub log_capacity: Option<u64>,
    /// Pages the previous round wrote from the flush lists (not the LRU part's): what
    /// InnoDB's `avg_page_rate` averages (5.6: `sum_pages += n_pages` of the flush-list batch
    /// in `page_cleaner_flush_pages_if_needed`; 5.7: `last_pages = n_flushed_list`).
    pub last_flush_list_pages: u64,
    /// Instances.
    pub instances: usize,
    /// Device-time milliseconds since the pool opened, at the start of the round (for
    /// controllers that pace the LRU and flush-list parts separately).
    pub now_ms: u64,
}

impl CleanerInputs {
    /// The part InnoDB's adaptive flushing reads (`page_cleaner_flush_pages_recommendation`).
    #[must_use]
    pub fn adaptive_inputs(&self) -> adaptive::FlushInputs {
        adaptive::FlushInputs {
            dirty_pages: self.dirty_pages,
            pool_pages: self.pool_pages,
            current_lsn: self.current_lsn,
            oldest_lsn: self.oldest_lsn,
            log_capacity: self.log_capacity,
            last_flush_list_pages: self.last_flush_list_pages,
        }
    }
}

/// One round's plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlushPlan {
    /// Pages to scan from the eviction end of each instance in the next round (`P_scan`;
    /// InnoDB's `lru_scan_depth`, which is also the free-list target of the LRU flush).
    pub lru_scan: usize,
    /// Pages to write from the flush lists, all instances together (`P_io`).
    pub flush_list_pages: u64,
    /// Write only flush-list pages whose oldest modification is below this.
    pub lsn_limit: Lsn,
    /// Device-time milliseconds to sleep after the round (a wake-up cuts it short).
    pub sleep_ms: u64,
}

/// What happened in a round and since the previous one.
#[derive(Debug, Clone, Copy, Default)]
pub struct RoundObservation {
    /// Pages written from the LRU ends this round (`NP_LRU`).
    pub lru_pages: u64,
    /// Pages written from the flush lists this round (`NP_flush`).
    pub flush_pages: u64,
    /// Pages user threads wrote to free frames since the previous round (`NP_dirty`: more than
    /// zero means synchronous replacement writes happened).
    pub user_dirty_writes: u64,
    /// Misses since the previous round that found a clean victim without writing (`NP_clean`
    /// is the pages scanned to find them; we count the misses).
    pub user_clean_victims: u64,
    /// Free frames after the round.
    pub free_pages: usize,
    /// Pages on the replacement orders after the round.
    pub lru_pages_listed: usize,
    /// Pages the adaptive heuristic asked for (`NP_req_flush`).
    pub requested_flush_pages: u64,
    /// Pages written by synchronous recoverability writes since the previous round
    /// (`NP_sync_rec`).
    pub sync_recoverability_writes: u64,
    /// Device-time milliseconds the round's flushing took (`T_flushing`).
    pub flushing_ms: u64,
    /// Pages user threads scanned, since the previous round, to find a dirty victim to write
    /// synchronously (`NP_dirty`; counted by the RAW loop's single-page flush).
    pub user_dirty_scanned: u64,
    /// Pages user threads scanned, since the previous round, to find a clean victim (`NP_clean`;
    /// counted by the RAW loop's step 2, whether or not it found one).
    pub user_clean_scanned: u64,
}

/// What a controller decided when it observed a round, overriding the plan it made during the
/// round (self-tuning decides `P_scan` and the sleep from `T_flushing`, known only at the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AfterObserve {
    /// `P_scan` for the next round's LRU part.
    pub lru_scan: usize,
    /// Device-time milliseconds to sleep after this round, counted from its start.
    pub sleep_ms: u64,
}

/// A flush-rate controller.
pub trait FlushRate: Send + Debug {
    /// The controller's name in compositions (`fixed`, `percona`, `self-tuning`).
    fn name(&self) -> &'static str;
    /// `P_scan` for the first round (before any plan).
    fn initial_lru_scan(&self) -> usize;
    /// Plans the flush-list part of this round and the LRU part of the next.
    fn plan(&mut self, inputs: &CleanerInputs) -> FlushPlan;
    /// Learns from the round just done.
    fn observe(&mut self, observation: &RoundObservation);
    /// Adds the controller's counters (e.g. current `P_scan`, `P_io`) to `out`.
    fn extra_stats(&self, out: &mut ExtraStats) {
        let _ = out;
    }
    /// Whether instance `instance`'s LRU part runs in the round starting at `now_ms` (device
    /// time). Default: every round (MySQL's single cleaner loop).
    fn lru_due(&mut self, instance: usize, now_ms: u64) -> bool {
        let _ = (instance, now_ms);
        true
    }
    /// Learns from one instance's LRU part (called only for instances whose part ran):
    /// `flushed` pages written, `free_len` and `lru_len` after it.
    fn observe_lru_instance(
        &mut self,
        instance: usize,
        now_ms: u64,
        flushed: u64,
        free_len: usize,
        lru_len: usize,
    ) {
        let _ = (instance, now_ms, flushed, free_len, lru_len);
    }
    /// Decisions taken in [`FlushRate::observe`] that override the plan; `None` keeps it.
    fn after_observe(&self) -> Option<AfterObserve> {
        None
    }
}
