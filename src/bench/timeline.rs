//! The timeline of a run, sampled at a fixed device-time step (100 ms by default: issue 9 item
//! 7): throughput, free frames, dirty pages, misses and read stalls per interval, the
//! flush-rate controller's `P_scan` / `P_io` when it reports them, and the eviction end's
//! profile when the harness sampled it at the point (`crate::core::tail_profile`).
//!
//! The harness's control thread calls [`TimelineRecorder::poll`] every real-time tick; each time
//! a whole step of device time has passed since the previous point it appends one
//! [`TimelinePoint`]. Bound: at most `duration / step + 1` points per phase.
//!
//! Steadiness ([`judge_steadiness`], issue 13): the measured phase is cut into consecutive
//! windows of at least [`MIN_WINDOW_S`] device seconds, each a whole number of the run's own
//! period when the throughput is periodic (LRU-C's flush cycles, ~0.6 s: a window holding one
//! and a half cycles would make a flat run look noisy), found by the autocorrelation of the
//! detrended 100 ms series ([`detect_period`]). A run is steady when the window means vary
//! little ([`STEADY_CV`]) and do not drift ([`STEADY_DRIFT`]: the least-squares trend of the
//! window means over the whole phase, relative to their mean), and at least [`MIN_WINDOWS`]
//! (three) windows fit: a phase shorter than 3 x [`MIN_WINDOW_S`], or whose period leaves room
//! for fewer than three whole cycles, is judged over windows of [`MIN_WINDOW_S`] or is "too
//! short", never steady on two windows, whose trend is their difference. The warm-up ends
//! early by the same windows ([`tail_is_steady`]) so a warm-up capped below 3 s can end steady,
//! and only once the background flush rate has stopped ramping ([`flush_rate_is_steady`]: the
//! adaptive flushing follows the checkpoint age, which settles far later than the pool fills)
//! and the emulated SSD's garbage collection per host write ([`write_amplification_is_steady`])
//! and the pool's dirty pages ([`dirty_pages_are_steady`]) have settled.
//!
//! Invariants: every verdict names its windows (count and length) and its cv and drift; a
//! period is only detected when at least two whole cycles fit in the series, and only sets the
//! windows when [`MIN_WINDOWS`] whole cycles fit.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::core::tail_profile::TailTotals;
use crate::device::DeviceStats;
use crate::pool::PoolStats;

/// The default device-time step between points.
pub const STEP: Duration = Duration::from_millis(100);
/// A measured window whose windowed throughput varies more than this is not steady.
pub const STEADY_CV: f64 = 0.15;
/// A measured phase whose throughput trend changes it by more than this share over the phase
/// is drifting, hence not steady.
pub const STEADY_DRIFT: f64 = 0.10;
/// Shortest window the verdict judges, device seconds.
pub const MIN_WINDOW_S: f64 = 0.5;
/// Windows a verdict needs at least. Two would not do: the trend of two window means is their
/// difference, so a drift could not be told from noise (a 10 s phase whose detected period
/// was 5 s was judged steady on two windows with a cv of 0.00 before this was three).
pub const MIN_WINDOWS: usize = 3;
/// Autocorrelation of the detrended series above which a lag is taken as the run's period
/// (noise over 30 points reaches about 0.2 at some lag; flush cycles reach 0.6 and more).
pub const PERIOD_MIN_CORRELATION: f64 = 0.4;
/// Shortest period taken, in points: windows of at least [`MIN_WINDOW_S`] hold two or more
/// cycles of a shorter one, so its partial cycle hardly moves a window mean.
pub const PERIOD_MIN_POINTS: usize = 3;

/// One step of a run.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct TimelinePoint {
    /// Device seconds since the phase began, at the end of this interval.
    pub t_s: f64,
    /// Operations per device second over the interval.
    pub throughput: f64,
    /// Free frames at the end of the interval.
    pub free_frames: u64,
    /// Dirty pages at the end of the interval.
    pub dirty_pages: u64,
    /// Misses in the interval.
    pub misses: u64,
    /// Read stalls in the interval.
    pub read_stalls: u64,
    /// The flush-rate controller's `P_scan` at the end of the interval (when reported).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_scan: Option<f64>,
    /// The controller's `P_io` at the end of the interval (when reported).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_io: Option<f64>,
    /// Pages the data device's garbage collection programmed per host page write over the
    /// interval (write amplification minus one), when the device models it and the host
    /// wrote in the interval ([`TimelineRecorder::note_device`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_per_write: Option<f64>,
    /// The data device's host page writes over the interval (with `gc_writes`, what
    /// `gc_per_write` is the ratio of; windows add them up before dividing).
    #[serde(default)]
    pub host_writes: u64,
    /// Pages the data device's garbage collection programmed over the interval.
    #[serde(default)]
    pub gc_writes: u64,
    /// The eviction end sampled at the end of the interval (`crate::core::tail_profile`):
    /// the dirty share of each instance's last 1% of its order, over the instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_dirty_share: Option<f64>,
    /// The same sample's mean run of pages a miss could not evict from the tail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_run_pages: Option<f64>,
}

/// Builds the timeline of one phase.
#[derive(Debug)]
pub struct TimelineRecorder {
    start: Instant,
    step_real: Duration,
    last_time: Instant,
    last_ops: u64,
    last_misses: u64,
    last_stalls: u64,
    time_scale: f64,
    points: Vec<TimelinePoint>,
    /// The data device's host and GC writes at the previous [`TimelineRecorder::note_device`].
    last_device: Option<(u64, u64)>,
    /// The tail profile's counters at the previous point.
    last_tail: TailTotals,
}

impl TimelineRecorder {
    /// Starts at `start` with `ops` operations and `stats` so far, a point every `step` of
    /// device time.
    #[must_use]
    pub fn new(
        start: Instant,
        ops: u64,
        stats: &PoolStats,
        time_scale: f64,
        step: Duration,
    ) -> TimelineRecorder {
        assert!(time_scale > 0.0, "time scale must be positive");
        TimelineRecorder {
            start,
            step_real: step.mul_f64(time_scale),
            last_time: start,
            last_ops: ops,
            last_misses: stats.misses,
            last_stalls: stats.read_stalls,
            time_scale,
            points: Vec::new(),
            last_device: None,
            last_tail: TailTotals::of(&stats.extra),
        }
    }

