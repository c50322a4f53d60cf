//! Progress of a whole bench command (issue 13 item 7): which scheme of how many, its phase
//! (load or copy, warm-up, measure, verify, write back) and an ETA for the whole command. With
//! `--repeat N` a "scheme" here is one run: there are schemes x N of them, named `vanilla #2`.
//!
//! The ETA is (what remains of the current scheme) + (schemes after it) x (the expected real
//! time of one scheme). Before any scheme finished, the expected time is
//! [`super::estimate::SchemeEstimate`]'s longest (warm-up at its cap, so it errs long; the
//! image copy and the check modelled); once schemes finished, it is the mean real time they actually took (set-up to
//! shutdown), so the ETA corrects itself after the first scheme. What remains of the current
//! scheme is the expected time less its elapsed time, but never less than what its phase still
//! needs for sure (the rest of the measured phase).
//!
//! The bar is indicatif's; with `--no-progress` it is hidden and nothing here prints (the
//! per-scheme summary lines are the caller's). No locks: the control thread alone updates it.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use super::BenchConfig;
use crate::device::DeviceSpec;

/// A scheme's phase, as the progress line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Writing the synthetic database image onto the fresh device.
    Load,
    /// Copying a record workload's loaded image onto the fresh device.
    Copy,
    /// The unmeasured warm-up.
    WarmUp,
    /// The measured phase.
    Measure,
    /// The consistency check after the run (record workloads).
    Verify,
    /// The final write-back at shutdown.
    WriteBack,
}

impl Phase {
    /// The name on the progress line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Copy => "copy",
            Phase::WarmUp => "warm-up",
            Phase::Measure => "measure",
            Phase::Verify => "verify",
            Phase::WriteBack => "write back",
        }
    }
}

/// Where one scheme's real time went, seconds: what the summary line after each scheme and
/// results.json's `phases_real_s` show (the ETA and the estimate before the run are sums of
/// these).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PhaseTimes {
    /// Creating the devices and writing the database image onto the data device (load or copy).
    pub set_up: f64,
    /// The unmeasured warm-up.
    pub warm_up: f64,
    /// The measured phase.
    pub measure: f64,
    /// The consistency check (record workloads; 0 without one).
    pub check: f64,
    /// The final write-back of dirty pages at shutdown.
    pub write_back: f64,
}

impl PhaseTimes {
    /// The sum of the phases.
    #[must_use]
    pub fn total(&self) -> f64 {
        self.set_up + self.warm_up + self.measure + self.check + self.write_back
    }

    fn add(&mut self, phase: Phase, seconds: f64) {
        let slot = match phase {
            Phase::Load | Phase::Copy => &mut self.set_up,
            Phase::WarmUp => &mut self.warm_up,
            Phase::Measure => &mut self.measure,
            Phase::Verify => &mut self.check,
            Phase::WriteBack => &mut self.write_back,
        };
        *slot += seconds;
    }

