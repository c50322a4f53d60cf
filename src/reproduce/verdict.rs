//! Verdicts (issue 13 item 5, made strict by issue 21): each claim of an experiment against what
//! we measured, as reproduced, right direction only, not reproduced, or not evaluated, with the
//! numbers that decided it. docs/reproduce.md ("Verdicts") states the rules for readers.
//!
//! The measured side is a [`Measured`] table (points x schemes x metrics, each with its 95%
//! interval and per-repeat values under `--repeat N`, and the activity behind each metric)
//! built from a sweep's results (a bench run is one point named `-`). "Factor" is oriented so
//! that > 1 means `scheme` is better.
//!
//! Before any rule: a claim whose scheme, point or metric was not measured, whose compared
//! metric had no activity (no operations, no page misses or no evictions for read stalls, ...: a 0 that
//! measures nothing), whose factor is 0/0, or whose `requires` is unmet (the mechanism it is
//! about was not exercised) is "not evaluated", with the reason: never guessed. So is a claim
//! over a run whose timing error exceeds [`MAX_TIMING_ERROR`] (the host woke the emulated
//! device's threads too late for its times to be the model's).
//!
//! Noise: with repeats, a compared value has a 95% interval; "beyond the noise" means the
//! interval excludes the tie (a factor's lower end > 1; a change between two points larger than
//! `sqrt(a^2 + b^2)` of their half-widths). A single run has no noise estimate, so: a claim
//! with no stated size (ratio `at_least` 1, trend, peak) pointing the paper's way is "not
//! evaluated", and the "right direction only" fallback is never given (not reproduced).
//! - ratio: a factor <= 1 anywhere or above `at_most` is not reproduced; with intervals, a
//!   lower end <= 1 anywhere is not reproduced (a tie within the noise); else reproduced if at
//!   least `at_least` (and at most `at_most`) everywhere with the whole interval inside those
//!   ends, right direction only if not (a mean at the paper's size whose interval reaches past
//!   an end does not show the size beyond the noise). A single run is reproduced by a stated
//!   size (an `at_least` above 1) met everywhere.
//! - near: reproduced if within `tolerance` of the paper's value everywhere, with repeats its
//!   whole 95% interval (a mean within whose interval reaches beyond is not evaluated: too
//!   noisy to tell); right direction if a factor is on the paper's side of 1 beyond the noise
//!   (a paper value of 1 has no side).
//! - trend: first to last must move the paper's way beyond the noise; reproduced if every step
//!   does too (each step may go the wrong way by `tolerance`, relative, default 5%), right
//!   direction only if not.
//! - peak: the maximum must be interior and above both ends beyond the noise; reproduced if it
//!   is at `at`, right direction only if elsewhere.
//! - range: reproduced if within [min, max] at every point, with repeats the whole 95%
//!   interval (a mean inside whose interval reaches beyond is not evaluated: too noisy to tell).

use serde::Serialize;

use super::experiment::{Claim, ClaimKind, Requirement};
use crate::bench::report::RunResult;
use crate::bench::stats::{Interval, format_pm, ratio_interval};
use crate::sweep::SweepResults;
use crate::sweep::metrics::{self, METRICS, Metric};

/// The outcome of one claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The criterion holds.
    Reproduced,
    /// The effect points the paper's way beyond the run-to-run noise, but is smaller than the
    /// criterion.
    RightDirection,
    /// It does not hold (a tie within the noise included).
    NotReproduced,
    /// Something it needs was not measured: a scheme, a point, activity in the metric, the
    /// mechanism it is about, or (for a direction) the noise.
    NotEvaluated,
}

impl Outcome {
    /// The words used in reports.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Reproduced => "reproduced",
            Outcome::RightDirection => "right direction only",
            Outcome::NotReproduced => "not reproduced",
            Outcome::NotEvaluated => "not evaluated",
        }
    }
}

/// A claim's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The claim in words.
    pub claim: String,
    /// The criterion in words.
    pub criterion: String,
    /// The outcome.
    pub outcome: Outcome,
    /// The numbers that decided it.
    pub reason: String,
    /// The compared values, per point, with their intervals (empty when not evaluated).
    pub measured: Vec<Compared>,
}

