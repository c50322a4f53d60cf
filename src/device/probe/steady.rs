//! Measuring one probe point until it is steady: successive device-time windows, each long
//! enough to hold about `window_requests` I/Os, until the last `windows` of them agree within
//! the tolerance (and show no trend), or `max_windows` have run. A point that never converges
//! (a host stall, a device that keeps drifting) reports its steadiest stretch of `windows`
//! consecutive windows, and says so.
//!
//! Pure logic ([`SteadyDetector`]) plus the loop that drives a [`PointRunner`] (live threads or
//! the timing model) with it. The point's figures come from the agreeing windows only: the
//! transient before them (a write buffer filling or draining, garbage collection catching up)
//! is not averaged in.
//!
//! Tolerance: a window of n requests has a counting noise of about 1/sqrt(n) relative (Poisson
//! bound; closed loops are calmer), so windows are compared with max(tolerance, 1/sqrt(n)).
//!
//! Bounds: at most `max_windows` windows per point, each at most `window_max` of device time.
//! Pure logic and a driver loop; no locks.

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::error::Result;

/// How long to measure each point.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SteadyConfig {
    /// Shortest window, device time.
    #[serde(serialize_with = "as_millis")]
    pub window_min: Duration,
    /// Longest window, device time.
    #[serde(serialize_with = "as_millis")]
    pub window_max: Duration,
    /// I/Os a window should hold (its length adapts to the measured rate, within the bounds).
    pub window_requests: u64,
    /// Consecutive windows that must agree.
    pub windows: usize,
    /// Relative tolerance between agreeing windows (0.05: within 5% of their mean).
    pub tolerance: f64,
    /// Shortest point, device time.
    #[serde(serialize_with = "as_millis")]
    pub point_min: Duration,
    /// Windows after which a point stops even if not steady (reported as not steady).
    pub max_windows: usize,
    /// Fixed mode: one window of exactly this device time, no steady-state detection.
    #[serde(serialize_with = "as_millis_opt")]
    pub fixed: Option<Duration>,
}

#[allow(clippy::ref_option, clippy::trivially_copy_pass_by_ref)] // serde's signature
fn as_millis_opt<S: serde::Serializer>(
    d: &Option<Duration>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&(d.as_secs_f64() * 1000.0)),
        None => s.serialize_none(),
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's signature
fn as_millis<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}

impl Default for SteadyConfig {
    fn default() -> Self {
        SteadyConfig {
            window_min: Duration::from_millis(10),
            window_max: Duration::from_secs(1),
            window_requests: 500,
            windows: 4,
            tolerance: 0.05,
            point_min: Duration::from_millis(20),
            max_windows: 16,
            fixed: None,
        }
    }
}

impl SteadyConfig {
    /// A shorter, looser measurement (`device probe --quick`).
    #[must_use]
    pub fn quick() -> Self {
        SteadyConfig {
            window_requests: 250,
            windows: 3,
            tolerance: 0.10,
            max_windows: 8,
            ..SteadyConfig::default()
        }
    }

    /// One window of `device_time` per point, no steady-state detection.
    #[must_use]
    pub fn fixed(device_time: Duration) -> Self {
        SteadyConfig {
            fixed: Some(device_time),
            ..SteadyConfig::default()
        }
    }

    /// Checks the bounds.
    ///
    /// # Errors
    /// [`crate::error::Error::Config`] naming the bad field.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(crate::error::Error::Config(format!("probe: {what}")));
        if self.window_min.is_zero() || self.window_max < self.window_min {
            return bad("windows need 0 < window_min <= window_max");
        }
        if self.windows == 0 || self.max_windows < self.windows || self.max_windows > 10_000 {
            return bad("need 1 <= windows <= max_windows <= 10000");
        }
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return bad("tolerance must be within (0, 1)");
        }
        if self.window_requests == 0 {
            return bad("window_requests must be positive");
        }
        if self.fixed.is_some_and(|d| d.is_zero()) {
            return bad("a fixed point duration must be positive");
        }
        Ok(())
    }

    /// The most device time one point can take (windows x longest window, or the fixed time).
    #[must_use]
    pub fn point_device_max(&self) -> Duration {
        self.fixed.unwrap_or_else(|| {
            self.window_max * u32::try_from(self.max_windows).unwrap_or(u32::MAX)
        })
    }
}

/// What one window measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowRate {
    /// I/Os completed in the window.
    pub requests: u64,
    /// Device time the window spanned, nanoseconds.
    pub device_ns: u64,
}

