//! Re-judging a saved run (issue 21): `flashbuf reproduce --rescore DIR` reads DIR/results.json
//! and DIR/verdicts.json (what `reproduce` wrote), rebuilds what was measured, and judges the
//! experiment's current claims against it without running anything: the verdicts a change of
//! rules or criteria makes, claim by claim, before and after.
//!
//! results.json is read as JSON, not as a [`RunResult`] (which is written, never read): each
//! point's metric values and intervals come from the series rows exactly as written; the
//! per-repeat values (for a factor's interval) and the activity counts are computed from a
//! skeleton [`RunResult`] carrying the fields the metrics read ([`skeleton`]). A test checks
//! that every metric reads the same from the skeleton as from the full record, so a metric that
//! starts reading another field cannot be rescored wrongly in silence.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::experiment::{self, Experiment};
use super::verdict::{Activity, Measured, Verdict};
use crate::bench::report::RunResult;
use crate::bench::stats::Interval;
use crate::error::{Error, Result};
use crate::sweep::metrics::{self, METRICS};

/// A verdict as an earlier verdicts.json recorded it.
#[derive(Debug, Clone, Serialize)]
pub struct Recorded {
    /// The claim in words.
    pub claim: String,
    /// `reproduced`, `right_direction`, `not_reproduced`, `not_evaluated`.
    pub outcome: String,
    /// The reason given then.
    pub reason: String,
}

/// A saved run judged again.
#[derive(Debug, Clone, Serialize)]
pub struct Rescored {
    /// The experiment id.
    pub id: String,
    /// Whether it was a `--quick` run.
    pub quick: bool,
    /// The command that made it.
    pub command: String,
    /// The verdicts recorded with the run.
    pub before: Vec<Recorded>,
    /// The verdicts of the current claims and rules.
    pub verdicts: Vec<Verdict>,
}

fn bad(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::Config(format!("--rescore: {}: {why}", path.display()))
}

fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|err| bad(path, err))?;
    serde_json::from_str(&text).map_err(|err| bad(path, err))
}

fn number(value: &Value, path: &[&str]) -> Option<f64> {
    path.iter().try_fold(value, |v, key| v.get(key))?.as_f64()
}