/// One compared value of a claim: the scheme's metric, or its factor over the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compared {
    /// The point (`-` for a bench run).
    pub point: String,
    /// The value.
    pub value: f64,
    /// Half-width of its 95% confidence interval (`None`: a single run, or no pairs).
    pub ci95: Option<f64>,
    /// Repeats (pairs, for a factor) the interval is computed from (0 without an interval).
    pub n: usize,
}

/// What a run measured: per point, per scheme, every metric.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// The points, in run order (`-` for a bench run).
    pub points: Vec<String>,
    /// (point index, scheme, metric id, value).
    pub values: Vec<(usize, String, &'static str, f64)>,
    /// (point index, scheme, metric id, 95% interval) with `--repeat N`.
    pub intervals: Vec<(usize, String, &'static str, Interval)>,
    /// (point index, scheme, metric id, each repeat's value) with `--repeat N`.
    pub repeats: Vec<(usize, String, &'static str, Vec<Option<f64>>)>,
    /// (point index, scheme, the counts behind the metrics); a scheme without an entry is not
    /// checked for activity.
    pub activity: Vec<(usize, String, Activity)>,
    /// The values come from a deterministic timing model in virtual time (a co-run probe with
    /// `--model`): repeats give the same numbers, so a single run is exact (an interval of
    /// width 0) rather than of unknown noise.
    pub exact: bool,
}

/// The counts a run's metrics are computed from, summed over its completed repeats: a metric
/// whose count is 0 measured nothing (a read-stall ratio of 0 without misses).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Activity {
    /// Operations (transactions) completed in the measured phase.
    pub ops: f64,
    /// Page misses.
    pub misses: f64,
    /// Pages evicted (unmapped to free their frames). A read stall needs a victim: a run whose
    /// pool never filled evicted nothing, and its misses, all served by never-used frames, could
    /// not stall.
    pub evictions: f64,
    /// Page requests (hits + misses).
    pub requests: f64,
    /// Page writes (synchronous and background).
    pub page_writes: f64,
    /// The largest timing error of its completed repeats (`host_lateness.error_share`: the
    /// host's mean wake-up lateness over the device's reference wait,
    /// [`crate::bench::lateness::Lateness::judged_error`]); above
    /// [`MAX_TIMING_ERROR`] the device times are the host's, not the model's.
    pub timing_error: f64,
}

/// A run whose timing error exceeds this (10%) measured the host rather than the emulated
/// device: its claims are not evaluated (defined beside the bench's lateness probe, whose
/// automatic time scale aims under it).
pub use crate::bench::lateness::MAX_TIMING_ERROR;

impl Activity {
    /// The counts of `run` (of its completed repeats, with `--repeat N`).
    #[must_use]
    pub fn of(run: &RunResult) -> Activity {
        let one = |run: &RunResult| {
            let pool = &run.pool_stats;
            Activity {
                ops: run.ops as f64,
                misses: pool.misses as f64,
                evictions: pool.evictions as f64,
                requests: (pool.hits + pool.misses) as f64,
                page_writes: (pool.sync_replacement_writes
                    + pool.sync_recoverability_writes
                    + pool.lru_flushes
                    + pool.flush_list_flushes) as f64,
                timing_error: run
                    .host_lateness
                    .as_ref()
                    .map_or(0.0, |l| l.judged_error(run.latency_ms.mean)),
            }
        };
        match &run.repeats {
            Some(repeats) => repeats
                .completed()
                .map(one)
                .fold(Activity::default(), |a, b| Activity {
                    ops: a.ops + b.ops,
                    misses: a.misses + b.misses,
                    evictions: a.evictions + b.evictions,
                    requests: a.requests + b.requests,
                    page_writes: a.page_writes + b.page_writes,
                    timing_error: a.timing_error.max(b.timing_error),
                }),
            None => one(run),
        }
    }

    /// The count `metric` is computed from, and its name.
    #[must_use]
    pub fn behind(&self, metric: &str) -> (f64, &'static str) {
        match metric {
            "read_stall_pct" if self.misses <= 0.0 => (self.misses, "page misses"),
            "read_stall_pct" => (
                self.evictions,
                "evictions (its pool never filled, so no miss could stall)",
            ),
            "hit_pct" | "miss_pct" => (self.requests, "page requests"),
            "sync_write_pct" => (self.page_writes, "page writes"),
            _ => (self.ops, "operations"),
        }
    }
}

impl Measured {
    /// Reads every metric of every run of `sweep`.
    #[must_use]
    pub fn from_sweep(sweep: &SweepResults) -> Measured {
        let mut measured = Measured {
            points: sweep.points.iter().map(|p| p.value.clone()).collect(),
            ..Measured::default()
        };
        for series in &sweep.series {
            let scheme = &series.scheme;
            for (index, row) in series.rows.iter().enumerate() {
                for (metric, value) in &row.metrics {
                    measured
                        .values
                        .push((index, scheme.clone(), metric, *value));
                }
                for (metric, interval) in &row.intervals {
                    measured
                        .intervals
                        .push((index, scheme.clone(), metric, *interval));
                }
                let Some((run, first)) = sweep.run_at(index, scheme) else {
                    continue;
                };
                measured
                    .activity
                    .push((index, scheme.clone(), Activity::of(run)));
                for metric in METRICS {
                    let values = metrics::repeat_values(metric, run, first);
                    if !values.is_empty() {
                        measured
                            .repeats
                            .push((index, scheme.clone(), metric.id, values));
                    }
                }
            }
        }
        measured
    }

    /// A value's 95% interval, if measured with repeats.
    #[must_use]
    pub fn interval(&self, point: &str, scheme: &str, metric: &str) -> Option<Interval> {
        let index = self.points.iter().position(|p| p == point)?;
        self.intervals
            .iter()
            .find(|(i, s, m, _)| *i == index && s == scheme && *m == metric)
            .map(|(_, _, _, interval)| *interval)
    }

    /// Each repeat's value (`None`: that repeat failed), if measured with repeats.
    #[must_use]
    pub fn repeat_values(&self, point: &str, scheme: &str, metric: &str) -> Option<&[Option<f64>]> {
        let index = self.points.iter().position(|p| p == point)?;
        self.repeats
            .iter()
            .find(|(i, s, m, _)| *i == index && s == scheme && *m == metric)
            .map(|(_, _, _, values)| values.as_slice())
    }

    /// The activity behind `metric` of `scheme` at `point`, if recorded: (count, its name).
    #[must_use]
    pub fn activity(&self, point: &str, scheme: &str, metric: &str) -> Option<(f64, &'static str)> {
        self.activity_of(point, scheme)
            .map(|activity| activity.behind(metric))
    }

    /// The counts of `scheme`'s runs at `point`, if recorded.
    #[must_use]
    pub fn activity_of(&self, point: &str, scheme: &str) -> Option<&Activity> {
        let index = self.points.iter().position(|p| p == point)?;
        self.activity
            .iter()
            .find(|(i, s, _)| *i == index && s == scheme)
            .map(|(_, _, activity)| activity)
    }

    /// A value, if measured.
    #[must_use]
    pub fn get(&self, point: &str, scheme: &str, metric: &str) -> Option<f64> {
        let index = self.points.iter().position(|p| p == point)?;
        self.values
            .iter()
            .find(|(i, s, m, _)| *i == index && s == scheme && *m == metric)
            .map(|(_, _, _, v)| *v)
    }
}

fn fmt(value: f64) -> String {
    if value.is_infinite() {
        "inf".into()
    } else if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.3}")
    }
}

