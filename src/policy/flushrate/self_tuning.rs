//! The self-tuning buffer-flushing algorithm (Lee, Lee, Kim, JISE; seeds/002, Algorithm 3;
//! docs/algorithms.md section 6): MySQL's loop (flush the LRU ends with `P_scan`, the flush lists
//! with `P_io` through the adaptive-flushing heuristic) whose two parameters are tuned every
//! round from what the round showed, with no new parameters:
//!
//! - `T_flushing` over the period (the I/O subsystem is overloaded): cut the larger side back
//!   towards the pages it flushed in the last stable state (`P_scan *= NP_LRU_stable / NP_LRU`,
//!   floor `P_scan_min`; likewise `P_io`), and do not sleep.
//! - Otherwise: synchronous replacement writes (`NP_dirty > 0`) raise `P_scan` by `NP_dirty`
//!   (never past `|LRU|`); surplus free pages with no clean scans lower it by `|free|`; neither:
//!   remember `NP_LRU` as the stable state. Synchronous recoverability writes while `P_io` is
//!   below the heuristic's request raise `P_io` by `NP_sync_rec`; a `P_io` above the request
//!   falls to it (not below `P_io_min`); neither: remember `NP_flush`. Sleep the rest of the
//!   period.
//! - `io_capacity_max = 2 * P_io`, with no fixed floor.
//!
//! The arithmetic is [`Algorithm3`] (pure, tested branch by branch); [`SelfTuning`] feeds it the
//! round's counters. Choices the paper leaves open, documented here:
//! - `P_scan_min` / `P_io_min` are MySQL's minimums of `innodb_lru_scan_depth` and
//!   `innodb_io_capacity` (100 each), lowered to the configured starting value when that is
//!   smaller (our scan depth is scaled to small instances).
//! - `P_scan` is per instance (as `innodb_lru_scan_depth`), so `|LRU|`, `|free|`, `NP_dirty`
//!   and `NP_clean` are taken per instance (totals divided by the instances, rounded up for the
//!   counts of scanned pages); `NP_LRU`, `NP_flush` and their stable values are totals. With one
//!   instance (pools under 1 GiB) this is the paper's algorithm verbatim.
//! - `NP_dirty` is the pages the RAW loop's single-page flush scanned; a miss path that writes
//!   a victim without that scan (LRU-C's read stall, WAR, RW) counts its synchronous
//!   replacement writes instead (`max` of the two), so `NP_dirty > 0` exactly when such writes
//!   happened.
//! - The "1 s" of the paper is the cleaner period (`cleaner_period_ms`, 1000 by default).
//!
//! Lock order: the controller lives under the page cleaner's controller mutex; it takes none.

use super::adaptive::{AdaptiveConfig, AdaptiveState};
use super::{AfterObserve, CleanerInputs, FlushPlan, FlushRate, RoundObservation};
use crate::core::stats::ExtraStats;

/// MySQL's minimum `innodb_lru_scan_depth` and `innodb_io_capacity`.
pub const MYSQL_MIN: u64 = 100;

/// One iteration's observations, in the paper's notation (Table 2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Observed {
    /// `T_flushing` in milliseconds.
    pub t_flushing_ms: u64,
    /// `NP_LRU`: pages flushed from the LRU lists.
    pub np_lru: u64,
    /// `NP_flush`: pages flushed from the flush lists.
    pub np_flush: u64,
    /// `NP_dirty`: pages user threads scanned to find a dirty victim (per instance).
    pub np_dirty: u64,
    /// `NP_clean`: pages user threads scanned to find a clean victim (per instance).
    pub np_clean: u64,
    /// `|free|` (per instance).
    pub free: u64,
    /// `|LRU|` (per instance).
    pub lru: u64,
    /// `NP_req_flush`: pages the adaptive heuristic asked for.
    pub np_req_flush: u64,
    /// `NP_sync_rec`: pages written by synchronous recoverability writes.
    pub np_sync_rec: u64,
}