fn count(value: &Value, path: &[&str]) -> u64 {
    path.iter()
        .try_fold(value, |v, key| v.get(key))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// The fields of a run record that the metrics and [`Activity`] read, from its JSON; its
/// repeats (`runs`, flattened into the record) likewise.
#[must_use]
pub fn skeleton(run: &Value) -> RunResult {
    let mut out = RunResult {
        scheme: run["scheme"].as_str().unwrap_or_default().to_string(),
        ops: count(run, &["ops"]),
        throughput: number(run, &["throughput"]).unwrap_or(f64::NAN),
        read_stall_ratio: number(run, &["read_stall_ratio"]).unwrap_or(f64::NAN),
        hit_ratio: number(run, &["hit_ratio"]).unwrap_or(f64::NAN),
        sync_write_pct: number(run, &["sync_write_pct"]).unwrap_or(f64::NAN),
        cpu_util: number(run, &["cpu_util"]),
        mutex_wait_total_ms: number(run, &["mutex_wait_total_ms"]).unwrap_or(f64::NAN),
        tpmc: number(run, &["tpmc"]),
        threads: count(run, &["threads"]) as usize,
        duration_real_s: number(run, &["duration_real_s"]).unwrap_or(f64::NAN),
        ..RunResult::default()
    };
    out.latency_ms.mean = number(run, &["latency_ms", "mean"]).unwrap_or(f64::NAN);
    out.latency_ms.p95 = number(run, &["latency_ms", "p95"]).unwrap_or(f64::NAN);
    out.latency_ms.p99 = number(run, &["latency_ms", "p99"]).unwrap_or(f64::NAN);
    out.io.read_iops = number(run, &["io", "read_iops"]).unwrap_or(f64::NAN);
    out.io.write_iops = number(run, &["io", "write_iops"]).unwrap_or(f64::NAN);
    out.io.bandwidth_share = number(run, &["io", "bandwidth_share"]);
    let pool = &mut out.pool_stats;
    pool.hits = count(run, &["pool_stats", "hits"]);
    pool.misses = count(run, &["pool_stats", "misses"]);
    pool.evictions = count(run, &["pool_stats", "evictions"]);
    pool.sync_replacement_writes = count(run, &["pool_stats", "sync_replacement_writes"]);
    pool.sync_recoverability_writes = count(run, &["pool_stats", "sync_recoverability_writes"]);
    pool.lru_flushes = count(run, &["pool_stats", "lru_flushes"]);
    pool.flush_list_flushes = count(run, &["pool_stats", "flush_list_flushes"]);
    out.host_lateness = number(run, &["host_lateness", "error_share"]).map(|error_share| {
        crate::bench::lateness::Lateness {
            error_share,
            device_mean_us: number(run, &["host_lateness", "device_mean_us"]).unwrap_or(0.0),
            reference_us: number(run, &["host_lateness", "reference_us"]).unwrap_or(0.0),
            ..Default::default()
        }
    });
    if let Some(runs) = run.get("runs").and_then(Value::as_array) {
        out.repeats = Some(Box::new(crate::bench::repeat::Repeats {
            runs: runs
                .iter()
                .map(|r| (!r.is_null()).then(|| skeleton(r)))
                .collect(),
            summary: std::collections::BTreeMap::default(),
        }));
    }
    out
}

/// What a saved results.json measured: the series rows' values and intervals as written, the
/// repeats and activity from the run records (and, from the records too, any metric added
/// since the run was saved).
///
/// # Errors
/// A file that is not a results.json (no `points` or `series`).
pub fn measured_from_json(results: &Value) -> std::result::Result<Measured, String> {
    let points = results["points"]
        .as_array()
        .ok_or("no `points`: not a results.json")?;
    let series = results["series"]
        .as_array()
        .ok_or("no `series`: not a results.json")?;
    let schemes: Vec<&str> = results["schemes"]
        .as_array()
        .map(|s| s.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut measured = Measured {
        points: points
            .iter()
            .map(|p| p["value"].as_str().unwrap_or_default().to_string())
            .collect(),
        ..Measured::default()
    };
    for scheme_series in series {
        let scheme = scheme_series["scheme"].as_str().unwrap_or_default();
        let rows = scheme_series["rows"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        for (index, row) in rows.iter().enumerate() {
            read_row(&mut measured, index, scheme, row);
        }
    }
    for (index, point) in points.iter().enumerate() {
        let runs: Vec<RunResult> = point["results"]["runs"]
            .as_array()
            .map(|runs| runs.iter().map(skeleton).collect())
            .unwrap_or_default();
        let first = schemes
            .first()
            .and_then(|name| runs.iter().find(|r| r.scheme == *name));
        for run in &runs {
            measured
                .activity
                .push((index, run.scheme.clone(), Activity::of(run)));
            for metric in METRICS {
                let values = metrics::repeat_values(metric, run, first);
                if !values.is_empty() {
                    measured
                        .repeats
                        .push((index, run.scheme.clone(), metric.id, values));
                }
                // A metric added after the run was saved: read from the record.
                let written = measured
                    .values
                    .iter()
                    .any(|(i, s, id, _)| *i == index && *s == run.scheme && *id == metric.id);
                if !written && let Some(value) = (metric.read)(run, first) {
                    measured
                        .values
                        .push((index, run.scheme.clone(), metric.id, value));
                }
            }
        }
    }
    Ok(measured)
}

fn read_row(measured: &mut Measured, index: usize, scheme: &str, row: &Value) {
    let entries = |key: &str| row.get(key).and_then(Value::as_object).cloned();
    for (id, value) in entries("metrics").unwrap_or_default() {
        if let (Ok(metric), Some(value)) = (metrics::metric(&id), value.as_f64()) {
            measured
                .values
                .push((index, scheme.to_string(), metric.id, value));
        }
    }
    for (id, interval) in entries("intervals").unwrap_or_default() {
        let Ok(metric) = metrics::metric(&id) else {
            continue;
        };
        let Some(mean) = interval["mean"].as_f64() else {
            continue;
        };
        let interval = Interval {
            mean,
            ci95: interval["ci95"].as_f64(),
            n: interval["n"].as_u64().unwrap_or(0) as usize,
        };
        measured
            .intervals
            .push((index, scheme.to_string(), metric.id, interval));
    }
}

/// Judges the saved run in `dir` (results.json, verdicts.json) with the current claims.
///
/// # Errors
/// A missing or unreadable file, an unknown experiment id.
pub fn rescore_dir(dir: &Path) -> Result<Rescored> {
    let verdicts_path = dir.join("verdicts.json");
    let recorded = read_json(&verdicts_path)?;
    let id = recorded["id"]
        .as_str()
        .ok_or_else(|| bad(&verdicts_path, "no experiment `id`"))?
        .to_string();
    let experiment: Experiment = experiment::find(&id)?;
    let results_path = dir.join("results.json");
    let measured =
        measured_from_json(&read_json(&results_path)?).map_err(|why| bad(&results_path, why))?;
    let before = recorded["verdicts"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|v| Recorded {
                    claim: v["claim"].as_str().unwrap_or_default().to_string(),
                    outcome: v["outcome"].as_str().unwrap_or_default().to_string(),
                    reason: v["reason"].as_str().unwrap_or_default().to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Rescored {
        id,
        quick: recorded["quick"].as_bool().unwrap_or(false),
        command: recorded["command"].as_str().unwrap_or_default().to_string(),
        before,
        verdicts: experiment.judge(measured),
    })
}

impl Rescored {
    /// The recorded verdict of the claim at `index` of the current claims: the one with the same
    /// text, else the one at the same place if its text matches no current claim.
    #[must_use]
    pub fn before_of(&self, index: usize) -> Option<&Recorded> {
        let claim = &self.verdicts.get(index)?.claim;
        self.before.iter().find(|r| &r.claim == claim).or_else(|| {
            self.before
                .get(index)
                .filter(|r| !self.verdicts.iter().any(|v| v.claim == r.claim))
        })
    }

    /// One line per current claim: before -> after, and the new reason.
    #[must_use]
    pub fn changes(&self) -> String {
        let mut out = format!(
            "{} rescored ({} run): claim: before -> after\n",
            self.id,
            if self.quick { "quick" } else { "full" }
        );
        for (index, verdict) in self.verdicts.iter().enumerate() {
            let before = self
                .before_of(index)
                .map_or("(new claim)", |r| r.outcome.as_str());
            let after = serde_json::to_value(verdict.outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let mark = if before == after { " " } else { "*" };
            let _ = writeln!(
                out,
                "{mark} {}: {before} -> {after}\n      {}; {}",
                verdict.claim, verdict.criterion, verdict.reason
            );
        }
        out
    }

    /// Writes `verdicts-rescored.json` into `dir` (the run's own verdicts.json is kept).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join("verdicts-rescored.json");
        let json = serde_json::to_string_pretty(self)
            .map_err(|err| Error::Config(format!("cannot serialize verdicts: {err}")))?;
        std::fs::write(&path, json)
            .map_err(|err| Error::io(format!("writing {}", path.display()), err))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every metric reads the same from the skeleton as from the full record, with repeats.
    #[test]
    fn the_skeleton_carries_every_field_the_metrics_read() {
        let mut run = RunResult {
            scheme: "lru-c".into(),
            ops: 1234,
            throughput: 411.3,
            read_stall_ratio: 0.031,
            hit_ratio: 0.93,
            sync_write_pct: 4.5,
            cpu_util: Some(37.0),
            mutex_wait_total_ms: 2.5,
            tpmc: Some(11_000.0),
            threads: 64,
            duration_real_s: 80.0,
            ..RunResult::default()
        };
        run.latency_ms.mean = 3.1;
        run.latency_ms.p95 = 40.2;
        run.latency_ms.p99 = 80.4;
        run.io.read_iops = 5000.0;
        run.io.write_iops = 2000.0;
        run.io.bandwidth_share = Some(0.42);
        run.pool_stats.hits = 900;
        run.pool_stats.misses = 100;
        run.pool_stats.evictions = 90;
        run.pool_stats.lru_flushes = 30;
        run.pool_stats.sync_replacement_writes = 3;
        let mut other = run.clone();
        other.scheme = "vanilla".into();
        other.throughput = 200.0;
        let mut with_repeats = run.clone();
        with_repeats.repeats = Some(Box::new(crate::bench::repeat::Repeats {
            runs: vec![Some(run.clone()), None, Some(other.clone())],
            summary: std::collections::BTreeMap::default(),
        }));
        for full in [&run, &with_repeats] {
            let json = serde_json::to_value(full).unwrap();
            let back = skeleton(&json);
            for metric in METRICS {
                let (a, b) = (
                    (metric.read)(full, Some(&other)),
                    (metric.read)(&back, Some(&other)),
                );
                assert_eq!(a, b, "{}", metric.id);
                assert_eq!(
                    metrics::repeat_values(metric, full, Some(&other)),
                    metrics::repeat_values(metric, &back, Some(&other)),
                    "{}",
                    metric.id
                );
            }
            assert_eq!(Activity::of(full), Activity::of(&back));
        }
    }
}