/// `scheme`'s advantage over `base`: > 1 means better (`higher` per the claim or the metric);
/// `None` for 0/0, which is no factor at all (nothing to compare).
fn factor(higher: bool, value: f64, base: f64) -> Option<f64> {
    let (num, den) = if higher { (value, base) } else { (base, value) };
    if den == 0.0 {
        (num != 0.0).then_some(f64::INFINITY)
    } else {
        Some(num / den)
    }
}

/// Judges every claim.
#[must_use]
pub fn judge_all(claims: &[Claim], measured: &Measured) -> Vec<Verdict> {
    claims.iter().map(|claim| judge(claim, measured)).collect()
}

/// Judges one claim.
#[must_use]
pub fn judge(claim: &Claim, measured: &Measured) -> Verdict {
    let verdict = |outcome, criterion: String, reason: String| Verdict {
        claim: claim.text.clone(),
        criterion,
        outcome,
        reason,
        measured: Vec::new(),
    };
    let Ok(metric) = metrics::metric(&claim.metric) else {
        return verdict(
            Outcome::NotEvaluated,
            String::new(),
            format!("unknown metric `{}`", claim.metric),
        );
    };
    let points: Vec<String> = if claim.points.is_empty() {
        measured.points.clone()
    } else {
        claim.points.clone()
    };
    if let Err(why) = requirements_met(claim, measured, &points) {
        return verdict(Outcome::NotEvaluated, criterion(claim), why);
    }
    let series = match series(claim, metric, measured, &points) {
        Ok(series) => series,
        Err(why) => return verdict(Outcome::NotEvaluated, criterion(claim), why),
    };
    let (outcome, mut reason) = match claim.kind {
        ClaimKind::Ratio => judge_ratio(claim, &series),
        ClaimKind::Near => judge_near(claim, &series),
        ClaimKind::Trend => judge_trend(claim, &series),
        ClaimKind::Peak => judge_peak(claim, &series),
        ClaimKind::Range => judge_range(claim, &series),
    };
    if measured.exact {
        reason.push_str(EXACT_NOTE);
    }
    Verdict {
        measured: series,
        ..verdict(outcome, criterion(claim), reason)
    }
}

