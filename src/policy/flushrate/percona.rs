//! Percona Server 5.6's flushing (the self-tuning paper's Algorithm 2; docs/algorithms.md section
//! 6): two separately paced parts.
//!
//! - **The LRU manager**, one per instance (`buf_lru_manager_adapt_sleep_time`): after each LRU
//!   flush of `P_scan` = `lru_scan_depth` pages it sets its sleep from the free list's length
//!   against `max_free = min(|LRU|, lru_scan_depth)`: under 1% of it and the batch flushed
//!   something: no sleep; over 20%: sleep 1 ms longer; under 5%: 50 ms shorter (not below 0);
//!   otherwise unchanged; at most 1000 ms. The first sleep is 1000 ms.
//!   *Which increment*: Percona's documentation (and the self-tuning paper, after it) says
//!   +50 ms above 20%; the 5.6 source adds 1 ms. We follow the code ([`LRU_SLEEP_INCREASE_MS`]),
//!   because it is what the measured server ran; the consequence is that the sleep grows back
//!   slowly after a burst, so the LRU manager stays eager longer.
//! - **The flush-list flusher** (`page_cleaner_adapt_flush_sleep_time`): the pages come from
//!   InnoDB's adaptive flushing with the configured `io_capacity` / `io_capacity_max` (as MySQL's
//!   fixed controller); the sleep is 0 ("furious flushing") when the checkpoint age (current LSN
//!   minus the oldest modification) exceeds `max_modified_age_sync`, else the period (1 s).
//!
//! *Time scale*: the LRU manager's constants (first and longest sleep 1000 ms, +1 ms, -50 ms)
//! are multiplied by the pool's `time_constant_scale`, as the flusher's period is
//! ([`Percona::with_time_scale`]; docs/regime.md): at the TPC-C runs' small scales an unscaled
//! 1000 ms first sleep left the LRU manager idle for whole runs (6 rounds in 7 s of device time,
//! 99.7% of page writes synchronous) while the flusher ran every 5 ms. Its sleeps are kept in
//! microseconds of device time so that scaled steps (+5 us at scale 0.005) are not rounded away.
//!
//! The page cleaner honours both paces: each instance's LRU part runs only when its own sleep
//! has elapsed ([`FlushRate::lru_due`]), the flush-list part only when the flusher's has, and the
//! cleaner sleeps until the earliest of them. Two departures, both bounded and documented:
//! a zero sleep is rounded up to 1 ms of device time (a furious flusher that finds nothing
//! writable would otherwise spin a core); Percona's one-second time limits on each part
//! (`srv_cleaner_max_lru_time`, `_flush_time`) are not modelled.
//!
//! What a query thread does on an empty free list (`legacy` single-page flush or `backoff`) is
//! the miss path's knob `empty_free_list` (`policy::miss::raw`), independent of this controller.
//!
//! Lock order: lives under the page cleaner's controller mutex; takes none.

use super::adaptive::{AdaptiveConfig, AdaptiveState};
use super::{CleanerInputs, FlushPlan, FlushRate, RoundObservation};
use crate::core::stats::ExtraStats;
use crate::wal::LogMargins;

/// The LRU manager's longest sleep (`PCT_IO`-independent cap in Percona: 1000 ms).
pub const LRU_SLEEP_MAX_MS: u64 = 1000;
/// The sleep increment above 20% free (the 5.6 source: 1 ms; the documentation: 50 ms).
pub const LRU_SLEEP_INCREASE_MS: u64 = 1;
/// The sleep decrement under 5% free.
pub const LRU_SLEEP_DECREASE_MS: u64 = 50;
/// The shortest sleep the cleaner actually takes (device milliseconds; see the module docs).
pub const MIN_SLEEP_MS: u64 = 1;

/// The LRU manager's sleep constants in one unit (milliseconds for [`adapt_lru_sleep`],
/// scaled microseconds inside [`Percona`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LruSleepSteps {
    /// Longest (and first) sleep.
    pub max: u64,
    /// Increment above 20% free.
    pub increase: u64,
    /// Decrement under 5% free.
    pub decrease: u64,
}

impl LruSleepSteps {
    /// Percona's constants in milliseconds.
    pub const MS: LruSleepSteps = LruSleepSteps {
        max: LRU_SLEEP_MAX_MS,
        increase: LRU_SLEEP_INCREASE_MS,
        decrease: LRU_SLEEP_DECREASE_MS,
    };