impl WindowRate {
    /// I/Os per second of device time.
    #[must_use]
    pub fn iops(&self) -> f64 {
        if self.device_ns == 0 {
            0.0
        } else {
            self.requests as f64 * 1.0e9 / self.device_ns as f64
        }
    }
}

/// How a point's measurement ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Convergence {
    /// The last windows agreed.
    Steady,
    /// `max_windows` ran without agreement; the figures are those of the last windows.
    NotSteady,
    /// Fixed duration, no detection.
    Fixed,
}

/// What the detector says after a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Run another window of this many device nanoseconds.
    Continue(u64),
    /// Done: the point's figures come from windows `first..first + windows`.
    Done {
        /// How it ended.
        convergence: Convergence,
        /// First window the figures come from.
        first: usize,
        /// Windows the figures come from.
        windows: usize,
    },
}

/// The steady-state rule over a sequence of windows (pure).
#[derive(Debug, Clone)]
pub struct SteadyDetector {
    config: SteadyConfig,
    rates: Vec<WindowRate>,
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl SteadyDetector {
    /// A detector with no windows yet.
    #[must_use]
    pub fn new(config: &SteadyConfig) -> Self {
        SteadyDetector {
            config: config.clone(),
            rates: Vec::new(),
        }
    }

    /// The windows seen so far.
    #[must_use]
    pub fn rates(&self) -> &[WindowRate] {
        &self.rates
    }

    /// Length of the first window, device nanoseconds.
    #[must_use]
    pub fn first_window_ns(&self) -> u64 {
        duration_ns(self.config.fixed.unwrap_or(self.config.window_min))
    }

    /// Records a window and says what to do next.
    pub fn push(&mut self, rate: WindowRate) -> Verdict {
        self.rates.push(rate);
        if self.config.fixed.is_some() {
            return Verdict::Done {
                convergence: Convergence::Fixed,
                first: 0,
                windows: self.rates.len(),
            };
        }
        let wanted = self.config.windows;
        let elapsed: u64 = self.rates.iter().map(|r| r.device_ns).sum();
        if self.rates.len() >= wanted
            && elapsed >= duration_ns(self.config.point_min)
            && agree(
                &self.rates[self.rates.len() - wanted..],
                self.config.tolerance,
            )
        {
            return Verdict::Done {
                convergence: Convergence::Steady,
                first: self.rates.len() - wanted,
                windows: wanted,
            };
        }
        if self.rates.len() >= self.config.max_windows {
            let windows = wanted.min(self.rates.len());
            return Verdict::Done {
                convergence: Convergence::NotSteady,
                first: steadiest(&self.rates, windows),
                windows,
            };
        }
        Verdict::Continue(self.next_window_ns(rate))
    }

    /// The next window: long enough for about `window_requests` I/Os at the last rate.
    fn next_window_ns(&self, last: WindowRate) -> u64 {
        let (min, max) = (
            duration_ns(self.config.window_min),
            duration_ns(self.config.window_max),
        );
        let wanted = if last.requests == 0 {
            last.device_ns.saturating_mul(2)
        } else {
            let per_request = last.device_ns as f64 / last.requests as f64;
            (per_request * self.config.window_requests as f64) as u64
        };
        wanted.clamp(min, max)
    }
}

/// Whether `windows` agree: each within the tolerance of their common rate, and the first half
/// within half the tolerance of the second (no trend).
#[must_use]
pub fn agree(windows: &[WindowRate], tolerance: f64) -> bool {
    let Some(fewest) = windows.iter().map(|w| w.requests).min() else {
        return false;
    };
    if fewest == 0 {
        return false;
    }
    let tolerance = tolerance.max(1.0 / (fewest as f64).sqrt());
    let mean = combined_iops(windows);
    let within = windows
        .iter()
        .all(|w| (w.iops() - mean).abs() <= tolerance * mean);
    let (early, late) = windows.split_at(windows.len() / 2);
    let trend_free = early.is_empty()
        || (combined_iops(early) - combined_iops(late)).abs() <= tolerance / 2.0 * mean;
    within && trend_free
}

/// The start of the stretch of `length` consecutive windows whose rates spread least
/// (relative range), the later one on ties; 0 when there are fewer windows.
#[must_use]
pub fn steadiest(rates: &[WindowRate], length: usize) -> usize {
    if length == 0 || rates.len() <= length {
        return 0;
    }
    let spread = |stretch: &[WindowRate]| {
        let values: Vec<f64> = stretch.iter().map(WindowRate::iops).collect();
        let high = values.iter().copied().fold(f64::MIN, f64::max);
        let low = values.iter().copied().fold(f64::MAX, f64::min);
        let mean = combined_iops(stretch);
        if mean > 0.0 {
            (high - low) / mean
        } else {
            f64::MAX
        }
    };
    (0..=rates.len() - length)
        .rev()
        .min_by(|&a, &b| spread(&rates[a..a + length]).total_cmp(&spread(&rates[b..b + length])))
        .unwrap_or(0)
}

/// Requests per second over several windows together.
#[must_use]
pub fn combined_iops(windows: &[WindowRate]) -> f64 {
    let requests: u64 = windows.iter().map(|w| w.requests).sum();
    let device_ns: u64 = windows.iter().map(|w| w.device_ns).sum();
    WindowRate {
        requests,
        device_ns,
    }
    .iops()
}

/// Coefficient of variation of the windows' rates.
#[must_use]
pub fn coefficient_of_variation(windows: &[WindowRate]) -> f64 {
    if windows.len() < 2 {
        return 0.0;
    }
    let rates: Vec<f64> = windows.iter().map(WindowRate::iops).collect();
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    if mean <= 0.0 {
        return 0.0;
    }
    let variance = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (rates.len() - 1) as f64;
    variance.sqrt() / mean
}

/// Something that runs a point's load window by window.
pub trait PointRunner {
    /// Runs the load for `window_ns` more nanoseconds of device time.
    ///
    /// # Errors
    /// The device's first I/O error.
    fn run_window(&mut self, window_ns: u64) -> Result<WindowRate>;