/// Which branch of Algorithm 3 changed (or kept) `P_scan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanBranch {
    /// Line 10: overloaded, LRU flushing the majority, above the stable state: `P_scan` cut.
    OverloadCut,
    /// Overloaded, but the LRU side did not need cutting (lines 7-11 without line 10, or the
    /// flush list was the majority).
    OverloadKept,
    /// Line 22: synchronous replacement writes: `P_scan += NP_dirty`.
    Raise,
    /// Line 25: surplus free pages: `P_scan -= |free|`.
    Lower,
    /// Line 28: stable state: `NP_LRU_stable = NP_LRU`.
    Stable,
    /// None of the above (idle: `NP_LRU = 0`).
    Idle,
}

/// Which branch of Algorithm 3 changed (or kept) `P_io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoBranch {
    /// Line 15: overloaded, flush list the majority, above the stable state: `P_io` cut.
    OverloadCut,
    /// Overloaded without cutting `P_io`.
    OverloadKept,
    /// Line 32: synchronous recoverability writes: `P_io += NP_sync_rec`.
    Raise,
    /// Line 35: `P_io` above the request: `P_io = NP_req_flush`.
    Lower,
    /// Line 38: stable state: `NP_flush_stable = NP_flush`.
    Stable,
    /// None of the above.
    Idle,
}

/// Algorithm 3's state: the two parameters and the stable-state memories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Algorithm3 {
    /// `P_scan` (pages per instance).
    pub p_scan: u64,
    /// `P_io` (pages per period).
    pub p_io: u64,
    /// `P_scan_min`.
    pub p_scan_min: u64,
    /// `P_io_min`.
    pub p_io_min: u64,
    /// `NP_LRU_stable`.
    pub np_lru_stable: u64,
    /// `NP_flush_stable`.
    pub np_flush_stable: u64,
    /// The period `T_flushing` is compared with (the paper's 1 s), in milliseconds.
    pub period_ms: u64,
}

impl Algorithm3 {
    /// Line 1: the stable states start at the minimums.
    #[must_use]
    pub fn new(p_scan: u64, p_io: u64, p_scan_min: u64, p_io_min: u64, period_ms: u64) -> Self {
        assert!(p_scan_min >= 1 && p_io_min >= 1, "minimums are positive");
        Algorithm3 {
            p_scan: p_scan.max(p_scan_min),
            p_io: p_io.max(p_io_min),
            p_scan_min,
            p_io_min,
            np_lru_stable: p_scan_min,
            np_flush_stable: p_io_min,
            period_ms,
        }
    }

    /// `innodb_io_capacity_max`: twice `P_io`, no fixed floor.
    #[must_use]
    pub fn io_capacity_max(&self) -> u64 {
        self.p_io.saturating_mul(2)
    }

    /// Lines 5 to 41 for one iteration. Returns the branches taken and the sleep in
    /// milliseconds (none when overloaded: the loop goes on at once).
    pub fn step(&mut self, o: &Observed) -> (ScanBranch, IoBranch, u64) {
        if o.t_flushing_ms > self.period_ms {
            let (scan, io) = self.overloaded(o);
            return (scan, io, 0);
        }
        let scan = if o.np_dirty > 0 && self.p_scan.saturating_add(o.np_dirty) <= o.lru {
            self.p_scan += o.np_dirty;
            ScanBranch::Raise
        } else if o.free > 0
            && o.np_clean == 0
            && self.p_scan >= o.free.saturating_add(self.p_scan_min)
        {
            self.p_scan -= o.free;
            ScanBranch::Lower
        } else if o.np_lru > 0 {
            self.np_lru_stable = o.np_lru;
            ScanBranch::Stable
        } else {
            ScanBranch::Idle
        };
        let io = if o.np_sync_rec > 0 && self.p_io < o.np_req_flush {
            self.p_io = self.p_io.saturating_add(o.np_sync_rec);
            IoBranch::Raise
        } else if self.p_io > o.np_req_flush && o.np_req_flush >= self.p_io_min {
            self.p_io = o.np_req_flush;
            IoBranch::Lower
        } else if o.np_flush > 0 {
            self.np_flush_stable = o.np_flush;
            IoBranch::Stable
        } else {
            IoBranch::Idle
        };
        (scan, io, self.period_ms.saturating_sub(o.t_flushing_ms))
    }