    /// Percona's constants times `scale`, in microseconds (each at least 1).
    #[must_use]
    pub fn scaled_us(scale: f64) -> LruSleepSteps {
        let us = |ms: u64| ((ms as f64 * 1000.0 * scale).round() as u64).max(1);
        LruSleepSteps {
            max: us(LRU_SLEEP_MAX_MS),
            increase: us(LRU_SLEEP_INCREASE_MS),
            decrease: us(LRU_SLEEP_DECREASE_MS),
        }
    }
}

/// Percona's `buf_lru_manager_adapt_sleep_time`: the LRU manager's next sleep from its current
/// one, the free-list length, `min(|LRU|, lru_scan_depth)` and the pages its batch flushed
/// (milliseconds, Percona's own constants).
#[must_use]
pub fn adapt_lru_sleep(sleep_ms: u64, free_len: u64, max_free_len: u64, flushed: u64) -> u64 {
    adapt_lru_sleep_by(sleep_ms, free_len, max_free_len, flushed, LruSleepSteps::MS)
}

/// [`adapt_lru_sleep`] with the constants of `steps` (in the unit of `sleep`).
#[must_use]
pub fn adapt_lru_sleep_by(
    sleep: u64,
    free_len: u64,
    max_free_len: u64,
    flushed: u64,
    steps: LruSleepSteps,
) -> u64 {
    if free_len < max_free_len / 100 && flushed > 0 {
        0
    } else if free_len > max_free_len / 5 {
        (sleep + steps.increase).min(steps.max)
    } else if free_len < max_free_len / 20 {
        sleep.saturating_sub(steps.decrease)
    } else {
        sleep
    }
}

/// Percona's `page_cleaner_adapt_flush_sleep_time`: 0 past `max_modified_age_sync`, else the
/// period.
#[must_use]
pub fn flush_sleep(modified_age: u64, max_modified_age_sync: Option<u64>, period_ms: u64) -> u64 {
    match max_modified_age_sync {
        Some(sync) if modified_age > sync => 0,
        _ => period_ms,
    }
}

/// One instance's LRU manager.
#[derive(Debug, Clone, Copy)]
struct LruManager {
    /// Device microseconds.
    sleep_us: u64,
    /// Device microseconds.
    next_due_us: u64,
}

/// Percona Server 5.6's controller (see the module docs).
#[derive(Debug, Clone)]
pub struct Percona {
    lru_scan: usize,
    adaptive: AdaptiveConfig,
    period_ms: u64,
    /// The LRU manager's constants, scaled, in device microseconds.
    lru_steps: LruSleepSteps,
    state: AdaptiveState,
    managers: Vec<LruManager>,
    flush_next_due_ms: u64,
    flush_sleep_ms: u64,
    last_requested: u64,
    furious_rounds: u64,
    lru_no_sleep_rounds: u64,
    lru_rounds: u64,
    flush_rounds: u64,
}

impl Percona {
    /// `P_scan` = `lru_scan` per instance; flush-list pages by adaptive flushing with
    /// `adaptive`; the flusher's normal sleep `period_ms`.
    #[must_use]
    pub fn new(lru_scan: usize, adaptive: AdaptiveConfig, period_ms: u64) -> Self {
        Percona {
            lru_scan,
            adaptive,
            period_ms: period_ms.max(1),
            lru_steps: LruSleepSteps::scaled_us(1.0),
            state: AdaptiveState::default(),
            managers: Vec::new(),
            flush_next_due_ms: 0,
            flush_sleep_ms: period_ms,
            last_requested: 0,
            furious_rounds: 0,
            lru_no_sleep_rounds: 0,
            lru_rounds: 0,
            flush_rounds: 0,
        }
    }

    /// The LRU manager's constants times `scale` (the pool's `time_constant_scale`, the factor
    /// already in `period_ms`); 1 is Percona's own.
    #[must_use]
    pub fn with_time_scale(mut self, scale: f64) -> Self {
        let scale = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
        self.lru_steps = LruSleepSteps::scaled_us(scale);
        self
    }

    fn manager(&mut self, instance: usize) -> &mut LruManager {
        if self.managers.len() <= instance {
            // Bounded by the pool's instances (at most 64, `PoolConfig::validate`).
            let first = self.lru_steps.max;
            self.managers.resize(
                instance + 1,
                LruManager {
                    sleep_us: first,
                    next_due_us: 0,
                },
            );
        }
        &mut self.managers[instance]
    }

    /// The LRU manager's current sleep of `instance` (device milliseconds, rounded up).
    #[must_use]
    pub fn lru_sleep_ms(&self, instance: usize) -> Option<u64> {
        self.managers
            .get(instance)
            .map(|m| m.sleep_us.div_ceil(1000))
    }
}