    /// Whether a point is due at `now` (a step has passed since the last one).
    #[must_use]
    pub fn due(&self, now: Instant) -> bool {
        now.duration_since(self.last_time) >= self.step_real
    }

    /// Appends a point for the interval ending at `now` with `ops` done in total.
    pub fn record(&mut self, now: Instant, ops: u64, stats: &PoolStats) {
        let interval = now.duration_since(self.last_time).as_secs_f64() / self.time_scale;
        if interval <= 0.0 {
            return;
        }
        let done = ops.saturating_sub(self.last_ops) as f64;
        let tail = TailTotals::of(&stats.extra);
        let (tail_dirty_share, tail_run_pages) = tail.since(self.last_tail);
        self.last_tail = tail;
        self.points.push(TimelinePoint {
            t_s: now.duration_since(self.start).as_secs_f64() / self.time_scale,
            throughput: done / interval,
            free_frames: stats.free_frames,
            dirty_pages: stats.dirty_pages,
            misses: stats.misses.saturating_sub(self.last_misses),
            read_stalls: stats.read_stalls.saturating_sub(self.last_stalls),
            p_scan: stats.extra.get("p_scan").copied(),
            p_io: stats.extra.get("p_io").copied(),
            gc_per_write: None,
            host_writes: 0,
            gc_writes: 0,
            tail_dirty_share,
            tail_run_pages,
        });
        self.last_time = now;
        self.last_ops = ops;
        self.last_misses = stats.misses;
        self.last_stalls = stats.read_stalls;
    }

    /// Notes the data device's counters: the newest point gets the GC writes per host write
    /// since the previous note (none on the first note, which only sets the baseline, or when
    /// the host wrote nothing). Call it at the phase's start and after each recorded point.
    pub fn note_device(&mut self, device: &DeviceStats) {
        let now = (device.writes, device.gc_writes);
        if let (Some((writes, gc)), Some(point)) = (self.last_device, self.points.last_mut()) {
            let host = now.0.saturating_sub(writes);
            if host > 0 && point.gc_per_write.is_none() {
                let collected = now.1.saturating_sub(gc);
                point.gc_per_write = Some(collected as f64 / host as f64);
                point.host_writes = host;
                point.gc_writes = collected;
            }
        }
        self.last_device = Some(now);
    }

    /// Records a point if one is due; returns whether it did.
    pub fn poll(&mut self, now: Instant, ops: u64, stats: impl FnOnce() -> PoolStats) -> bool {
        if !self.due(now) {
            return false;
        }
        self.record(now, ops, &stats());
        true
    }

    /// Closes the timeline: records the last partial interval if it is at least half a step.
    pub fn finish(&mut self, end: Instant, ops: u64, stats: &PoolStats) {
        if end.duration_since(self.last_time) >= self.step_real / 2 {
            self.record(end, ops, stats);
        }
    }

    /// The points so far.
    #[must_use]
    pub fn points(&self) -> &[TimelinePoint] {
        &self.points
    }

    /// Throughput averaged over consecutive windows of `window` points (the last partial
    /// window dropped).
    #[must_use]
    pub fn windowed_throughput(&self, window: usize) -> Vec<f64> {
        windowed(&self.points, window)
    }
}

/// Throughput averaged over consecutive windows of `window` points.
#[must_use]
pub fn windowed(points: &[TimelinePoint], window: usize) -> Vec<f64> {
    windowed_by(points, window, |p| p.throughput)
}

/// `value` of the points averaged over consecutive windows of `window` points.
fn windowed_by(
    points: &[TimelinePoint],
    window: usize,
    value: impl Fn(&TimelinePoint) -> f64,
) -> Vec<f64> {
    let window = window.max(1);
    points
        .chunks_exact(window)
        .map(|chunk| chunk.iter().map(&value).sum::<f64>() / chunk.len() as f64)
        .collect()
}

/// Standard deviation over mean of `values` (0 for fewer than two values or a zero mean).
#[must_use]
pub fn coefficient_of_variation(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if mean <= 0.0 {
        return 0.0;
    }
    let variance =
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
    variance.sqrt() / mean
}

/// Whether the last `windows` windowed throughputs are steady: each within `tolerance` of
/// their mean.
#[must_use]
pub fn is_steady(windowed: &[f64], windows: usize, tolerance: f64) -> bool {
    if windowed.len() < windows || windows == 0 {
        return false;
    }
    let last = &windowed[windowed.len() - windows..];
    let mean = last.iter().sum::<f64>() / last.len() as f64;
    mean > 0.0 && last.iter().all(|v| (v - mean).abs() <= tolerance * mean)
}

/// The steadiness verdict of one phase: whether it was steady, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SteadyVerdict {
    /// Steady: window means vary at most [`STEADY_CV`] and drift at most [`STEADY_DRIFT`].
    pub steady: bool,
    /// Coefficient of variation of the window means.
    pub cv: f64,
    /// The least-squares trend of the window means over the phase, as a share of their mean
    /// (+0.2: throughput rose by 20% of its mean from the first window to the last).
    pub drift: f64,
    /// Half-width of the drift's 95% interval (from the scatter of the window means about
    /// their trend; 0 with fewer than [`MIN_WINDOWS`] windows). A drift beyond
    /// [`STEADY_DRIFT`] whose interval reaches back inside it may be the windows' noise: the
    /// phase was too short to tell.
    pub drift_ci95: f64,
    /// Length of one window, device seconds.
    pub window_s: f64,
    /// Windows judged.
    pub windows: usize,
    /// The throughput's period when one was found, device seconds.
    pub period_s: Option<f64>,
    /// One line: the verdict and its figures.
    pub reason: String,
}

/// Whether a measured phase of `--duration auto` may stop: judged steady, and long enough
/// that its drift's 95% interval is no wider than the drift the rule allows
/// ([`STEADY_DRIFT`]), so that a short phase whose noise happens to fit is not taken for a
/// steady one (a 2 s phase's interval is ±20-50%; docs/regime.md, "The drift's own noise").
#[must_use]
pub fn is_steady_enough_to_stop(verdict: &SteadyVerdict) -> bool {
    verdict.steady && verdict.windows >= MIN_WINDOWS && verdict.drift_ci95 <= STEADY_DRIFT
}