    /// Lines 6 to 17.
    fn overloaded(&mut self, o: &Observed) -> (ScanBranch, IoBranch) {
        if o.np_lru > o.np_flush {
            if o.np_lru > self.np_lru_stable {
                self.p_scan =
                    scaled(self.p_scan, self.np_lru_stable, o.np_lru).max(self.p_scan_min);
                return (ScanBranch::OverloadCut, IoBranch::OverloadKept);
            }
        } else if o.np_flush > self.np_flush_stable {
            self.p_io = scaled(self.p_io, self.np_flush_stable, o.np_flush).max(self.p_io_min);
            return (ScanBranch::OverloadKept, IoBranch::OverloadCut);
        }
        (ScanBranch::OverloadKept, IoBranch::OverloadKept)
    }
}

/// `value * numerator / denominator` without overflow (denominator > 0).
fn scaled(value: u64, numerator: u64, denominator: u64) -> u64 {
    let product = u128::from(value) * u128::from(numerator) / u128::from(denominator.max(1));
    u64::try_from(product).unwrap_or(u64::MAX)
}

/// Counts of the branches taken, for the pool's stats.
#[derive(Debug, Default, Clone)]
struct BranchCounts {
    overloaded: u64,
    scan_raise: u64,
    scan_lower: u64,
    io_raise: u64,
    io_lower: u64,
}

/// The self-tuning controller (see the module docs).
#[derive(Debug, Clone)]
pub struct SelfTuning {
    alg: Algorithm3,
    adaptive: AdaptiveConfig,
    state: AdaptiveState,
    instances: u64,
    last_requested: u64,
    requested_total: u64,
    last_sleep_ms: u64,
    counts: BranchCounts,
}

impl SelfTuning {
    /// Starts from `P_scan` = `lru_scan` (per instance), `P_io` = `adaptive.io_capacity`;
    /// `adaptive`'s other knobs feed the heuristic (its `io_capacity_max` is replaced by
    /// `2 * P_io`).
    #[must_use]
    pub fn new(lru_scan: usize, adaptive: AdaptiveConfig, period_ms: u64) -> Self {
        let p_scan = (lru_scan as u64).max(1);
        let p_io = adaptive.io_capacity.max(1);
        SelfTuning {
            alg: Algorithm3::new(
                p_scan,
                p_io,
                MYSQL_MIN.min(p_scan),
                MYSQL_MIN.min(p_io),
                period_ms.max(1),
            ),
            adaptive,
            state: AdaptiveState::default(),
            instances: 1,
            last_requested: 0,
            requested_total: 0,
            last_sleep_ms: period_ms,
            counts: BranchCounts::default(),
        }
    }

    /// The algorithm's state now.
    #[must_use]
    pub fn algorithm(&self) -> &Algorithm3 {
        &self.alg
    }

    fn observed(&self, o: &RoundObservation) -> Observed {
        let per = |total: u64| total.div_ceil(self.instances);
        Observed {
            t_flushing_ms: o.flushing_ms,
            np_lru: o.lru_pages,
            np_flush: o.flush_pages,
            np_dirty: per(o.user_dirty_scanned.max(o.user_dirty_writes)),
            np_clean: per(o.user_clean_scanned),
            free: o.free_pages as u64 / self.instances,
            lru: o.lru_pages_listed as u64 / self.instances,
            np_req_flush: self.last_requested,
            np_sync_rec: o.sync_recoverability_writes,
        }
    }
}

