//! The timeline of a run, sampled at a fixed device-time step (100 ms by default: issue 9 item
//! 7): throughput, free frames, dirty pages, misses and read stalls per interval, and the
//! flush-rate controller's `P_scan` / `P_io` when it reports them.
//!
//! The harness's control thread calls [`TimelineRecorder::poll`] every real-time tick; each time
//! a whole step of device time has passed since the previous point it appends one
//! [`TimelinePoint`]. Bound: at most `duration / step + 1` points per phase.
//!
//! Steadiness: [`coefficient_of_variation`] of the throughput over windows of several steps
//! (windows smooth the sampling noise of one step); a run whose measured window varies more
//! than [`STEADY_CV`] is reported as not steady.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::pool::PoolStats;

/// The default device-time step between points.
pub const STEP: Duration = Duration::from_millis(100);
/// A measured window whose windowed throughput varies more than this is not steady.
pub const STEADY_CV: f64 = 0.15;

/// One step of a run.
#[derive(Debug, Clone, Serialize, PartialEq)]
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
        self.points.push(TimelinePoint {
            t_s: now.duration_since(self.start).as_secs_f64() / self.time_scale,
            throughput: done / interval,
            free_frames: stats.free_frames,
            dirty_pages: stats.dirty_pages,
            misses: stats.misses.saturating_sub(self.last_misses),
            read_stalls: stats.read_stalls.saturating_sub(self.last_stalls),
            p_scan: stats.extra.get("p_scan").copied(),
            p_io: stats.extra.get("p_io").copied(),
        });
        self.last_time = now;
        self.last_ops = ops;
        self.last_misses = stats.misses;
        self.last_stalls = stats.read_stalls;
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
    let window = window.max(1);
    points
        .chunks_exact(window)
        .map(|chunk| chunk.iter().map(|p| p.throughput).sum::<f64>() / chunk.len() as f64)
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
}