/// Judges the steadiness of a phase from its timeline (see the module docs).
#[must_use]
pub fn judge_steadiness(points: &[TimelinePoint]) -> SteadyVerdict {
    let step_s = mean_step_s(points);
    let (means, window) = window_means(points, step_s);
    let window_s = window.points * step_s;
    let period_s = window.period.map(|lag| lag as f64 * step_s);
    if means.len() < MIN_WINDOWS {
        let measured_s = points.last().map_or(0.0, |p| p.t_s);
        return SteadyVerdict {
            steady: false,
            cv: 0.0,
            drift: 0.0,
            drift_ci95: 0.0,
            window_s,
            windows: means.len(),
            period_s,
            reason: format!(
                "no: too short ({measured_s:.1} s; needs {MIN_WINDOWS} windows of {window_s:.1} s)"
            ),
        };
    }
    let cv = coefficient_of_variation(&means);
    let (drift, drift_ci95) = relative_trend_with_interval(&means);
    let steady = cv <= STEADY_CV && drift.abs() <= STEADY_DRIFT;
    let why = if steady {
        "yes"
    } else if cv > STEADY_CV {
        "no: varies"
    } else if drift.abs() - drift_ci95 <= STEADY_DRIFT {
        // The drift's interval reaches inside the limit: a longer phase would tell.
        "no: drifts, or noise (too short to tell)"
    } else {
        "no: drifts"
    };
    let cycles = period_s.map_or_else(String::new, |p| format!(", whole {p:.1} s cycles"));
    SteadyVerdict {
        steady,
        cv,
        drift,
        drift_ci95,
        window_s,
        windows: means.len(),
        period_s,
        reason: format!(
            "{why} (cv {cv:.2}, drift {:+.0}% ±{:.0}% over {} windows of {window_s:.1} s{cycles})",
            drift * 100.0,
            drift_ci95 * 100.0,
            means.len()
        ),
    }
}

/// Whether the last `windows` windows of the series (each at least `min_window_s` device
/// seconds and whole cycles of the series' period) are each within `tolerance` of their mean:
/// the warm-up's end test.
#[must_use]
pub fn tail_is_steady(
    points: &[TimelinePoint],
    min_window_s: f64,
    windows: usize,
    tolerance: f64,
) -> bool {
    let step_s = mean_step_s(points);
    let min_points = points_for(min_window_s, step_s);
    let period = detect_period(&throughputs(points));
    let window = cycle_window(min_points, period, points.len() / windows.max(1))
        .unwrap_or(min_points.max(1));
    is_steady(&windowed(tail(points, window), window), windows, tolerance)
}

/// Whether the flush-rate controller's `P_io` (the background flush rate the adaptive flushing
/// sets from the redo log's checkpoint age) has stopped ramping: over the last `windows`
/// windows of at least `min_window_s` device seconds, its window means change from the first to
/// the last by at most `tolerance` of their mean. A run whose controller reports no `P_io`, or a
/// zero one, has no such ramp and passes. The warm-up's second end test: the checkpoint age
/// builds up over the redo log's headroom (many pool turnovers), far slower than the pool
/// fills, and a measured phase that starts while `P_io` still climbs drifts down with it.
#[must_use]
pub fn flush_rate_is_steady(
    points: &[TimelinePoint],
    min_window_s: f64,
    windows: usize,
    tolerance: f64,
) -> bool {
    has_levelled(points, min_window_s, windows, tolerance, |p| {
        p.p_io.unwrap_or(0.0)
    })
}

/// Whether the data device's garbage collection per host write (`gc_per_write`) has stopped
/// changing, by the test of [`flush_rate_is_steady`]. The warm-up's third end test: an
/// emulated SSD starts preconditioned by uniform random writes, and a skewed workload moves
/// its blocks' valid-page counts to the workload's own steady state over many seconds (on
/// LinkBench, 0.43 GC writes per host write after a 3-6 s warm-up, 0.49 after 15 s, with the
/// throughput drifting down meanwhile). A device that models no GC passes.
#[must_use]
pub fn write_amplification_is_steady(
    points: &[TimelinePoint],
    min_window_s: f64,
    windows: usize,
    tolerance: f64,
) -> bool {
    let window = points_for(min_window_s, mean_step_s(points));
    // Per window: GC writes over host writes, summed first (a few host writes in one point
    // beside a whole block's collection make a ratio of 18; its mean with others is noise).
    let collected = windowed_by(tail(points, window), window, |p| p.gc_writes as f64);
    let written = windowed_by(tail(points, window), window, |p| p.host_writes as f64);
    let shares: Vec<f64> = collected
        .iter()
        .zip(&written)
        .map(|(gc, host)| if *host > 0.0 { gc / host } else { 0.0 })
        .collect();
    levelled(&shares, windows, tolerance)
}

/// Whether the pool's dirty pages have stopped growing or shrinking, by the test of
/// [`flush_rate_is_steady`]. The warm-up's fourth end test: a scheme that defers its writes
/// (LRU-C flushes only the region behind its clean pointer) lives off clean frames after the
/// pool fills, writing far less than it dirties, until the dirty region reaches its working
/// size; on 500 warehouses (a 234k-frame pool) that took longer than 40 s of device time, and
/// a run measured before it wrote 458 pages a second against vanilla's 4,167.
///
/// The pages that are *not* dirty (of the pool's `frames`) must have levelled too, by the same
/// test: they are what a miss's scan of the LRU tail looks for, and in a mostly dirty pool they
/// are the small number. RW Table 2b's 40-60% pools (`rw-table2b`) ended their warm-ups with the
/// dirty pages at 81-88% of the frames, climbing about 1% of the frames a second: a 3-4% change
/// in the dirty count, within a 5% tolerance, but a fifth of the clean pages gone in a few
/// seconds; the measured phase then drifted 39-50% downwards and its second half stalled on
/// 0.3-7.6% of the misses against 0-2.7% in its first.
#[must_use]
pub fn dirty_pages_are_steady(
    points: &[TimelinePoint],
    frames: u64,
    min_window_s: f64,
    windows: usize,
    tolerance: f64,
) -> bool {
    has_levelled(points, min_window_s, windows, tolerance, |p| {
        p.dirty_pages as f64
    }) && has_levelled(points, min_window_s, windows, tolerance, |p| {
        frames.saturating_sub(p.dirty_pages) as f64
    })
}

