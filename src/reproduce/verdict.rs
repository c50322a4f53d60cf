//! Verdicts (issue 13 item 5): each claim of an experiment against what we measured, as
//! reproduced, right direction only, or not reproduced, with the numbers that decided it.
//!
//! The measured side is a [`Measured`] table (points x schemes x metrics) built from a sweep's
//! results (a bench run is one point named `-`). Rules, per claim kind (see
//! [`super::experiment::ClaimKind`]); "factor" is oriented so that > 1 means `scheme` is better:
//! - ratio: reproduced if the factor >= `at_least` at every checked point; right direction if
//!   it is > 1 at every point but below `at_least` somewhere; else not reproduced.
//! - near: reproduced if within `tolerance` of the paper's value at every point; right
//!   direction if, for a factor, ours is on the same side of 1 as the paper's; else not.
//! - trend: reproduced if every step moves the right way (each step may go the wrong way by at
//!   most `tolerance`, relative, default 5%); right direction if only the last point is beyond
//!   the first the right way; else not.
//! - peak: reproduced if the maximum is at `at`; right direction if it is at another interior
//!   point (it rises, then falls); else not.
//! - range: reproduced if within [min, max] at every point; else not.
//!
//! A claim whose scheme, point or metric was not measured (e.g. left out of a `--quick` run) is
//! "not evaluated", with the reason: never guessed.
//!
//! Intervals (`--repeat N`, issue 19 item 6): each compared value carries its 95% confidence
//! interval ([`Compared`], in [`Verdict::measured`] and printed beside the value, `2.860
//! ±0.050`): a metric's from [`crate::sweep::metrics::interval`]; a factor over a baseline the
//! delta-method interval of the ratio over the repeat pairs (repeat k of the scheme and of the
//! baseline). The rules above judge the values alone: the intervals are reported, not used.

use serde::Serialize;

use super::experiment::{Claim, ClaimKind};
use crate::bench::stats::{Interval, format_pm, ratio_interval};
use crate::sweep::SweepResults;
use crate::sweep::metrics::{self, METRICS, Metric};

/// The outcome of one claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The criterion holds.
    Reproduced,
    /// The effect points the paper's way, but smaller than the criterion.
    RightDirection,
    /// It does not hold.
    NotReproduced,
    /// Something it needs was not measured.
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

/// `scheme`'s advantage over `base`: > 1 means better (`higher` per the claim or the metric).
fn factor(higher: bool, value: f64, base: f64) -> f64 {
    let (num, den) = if higher { (value, base) } else { (base, value) };
    if den == 0.0 {
        if num == 0.0 { 1.0 } else { f64::INFINITY }
    } else {
        num / den
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
    let series = match series(claim, metric, measured, &points) {
        Ok(series) => series,
        Err(why) => return verdict(Outcome::NotEvaluated, criterion(claim), why),
    };
    let (outcome, reason) = match claim.kind {
        ClaimKind::Ratio => judge_ratio(claim, &series),
        ClaimKind::Near => judge_near(claim, &series),
        ClaimKind::Trend => judge_trend(claim, &series),
        ClaimKind::Peak => judge_peak(claim, &series),
        ClaimKind::Range => judge_range(claim, &series),
    };
    Verdict {
        measured: series,
        ..verdict(outcome, criterion(claim), reason)
    }
}

/// The compared quantity at each point: the scheme's value, or its factor over the baseline,
/// with its interval.
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
        let compared = if claim.baseline.is_some() || claim.baseline_point.is_some() {
            let base_scheme = claim.baseline.as_deref().unwrap_or(&claim.scheme);
            let base_point = claim.baseline_point.as_deref().unwrap_or(point);
            let base = measured
                .get(base_point, base_scheme, metric.id)
                .ok_or_else(|| format!("no {} for {base_scheme} at {base_point}", metric.id))?;
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
            Compared {
                point: point.clone(),
                value: factor(higher, value, base),
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
        out.push(compared);
    }
    if out.is_empty() {
        return Err("no point was measured".into());
    }
    Ok(out)
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
        ClaimKind::Ratio => format!(
            "{what}: better by a factor >= {} at {points}",
            fmt(claim.at_least.unwrap_or(1.0))
        ),
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

fn judge_ratio(claim: &Claim, series: &[Compared]) -> (Outcome, String) {
    let at_least = claim.at_least.unwrap_or(1.0);
    let reason = format!("measured factor {}", listing(series));
    if series.iter().all(|c| c.value >= at_least) {
        (Outcome::Reproduced, reason)
    } else if series.iter().all(|c| c.value > 1.0) {
        (
            Outcome::RightDirection,
            format!("{reason}: better, but below {}", fmt(at_least)),
        )
    } else {
        (
            Outcome::NotReproduced,
            format!("{reason}: not better everywhere"),
        )
    }
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
        (Outcome::Reproduced, reason)
    } else if relative
        && series
            .iter()
            .all(|c| (c.value - 1.0).signum() == (paper - 1.0).signum())
    {
        (
            Outcome::RightDirection,
            format!("{reason}: same side of 1 as the paper, not within the tolerance"),
        )
    } else {
        (Outcome::NotReproduced, reason)
    }
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
    let (first, last) = (series[0].value, series[series.len() - 1].value);
    let overall = if rising { last > first } else { last < first };
    if steps_ok && overall {
        (Outcome::Reproduced, reason)
    } else if overall {
        (
            Outcome::RightDirection,
            format!("{reason}: first to last the right way, not at every step"),
        )
    } else {
        (Outcome::NotReproduced, reason)
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
    if peak_point == at {
        (Outcome::Reproduced, reason)
    } else if peak_index > 0 && peak_index + 1 < series.len() {
        (
            Outcome::RightDirection,
            format!("{reason}: rises then falls, but peaks elsewhere than {at}"),
        )
    } else {
        (Outcome::NotReproduced, reason)
    }
}

fn judge_range(claim: &Claim, series: &[Compared]) -> (Outcome, String) {
    let inside = |v: f64| claim.min.is_none_or(|m| v >= m) && claim.max.is_none_or(|m| v <= m);
    let reason = format!("measured {}", listing(series));
    if series.iter().all(|c| inside(c.value)) {
        (Outcome::Reproduced, reason)
    } else {
        (Outcome::NotReproduced, reason)
    }
}