/// Every `requires` of `claim` at every point: one of its schemes reaches `min`.
fn requirements_met(claim: &Claim, measured: &Measured, points: &[String]) -> Result<(), String> {
    for requirement in &claim.requires {
        for point in points {
            requirement_met(requirement, measured, point)?;
        }
    }
    Ok(())
}

fn requirement_met(
    requirement: &Requirement,
    measured: &Measured,
    point: &str,
) -> Result<(), String> {
    let values: Vec<(String, f64)> = requirement
        .schemes
        .iter()
        .filter_map(|scheme| {
            measured
                .get(point, scheme, &requirement.metric)
                .map(|v| (scheme.clone(), v))
        })
        .collect();
    if values.is_empty() {
        return Err(format!(
            "no {} for {} at {point}, which the claim requires",
            requirement.metric,
            requirement.schemes.join(", ")
        ));
    }
    if values.iter().any(|(_, v)| *v >= requirement.min) {
        return Ok(());
    }
    let shown: Vec<String> = values
        .iter()
        .map(|(scheme, v)| format!("{scheme} {}", fmt(*v)))
        .collect();
    Err(format!(
        "mechanism not exercised: {} {} at {point}, under {}: {}",
        requirement.metric,
        shown.join(", "),
        fmt(requirement.min),
        requirement.why
    ))
}

/// `Err` naming the scheme when `metric` had no activity behind it at `point`.
fn active(
    measured: &Measured,
    point: &str,
    scheme: &str,
    metric: &str,
    value: f64,
) -> Result<(), String> {
    match measured.activity(point, scheme, metric) {
        Some((count, what)) if count <= 0.0 => Err(format!(
            "no activity: {scheme} had no {what} at {point}, so its {metric} of {} measures nothing",
            fmt(value)
        )),
        _ => timely(measured, point, scheme),
    }
}

/// `Err` (not evaluated) when `scheme`'s runs at `point` had a timing error above
/// [`MAX_TIMING_ERROR`].
fn timely(measured: &Measured, point: &str, scheme: &str) -> Result<(), String> {
    let worst = measured
        .activity_of(point, scheme)
        .map_or(0.0, |activity| activity.timing_error);
    if worst > MAX_TIMING_ERROR {
        Err(format!(
            "host too slow: {scheme}'s runs at {point} woke threads late by {:.0}% of the \
             device's reference wait (above {:.0}%), so they measured this host, not the \
             emulated device (a higher --model-cores or a faster host)",
            worst * 100.0,
            MAX_TIMING_ERROR * 100.0
        ))
    } else {
        Ok(())
    }
}