    /// `copy 2 s, warm-up 12 s, measure 48 s, check 95 s, write back 3 s` (phases that took
    /// under half a second left out; `load` for a synthetic workload's set-up).
    #[must_use]
    pub fn describe(&self, record: bool) -> String {
        let set_up = if record { "copy" } else { "load" };
        [
            (set_up, self.set_up),
            ("warm-up", self.warm_up),
            ("measure", self.measure),
            ("check", self.check),
            ("write back", self.write_back),
        ]
        .iter()
        .filter(|(_, seconds)| *seconds >= 0.5)
        .map(|(name, seconds)| format!("{name} {}", format_seconds(*seconds)))
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// A duration as the command line takes it: `500ms`, `3s`, `2.5s`, `1m30s`, `2h`; `0s`.
#[must_use]
pub fn format_duration(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms == 0 {
        return "0s".to_string();
    }
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let seconds = duration.as_secs_f64();
    if seconds < 60.0 {
        let text = format!("{seconds:.3}");
        return format!("{}s", text.trim_end_matches('0').trim_end_matches('.'));
    }
    let whole = duration.as_secs();
    [
        (whole / 3600, "h"),
        (whole % 3600 / 60, "m"),
        (whole % 60, "s"),
    ]
    .iter()
    .filter(|(value, _)| *value > 0)
    .fold(String::new(), |mut out, (value, unit)| {
        let _ = write!(out, "{value}{unit}");
        out
    })
}

/// `0.4 s`, `3 s`, `48 s`: one decimal under 10 s, whole seconds above.
#[must_use]
pub fn format_seconds(seconds: f64) -> String {
    let seconds = seconds.max(0.0);
    if seconds < 9.95 {
        format!("{seconds:.1} s")
    } else {
        format!("{seconds:.0} s")
    }
}

/// The ETA of the whole command, real seconds: the current scheme's remainder (expected time
/// less `elapsed_current_s`, at least `current_floor_s`) plus `schemes_after` expected times.
/// The expected time of a scheme is the mean of `finished_s` when schemes finished, else
/// `estimate_s`.
#[must_use]
pub fn eta_s(
    estimate_s: f64,
    finished_s: &[f64],
    schemes_after: usize,
    elapsed_current_s: f64,
    current_floor_s: f64,
) -> f64 {
    let expected = if finished_s.is_empty() {
        estimate_s
    } else {
        finished_s.iter().sum::<f64>() / finished_s.len() as f64
    };
    let current = (expected - elapsed_current_s).max(current_floor_s).max(0.0);
    current + expected * schemes_after as f64
}

/// The real seconds one scheme is expected to take before any finished: the longest of
/// [`super::estimate::SchemeEstimate`] (set-up, warm-up at its cap, measured phase, check).
#[must_use]
pub fn initial_estimate_s(config: &BenchConfig) -> f64 {
    super::estimate::SchemeEstimate::for_config(config).high_s()
}

/// The time scale a device string sets (`time_scale=` of an emulated device; 1 otherwise: the
/// CLI always sets it on emulated devices, and real devices run in real time).
#[must_use]
pub fn spec_time_scale(spec: &DeviceSpec) -> f64 {
    match spec {
        DeviceSpec::Emulated { options, .. } => options
            .iter()
            .find(|(key, _)| key == "time_scale")
            .and_then(|(_, value)| value.parse::<f64>().ok())
            .filter(|scale| scale.is_finite() && *scale > 0.0)
            .unwrap_or(1.0),
        _ => 1.0,
    }
}

/// `1h02m`, `3m05s`, `42s`.
#[must_use]
pub fn format_eta(seconds: f64) -> String {
    let total = seconds.max(0.0).round() as u64;
    let (h, m, s) = (total / 3600, total % 3600 / 60, total % 60);
    if h > 0 {
        format!("{h}h{m:02}m")
    } else if m > 0 {
        format!("{m}m{s:02}s")
    } else {
        format!("{s}s")
    }
}

/// The progress of a whole command: the finished schemes' real times and the current one.
#[derive(Debug)]
pub struct CommandProgress {
    schemes: usize,
    estimate_s: f64,
    finished_s: Vec<f64>,
    visible: bool,
    /// The measured phase, device ms (the bar's length: empty until it starts).
    duration_ms: u64,
    /// Runs after the current one that an earlier attempt kept (they take no time).
    kept_ahead: usize,
}

impl CommandProgress {
    /// Progress for `config`'s schemes (hidden without `config.progress`).
    #[must_use]
    pub fn new(config: &BenchConfig) -> CommandProgress {
        CommandProgress {
            schemes: config.schemes.len() * config.repeats.max(1),
            estimate_s: initial_estimate_s(config),
            finished_s: Vec::new(),
            visible: config.progress,
            duration_ms: u64::try_from(config.measure_max().as_millis()).unwrap_or(u64::MAX),
            kept_ahead: 0,
        }
    }

    /// Says how many runs still ahead were kept from an earlier attempt and will not run
    /// ([`super::continuation`]), so the ETA leaves them out.
    pub fn set_kept_ahead(&mut self, runs: usize) {
        self.kept_ahead = runs;
    }

    /// Starts scheme `index` (0-based) named `name`, in `phase`.
    #[must_use]
    pub fn start_scheme(&self, index: usize, name: &str, phase: Phase) -> SchemeProgress {
        let bar = if self.visible {
            let bar = ProgressBar::new(self.duration_ms);
            let style = ProgressStyle::with_template(
                "{prefix} [{bar:24}] {pos:>6}/{len:6} device ms {elapsed:>4} real  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style.progress_chars("=> "));
            bar.set_prefix(format!("scheme {}/{} {name}", index + 1, self.schemes));
            bar
        } else {
            ProgressBar::hidden()
        };
        let progress = SchemeProgress {
            bar,
            started: Instant::now(),
            phase_started: Some(Instant::now()),
            phases: PhaseTimes::default(),
            phase,
            expected_s: self.expected_s(),
            schemes_after: self
                .schemes
                .saturating_sub(index + 1)
                .saturating_sub(self.kept_ahead),
            finished_s: self.finished_s.clone(),
            estimate_s: self.estimate_s,
            floor_s: 0.0,
            detail: String::new(),
        };
        progress.redraw();
        progress
    }

    /// Records a finished scheme's real time (failed schemes are not counted: they say little
    /// about the others).
    pub fn finished(&mut self, real: Duration) {
        self.finished_s.push(real.as_secs_f64());
    }

    /// The expected real seconds of one scheme now.
    #[must_use]
    pub fn expected_s(&self) -> f64 {
        eta_s(self.estimate_s, &self.finished_s, 0, 0.0, 0.0)
    }
}

/// One scheme's progress line.
#[derive(Debug)]
pub struct SchemeProgress {
    bar: ProgressBar,
    started: Instant,
    /// When the current phase began; `None` once finished.
    phase_started: Option<Instant>,
    phases: PhaseTimes,
    phase: Phase,
    expected_s: f64,
    schemes_after: usize,
    finished_s: Vec<f64>,
    estimate_s: f64,
    floor_s: f64,
    detail: String,
}

impl SchemeProgress {
    /// The bar (the harness sets its length and position in the measured phase).
    #[must_use]
    pub fn bar(&self) -> &ProgressBar {
        &self.bar
    }

    /// Enters `phase`; `floor_s`: real seconds the scheme needs at least from now on.
    pub fn set_phase(&mut self, phase: Phase, floor_s: f64) {
        self.end_phase();
        self.phase = phase;
        self.floor_s = floor_s;
        self.detail.clear();
        self.redraw();
    }

    /// Updates the phase's detail (`1234 ops/s`) and what it still needs at least.
    pub fn update(&mut self, detail: String, floor_s: f64) {
        self.detail = detail;
        self.floor_s = floor_s;
        self.redraw();
    }

    /// The whole command's ETA now, real seconds.
    #[must_use]
    pub fn eta_s(&self) -> f64 {
        eta_s(
            self.estimate_s,
            &self.finished_s,
            self.schemes_after,
            self.started.elapsed().as_secs_f64(),
            self.floor_s,
        )
    }

    /// The real time since the scheme started.
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Removes the line (the caller prints the scheme's summary line) and ends the phase's
    /// clock.
    pub fn finish(&mut self) {
        self.end_phase();
        self.phase_started = None;
        self.bar.finish_and_clear();
    }

    /// The real time of each phase so far (the current one up to the last phase change or
    /// [`SchemeProgress::finish`]).
    #[must_use]
    pub fn phase_times(&self) -> PhaseTimes {
        self.phases
    }

    /// Adds the current phase's time so far; the next phase's clock starts now. After
    /// [`SchemeProgress::finish`] nothing is added.
    fn end_phase(&mut self) {
        let now = Instant::now();
        if let Some(started) = self.phase_started.replace(now) {
            self.phases
                .add(self.phase, now.duration_since(started).as_secs_f64());
        }
    }

    fn redraw(&self) {
        if self.bar.is_hidden() {
            return;
        }
        let detail = if self.detail.is_empty() {
            String::new()
        } else {
            format!(": {}", self.detail)
        };
        let basis = if self.finished_s.is_empty() {
            "estimated"
        } else {
            "from finished schemes"
        };
        self.bar.set_message(format!(
            "{}{detail} | command ETA {} ({basis}, ~{} per scheme)",
            self.phase.name(),
            format_eta(self.eta_s()),
            format_eta(self.expected_s),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_uses_the_estimate_until_schemes_finish() {
        // 3 schemes of ~10 s each, 4 s into the first: 6 + 2 x 10.
        assert!((eta_s(10.0, &[], 2, 4.0, 0.0) - 26.0).abs() < 1e-9);
        // The first took 20 s: the rest are expected to take as long.
        assert!((eta_s(10.0, &[20.0], 1, 5.0, 0.0) - 35.0).abs() < 1e-9);
        // Late in a scheme: never less than what its phase still needs.
        assert!((eta_s(10.0, &[], 0, 12.0, 3.0) - 3.0).abs() < 1e-9);
        assert!(eta_s(10.0, &[], 0, 12.0, 0.0).abs() < 1e-9);
    }

    #[test]
    fn formats_durations() {
        assert_eq!(format_eta(42.4), "42s");
        assert_eq!(format_eta(185.0), "3m05s");
        assert_eq!(format_eta(3720.0), "1h02m");
        assert_eq!(format_eta(-1.0), "0s");
    }

    #[test]
    fn durations_read_as_the_command_line_takes_them() {
        assert_eq!(format_duration(Duration::ZERO), "0s");
        assert_eq!(format_duration(Duration::from_millis(100)), "100ms");
        assert_eq!(format_duration(Duration::from_secs(3)), "3s");
        assert_eq!(format_duration(Duration::from_millis(2500)), "2.5s");
        assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(format_duration(Duration::from_hours(2)), "2h");
        assert_eq!(format_seconds(0.44), "0.4 s");
        assert_eq!(format_seconds(48.4), "48 s");
    }

    #[test]
    fn phase_times_name_the_set_up_by_workload() {
        let times = PhaseTimes {
            set_up: 1.4,
            warm_up: 32.0,
            measure: 50.0,
            check: 152.0,
            write_back: 0.2,
        };
        assert_eq!(
            times.describe(true),
            "copy 1.4 s, warm-up 32 s, measure 50 s, check 152 s"
        );
        assert!(times.describe(false).starts_with("load 1.4 s"));
        assert!((times.total() - 235.6).abs() < 1e-9);
    }

    #[test]
    fn phases_have_names() {
        let names: Vec<&str> = [
            Phase::Load,
            Phase::Copy,
            Phase::WarmUp,
            Phase::Measure,
            Phase::Verify,
            Phase::WriteBack,
        ]
        .iter()
        .map(|p| p.name())
        .collect();
        assert_eq!(
            names,
            ["load", "copy", "warm-up", "measure", "verify", "write back"]
        );
    }
}