impl FlushRate for Percona {
    fn name(&self) -> &'static str {
        "percona"
    }

    fn initial_lru_scan(&self) -> usize {
        self.lru_scan
    }

    fn lru_due(&mut self, instance: usize, now_ms: u64) -> bool {
        now_ms.saturating_mul(1000) >= self.manager(instance).next_due_us
    }

    fn observe_lru_instance(
        &mut self,
        instance: usize,
        now_ms: u64,
        flushed: u64,
        free_len: usize,
        lru_len: usize,
    ) {
        let max_free = lru_len.min(self.lru_scan) as u64;
        let steps = self.lru_steps;
        let manager = self.manager(instance);
        manager.sleep_us =
            adapt_lru_sleep_by(manager.sleep_us, free_len as u64, max_free, flushed, steps);
        manager.next_due_us = now_ms.saturating_mul(1000) + manager.sleep_us;
        let no_sleep = manager.sleep_us == 0;
        self.lru_rounds += 1;
        self.lru_no_sleep_rounds += u64::from(no_sleep);
    }

    fn plan(&mut self, inputs: &CleanerInputs) -> FlushPlan {
        let now = inputs.now_ms;
        let mut pages = 0;
        let mut lsn_limit = crate::page::Lsn::MAX;
        if now >= self.flush_next_due_ms {
            let recommendation = self
                .state
                .recommend(&self.adaptive, &inputs.adaptive_inputs());
            pages = recommendation.pages;
            lsn_limit = recommendation.lsn_limit;
            let age = if inputs.oldest_lsn == 0 {
                0
            } else {
                inputs.current_lsn.saturating_sub(inputs.oldest_lsn)
            };
            let sync = inputs
                .log_capacity
                .map(|capacity| LogMargins::from_capacity(capacity).max_modified_age_sync);
            self.flush_sleep_ms = flush_sleep(age, sync, self.period_ms);
            self.furious_rounds += u64::from(self.flush_sleep_ms == 0);
            self.flush_rounds += 1;
            self.flush_next_due_ms = now + self.flush_sleep_ms;
        }
        self.last_requested = pages;
        let instances = inputs.instances.max(1);
        let lru_next = (0..instances)
            .map(|i| self.manager(i).next_due_us.div_ceil(1000))
            .min()
            .unwrap_or(now);
        let next = lru_next.min(self.flush_next_due_ms);
        FlushPlan {
            lru_scan: self.lru_scan,
            flush_list_pages: pages,
            lsn_limit,
            sleep_ms: next.saturating_sub(now).max(MIN_SLEEP_MS),
        }
    }

    fn observe(&mut self, _observation: &RoundObservation) {}

    fn extra_stats(&self, out: &mut ExtraStats) {
        out.gauge("p_scan", (self.lru_scan as u64) as f64);
        out.gauge("p_io", (self.last_requested) as f64);
        out.gauge(
            "percona_lru_sleep_ms",
            (self
                .lru_sleep_ms(0)
                .unwrap_or(self.lru_steps.max.div_ceil(1000))) as f64,
        );
        out.gauge("percona_flush_sleep_ms", (self.flush_sleep_ms) as f64);
        out.counter("percona_furious_rounds", (self.furious_rounds) as f64);
        out.counter("percona_lru_rounds", (self.lru_rounds) as f64);
        out.counter(
            "percona_lru_no_sleep_rounds",
            (self.lru_no_sleep_rounds) as f64,
        );
        out.counter("percona_flush_rounds", (self.flush_rounds) as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_sleep_follows_the_free_list_bands() {
        // max_free = 1000: 1% = 10, 5% = 50, 20% = 200.
        assert_eq!(adapt_lru_sleep(500, 9, 1000, 3), 0, "under 1% and flushed");
        assert_eq!(
            adapt_lru_sleep(500, 9, 1000, 0),
            450,
            "under 1% but flushed nothing: the 5% band"
        );
        assert_eq!(adapt_lru_sleep(500, 49, 1000, 3), 450);
        assert_eq!(adapt_lru_sleep(30, 49, 1000, 3), 0, "never below zero");
        assert_eq!(
            adapt_lru_sleep(500, 50, 1000, 3),
            500,
            "5%..=20%: unchanged"
        );
        assert_eq!(adapt_lru_sleep(500, 200, 1000, 3), 500);
        assert_eq!(adapt_lru_sleep(500, 201, 1000, 3), 501, "over 20%: +1 ms");
        assert_eq!(adapt_lru_sleep(1000, 900, 1000, 0), 1000, "capped at 1 s");
    }

    #[test]
    fn flush_list_sleeps_zero_past_the_sync_age() {
        assert_eq!(flush_sleep(100, Some(99), 1000), 0);
        assert_eq!(flush_sleep(99, Some(99), 1000), 1000);
        assert_eq!(flush_sleep(u64::MAX, None, 1000), 1000, "unbounded log");
    }

    fn adaptive() -> AdaptiveConfig {
        AdaptiveConfig {
            io_capacity: 200,
            io_capacity_max: 2000,
            max_dirty_pages_pct: 75.0,
            max_dirty_pages_pct_lwm: 0.0,
            adaptive_flushing_lwm: 10.0,
        }
    }

    /// At time scale 0.005 (a 5 ms flusher period) the LRU manager's first sleep is 5 ms, not
    /// 1000, and an empty free list shortens it by 0.25 ms a round, to 0 in 20 rounds, as the
    /// unscaled 1000 ms does in 20 rounds of 50 ms.
    #[test]
    fn the_lru_manager_scales_with_the_time_constants() {
        assert_eq!(
            LruSleepSteps::scaled_us(0.005),
            LruSleepSteps {
                max: 5000,
                increase: 5,
                decrease: 250
            }
        );
        let mut p = Percona::new(100, adaptive(), 5).with_time_scale(0.005);
        assert!(p.lru_due(0, 0));
        assert_eq!(p.lru_sleep_ms(0), Some(5));
        // An empty free list, nothing flushed: 250 us shorter each round.
        p.observe_lru_instance(0, 0, 0, 0, 5000);
        assert_eq!(p.manager(0).sleep_us, 4750);
        assert!(!p.lru_due(0, 4));
        assert!(p.lru_due(0, 5));
        for round in 1..20 {
            p.observe_lru_instance(0, round * 5, 0, 0, 5000);
        }
        assert_eq!(p.lru_sleep_ms(0), Some(0));
        // Unscaled: Percona's own constants.
        let mut own = Percona::new(100, adaptive(), 1000).with_time_scale(1.0);
        own.observe_lru_instance(0, 0, 0, 0, 5000);
        assert_eq!(own.lru_sleep_ms(0), Some(950));
        assert_eq!(
            Percona::new(100, adaptive(), 1000)
                .with_time_scale(f64::NAN)
                .lru_steps,
            LruSleepSteps::scaled_us(1.0)
        );
    }

    #[test]
    fn the_two_parts_are_paced_separately() {
        let mut p = Percona::new(100, adaptive(), 1000);
        // First round: everything due.
        assert!(p.lru_due(0, 0));
        // A nearly empty free list after a productive batch: the LRU manager goes again at once.
        p.observe_lru_instance(0, 0, 40, 0, 5000);
        assert_eq!(p.lru_sleep_ms(0), Some(0));
        let capacity = 1_000_000;
        let sync = LogMargins::from_capacity(capacity).max_modified_age_sync;
        let inputs = CleanerInputs {
            dirty_pages: 900,
            pool_pages: 1000,
            current_lsn: 10 + sync + 1,
            oldest_lsn: 10,
            log_capacity: Some(capacity),
            instances: 1,
            now_ms: 0,
            ..CleanerInputs::default()
        };
        // Past the sync age: furious flushing, and the LRU manager is due: 1 ms floor.
        let plan = p.plan(&inputs);
        assert!(plan.flush_list_pages > 0);
        assert_eq!(plan.sleep_ms, MIN_SLEEP_MS);
        // A young log: the flusher sleeps the period; a full free list lengthens the LRU
        // manager's sleep by 1 ms from 0.
        p.observe_lru_instance(0, 5, 0, 100, 5000);
        assert_eq!(p.lru_sleep_ms(0), Some(1));
        let young = CleanerInputs {
            current_lsn: 20,
            now_ms: 5,
            ..inputs
        };
        let plan = p.plan(&young);
        assert_eq!(plan.sleep_ms, 1, "the LRU manager's 1 ms comes first");
        assert!(!p.lru_due(0, 5));
        assert!(p.lru_due(0, 6));
        // The flusher is not due before 5 + 1000.
        let later = CleanerInputs { now_ms: 6, ..young };
        assert_eq!(p.plan(&later).flush_list_pages, 0);
        let mut out = ExtraStats::default();
        p.extra_stats(&mut out);
        assert_eq!(out.get("percona_furious_rounds"), Some(1.0));
        assert_eq!(out.get("percona_flush_rounds"), Some(2.0));
    }
}