impl FlushRate for SelfTuning {
    fn name(&self) -> &'static str {
        "self-tuning"
    }

    fn initial_lru_scan(&self) -> usize {
        usize::try_from(self.alg.p_scan).unwrap_or(usize::MAX)
    }

    fn plan(&mut self, inputs: &CleanerInputs) -> FlushPlan {
        self.instances = (inputs.instances as u64).max(1);
        let config = AdaptiveConfig {
            io_capacity: self.alg.p_io,
            io_capacity_max: self.alg.io_capacity_max(),
            ..self.adaptive
        };
        let recommendation = self.state.recommend(&config, &inputs.adaptive_inputs());
        self.last_requested = recommendation.pages;
        self.requested_total += recommendation.pages;
        FlushPlan {
            lru_scan: self.initial_lru_scan(),
            flush_list_pages: recommendation.pages,
            lsn_limit: recommendation.lsn_limit,
            sleep_ms: self.alg.period_ms,
        }
    }

    fn observe(&mut self, observation: &RoundObservation) {
        let observed = self.observed(observation);
        let (scan, io, sleep_ms) = self.alg.step(&observed);
        self.last_sleep_ms = sleep_ms;
        let counts = &mut self.counts;
        match scan {
            ScanBranch::OverloadCut | ScanBranch::OverloadKept => counts.overloaded += 1,
            ScanBranch::Raise => counts.scan_raise += 1,
            ScanBranch::Lower => counts.scan_lower += 1,
            ScanBranch::Stable | ScanBranch::Idle => {}
        }
        match io {
            IoBranch::Raise => counts.io_raise += 1,
            IoBranch::Lower => counts.io_lower += 1,
            _ => {}
        }
    }

    fn after_observe(&self) -> Option<AfterObserve> {
        Some(AfterObserve {
            lru_scan: self.initial_lru_scan(),
            sleep_ms: self.last_sleep_ms,
        })
    }

    fn extra_stats(&self, out: &mut ExtraStats) {
        out.gauge("p_scan", (self.alg.p_scan) as f64);
        out.gauge("p_io", (self.alg.p_io) as f64);
        out.gauge("np_lru_stable", (self.alg.np_lru_stable) as f64);
        out.gauge("np_flush_stable", (self.alg.np_flush_stable) as f64);
        out.counter("st_overloaded_rounds", (self.counts.overloaded) as f64);
        out.counter("st_scan_raises", (self.counts.scan_raise) as f64);
        out.counter("st_scan_lowers", (self.counts.scan_lower) as f64);
        out.counter("st_io_raises", (self.counts.io_raise) as f64);
        out.counter("st_io_lowers", (self.counts.io_lower) as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alg() -> Algorithm3 {
        // P_scan 1024, P_io 200, minimums 100, period 1000 ms.
        Algorithm3::new(1024, 200, 100, 100, 1000)
    }

    fn calm() -> Observed {
        Observed {
            t_flushing_ms: 200,
            lru: 10_000,
            ..Observed::default()
        }
    }

    #[test]
    fn line_1_stable_states_start_at_the_minimums_and_io_capacity_max_is_twice_p_io() {
        let a = alg();
        assert_eq!((a.np_lru_stable, a.np_flush_stable), (100, 100));
        assert_eq!(a.io_capacity_max(), 400);
    }

    #[test]
    fn line_10_overload_cuts_p_scan_by_the_stable_ratio_with_a_floor() {
        let mut a = alg();
        a.np_lru_stable = 500;
        let o = Observed {
            t_flushing_ms: 1500,
            np_lru: 1000,
            np_flush: 10,
            ..calm()
        };
        assert_eq!(
            a.step(&o),
            (ScanBranch::OverloadCut, IoBranch::OverloadKept, 0)
        );
        assert_eq!(a.p_scan, 512, "1024 * 500 / 1000");
        // Far above the stable state: the floor P_scan_min holds.
        a.np_lru_stable = 1;
        a.step(&o);
        assert_eq!(a.p_scan, 100);
        // At or below the stable state: overloaded by someone else, nothing changes.
        let mut b = alg();
        b.np_lru_stable = 1000;
        assert_eq!(
            b.step(&o),
            (ScanBranch::OverloadKept, IoBranch::OverloadKept, 0)
        );
        assert_eq!(b.p_scan, 1024);
    }

    #[test]
    fn line_15_overload_on_the_flush_list_cuts_p_io() {
        let mut a = alg();
        a.np_flush_stable = 150;
        let o = Observed {
            t_flushing_ms: 1001,
            np_lru: 10,
            np_flush: 300,
            ..calm()
        };
        assert_eq!(
            a.step(&o),
            (ScanBranch::OverloadKept, IoBranch::OverloadCut, 0)
        );
        assert_eq!(a.p_io, 100, "200 * 150 / 300");
        assert_eq!(a.p_scan, 1024);
    }

    #[test]
    fn line_22_synchronous_replacement_writes_raise_p_scan_within_the_lru_length() {
        let mut a = alg();
        let o = Observed {
            np_dirty: 30,
            np_lru: 7,
            ..calm()
        };
        let (scan, _, sleep) = a.step(&o);
        assert_eq!((scan, a.p_scan, sleep), (ScanBranch::Raise, 1054, 800));
        assert_eq!(a.np_lru_stable, 100, "not a stable state");
        // P_scan + NP_dirty would pass |LRU|: no raise; the stable state is recorded instead.
        let o = Observed { lru: 1060, ..o };
        let (scan, _, _) = a.step(&o);
        assert_eq!(
            (scan, a.p_scan, a.np_lru_stable),
            (ScanBranch::Stable, 1054, 7)
        );
    }

    #[test]
    fn line_25_surplus_free_pages_without_clean_scans_lower_p_scan() {
        let mut a = alg();
        let o = Observed {
            free: 300,
            ..calm()
        };
        assert_eq!(a.step(&o).0, ScanBranch::Lower);
        assert_eq!(a.p_scan, 724);
        // Clean scans happened: keep P_scan.
        let o2 = Observed { np_clean: 5, ..o };
        assert_eq!(a.step(&o2).0, ScanBranch::Idle);
        // Lowering would pass below P_scan_min + |free|: keep it.
        let o3 = Observed { free: 700, ..o };
        assert_eq!(a.step(&o3).0, ScanBranch::Idle);
        assert_eq!(a.p_scan, 724);
    }

    #[test]
    fn line_32_synchronous_recoverability_writes_raise_p_io_below_the_request() {
        let mut a = alg();
        let o = Observed {
            np_sync_rec: 50,
            np_req_flush: 300,
            np_flush: 200,
            ..calm()
        };
        assert_eq!(a.step(&o).1, IoBranch::Raise);
        assert_eq!(a.p_io, 250);
        // P_io already covers the request: no raise; the request is above P_io_min and below
        // P_io, so P_io falls to it.
        let o = Observed {
            np_req_flush: 120,
            ..o
        };
        assert_eq!(a.step(&o).1, IoBranch::Lower);
        assert_eq!(a.p_io, 120);
    }

    #[test]
    fn line_35_p_io_falls_to_the_request_but_not_below_the_minimum() {
        let mut a = alg();
        let o = Observed {
            np_req_flush: 150,
            np_flush: 150,
            ..calm()
        };
        assert_eq!(a.step(&o).1, IoBranch::Lower);
        assert_eq!(a.p_io, 150);
        // A request under P_io_min: stable state recorded, P_io kept.
        let o = Observed {
            np_req_flush: 40,
            np_flush: 40,
            ..calm()
        };
        assert_eq!(a.step(&o).1, IoBranch::Stable);
        assert_eq!((a.p_io, a.np_flush_stable), (150, 40));
        // Nothing flushed, nothing requested: idle.
        assert_eq!(a.step(&calm()).1, IoBranch::Idle);
    }

    #[test]
    fn the_controller_feeds_per_instance_counts_and_reports_p_scan_and_p_io() {
        let adaptive = AdaptiveConfig {
            io_capacity: 400,
            io_capacity_max: 800,
            max_dirty_pages_pct: 75.0,
            max_dirty_pages_pct_lwm: 0.0,
            adaptive_flushing_lwm: 10.0,
        };
        let mut st = SelfTuning::new(64, adaptive, 1000);
        assert_eq!(st.algorithm().p_scan_min, 64, "min(100, starting P_scan)");
        let plan = st.plan(&CleanerInputs {
            dirty_pages: 10,
            pool_pages: 1000,
            instances: 2,
            ..CleanerInputs::default()
        });
        assert_eq!(plan.lru_scan, 64);
        st.observe(&RoundObservation {
            user_dirty_scanned: 9,
            lru_pages_listed: 2000,
            flushing_ms: 100,
            ..RoundObservation::default()
        });
        // NP_dirty per instance: ceil(9 / 2) = 5.
        assert_eq!(st.algorithm().p_scan, 69);
        assert_eq!(
            st.after_observe(),
            Some(AfterObserve {
                lru_scan: 69,
                sleep_ms: 900
            })
        );
        let mut out = ExtraStats::default();
        st.extra_stats(&mut out);
        assert_eq!(out.get("p_scan"), Some(69.0));
        assert!(out.is_gauge("p_scan") && !out.is_gauge("st_scan_raises"));
        assert_eq!(out.get("st_scan_raises"), Some(1.0));
    }
}