    /// Stops the load; returns the latencies (device nanoseconds) of the I/Os that completed
    /// in windows `counted` (indices in the order the windows ran).
    ///
    /// # Errors
    /// The device's first I/O error.
    fn finish(self, counted: std::ops::Range<usize>) -> Result<Histogram<u64>>;
}

/// What measuring one point produced.
#[derive(Debug)]
pub struct PointOutcome {
    /// Every window, in order.
    pub rates: Vec<WindowRate>,
    /// How the measurement ended.
    pub convergence: Convergence,
    /// First window the figures come from.
    pub first: usize,
    /// Windows the figures come from.
    pub windows: usize,
    /// Latencies of the I/Os in those windows, device nanoseconds.
    pub latencies: Histogram<u64>,
}

impl PointOutcome {
    /// The windows the figures come from.
    #[must_use]
    pub fn counted(&self) -> &[WindowRate] {
        &self.rates[self.first..self.first + self.windows]
    }
}

/// Runs `runner` window by window until the detector is done. `on_window` sees each window.
///
/// # Errors
/// The runner's errors.
pub fn measure<R: PointRunner>(
    mut runner: R,
    config: &SteadyConfig,
    on_window: &mut dyn FnMut(&WindowRate),
) -> Result<PointOutcome> {
    let mut detector = SteadyDetector::new(config);
    let mut next = detector.first_window_ns();
    // Bounded: the detector ends after at most `max_windows` windows.
    loop {
        let rate = match runner.run_window(next) {
            Ok(rate) => rate,
            Err(err) => {
                let _ = runner.finish(0..0);
                return Err(err);
            }
        };
        on_window(&rate);
        match detector.push(rate) {
            Verdict::Continue(window_ns) => next = window_ns,
            Verdict::Done {
                convergence,
                first,
                windows,
            } => {
                let latencies = runner.finish(first..first + windows)?;
                return Ok(PointOutcome {
                    rates: detector.rates,
                    convergence,
                    first,
                    windows,
                    latencies,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(iops: f64, ms: u64) -> WindowRate {
        WindowRate {
            requests: (iops * ms as f64 / 1000.0) as u64,
            device_ns: ms * 1_000_000,
        }
    }

    #[test]
    fn agreeing_windows_are_steady_and_a_trend_is_not() {
        let flat: Vec<_> = [100_000.0, 101_000.0, 99_500.0, 100_200.0]
            .iter()
            .map(|&x| rate(x, 100))
            .collect();
        assert!(agree(&flat, 0.05));
        // Each within 5% of the mean, but falling steadily: the halves differ by 4%.
        let falling: Vec<_> = [104_000.0, 102_000.0, 98_000.0, 96_000.0]
            .iter()
            .map(|&x| rate(x, 100))
            .collect();
        assert!(!agree(&falling, 0.05));
        let jumpy: Vec<_> = [100_000.0, 120_000.0, 100_000.0, 100_000.0]
            .iter()
            .map(|&x| rate(x, 100))
            .collect();
        assert!(!agree(&jumpy, 0.05));
        // Few requests per window widen the tolerance to the counting noise (1/sqrt(93) =
        // 10%); the same spread over many requests is too much.
        for (scale, steady) in [(1, true), (100, false)] {
            let windows: Vec<_> = [93, 107, 106, 94]
                .iter()
                .map(|&n| WindowRate {
                    requests: n * scale,
                    device_ns: 1_000_000_000,
                })
                .collect();
            assert_eq!(agree(&windows, 0.05), steady, "x{scale}");
        }
        assert!(!agree(&[], 0.05));
    }

    #[test]
    fn the_detector_waits_out_a_transient() {
        let config = SteadyConfig::default();
        let mut detector = SteadyDetector::new(&config);
        // A write buffer absorbing writes, then the device's sustained rate.
        let series = [
            60_000.0, 52_000.0, 44_000.0, 36_000.0, 34_000.0, 34_100.0, 33_900.0, 34_000.0,
        ];
        let mut verdicts = Vec::new();
        for x in series {
            verdicts.push(detector.push(rate(x, 30)));
        }
        assert!(
            verdicts[..7]
                .iter()
                .all(|v| matches!(v, Verdict::Continue(_))),
            "{verdicts:?}"
        );
        assert_eq!(
            verdicts[7],
            Verdict::Done {
                convergence: Convergence::Steady,
                first: 4,
                windows: 4
            }
        );
        assert!((combined_iops(&detector.rates()[4..]) - 34_000.0).abs() < 100.0);
    }

    #[test]
    fn windows_adapt_to_the_rate_and_the_detector_gives_up() {
        let config = SteadyConfig {
            window_requests: 1000,
            max_windows: 5,
            ..SteadyConfig::default()
        };
        let mut detector = SteadyDetector::new(&config);
        assert_eq!(detector.first_window_ns(), 10_000_000);
        // 100 IOPS: 1000 requests would take 10 s; the window is capped at 1 s.
        assert_eq!(
            detector.push(rate(100.0, 10)),
            Verdict::Continue(1_000_000_000)
        );
        // 1M IOPS: 1000 requests take 1 ms; the window is at least 10 ms.
        assert_eq!(
            detector.push(rate(1_000_000.0, 10)),
            Verdict::Continue(10_000_000)
        );
        assert_eq!(
            detector.push(rate(500_000.0, 10)),
            Verdict::Continue(10_000_000)
        );
        assert!(matches!(
            detector.push(rate(250_000.0, 10)),
            Verdict::Continue(_)
        ));
        // Halving every window: every stretch spreads alike, the latest wins.
        assert_eq!(
            detector.push(rate(125_000.0, 10)),
            Verdict::Done {
                convergence: Convergence::NotSteady,
                first: 1,
                windows: 4
            }
        );
        let mut fixed = SteadyDetector::new(&SteadyConfig::fixed(Duration::from_millis(7)));
        assert_eq!(fixed.first_window_ns(), 7_000_000);
        assert_eq!(
            fixed.push(rate(1.0, 7)),
            Verdict::Done {
                convergence: Convergence::Fixed,
                first: 0,
                windows: 1
            }
        );
    }

    #[test]
    fn a_point_that_never_settles_reports_its_steadiest_stretch() {
        // A steady device with a host stall every few windows: no 4 in a row agree at the end,
        // but windows 3..7 do.
        let series = [
            50_000.0, 34_000.0, 20_000.0, 34_100.0, 33_900.0, 34_000.0, 34_050.0, 12_000.0,
            34_000.0, 15_000.0,
        ];
        let rates: Vec<_> = series.iter().map(|&x| rate(x, 30)).collect();
        assert_eq!(steadiest(&rates, 4), 3);
        assert!((combined_iops(&rates[3..7]) - 34_000.0).abs() < 100.0);
        assert_eq!(steadiest(&rates[..3], 4), 0, "too few windows");
    }

    #[test]
    fn bad_configurations_are_refused() {
        assert!(SteadyConfig::default().validate().is_ok());
        assert!(SteadyConfig::quick().validate().is_ok());
        for bad in [
            SteadyConfig {
                windows: 0,
                ..SteadyConfig::default()
            },
            SteadyConfig {
                max_windows: 2,
                ..SteadyConfig::default()
            },
            SteadyConfig {
                tolerance: 0.0,
                ..SteadyConfig::default()
            },
            SteadyConfig {
                window_max: Duration::from_millis(1),
                ..SteadyConfig::default()
            },
            SteadyConfig::fixed(Duration::ZERO),
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        let cv = coefficient_of_variation(&[rate(90.0, 1000), rate(110.0, 1000)]);
        assert!((cv - 0.1414).abs() < 0.01, "{cv}");
    }
}