/// The compared quantity at each point: the scheme's value, or its factor over the baseline,
/// with its interval; `Err` (not evaluated) for a value not measured, without activity, or a
/// factor of 0/0.
fn series(
    claim: &Claim,
    metric: &Metric,
    measured: &Measured,
    points: &[String],
) -> Result<Vec<Compared>, String> {
    let mut out = Vec::with_capacity(points.len());
    for point in points {
        let value = measured
            .get(point, &claim.scheme, metric.id)
            .ok_or_else(|| format!("no {} for {} at {point}", metric.id, claim.scheme))?;
        active(measured, point, &claim.scheme, metric.id, value)?;
        let compared = if claim.baseline.is_some() || claim.baseline_point.is_some() {
            let base_scheme = claim.baseline.as_deref().unwrap_or(&claim.scheme);
            let base_point = claim.baseline_point.as_deref().unwrap_or(point);
            let base = measured
                .get(base_point, base_scheme, metric.id)
                .ok_or_else(|| format!("no {} for {base_scheme} at {base_point}", metric.id))?;
            active(measured, base_point, base_scheme, metric.id, base)?;
            let higher = match claim.prefer.as_deref() {
                Some("higher") => true,
                Some("lower") => false,
                _ => metric.higher_is_better,
            };
            let spread = factor_interval(
                higher,
                measured.repeat_values(point, &claim.scheme, metric.id),
                measured.repeat_values(base_point, base_scheme, metric.id),
            );
            let value = factor(higher, value, base).ok_or_else(|| {
                format!(
                    "0/0: {} and {base_scheme} at {base_point} both measured 0 {}, no factor",
                    claim.scheme, metric.id
                )
            })?;
            Compared {
                point: point.clone(),
                value,
                ci95: spread.and_then(|i| i.ci95),
                n: spread.map_or(0, |i| i.n),
            }
        } else {
            let spread = measured.interval(point, &claim.scheme, metric.id);
            Compared {
                point: point.clone(),
                value,
                ci95: spread.and_then(|i| i.ci95),
                n: spread.map_or(0, |i| i.n),
            }
        };
        out.push(exact_if(measured.exact, compared));
    }
    if out.is_empty() {
        return Err("no point was measured".into());
    }
    Ok(out)
}

/// `compared` with an interval of width 0 when the measurement is exact and has none.
fn exact_if(exact: bool, compared: Compared) -> Compared {
    if exact && compared.ci95.is_none() {
        Compared {
            ci95: Some(0.0),
            n: compared.n.max(1),
            ..compared
        }
    } else {
        compared
    }
}

/// The factor's interval over the repeat pairs (repeat k of the scheme over repeat k of the
/// baseline, oriented as [`factor`]); `None` without repeats on both sides.
fn factor_interval(
    higher: bool,
    values: Option<&[Option<f64>]>,
    bases: Option<&[Option<f64>]>,
) -> Option<Interval> {
    let pairs: Vec<(f64, f64)> = values?
        .iter()
        .zip(bases?)
        .filter_map(|(value, base)| {
            let (value, base) = ((*value)?, (*base)?);
            Some(if higher { (value, base) } else { (base, value) })
        })
        .collect();
    ratio_interval(&pairs)
}

fn subject(claim: &Claim) -> String {
    match (&claim.baseline, &claim.baseline_point) {
        (Some(base), Some(point)) => {
            format!("{} {} vs {base} at {point}", claim.scheme, claim.metric)
        }
        (Some(base), None) => format!("{} vs {base} on {}", claim.scheme, claim.metric),
        (None, Some(point)) => format!("{} {} vs its value at {point}", claim.scheme, claim.metric),
        (None, None) => format!("{} {}", claim.scheme, claim.metric),
    }
}

/// The criterion in words.
#[must_use]
pub fn criterion(claim: &Claim) -> String {
    let what = subject(claim);
    let points = if claim.points.is_empty() {
        "every point".to_string()
    } else {
        claim.points.join(", ")
    };
    match claim.kind {
        ClaimKind::Ratio => match claim.at_most {
            Some(at_most) => format!(
                "{what}: better by a factor in [{}, {}] at {points}",
                fmt(claim.at_least.unwrap_or(1.0)),
                fmt(at_most)
            ),
            None => format!(
                "{what}: better by a factor >= {} at {points}",
                fmt(claim.at_least.unwrap_or(1.0))
            ),
        },
        ClaimKind::Near => format!(
            "{what}: within {:.0}% of {} at {points}",
            claim.tolerance.unwrap_or(0.0) * 100.0,
            fmt(claim.value.unwrap_or(0.0))
        ),
        ClaimKind::Trend => format!(
            "{what}: {} over {points}",
            claim.direction.as_deref().unwrap_or("?")
        ),
        ClaimKind::Peak => format!("{what}: largest at {}", claim.at.as_deref().unwrap_or("?")),
        ClaimKind::Range => format!(
            "{what}: in [{}, {}] at {points}",
            claim.min.map_or_else(|| "-inf".into(), fmt),
            claim.max.map_or_else(|| "inf".into(), fmt)
        ),
    }
}

