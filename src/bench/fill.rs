//! `--fill-pool`: the pool filled before the warm-up, with the devices serving untimed.
//!
//! A warm-up's job is to bring the pool to the state the measured phase should see: full,
//! with the workload's own pages, the background writers and the device settled. On a slow
//! device or a large pool the first part, filling the pool, is most of it: a hard disk serves
//! about 150 random reads a second, so a 25,000-frame pool takes close to three minutes of
//! device time to fill, which at a time scale of 16 is most of an hour of real time, before
//! any of the dynamics the warm-up waits for have begun. The papers' own warm-ups (5 minutes
//! in the LRU-C paper's Table 1 setup) fill their pools long before they measure.
//!
//! With `--fill-pool`, the harness first runs the workload with the data and log devices
//! serving untimed ([`crate::device::DeviceTimeControl::set_untimed`]: data moves and is
//! counted, no modelled time passes) until the pool is full ([`super::harness`]'s rule: no
//! free frame, or as many misses as frames), or until the pool stops missing (the database
//! fits), then times the devices again and runs the warm-up `--warmup` asks for, from that
//! full pool. What the measured phase sees is therefore what the timed warm-up settled:
//! only where it starts changes, which is why `--fill-pool` is a host flag
//! ([`crate::sweep::points::HOST_SWITCHES`]).
//!
//! Devices whose time is the host's (`file:`) cannot serve untimed; `BenchConfig::validate`
//! refuses the flag with them. On `mem` it changes nothing but the bookkeeping.
//!
//! Bounds: the fill ticks every [`super::harness::TICK`] and ends at the latest after
//! [`FILL_MAX_REAL`] of real time, or [`FILL_IDLE`] without a new miss.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::core::PoolStats;

/// The fill ends when the pool has not missed for this long (real time): the database fits,
/// or the workload reads no new page.
pub const FILL_IDLE: Duration = Duration::from_secs(2);
/// The longest a fill runs, real time (a fill is CPU-bound: thousands of misses a second).
pub const FILL_MAX_REAL: Duration = Duration::from_mins(30);

/// What the fill did (results.json's `pool_fill`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PoolFill {
    /// Real seconds the fill took (no device time passes in it).
    pub real_s: f64,
    /// Pages the pool read in the fill.
    pub misses: f64,
    /// Free frames left when it ended (0 when full).
    pub free_frames: f64,
    /// Whether the pool was full when it ended (else: it stopped missing, or was cut short).
    pub full: bool,
    /// Whether the fill was cut short before the pool was full: at [`FILL_MAX_REAL`], or the
    /// run was stopped ([`FillEnd::Stopped`]). Absent in results written before 2026-12-01.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
}

/// How a fill ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FillEnd {
    /// The pool is full.
    Full,
    /// No miss for [`FILL_IDLE`].
    Idle,
    /// [`FILL_MAX_REAL`] passed, or the run was stopped.
    Stopped,
}

/// Follows a fill from its first pool counters; [`FillWatch::observe`] says when it ends.
#[derive(Debug)]
pub struct FillWatch {
    began: Instant,
    first_misses: u64,
    last_misses: u64,
    last_miss_at: Instant,
}

impl FillWatch {
    /// Starts watching at `now` with the pool's counters then.
    #[must_use]
    pub fn new(now: Instant, stats: &PoolStats) -> FillWatch {
        FillWatch {
            began: now,
            first_misses: stats.misses,
            last_misses: stats.misses,
            last_miss_at: now,
        }
    }

    /// Takes the pool's counters at `now`; `Some` once the fill should end.
    pub fn observe(&mut self, now: Instant, stats: &PoolStats) -> Option<FillEnd> {
        if super::harness::pool_full(stats) {
            return Some(FillEnd::Full);
        }
        if stats.misses != self.last_misses {
            self.last_misses = stats.misses;
            self.last_miss_at = now;
        } else if now.duration_since(self.last_miss_at) >= FILL_IDLE {
            return Some(FillEnd::Idle);
        }
        (now.duration_since(self.began) >= FILL_MAX_REAL).then_some(FillEnd::Stopped)
    }

    /// The record of a fill that ended at `now` with these counters, as `ended` says (`None`:
    /// the run was stopped before [`FillWatch::observe`] said so, which counts as
    /// [`FillEnd::Stopped`]).
    #[must_use]
    pub fn report(&self, now: Instant, stats: &PoolStats, ended: Option<FillEnd>) -> PoolFill {
        let full = super::harness::pool_full(stats);
        PoolFill {
            real_s: now.duration_since(self.began).as_secs_f64(),
            misses: stats.misses.saturating_sub(self.first_misses) as f64,
            free_frames: stats.free_frames as f64,
            full,
            cut_short: !full && matches!(ended, None | Some(FillEnd::Stopped)),
        }
    }
}