/// Whether the slow background quantities have all settled, by the test of
/// [`flush_rate_is_steady`]: the flush rate, the device's GC per host write and the pool's
/// dirty pages (and the pages of the pool's `frames` that are not dirty). The warm-up's end
/// test beside a full pool and a steady throughput.
#[must_use]
pub fn background_is_steady(
    points: &[TimelinePoint],
    frames: u64,
    min_window_s: f64,
    windows: usize,
    tolerance: f64,
) -> bool {
    flush_rate_is_steady(points, min_window_s, windows, tolerance)
        && write_amplification_is_steady(points, min_window_s, windows, tolerance)
        && dirty_pages_are_steady(points, frames, min_window_s, windows, tolerance)
}

/// Whether `value`'s window means over the last `windows` windows changed from the first to
/// the last by at most `tolerance` of their mean (a zero mean passes; too few windows do not).
fn has_levelled(
    points: &[TimelinePoint],
    min_window_s: f64,
    windows: usize,
    tolerance: f64,
    value: impl Fn(&TimelinePoint) -> f64,
) -> bool {
    let window = points_for(min_window_s, mean_step_s(points));
    levelled(
        &windowed_by(tail(points, window), window, value),
        windows,
        tolerance,
    )
}

/// Whether the last `windows` of the window `means` end within `tolerance` of their mean
/// from where they began.
fn levelled(means: &[f64], windows: usize, tolerance: f64) -> bool {
    if windows < 2 || means.len() < windows {
        return false;
    }
    let last = &means[means.len() - windows..];
    let mean = last.iter().sum::<f64>() / last.len() as f64;
    mean <= 0.0 || (last[last.len() - 1] - last[0]).abs() <= tolerance * mean
}

/// The last points of `points` that fill whole windows of `window` (so windows end at the
/// newest point).
fn tail(points: &[TimelinePoint], window: usize) -> &[TimelinePoint] {
    let window = window.max(1);
    &points[points.len() % window..]
}

/// A window length in points (the mean, when windows differ by a point), and the period it is
/// a multiple of.
struct Window {
    points: f64,
    period: Option<usize>,
}

/// The window means of a phase: windows of at least [`MIN_WINDOW_S`]. With a period (and room
/// for [`MIN_WINDOWS`] windows of whole cycles), windows of whole cycles ending at the last
/// point (the fewer-than-one-window leftover is dropped at the head, next to the warm-up, so a
/// late collapse is never left out). Without one, as many windows as fit, of sizes differing
/// by at most one point, covering every point (19 points of 0.1 s: 6, 6, 7).
fn window_means(points: &[TimelinePoint], step_s: f64) -> (Vec<f64>, Window) {
    let n = points.len();
    let min_points = points_for(MIN_WINDOW_S, step_s);
    let period = detect_period(&throughputs(points));
    if let Some(window) = cycle_window(min_points, period, n / MIN_WINDOWS) {
        let means = windowed(tail(points, window), window);
        return (
            means,
            Window {
                points: window as f64,
                period,
            },
        );
    }
    let count = n / min_points;
    let means = (0..count)
        .map(|k| {
            let chunk = &points[k * n / count..(k + 1) * n / count];
            chunk.iter().map(|p| p.throughput).sum::<f64>() / chunk.len() as f64
        })
        .collect();
    let window = if count == 0 {
        min_points as f64
    } else {
        n as f64 / count as f64
    };
    (
        means,
        Window {
            points: window,
            period: None,
        },
    )
}

/// The smallest multiple of `period` that is at least `min_points`, if it is at most `limit`.
fn cycle_window(min_points: usize, period: Option<usize>, limit: usize) -> Option<usize> {
    let lag = period.filter(|lag| *lag > 0)?;
    let window = min_points.max(1).div_ceil(lag) * lag;
    (window <= limit).then_some(window)
}

/// Points that make at least `seconds` at `step_s` per point.
fn points_for(seconds: f64, step_s: f64) -> usize {
    if step_s > 0.0 && step_s.is_finite() {
        // A hair under, so 0.5 s at 0.1 s steps is 5 points despite rounding.
        ((seconds / step_s) - 1e-6).ceil().max(1.0) as usize
    } else {
        1
    }
}

/// Mean device seconds per point (the first point ends one step after the phase began).
fn mean_step_s(points: &[TimelinePoint]) -> f64 {
    match points.last() {
        Some(last) if last.t_s > 0.0 => last.t_s / points.len() as f64,
        _ => STEP.as_secs_f64(),
    }
}

fn throughputs(points: &[TimelinePoint]) -> Vec<f64> {
    points.iter().map(|p| p.throughput).collect()
}

/// The period of `series` in points: the first lag ([`PERIOD_MIN_POINTS`] or more) at which the
/// autocorrelation of the linearly detrended series has a local maximum above
/// [`PERIOD_MIN_CORRELATION`], among lags that leave at least two whole cycles. `None` for a series without such a peak (flat noise, a trend).
#[must_use]
pub fn detect_period(series: &[f64]) -> Option<usize> {
    let n = series.len();
    if n < 6 {
        return None;
    }
    let residuals = detrended(series);
    let energy: f64 = residuals.iter().map(|r| r * r).sum();
    if energy <= f64::EPSILON * n as f64 {
        return None;
    }
    // Normalised per overlapping pair (the unbiased estimate): a cycle that fits only twice
    // (1.5 s cycles in a 3 s phase) overlaps half the series and would otherwise look weak.
    let correlation = |lag: usize| {
        let pairs = (n - lag).max(1) as f64;
        residuals
            .iter()
            .zip(&residuals[lag..])
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / pairs
            / (energy / n as f64)
    };
    let max_lag = n / 2;
    let r: Vec<f64> = (0..=max_lag + 1)
        .map(|lag| correlation(lag.min(n - 1)))
        .collect();
    (PERIOD_MIN_POINTS..=max_lag).find(|&lag| {
        r[lag] > PERIOD_MIN_CORRELATION && r[lag] >= r[lag - 1] && r[lag] >= r[lag + 1]
    })
}

/// `series` minus its least-squares line.
fn detrended(series: &[f64]) -> Vec<f64> {
    let (intercept, slope) = least_squares(series);
    series
        .iter()
        .enumerate()
        .map(|(i, v)| v - (intercept + slope * i as f64))
        .collect()
}