/// A value with its interval, as [`fmt`] rounds it: `2.860 ±0.050`, `812 ±23`.
fn fmt_compared(compared: &Compared) -> String {
    let value = compared.value;
    if value.is_infinite() {
        return "inf".into();
    }
    let decimals = if value.abs() >= 100.0 { 0 } else { 3 };
    format_pm(value, compared.ci95, decimals)
}

fn listing(series: &[Compared]) -> String {
    series
        .iter()
        .map(|compared| {
            if compared.point == "-" {
                fmt_compared(compared)
            } else {
                format!("{}: {}", compared.point, fmt_compared(compared))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a compared value's 95% interval ends, below and above (`None`: no interval).
fn ends(compared: &Compared) -> Option<(f64, f64)> {
    compared
        .ci95
        .filter(|half| half.is_finite())
        .map(|half| (compared.value - half, compared.value + half))
}

/// Whether every compared value has an interval (repeats on both sides of a factor).
fn has_intervals(series: &[Compared]) -> bool {
    series.iter().all(|c| ends(c).is_some())
}

/// The reason's note for an exact measurement ([`Measured::exact`]).
const EXACT_NOTE: &str = "; a deterministic timing model in virtual time: no run-to-run noise";

/// The reason's note for a single run.
const SINGLE_RUN: &str =
    "single run: no noise estimate (run with --repeat 2 or more for an interval)";

/// The half-width of the difference of two independent compared values (different points):
/// `sqrt(a^2 + b^2)`; `None` unless both have an interval.
fn difference_noise(a: &Compared, b: &Compared) -> Option<f64> {
    Some(a.ci95?.hypot(b.ci95?)).filter(|half| half.is_finite())
}

fn judge_ratio(claim: &Claim, series: &[Compared]) -> (Outcome, String) {
    let at_least = claim.at_least.unwrap_or(1.0);
    let reason = format!("measured factor {}", listing(series));
    if let Some(at_most) = claim.at_most
        && let Some(over) = series.iter().find(|c| c.value > at_most)
    {
        return (
            Outcome::NotReproduced,
            format!(
                "{reason}: above the paper's upper end {} at {}",
                fmt(at_most),
                over.point
            ),
        );
    }
    if let Some(tie) = series.iter().find(|c| c.value <= 1.0) {
        return (
            Outcome::NotReproduced,
            format!("{reason}: not better at {} (a tie is no gain)", tie.point),
        );
    }
    let short = series.iter().find(|c| c.value < at_least);
    if !has_intervals(series) {
        return match short {
            Some(short) => (
                Outcome::NotReproduced,
                format!(
                    "{reason}: below {} at {}; {SINGLE_RUN}, so not called right direction",
                    fmt(at_least),
                    short.point
                ),
            ),
            None if at_least > 1.0 => (Outcome::Reproduced, format!("{reason}; {SINGLE_RUN}")),
            None => (
                Outcome::NotEvaluated,
                format!("{reason}: better, but {SINGLE_RUN}, so a gain cannot be told from a tie"),
            ),
        };
    }
    if let Some((point, low)) = first_interval_reaching(series, |low| low <= 1.0) {
        return (
            Outcome::NotReproduced,
            format!(
                "{reason}: within the noise of a tie at {point} (95% interval down to {})",
                fmt(low)
            ),
        );
    }
    if short.is_none()
        && let Some(edge) = size_within_noise(series, at_least, claim.at_most)
    {
        return (Outcome::RightDirection, format!("{reason}: {edge}"));
    }
    match short {
        None => (Outcome::Reproduced, reason),
        Some(short) => (
            Outcome::RightDirection,
            format!(
                "{reason}: better beyond the noise, but below {} at {}",
                fmt(at_least),
                short.point
            ),
        ),
    }
}

/// The first point whose 95% interval's lower end satisfies `reaches` (the tie check's
/// "down to 1" and the edge note's "below the paper's lower end"), with that end.
fn first_interval_reaching(
    series: &[Compared],
    reaches: impl Fn(f64) -> bool,
) -> Option<(&String, f64)> {
    series.iter().find_map(|c| {
        ends(c)
            .filter(|(low, _)| reaches(*low))
            .map(|(low, _)| (&c.point, low))
    })
}

/// A met size whose 95% interval still reaches beyond one of the paper's ends (below
/// `at_least` when it states a size above 1, above `at_most`): the mean holds the paper's size,
/// the noise does not rule out another, so the size is not shown (issue 21: a range criterion
/// has both ends, and each is judged beyond the noise). `None` when every interval lies inside.
fn size_within_noise(series: &[Compared], at_least: f64, at_most: Option<f64>) -> Option<String> {
    if at_least > 1.0
        && let Some((point, low)) = first_interval_reaching(series, |low| low < at_least)
    {
        return Some(format!(
            "better beyond the noise and at least {} on the mean, but the 95% interval reaches \
             down to {} at {point}: the paper's size is not shown beyond the noise",
            fmt(at_least),
            fmt(low)
        ));
    }
    let at_most = at_most?;
    series.iter().find_map(|c| {
        ends(c).filter(|(_, high)| *high > at_most).map(|(_, high)| {
            format!(
                "better beyond the noise and at most {} on the mean, but the 95% interval reaches \
                 up to {} at {}: the paper's size is not shown beyond the noise",
                fmt(at_most),
                fmt(high),
                c.point
            )
        })
    })
}

fn judge_near(claim: &Claim, series: &[Compared]) -> (Outcome, String) {
    let paper = claim.value.unwrap_or(0.0);
    let tolerance = claim.tolerance.unwrap_or(0.0);
    let relative = claim.baseline.is_some() || claim.baseline_point.is_some();
    let reason = format!("paper {}, measured {}", fmt(paper), listing(series));
    let close = |v: f64| {
        if paper == 0.0 {
            v.abs() <= tolerance
        } else {
            ((v - paper) / paper).abs() <= tolerance
        }
    };
    if series.iter().all(|c| close(c.value)) {
        // With repeats, the interval must lie within the band too: a mean inside it whose
        // interval reaches beyond cannot tell "within the tolerance" from "not".
        let spills = series
            .iter()
            .find(|c| ends(c).is_some_and(|(low, high)| !(close(low) && close(high))));
        return match spills {
            Some(wide) => (
                Outcome::NotEvaluated,
                format!(
                    "{reason}: within {:.0}% on the mean, but its 95% interval at {} reaches \
                     beyond it: too noisy to tell",
                    tolerance * 100.0,
                    wide.point
                ),
            ),
            None => (Outcome::Reproduced, reason),
        };
    }
    // Right direction: a factor on the paper's side of 1, beyond the noise. A paper value of
    // 1 ("about the same") has no side.
    if !relative || (paper - 1.0).abs() < 1e-12 {
        return (
            Outcome::NotReproduced,
            format!("{reason}: not within {:.0}%", tolerance * 100.0),
        );
    }
    let above = paper > 1.0;
    let same_side = |v: f64| if above { v > 1.0 } else { v < 1.0 };
    if !series.iter().all(|c| same_side(c.value)) {
        return (
            Outcome::NotReproduced,
            format!("{reason}: on the other side of 1 from the paper"),
        );
    }
    if !has_intervals(series) {
        return (
            Outcome::NotReproduced,
            format!(
                "{reason}: on the paper's side of 1, not within {:.0}%; {SINGLE_RUN}, so not \
                 called right direction",
                tolerance * 100.0
            ),
        );
    }
    let beyond = |c: &Compared| {
        ends(c).is_some_and(|(low, high)| if above { low > 1.0 } else { high < 1.0 })
    };
    if let Some(tie) = series.iter().find(|c| !beyond(c)) {
        return (
            Outcome::NotReproduced,
            format!("{reason}: within the noise of 1 at {}", tie.point),
        );
    }
    (
        Outcome::RightDirection,
        format!(
            "{reason}: on the paper's side of 1 beyond the noise, not within {:.0}%",
            tolerance * 100.0
        ),
    )
}

fn judge_trend(claim: &Claim, series: &[Compared]) -> (Outcome, String) {
    let rising = claim.direction.as_deref() == Some("increasing");
    let slack = claim.tolerance.unwrap_or(0.05);
    let reason = format!("measured {}", listing(series));
    if series.len() < 2 {
        return (
            Outcome::NotEvaluated,
            format!("{reason}: fewer than two points"),
        );
    }
    let step_ok = |a: f64, b: f64| {
        if rising {
            b >= a * (1.0 - slack)
        } else {
            b <= a * (1.0 + slack)
        }
    };
    let steps_ok = series.windows(2).all(|w| step_ok(w[0].value, w[1].value));
    let (first, last) = (&series[0], &series[series.len() - 1]);
    let change = if rising {
        last.value - first.value
    } else {
        first.value - last.value
    };
    if change <= 0.0 {
        return (
            Outcome::NotReproduced,
            format!("{reason}: first to last not the paper's way"),
        );
    }
    match difference_noise(first, last) {
        None if steps_ok => (
            Outcome::NotEvaluated,
            format!(
                "{reason}: the paper's way, but {SINGLE_RUN}, so a trend cannot be told from a flat line"
            ),
        ),
        None => (
            Outcome::NotReproduced,
            format!(
                "{reason}: a step goes the wrong way; {SINGLE_RUN}, so not called right direction"
            ),
        ),
        Some(noise) if change <= noise => (
            Outcome::NotReproduced,
            format!(
                "{reason}: first to last changes by {}, within the noise (±{})",
                fmt(change),
                fmt(noise)
            ),
        ),
        Some(_) if steps_ok => (Outcome::Reproduced, reason),
        Some(_) => (
            Outcome::RightDirection,
            format!("{reason}: first to last the right way beyond the noise, not at every step"),
        ),
    }
}

fn judge_peak(claim: &Claim, series: &[Compared]) -> (Outcome, String) {
    let at = claim.at.as_deref().unwrap_or("");
    let Some((peak_index, peak)) = series
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.value.total_cmp(&b.1.value))
    else {
        return (Outcome::NotEvaluated, "no point".into());
    };
    let peak_point = &peak.point;
    let reason = format!("measured {}; largest at {peak_point}", listing(series));
    if peak_index == 0 || peak_index + 1 == series.len() {
        return (
            Outcome::NotReproduced,
            format!("{reason}: largest at an end, no peak"),
        );
    }
    let (first, last) = (&series[0], &series[series.len() - 1]);
    let rise_and_fall = difference_noise(peak, first)
        .zip(difference_noise(peak, last))
        .map(|(up, down)| peak.value - first.value > up && peak.value - last.value > down);
    match rise_and_fall {
        None if peak_point == at => (
            Outcome::NotEvaluated,
            format!("{reason}: {SINGLE_RUN}, so a peak cannot be told from a plateau"),
        ),
        None => (
            Outcome::NotReproduced,
            format!(
                "{reason}: peaks elsewhere than {at}; {SINGLE_RUN}, so not called right direction"
            ),
        ),
        Some(false) => (
            Outcome::NotReproduced,
            format!("{reason}: the rise or the fall is within the noise"),
        ),
        Some(true) if peak_point == at => match tied_with_peak(peak, series) {
            None => (Outcome::Reproduced, reason),
            Some(tie) => (
                Outcome::RightDirection,
                format!(
                    "{reason}: rises then falls beyond the noise, but {at} cannot be told from {} \
                     (within the noise), so the peak is not placed",
                    tie.point
                ),
            ),
        },
        Some(true) => (
            Outcome::RightDirection,
            format!("{reason}: rises then falls beyond the noise, but peaks elsewhere than {at}"),
        ),
    }
}

/// Another point whose value is within the noise of the peak's: the peak is then a plateau
/// over both, and its place is not shown.
fn tied_with_peak<'a>(peak: &Compared, series: &'a [Compared]) -> Option<&'a Compared> {
    series.iter().find(|other| {
        other.point != peak.point
            && difference_noise(peak, other).is_some_and(|noise| peak.value - other.value <= noise)
    })
}

fn judge_range(claim: &Claim, series: &[Compared]) -> (Outcome, String) {
    let inside = |v: f64| claim.min.is_none_or(|m| v >= m) && claim.max.is_none_or(|m| v <= m);
    let reason = format!("measured {}", listing(series));
    if let Some(out) = series.iter().find(|c| !inside(c.value)) {
        return (
            Outcome::NotReproduced,
            format!("{reason}: outside at {}", out.point),
        );
    }
    // With repeats, the interval must lie within the range too (as for `near`): a mean inside
    // whose interval reaches beyond cannot tell "within the paper's range" from "not".
    let spills = series
        .iter()
        .find(|c| ends(c).is_some_and(|(low, high)| !(inside(low) && inside(high))));
    match spills {
        Some(wide) => (
            Outcome::NotEvaluated,
            format!(
                "{reason}: inside on the mean, but its 95% interval at {} reaches beyond the \
                 range: too noisy to tell",
                wide.point
            ),
        ),
        None => (Outcome::Reproduced, reason),
    }
}