impl PoolFill {
    /// The mean of repeats' fills (`full` when every one was full); `None` when none filled.
    #[must_use]
    pub fn mean<'a>(fills: impl IntoIterator<Item = &'a PoolFill>) -> Option<PoolFill> {
        let all: Vec<&PoolFill> = fills.into_iter().collect();
        let n = all.len() as f64;
        let m = |f: fn(&PoolFill) -> f64| all.iter().map(|fill| f(fill)).sum::<f64>() / n;
        (!all.is_empty()).then(|| PoolFill {
            real_s: m(|f| f.real_s),
            misses: m(|f| f.misses),
            free_frames: m(|f| f.free_frames),
            full: all.iter().all(|f| f.full),
            cut_short: all.iter().any(|f| f.cut_short),
        })
    }

    /// One line for the run's summary: "pool filled untimed: 25,000 pages in 4.1 s real".
    #[must_use]
    pub fn describe(&self) -> String {
        format!(
            "pool filled untimed{}: {:.0} pages in {:.1} s real",
            if self.full {
                ""
            } else if self.cut_short {
                " (not full: cut short, at its bound or by a stop)"
            } else {
                " (not full: it stopped missing)"
            },
            self.misses,
            self.real_s
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(frames: u64, free: u64, misses: u64) -> PoolStats {
        PoolStats {
            frames,
            free_frames: free,
            misses,
            ..PoolStats::default()
        }
    }

    #[test]
    fn a_fill_ends_when_the_pool_is_full() {
        let t0 = Instant::now();
        let mut watch = FillWatch::new(t0, &stats(100, 100, 0));
        assert_eq!(watch.observe(t0, &stats(100, 40, 60)), None);
        let end = t0 + Duration::from_millis(500);
        assert_eq!(watch.observe(end, &stats(100, 0, 100)), Some(FillEnd::Full));
        let report = watch.report(end, &stats(100, 0, 100), Some(FillEnd::Full));
        assert!(report.full);
        assert!(!report.cut_short);
        assert_eq!(
            report.describe(),
            "pool filled untimed: 100 pages in 0.5 s real"
        );
        assert!((report.misses - 100.0).abs() < 1e-9);
        assert!((report.real_s - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_fill_ends_when_the_pool_stops_missing() {
        let t0 = Instant::now();
        let mut watch = FillWatch::new(t0, &stats(100, 100, 0));
        assert_eq!(watch.observe(t0 + FILL_IDLE / 2, &stats(100, 70, 30)), None);
        // No new miss, but not yet idle for FILL_IDLE since the last one.
        assert_eq!(watch.observe(t0 + FILL_IDLE, &stats(100, 70, 30)), None);
        let idle = t0 + FILL_IDLE / 2 + FILL_IDLE;
        assert_eq!(
            watch.observe(idle, &stats(100, 70, 30)),
            Some(FillEnd::Idle)
        );
        let report = watch.report(idle, &stats(100, 70, 30), Some(FillEnd::Idle));
        assert!(!report.full);
        assert!(!report.cut_short);
        assert!(report.describe().contains("it stopped missing"));
    }

    #[test]
    fn a_fill_that_keeps_missing_ends_at_its_bound() {
        let t0 = Instant::now();
        let mut watch = FillWatch::new(t0, &stats(1_000_000, 1_000_000, 0));
        let mut misses = 0;
        let mut now = t0;
        let mut ended = None;
        while ended.is_none() {
            misses += 1;
            now += Duration::from_mins(1);
            ended = watch.observe(now, &stats(1_000_000, 1_000_000 - misses, misses));
        }
        assert_eq!(ended, Some(FillEnd::Stopped));
        assert!(now.duration_since(t0) >= FILL_MAX_REAL);
        let report = watch.report(now, &stats(1_000_000, 1_000_000 - misses, misses), ended);
        assert!(!report.full);
        assert!(report.cut_short);
        assert!(report.describe().contains("cut short"));
    }

    #[test]
    fn a_fill_the_run_stopped_is_cut_short_unless_full() {
        let t0 = Instant::now();
        let watch = FillWatch::new(t0, &stats(100, 100, 0));
        let later = t0 + Duration::from_secs(1);
        assert!(watch.report(later, &stats(100, 50, 50), None).cut_short);
        // A stop that came when the pool had just filled: full, not cut short.
        assert!(!watch.report(later, &stats(100, 0, 100), None).cut_short);
    }

    #[test]
    fn the_mean_of_fills_is_full_only_when_every_one_was() {
        let a = PoolFill {
            real_s: 2.0,
            misses: 100.0,
            free_frames: 0.0,
            full: true,
            cut_short: false,
        };
        let b = PoolFill {
            real_s: 4.0,
            misses: 80.0,
            free_frames: 20.0,
            full: false,
            cut_short: true,
        };
        let mean = PoolFill::mean([&a, &b]).expect("two fills");
        assert!((mean.real_s - 3.0).abs() < 1e-9);
        assert!((mean.misses - 90.0).abs() < 1e-9);
        assert!(!mean.full);
        assert!(
            mean.cut_short,
            "one fill cut short makes the mean's cut short"
        );
        assert_eq!(PoolFill::mean([]), None);
    }
}
