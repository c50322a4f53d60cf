//! The per-second timeline of a measured phase: throughput (device time) and, from the pool's
//! gauges, free frames and dirty pages.
//!
//! The harness's control thread calls [`TimelineRecorder::poll`] every tick (100 ms); each time a
//! whole real second has passed since the previous point it appends one [`TimelinePoint`].
//! Bound: at most `duration_s + 1` points per run (one per elapsed second).

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::pool::PoolStats;

/// One second of a run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TimelinePoint {
    /// Real seconds since the measured phase began, at the end of this interval.
    pub t_s: f64,
    /// Operations per second in device time over the interval.
    pub throughput: f64,
    /// The pool's free frames at the end of the interval.
    pub free_frames: u64,
    /// The pool's dirty pages at the end of the interval.
    pub dirty_pages: u64,
}

/// Builds the timeline of one measured phase.
#[derive(Debug)]
pub struct TimelineRecorder {
    start: Instant,
    last_time: Instant,
    last_ops: u64,
    time_scale: f64,
    points: Vec<TimelinePoint>,
}

impl TimelineRecorder {
    /// Starts at `start` with `ops` operations done so far.
    #[must_use]
    pub fn new(start: Instant, ops: u64, time_scale: f64) -> TimelineRecorder {
        assert!(time_scale > 0.0, "time scale must be positive");
        TimelineRecorder {
            start,
            last_time: start,
            last_ops: ops,
            time_scale,
            points: Vec::new(),
        }
    }

    /// Whether a point is due at `now` (a second has passed since the last one).
    #[must_use]
    pub fn due(&self, now: Instant) -> bool {
        now.duration_since(self.last_time) >= Duration::from_secs(1)
    }

    /// Appends a point for the interval ending at `now` with `ops` done in total.
    pub fn record(&mut self, now: Instant, ops: u64, stats: &PoolStats) {
        let interval = now.duration_since(self.last_time).as_secs_f64();
        if interval <= 0.0 {
            return;
        }
        let done = ops.saturating_sub(self.last_ops) as f64;
        self.points.push(TimelinePoint {
            t_s: now.duration_since(self.start).as_secs_f64(),
            throughput: done / interval * self.time_scale,
            free_frames: stats.free_frames,
            dirty_pages: stats.dirty_pages,
        });
        self.last_time = now;
        self.last_ops = ops;
    }

    /// Records a point if one is due; returns whether it did.
    pub fn poll(&mut self, now: Instant, ops: u64, stats: impl FnOnce() -> PoolStats) -> bool {
        if !self.due(now) {
            return false;
        }
        self.record(now, ops, &stats());
        true
    }

    /// Closes the timeline at the end of the measured phase: records the last partial interval
    /// if it is at least half a second long (shorter ones are too noisy to plot).
    pub fn finish(&mut self, end: Instant, ops: u64, stats: &PoolStats) {
        if end.duration_since(self.last_time) >= Duration::from_millis(500) {
            self.record(end, ops, stats);
        }
    }

    /// The points so far.
    #[must_use]
    pub fn points(&self) -> &[TimelinePoint] {
        &self.points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_point_per_second_scaled_to_device_time() {
        let start = Instant::now();
        let mut timeline = TimelineRecorder::new(start, 100, 4.0);
        let stats = PoolStats::default;
        assert!(!timeline.poll(start + Duration::from_millis(500), 150, stats));
        assert!(timeline.poll(start + Duration::from_secs(1), 200, stats));
        assert!(timeline.poll(start + Duration::from_secs(2), 250, stats));
        timeline.finish(start + Duration::from_millis(2200), 300, &stats());
        timeline.finish(start + Duration::from_millis(2900), 400, &stats());
        let points = timeline.points();
        assert_eq!(points.len(), 3, "{points:?}");
        assert!((points[2].throughput - 4.0 * 150.0 / 0.9).abs() < 1e-6);
        assert!((points[0].throughput - 400.0).abs() < 1e-9);
        assert!((points[1].throughput - 200.0).abs() < 1e-9);
    }
}