/// Intercept and slope of the least-squares line through (i, series[i]).
fn least_squares(series: &[f64]) -> (f64, f64) {
    let n = series.len() as f64;
    if series.len() < 2 {
        return (series.first().copied().unwrap_or(0.0), 0.0);
    }
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = series.iter().sum::<f64>() / n;
    let (sxy, sxx) = series
        .iter()
        .enumerate()
        .fold((0.0, 0.0), |(sxy, sxx), (i, y)| {
            let dx = i as f64 - mean_x;
            (sxy + dx * (y - mean_y), sxx + dx * dx)
        });
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (mean_y - slope * mean_x, slope)
}

/// The least-squares change of `means` from the first to the last, over their mean, and the
/// half-width of its 95% interval: the slope's standard error from
/// the residuals about the line (`n - 2` degrees of freedom, Student's t), on the same scale.
/// The half-width is 0 below three points (no residual freedom).
fn relative_trend_with_interval(means: &[f64]) -> (f64, f64) {
    let n = means.len();
    let mean = means.iter().sum::<f64>() / n.max(1) as f64;
    if mean <= 0.0 || n < 2 {
        return (0.0, 0.0);
    }
    let (intercept, slope) = least_squares(means);
    let span = (n - 1) as f64 / mean;
    if n < 3 {
        return (slope * span, 0.0);
    }
    let residuals: f64 = means
        .iter()
        .enumerate()
        .map(|(i, y)| (y - (intercept + slope * i as f64)).powi(2))
        .sum();
    // The spread of the abscissas 0..n about their mean: n (n^2 - 1) / 12.
    let count = n as f64;
    let sxx = count * (count * count - 1.0) / 12.0;
    let slope_se = (residuals / (n - 2) as f64 / sxx).sqrt();
    (slope * span, super::stats::t_975(n - 2) * slope_se * span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_device_time_steps_and_counts_per_interval() {
        let start = Instant::now();
        let mut stats = PoolStats::default();
        let mut recorder = TimelineRecorder::new(start, 0, &stats, 10.0, STEP);
        assert!(!recorder.due(start + Duration::from_millis(900)));
        assert!(recorder.due(start + Duration::from_secs(1)));
        stats.misses = 30;
        stats.read_stalls = 5;
        recorder.record(start + Duration::from_secs(1), 1000, &stats);
        let point = &recorder.points()[0];
        assert!((point.t_s - 0.1).abs() < 1e-9);
        assert!((point.throughput - 10_000.0).abs() < 1e-6);
        assert_eq!((point.misses, point.read_stalls), (30, 5));
    }

    #[test]
    fn steadiness_and_variation() {
        assert!(coefficient_of_variation(&[10.0, 10.0, 10.0]) < 1e-12);
        assert!(coefficient_of_variation(&[5.0, 15.0]) > 0.5);
        assert!(is_steady(&[1.0, 100.0, 101.0, 99.0], 3, 0.05));
        assert!(!is_steady(&[100.0, 50.0, 101.0], 3, 0.05));
        assert!(!is_steady(&[100.0], 3, 0.05));
    }

    /// A timeline of `values` at the 100 ms step.
    fn series(values: impl IntoIterator<Item = f64>) -> Vec<TimelinePoint> {
        values
            .into_iter()
            .enumerate()
            .map(|(i, throughput)| TimelinePoint {
                t_s: (i + 1) as f64 * 0.1,
                throughput,
                free_frames: 0,
                dirty_pages: 0,
                misses: 0,
                read_stalls: 0,
                p_scan: None,
                p_io: None,
                gc_per_write: None,
                host_writes: 0,
                gc_writes: 0,
                tail_dirty_share: None,
                tail_run_pages: None,
            })
            .collect()
    }

    /// A deterministic wobble of +-`amplitude` (no RNG: reproducible).
    fn wobble(i: usize, amplitude: f64) -> f64 {
        let x = (i as f64 * 12.9898).sin() * 43_758.545;
        (x - x.floor() - 0.5) * 2.0 * amplitude
    }

    #[test]
    fn each_point_carries_the_tail_sampled_in_its_interval() {
        let stats = |samples: f64, run: f64, pages: f64, dirty: f64| {
            let mut stats = PoolStats::default();
            for (key, value) in [
                ("tail_samples", samples),
                ("tail_run_pages", run),
                ("tail_b0_pages", pages),
                ("tail_b0_dirty", dirty),
            ] {
                stats.extra.insert(key.into(), value);
            }
            stats
        };
        let start = Instant::now();
        let step = Duration::from_millis(100);
        let mut recorder =
            TimelineRecorder::new(start, 0, &stats(8.0, 40.0, 80.0, 40.0), 1.0, step);
        // 8 instance samples: runs of 24 pages in all, 30 of 80 last-band pages dirty.
        recorder.record(start + step, 10, &stats(16.0, 64.0, 160.0, 70.0));
        // No sample in the next interval: no figures.
        recorder.record(start + 2 * step, 20, &stats(16.0, 64.0, 160.0, 70.0));
        let points = recorder.points();
        assert!((points[0].tail_run_pages.unwrap() - 3.0).abs() < 1e-12);
        assert!((points[0].tail_dirty_share.unwrap() - 0.375).abs() < 1e-12);
        assert_eq!(points[1].tail_run_pages, None);
        assert_eq!(points[1].tail_dirty_share, None);
    }

    #[test]
    fn flat_run_is_steady() {
        let verdict = judge_steadiness(&series((0..30).map(|i| 1000.0 + wobble(i, 50.0))));
        assert!(verdict.steady, "{}", verdict.reason);
        assert!(verdict.window_s >= MIN_WINDOW_S - 1e-9);
        assert!(verdict.reason.starts_with("yes"), "{}", verdict.reason);
    }

    #[test]
    fn periodic_run_is_steady_over_whole_cycles() {
        // LRU-C-like flush cycles: 0.6 s period, throughput stops for 0.2 s of each cycle.
        let values: Vec<f64> = (0..30)
            .map(|i| if i % 6 < 2 { 0.0 } else { 1500.0 })
            .collect();
        // The 100 ms points vary far more than STEADY_CV ...
        assert!(coefficient_of_variation(&values) > 0.3);
        // ... and 0.5 s windows (not whole cycles) vary too ...
        assert!(coefficient_of_variation(&windowed(&series(values.clone()), 5)) > 0.1);
        // ... but windows of one whole 0.6 s cycle are flat.
        let verdict = judge_steadiness(&series(values));
        assert_eq!(verdict.period_s.map(|p| (p * 10.0).round()), Some(6.0));
        assert!((verdict.window_s - 0.6).abs() < 1e-9, "{}", verdict.reason);
        assert!(verdict.steady, "{}", verdict.reason);
        assert!(verdict.reason.contains("cycles"), "{}", verdict.reason);
    }

    #[test]
    fn the_drift_carries_its_interval_and_a_noisy_short_drift_says_so() {
        // An exact line: no scatter about it, no interval.
        let (drift, half) = relative_trend_with_interval(&[100.0, 95.0, 90.0, 85.0]);
        assert!((drift - (-15.0 * 4.0 / 370.0)).abs() < 1e-12, "{drift}");
        assert!(half.abs() < 1e-12, "{half}");
        // Scatter about the line: the interval is the slope's standard error from the
        // residuals, times t(0.975, n - 2), over the phase. Residuals of [100, 90, 100, 90] about
        // its line (slope -2, intercept 98): 2, -6, 6, -2; their squares sum to 80.
        let (drift, half) = relative_trend_with_interval(&[100.0, 90.0, 100.0, 90.0]);
        let slope_se = (80.0_f64 / 2.0 / 5.0).sqrt();
        assert!((drift - (-2.0 * 3.0 / 95.0)).abs() < 1e-12, "{drift}");
        assert!(
            (half - crate::bench::stats::t_975(2) * slope_se * 3.0 / 95.0).abs() < 1e-12,
            "{half}"
        );
        assert!(relative_trend_with_interval(&[5.0, 7.0]).1.abs() < f64::EPSILON);
        // A 2 s phase whose windows wobble by 20%: its trend passes the limit, but the
        // interval reaches back inside it, and the verdict says it could be noise.
        let verdict = judge_steadiness(&series(
            [900.0, 1100.0, 1000.0, 800.0]
                .iter()
                .flat_map(|&mean| (0..5).map(move |_| mean)),
        ));
        assert!(!verdict.steady, "{}", verdict.reason);
        assert!(verdict.drift.abs() > STEADY_DRIFT, "{}", verdict.reason);
        assert!(verdict.drift.abs() - verdict.drift_ci95 <= STEADY_DRIFT);
        assert!(
            verdict
                .reason
                .starts_with("no: drifts, or noise (too short to tell)"),
            "{}",
            verdict.reason
        );
    }

    #[test]
    fn an_automatic_phase_stops_only_when_steady_beyond_its_noise() {
        // Flat over 3 s: steady, and its drift's interval is narrow.
        let flat = judge_steadiness(&series((0..30).map(|i| 1000.0 + wobble(i, 50.0))));
        assert!(is_steady_enough_to_stop(&flat), "{}", flat.reason);
        // Four 0.5 s windows that wobble by 10%: the rule may call the drift steady, but its
        // interval is wider than the limit, so the phase goes on.
        let short = judge_steadiness(&series(
            [1000.0, 1080.0, 920.0, 1010.0]
                .iter()
                .flat_map(|&mean| (0..5).map(move |_| mean)),
        ));
        assert!(short.steady, "{}", short.reason);
        assert!(short.drift_ci95 > STEADY_DRIFT, "{}", short.reason);
        assert!(!is_steady_enough_to_stop(&short), "{}", short.reason);
        // A drift: not steady, whatever its interval.
        let drifting = judge_steadiness(&series(
            (0..30).map(|i| 1000.0 - 10.0 * i as f64 + wobble(i, 20.0)),
        ));
        assert!(!is_steady_enough_to_stop(&drifting), "{}", drifting.reason);
        // Too short to judge at all.
        let tiny = judge_steadiness(&series((0..3).map(|_| 1000.0)));
        assert!(!is_steady_enough_to_stop(&tiny), "{}", tiny.reason);
    }

    #[test]
    fn drifting_run_is_not_steady() {
        // Throughput falls 30% over 3 s (a pool filling with dirty pages): small cv per
        // window pair, but a trend.
        let verdict = judge_steadiness(&series(
            (0..30).map(|i| 1000.0 - 10.0 * i as f64 + wobble(i, 20.0)),
        ));
        assert!(!verdict.steady, "{}", verdict.reason);
        assert!(verdict.drift < -0.2, "{}", verdict.reason);
        assert!(
            verdict.reason.starts_with("no: drifts"),
            "{}",
            verdict.reason
        );
        // A periodic run that drifts is still not steady.
        let verdict =
            judge_steadiness(&series((0..30).map(|i| {
                (if i % 6 < 2 { 400.0 } else { 1200.0 }) * (1.0 - f64::from(i) / 60.0)
            })));
        assert!(!verdict.steady, "{}", verdict.reason);
    }

    #[test]
    fn late_collapse_is_not_left_out() {
        // 29 points: windows of 5 would leave the last 4 out; they hold the collapse.
        let flat_then_drop = |i: usize| {
            if i >= 25 {
                300.0
            } else {
                1000.0 + wobble(i, 20.0)
            }
        };
        let verdict = judge_steadiness(&series((0..29).map(flat_then_drop)));
        assert!(!verdict.steady, "{}", verdict.reason);
        // The same with flush cycles: whole-cycle windows end at the last point.
        let cyclic_then_drop =
            |i: usize| (if i % 6 < 2 { 0.0 } else { 1500.0 }) * if i >= 23 { 0.3 } else { 1.0 };
        let verdict = judge_steadiness(&series((0..29).map(cyclic_then_drop)));
        assert!(!verdict.steady, "{}", verdict.reason);
    }

    #[test]
    fn short_run_is_too_short() {
        let verdict = judge_steadiness(&series([1000.0; 8]));
        assert!(!verdict.steady);
        assert!(verdict.reason.contains("too short"), "{}", verdict.reason);
        // Two 0.5 s halves are not: their trend is their difference. Three windows are enough.
        let halves = judge_steadiness(&series([1000.0; 10]));
        assert!(!halves.steady);
        assert!(halves.reason.contains("too short"), "{}", halves.reason);
        assert!(judge_steadiness(&series([1000.0; 15])).steady);
        assert!(!judge_steadiness(&[]).steady);
    }

    #[test]
    fn warm_up_tail_can_be_steady_within_two_seconds() {
        let mut values: Vec<f64> = (0..5).map(|i| 200.0 * f64::from(i)).collect();
        values.extend((0..15).map(|i| 1000.0 + wobble(i, 30.0)));
        let points = series(values);
        assert!(tail_is_steady(&points, 0.5, 3, 0.10));
        assert!(!tail_is_steady(&points[..12], 0.5, 3, 0.10));
    }

    /// The flush rate's ramp as a 50-warehouse vanilla run measured it after a 3 s warm-up
    /// (`P_io` 149, 178, 204, 218, 226 over five 2 s spans): still climbing is not steady, the
    /// flattened tail is; no `P_io` (a scheme without adaptive flushing) passes, too few
    /// windows do not.
    #[test]
    fn the_warm_up_waits_for_the_flush_rate_to_stop_ramping() {
        let with_rate = |rates: &[f64]| {
            let mut points = series(rates.iter().map(|_| 1000.0));
            for (point, rate) in points.iter_mut().zip(rates) {
                point.p_io = Some(*rate);
            }
            points
        };
        let ramp: Vec<f64> = (0..30).map(|i| 150.0 + 2.0 * f64::from(i)).collect();
        assert!(!flush_rate_is_steady(&with_rate(&ramp), 1.0, 3, 0.05));
        let flat: Vec<f64> = (0..30).map(|i| 226.0 + wobble(i, 3.0)).collect();
        assert!(flush_rate_is_steady(&with_rate(&flat), 1.0, 3, 0.05));
        assert!(flush_rate_is_steady(&series([1000.0; 30]), 1.0, 3, 0.05));
        assert!(!flush_rate_is_steady(&with_rate(&flat[..20]), 1.0, 3, 0.05));
    }

    /// The LinkBench case: GC per host write still rising (0.43 towards 0.49) is not steady;
    /// level is; a device without GC passes; a window's share is its GC writes over its host
    /// writes, so a point with few host writes beside a whole block's collection (TPC-C's
    /// 0.1 s points: a share of 18) weighs by its writes, not as one ratio among ten; the
    /// recorder derives the counts from the device's and leaves an interval without host
    /// writes unannotated.
    #[test]
    fn the_warm_up_waits_for_the_write_amplification_to_settle() {
        let with_gc = |counts: &[(u64, u64)]| {
            let mut points = series(counts.iter().map(|_| 1000.0));
            for (point, &(host, gc)) in points.iter_mut().zip(counts) {
                point.host_writes = host;
                point.gc_writes = gc;
                point.gc_per_write = (host > 0).then(|| gc as f64 / host as f64);
            }
            points
        };
        let ramp: Vec<(u64, u64)> = (0..30).map(|i| (1000, 400 + 3 * i)).collect();
        assert!(!write_amplification_is_steady(
            &with_gc(&ramp),
            1.0,
            3,
            0.05
        ));
        let level: Vec<(u64, u64)> = (0..30).map(|i| (1000, 490 + 5 * (i % 2))).collect();
        assert!(write_amplification_is_steady(
            &with_gc(&level),
            1.0,
            3,
            0.05
        ));
        assert!(write_amplification_is_steady(
            &series([1000.0; 30]),
            1.0,
            3,
            0.05
        ));
        // Level at 0.5 per write, but the last window's first point wrote 10 pages while a
        // block of 256 was collected: a mean of ratios would read 3.0 there.
        let mut bursty: Vec<(u64, u64)> = (0..30).map(|_| (1000, 500)).collect();
        bursty[20] = (10, 256);
        bursty[21] = (1000, 249);
        assert!(write_amplification_is_steady(
            &with_gc(&bursty),
            1.0,
            3,
            0.05
        ));

        let start = Instant::now();
        let pool = PoolStats::default();
        let mut recorder = TimelineRecorder::new(start, 0, &pool, 1.0, STEP);
        let device = |writes, gc_writes| DeviceStats {
            writes,
            gc_writes,
            ..DeviceStats::default()
        };
        recorder.note_device(&device(100, 10));
        recorder.record(start + STEP, 10, &pool);
        recorder.note_device(&device(300, 110));
        recorder.record(start + 2 * STEP, 20, &pool);
        recorder.note_device(&device(300, 110));
        let shares: Vec<_> = recorder.points().iter().map(|p| p.gc_per_write).collect();
        assert_eq!(shares, vec![Some(0.5), None]);
        let counts: Vec<_> = recorder
            .points()
            .iter()
            .map(|p| (p.host_writes, p.gc_writes))
            .collect();
        assert_eq!(counts, vec![(200, 100), (0, 0)]);
    }

    /// Dirty pages still climbing (a deferring scheme after the pool filled) are not steady;
    /// level ones are.
    #[test]
    fn the_warm_up_waits_for_the_dirty_pages_to_level() {
        let with_dirty = |dirty: &[u64]| {
            let mut points = series(dirty.iter().map(|_| 1000.0));
            for (point, pages) in points.iter_mut().zip(dirty) {
                point.dirty_pages = *pages;
            }
            points
        };
        let frames = 200_000;
        let growing: Vec<u64> = (0..30).map(|i| 50_000 + 400 * i).collect();
        assert!(!dirty_pages_are_steady(
            &with_dirty(&growing),
            frames,
            1.0,
            3,
            0.05
        ));
        let level: Vec<u64> = (0..30).map(|i| 120_000 + 300 * (i % 3)).collect();
        assert!(dirty_pages_are_steady(
            &with_dirty(&level),
            frames,
            1.0,
            3,
            0.05
        ));
        // rw-table2b at 60% (145k frames): 87% dirty, climbing 0.1% of the frames per 100 ms
        // point. Over three 1 s windows the dirty count moves 2% of its mean, the clean pages
        // 17% of theirs: not steady.
        let frames = 145_000;
        let climbing: Vec<u64> = (0..30).map(|i| 126_000 + 145 * i).collect();
        let dirty_only =
            |points: &[TimelinePoint]| has_levelled(points, 1.0, 3, 0.05, |p| p.dirty_pages as f64);
        assert!(
            dirty_only(&with_dirty(&climbing)),
            "the dirty count alone passes"
        );
        assert!(!dirty_pages_are_steady(
            &with_dirty(&climbing),
            frames,
            1.0,
            3,
            0.05
        ));
    }

    #[test]
    fn finds_periods_and_not_in_noise_or_trends() {
        // LRU-C at the default scale (a measured run): ~1.5 s stall cycles in a 3 s phase.
        let stalls = [
            30.1, 28.8, 2.6, 2.0, 2.0, 2.0, 2.2, 2.0, 94.6, 59.7, 39.3, 41.3, 31.4, 31.5, 32.9,
            28.7, 8.8, 2.2, 1.9, 1.7, 2.9, 1.6, 2.0, 117.2, 7.9, 2.4, 3.6, 2.6, 2.1, 2.3,
        ];
        assert_eq!(detect_period(&stalls), Some(15));
        let verdict = judge_steadiness(&series(stalls));
        assert!(!verdict.steady, "{}", verdict.reason);
        // Two whole cycles fit, not three: the windows are 0.5 s, not the period's.
        assert_eq!(verdict.period_s, None, "{}", verdict.reason);
        assert!(verdict.windows >= MIN_WINDOWS, "{}", verdict.reason);
        // Vanilla in the same setting (a measured run): noisy, flat, steady.
        let vanilla = [
            6478.0, 7165.0, 8547.0, 6337.0, 9816.0, 6434.0, 8794.0, 9658.0, 6970.0, 7592.0, 9169.0,
            7219.0, 8370.0, 6448.0, 6992.0, 8388.0, 5405.0, 6970.0, 7179.0, 5279.0, 9601.0, 6752.0,
            5335.0, 8477.0, 4601.0, 7568.0, 8787.0, 5728.0, 7292.0, 10161.0,
        ];
        let verdict = judge_steadiness(&series(vanilla));
        assert!(verdict.steady, "{}", verdict.reason);
        let periodic: Vec<f64> = (0..40)
            .map(|i| if i % 4 == 0 { 0.0 } else { 1.0 })
            .collect();
        assert_eq!(detect_period(&periodic), Some(4));
        let trend: Vec<f64> = (0..40).map(f64::from).collect();
        assert_eq!(detect_period(&trend), None);
        assert_eq!(detect_period(&[5.0; 40]), None);
        let noise: Vec<f64> = (0..30).map(|i| 1000.0 + wobble(i, 100.0)).collect();
        assert_eq!(detect_period(&noise), None);
    }

    /// Where `--duration auto` stops on `values` (one point per 100 ms step): the first prefix
    /// of at least `min_points` that is steady enough ([`is_steady_enough_to_stop`]), checked
    /// at every point as the harness checks, else all of it.
    fn stop_at(values: &[f64], min_points: usize) -> usize {
        let points = series(values.iter().copied());
        (min_points..=points.len())
            .find(|&n| is_steady_enough_to_stop(&judge_steadiness(&points[..n])))
            .unwrap_or(points.len())
    }

    /// Throughput series of a known mean: `kind` 0 an AR(1) of coefficient 0.5 and 10%
    /// deviation, 1 a slow AR(1) (0.95, 5%: throughput that wanders over seconds), 2 cycles of
    /// 0.8 s and 50% amplitude, from a random point of the cycle, with 5% white noise (a page
    /// cleaner's rounds).
    fn synthetic(kind: usize, len: usize, mean: f64, rng: &mut impl rand::Rng) -> Vec<f64> {
        // A run begins anywhere in the cleaner's cycle.
        let phase = rng.r#gen::<f64>() * 8.0;
        let mut normal = || {
            // Box-Muller: one standard normal from two uniforms.
            let (u, v): (f64, f64) = (rng.r#gen::<f64>().max(1e-12), rng.r#gen());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let (phi, sd): (f64, f64) = match kind {
            0 => (0.5, 0.10),
            1 => (0.95, 0.05),
            _ => (0.0, 0.05),
        };
        let innovation = sd * (1.0 - phi * phi).sqrt();
        let mut state = sd * normal();
        (0..len)
            .map(|i| {
                state = phi * state + innovation * normal();
                let cycle = if kind == 2 {
                    0.5 * (std::f64::consts::TAU * (i as f64 + phase) / 8.0).sin()
                } else {
                    0.0
                };
                mean * (1.0 + cycle + state)
            })
            .collect()
    }

    /// Optional stopping, quantified: `--duration auto` stops a run when its timeline looks
    /// steady, so where it stops depends on the data. On series of a known mean, the stopped
    /// runs' means must stay unbiased and the 95% interval of three repeats (what a
    /// reproduction reports) must cover the mean about as often as for runs of a fixed length.
    /// Figures: `cargo test --release --lib optional_stopping -- --nocapture`
    /// (docs/regime.md, "Measuring until steady").
    #[test]
    fn optional_stopping_leaves_the_mean_unbiased_and_its_interval_honest() {
        use rand::SeedableRng as _;
        const TRIALS: usize = 1500;
        const MIN: usize = 30; // 3 s
        const CAP: usize = 150; // 15 s
        // t(0.975, 2 degrees of freedom): the interval of three repeats.
        const T2: f64 = 4.302_652_729_911_275;
        let mean_of = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
        let covers = |runs: &[f64], truth: f64| {
            let m = mean_of(runs);
            let sd = (runs.iter().map(|r| (r - m).powi(2)).sum::<f64>() / 2.0).sqrt();
            (m - truth).abs() <= T2 * sd / 3f64.sqrt()
        };
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for kind in 0..3 {
            let truth = 1000.0;
            let (mut auto, mut fixed, mut lengths) = (Vec::new(), Vec::new(), 0usize);
            for _ in 0..TRIALS {
                let values = synthetic(kind, CAP, truth, &mut rng);
                let stop = stop_at(&values, MIN);
                lengths += stop;
                auto.push(mean_of(&values[..stop]));
                fixed.push(mean_of(&values[..MIN]));
            }
            let bias = |means: &[f64]| mean_of(means) / truth - 1.0;
            let coverage = |means: &[f64]| {
                let triples = means.chunks_exact(3);
                let n = triples.len() as f64;
                triples.filter(|t| covers(t, truth)).count() as f64 / n
            };
            eprintln!(
                "series {kind}: auto stops at {:.1} s on average; bias auto {:+.2}%, fixed 3 s \
                 {:+.2}%; 95% interval of 3 repeats covers the mean: auto {:.1}%, fixed {:.1}%",
                lengths as f64 / TRIALS as f64 / 10.0,
                bias(&auto) * 100.0,
                bias(&fixed) * 100.0,
                coverage(&auto) * 100.0,
                coverage(&fixed) * 100.0
            );
            assert!(
                bias(&auto).abs() < 0.01,
                "series {kind}: bias {}",
                bias(&auto)
            );
            assert!(
                coverage(&auto) >= 0.90,
                "series {kind}: coverage {}",
                coverage(&auto)
            );
        }
    }
}
