//! Repeated runs (`--repeat N`, issue 19 item 6): one scheme's N records combined into the
//! record results.json and the table show, with every repeat kept and the 95% interval of
//! every metric ([`super::stats`]).
//!
//! The harness runs the repeats interleaved (every scheme once, then every scheme again, ...),
//! each on a fresh device with a fresh copy of the same image; [`combine`] then makes, per
//! scheme, a record whose fields are the means over its completed repeats:
//!
//! - numbers (rates, latencies, ratios, counts rounded to whole numbers) are the means; an
//!   optional number is the mean of the repeats that have it; per-type figures and mutex waits
//!   the means per type and mutex; the latency and stall-wait CDFs the means of each quantile;
//! - `bound` is the repeats' common verdict, or each verdict with its count (`device-bound 2/3,
//!   mixed 1/3`); `steadiness.steady` holds when every repeat was steady, its verdict counts
//!   them;
//! - `host_lateness`: the means, and its warning when any repeat had one;
//! - `device_aging`: the means of the repeats that aged, `settled` when all of them settled;
//! - `tail_profile`: the profile of all repeats' samples pooled (each sample weighs the same);
//! - `timeline`, `config_diff`, `check`, `pool_stats` and `device_stats` (raw counters) are
//!   the first completed repeat's: every repeat's are under `runs`, and `summary` has the means
//!   and intervals of the raw counters too.
//!
//! Under [`Repeats`]: `runs`, every repeat's full record in repeat order (`null` for a repeat
//! that failed: `failures` says why), and `summary`, per metric (the record's numeric fields
//! as dotted paths, e.g. `throughput`, `latency_ms.p95`, `per_type.new_order.throughput`,
//! `mutex_wait_ms.lru`, `pool_stats.misses`) its mean, 95% half-width and count. `summary.ratio`
//! is the throughput's ratio to the first scheme: the ratio of the means, with the
//! delta-method interval over the repeats' pairs (repeat k of this scheme and of the first
//! scheme ran back to back) ([`super::stats::ratio_interval`]).
//!
//! A record's `repeats` is `None` for a single run (`--repeat 1`: results.json is unchanged).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::report::{
    DoublewriteStats, FsyncStats, IoRates, LatencyMs, LogRates, RunResult, StallWaitMs, Steadiness,
    TypeResult,
};
use super::stats::{Interval, format_pm, interval, ratio_interval};
use crate::device::emulated::aging::AgingReport;

/// Upper bound on `--repeat`.
pub const MAX_REPEATS: usize = 100;

/// The summary key of the throughput ratio to the first scheme.
pub const RATIO_KEY: &str = "ratio";

/// Top-level fields of a record that are not metrics (series, lists, nested repeats).
const NOT_METRICS: &[&str] = &["runs", "summary", "timeline", "latency_cdf", "config_diff"];

/// One scheme's repeats.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Repeats {
    /// Every repeat's full record, in repeat order; `None` for a repeat that failed.
    pub runs: Vec<Option<RunResult>>,
    /// Per metric (dotted path): mean, 95% half-width, count.
    pub summary: BTreeMap<String, Interval>,
}

impl Repeats {
    /// The completed repeats.
    pub fn completed(&self) -> impl Iterator<Item = &RunResult> {
        self.runs.iter().flatten()
    }
}

/// The record of a scheme's repeats (`runs[k]`: repeat k + 1, `None` if it failed): the one
/// completed run itself when the scheme ran once, else the mean record with [`Repeats`];
/// `None` when no repeat completed.
#[must_use]
pub fn combine(runs: Vec<Option<RunResult>>) -> Option<RunResult> {
    if runs.len() <= 1 {
        return runs.into_iter().flatten().next();
    }
    let completed: Vec<&RunResult> = runs.iter().flatten().collect();
    let mut record = mean_record(&completed)?;
    let summary = summarize(&completed);
    record.repeats = Some(Box::new(Repeats { runs, summary }));
    Some(record)
}

/// Adds each record's throughput ratio to the first record's ([`RATIO_KEY`]) to the summaries:
/// the pairs are the repeats of the same number.
pub fn add_ratios(records: &mut [RunResult]) {
    let Some(first) = records.first() else {
        return;
    };
    let Some(base) = first.repeats.as_ref().map(|r| r.runs.clone()) else {
        return;
    };
    for record in records.iter_mut() {
        let Some(repeats) = record.repeats.as_mut() else {
            continue;
        };
        let pairs: Vec<(f64, f64)> = repeats
            .runs
            .iter()
            .zip(&base)
            .filter_map(|(run, first)| Some((run.as_ref()?.throughput, first.as_ref()?.throughput)))
            .collect();
        if let Some(ratio) = ratio_interval(&pairs) {
            repeats.summary.insert(RATIO_KEY.to_string(), ratio);
        }
    }
}

/// A summary entry of `run` (`None` for a single run, or a metric it lacks).
#[must_use]
pub fn summary_of(run: &RunResult, path: &str) -> Option<Interval> {
    run.repeats.as_ref()?.summary.get(path).copied()
}

/// A table cell: `value` x `factor` with `decimals`, and ` ±half-width` when `run` has repeats
/// and an interval for `path` (`812 ±23`).
#[must_use]
pub fn cell(run: &RunResult, path: &str, value: f64, factor: f64, decimals: usize) -> String {
    let half = summary_of(run, path)
        .and_then(|i| i.ci95)
        .map(|h| h * factor);
    format_pm(value * factor, half, decimals)
}

/// The ratio cell of `run` against `first`: the summary's ratio with its interval when there
/// are repeats, else the plain ratio of throughputs.
#[must_use]
pub fn ratio_cell(run: &RunResult, first: &RunResult) -> String {
    if let Some(ratio) = summary_of(run, RATIO_KEY) {
        return format!("{}x", format_pm(ratio.mean, ratio.ci95, 2));
    }
    if first.throughput > 0.0 {
        format!("{:.2}x", run.throughput / first.throughput)
    } else {
        "-".to_string()
    }
}

/// `n of N repeats` for a combined record (`None` for a single run).
#[must_use]
pub fn repeats_label(run: &RunResult) -> Option<String> {
    let repeats = run.repeats.as_ref()?;
    Some(format!(
        "{} of {} repeats",
        repeats.completed().count(),
        repeats.runs.len()
    ))
}

// ---- The summary: every numeric leaf of the records, by dotted path. ----

/// Per numeric field of the records (dotted path), its interval over the records that have it.
#[must_use]
pub fn summarize(runs: &[&RunResult]) -> BTreeMap<String, Interval> {
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for run in runs {
        let Ok(Value::Object(fields)) = serde_json::to_value(run) else {
            continue;
        };
        for (key, value) in &fields {
            if !NOT_METRICS.contains(&key.as_str()) {
                leaves(key, value, &mut values);
            }
        }
    }
    values
        .into_iter()
        .filter_map(|(path, values)| Some((path, interval(&values)?)))
        .collect()
}

/// Collects the numeric leaves under `value` at `path`; `per_type`'s entries are keyed by
/// their name, other arrays (series, CDFs, samples) are not metrics.
fn leaves(path: &str, value: &Value, out: &mut BTreeMap<String, Vec<f64>>) {
    match value {
        Value::Number(number) => {
            if let Some(v) = number.as_f64() {
                out.entry(path.to_string()).or_default().push(v);
            }
        }
        Value::Object(fields) => {
            for (key, value) in fields {
                leaves(&format!("{path}.{key}"), value, out);
            }
        }
        Value::Array(items) if path == "per_type" => {
            for item in items {
                if let Some(name) = item.get("name").and_then(Value::as_str) {
                    leaves(&format!("{path}.{name}"), item, out);
                }
            }
        }
        _ => {}
    }
}

// ---- The mean record. ----

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

fn mean_of(runs: &[&RunResult], figure: impl Fn(&RunResult) -> f64) -> f64 {
    mean(runs.iter().map(|run| figure(run)))
}

fn mean_count(runs: &[&RunResult], figure: impl Fn(&RunResult) -> u64) -> u64 {
    mean_of(runs, |run| figure(run) as f64).round() as u64
}

/// The mean of the runs that have the figure; `None` when none has it.
fn mean_option(runs: &[&RunResult], figure: impl Fn(&RunResult) -> Option<f64>) -> Option<f64> {
    let present: Vec<f64> = runs.iter().filter_map(|run| figure(run)).collect();
    (!present.is_empty()).then(|| mean(present.into_iter()))
}

/// The pointwise mean of CDFs of the same quantiles (the empty ones left out); the first
/// non-empty one when their quantiles differ.
fn mean_cdf(cdfs: &[&Vec<(f64, f64)>]) -> Vec<(f64, f64)> {
    let present: Vec<&Vec<(f64, f64)>> =
        cdfs.iter().copied().filter(|cdf| !cdf.is_empty()).collect();
    let Some(first) = present.first() else {
        return Vec::new();
    };
    let aligned = present.iter().all(|cdf| {
        cdf.len() == first.len()
            && cdf
                .iter()
                .zip(first.iter())
                .all(|(a, b)| (a.1 - b.1).abs() <= f64::EPSILON)
    });
    if !aligned {
        return (*first).clone();
    }
    (0..first.len())
        .map(|i| (mean(present.iter().map(|cdf| cdf[i].0)), first[i].1))
        .collect()
}

/// The common label, or each label with its count, most frequent first.
fn label_counts(labels: &[&str]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for label in labels {
        match counts.iter_mut().find(|(l, _)| l == label) {
            Some(entry) => entry.1 += 1,
            None => counts.push((label, 1)),
        }
    }
    if counts.len() == 1 {
        return counts[0].0.to_string();
    }
    counts.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    counts
        .iter()
        .map(|(label, count)| format!("{label} {count}/{}", labels.len()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn mean_latency(items: &[&LatencyMs]) -> LatencyMs {
    let m = |f: fn(&LatencyMs) -> f64| mean(items.iter().map(|l| f(l)));
    LatencyMs {
        mean: m(|l| l.mean),
        p50: m(|l| l.p50),
        p95: m(|l| l.p95),
        p99: m(|l| l.p99),
        max: m(|l| l.max),
    }
}

fn mean_types(runs: &[&RunResult]) -> Vec<TypeResult> {
    let first = &runs[0].per_type;
    first
        .iter()
        .enumerate()
        .map(|(index, kind)| {
            let same: Vec<&TypeResult> = runs
                .iter()
                .filter_map(|run| run.per_type.get(index))
                .filter(|other| other.name == kind.name)
                .collect();
            let count =
                |f: fn(&TypeResult) -> u64| mean(same.iter().map(|t| f(t) as f64)).round() as u64;
            TypeResult {
                name: kind.name.clone(),
                count: count(|t| t.count),
                throughput: mean(same.iter().map(|t| t.throughput)),
                latency_ms: mean_latency(&same.iter().map(|t| &t.latency_ms).collect::<Vec<_>>()),
                latency_cdf: mean_cdf(&same.iter().map(|t| &t.latency_cdf).collect::<Vec<_>>()),
                retries: count(|t| t.retries),
                rollbacks: count(|t| t.rollbacks),
                aborts: count(|t| t.aborts),
            }
        })
        .collect()
}

fn mean_io(runs: &[&RunResult]) -> IoRates {
    IoRates {
        read_iops: mean_of(runs, |r| r.io.read_iops),
        write_iops: mean_of(runs, |r| r.io.write_iops),
        read_mbps: mean_of(runs, |r| r.io.read_mbps),
        write_mbps: mean_of(runs, |r| r.io.write_mbps),
        write_amplification: mean_of(runs, |r| r.io.write_amplification),
        peak_mbps: mean_option(runs, |r| r.io.peak_mbps),
        bandwidth_share: mean_option(runs, |r| r.io.bandwidth_share),
    }
}

fn mean_log(runs: &[&RunResult]) -> Option<LogRates> {
    let logs: Vec<&LogRates> = runs.iter().filter_map(|r| r.log.as_ref()).collect();
    if logs.is_empty() {
        return None;
    }
    Some(LogRates {
        commits_per_s: mean(logs.iter().map(|l| l.commits_per_s)),
        mbps: mean(logs.iter().map(|l| l.mbps)),
        flushes_per_s: mean(logs.iter().map(|l| l.flushes_per_s)),
        mean_group_size: mean(logs.iter().map(|l| l.mean_group_size)),
        checkpoints: mean(logs.iter().map(|l| l.checkpoints as f64)).round() as u64,
    })
}

fn mean_mutex_waits(runs: &[&RunResult]) -> BTreeMap<String, f64> {
    let names: std::collections::BTreeSet<&String> =
        runs.iter().flat_map(|r| r.mutex_wait_ms.keys()).collect();
    names
        .into_iter()
        .map(|name| {
            let waits = runs
                .iter()
                .filter_map(|r| r.mutex_wait_ms.get(name).copied());
            (name.clone(), mean(waits))
        })
        .collect()
}

fn mean_steadiness(runs: &[&RunResult]) -> Steadiness {
    let all: Vec<&Steadiness> = runs.iter().map(|r| &r.steadiness).collect();
    let steady = all.iter().filter(|s| s.steady).count();
    let first = all[0];
    Steadiness {
        warmup_steady: all.iter().all(|s| s.warmup_steady),
        cv: mean(all.iter().map(|s| s.cv)),
        steady: steady == all.len(),
        drift: mean(all.iter().map(|s| s.drift)),
        drift_ci95: mean(all.iter().map(|s| s.drift_ci95)),
        window_s: mean(all.iter().map(|s| s.window_s)),
        windows: mean(all.iter().map(|s| s.windows as f64)).round() as usize,
        period_s: mean_option(runs, |r| r.steadiness.period_s),
        cycle_s: first.cycle_s,
        cycle_of: first.cycle_of.clone(),
        whole_cycles: first.whole_cycles,
        cycles_warning: first.cycles_warning.clone(),
        verdict: format!(
            "steady in {steady} of {} repeats: {}",
            all.len(),
            all.iter()
                .map(|s| s.verdict.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        ),
    }
}

fn mean_cpu(runs: &[&RunResult]) -> super::cpu::CpuUtil {
    let first = &runs[0].cpu;
    super::cpu::CpuUtil {
        cores_used: mean_option(runs, |r| r.cpu.cores_used),
        pct_of_available: mean_option(runs, |r| r.cpu.pct_of_available),
        available_cores: first.available_cores,
        run_queue_wait_threads: mean_option(runs, |r| r.cpu.run_queue_wait_threads),
        run_queue_wait_share: mean_option(runs, |r| r.cpu.run_queue_wait_share),
        bound: label_counts(
            &runs
                .iter()
                .map(|r| r.cpu.bound.as_str())
                .collect::<Vec<_>>(),
        ),
    }
}

/// The mean record of `runs` (see the module docs); `None` without a run. Every field is
/// named, so a field added to [`RunResult`] must be given its mean here.
#[allow(clippy::too_many_lines)] // one line per field of the record
fn mean_record(runs: &[&RunResult]) -> Option<RunResult> {
    let first = *runs.first()?;
    let stall_waits: Vec<&StallWaitMs> = runs.iter().map(|r| &r.read_stall_wait_ms).collect();
    Some(RunResult {
        scheme: first.scheme.clone(),
        workload: first.workload.clone(),
        read_ratio: mean_of(runs, |r| r.read_ratio),
        locality: first.locality.clone(),
        device: first.device.clone(),
        log_device: first.log_device.clone(),
        threads: first.threads,
        buffer_pages: first.buffer_pages,
        db_pages: first.db_pages,
        page_size: first.page_size,
        duration_s: mean_of(runs, |r| r.duration_s),
        duration_real_s: mean_of(runs, |r| r.duration_real_s),
        scheme_real_s: mean_of(runs, |r| r.scheme_real_s),
        warmup_s: mean_of(runs, |r| r.warmup_s),
        time_scale: first.time_scale,
        model_host: first.model_host.clone(),
        ops: mean_count(runs, |r| r.ops),
        throughput: mean_of(runs, |r| r.throughput),
        unit: first.unit.clone(),
        latency_ms: mean_latency(&runs.iter().map(|r| &r.latency_ms).collect::<Vec<_>>()),
        latency_cdf: mean_cdf(&runs.iter().map(|r| &r.latency_cdf).collect::<Vec<_>>()),
        read_ops: mean_count(runs, |r| r.read_ops),
        write_ops: mean_count(runs, |r| r.write_ops),
        tpmc: mean_option(runs, |r| r.tpmc),
        per_type: mean_types(runs),
        aborts: mean_count(runs, |r| r.aborts),
        aborts_unattributed: mean_count(runs, |r| r.aborts_unattributed),
        retries: mean_count(runs, |r| r.retries),
        rollbacks: mean_count(runs, |r| r.rollbacks),
        device_read_share: mean_option(runs, |r| r.device_read_share),
        check: first.check.clone(),
        check_skipped: first.check_skipped,
        hit_ratio: mean_of(runs, |r| r.hit_ratio),
        read_stall_ratio: mean_of(runs, |r| r.read_stall_ratio),
        read_stall_wait_ms: StallWaitMs {
            mean: mean(stall_waits.iter().map(|s| s.mean)),
            p99: mean(stall_waits.iter().map(|s| s.p99)),
            max: mean(stall_waits.iter().map(|s| s.max)),
            cdf: mean_cdf(&stall_waits.iter().map(|s| &s.cdf).collect::<Vec<_>>()),
        },
        sync_write_pct: mean_of(runs, |r| r.sync_write_pct),
        io: mean_io(runs),
        fsync: FsyncStats {
            count: mean_count(runs, |r| r.fsync.count),
            mean_ms: mean_of(runs, |r| r.fsync.mean_ms),
        },
        doublewrite: DoublewriteStats {
            pages: mean_count(runs, |r| r.doublewrite.pages),
            batches: mean_count(runs, |r| r.doublewrite.batches),
            slot_waits: mean_count(runs, |r| r.doublewrite.slot_waits),
            slot_wait_ms: mean_of(runs, |r| r.doublewrite.slot_wait_ms),
        },
        bytes_per_op: mean_bytes(runs),
        log: mean_log(runs),
        mutex_wait_ms: mean_mutex_waits(runs),
        mutex_wait_total_ms: mean_of(runs, |r| r.mutex_wait_total_ms),
        cpu_util: mean_option(runs, |r| r.cpu_util),
        bound: label_counts(&runs.iter().map(|r| r.bound.as_str()).collect::<Vec<_>>()),
        cpu: mean_cpu(runs),
        steadiness: mean_steadiness(runs),
        config_diff: first.config_diff.clone(),
        timeline: first.timeline.clone(),
        pool_stats: first.pool_stats.clone(),
        device_stats: first.device_stats.clone(),
        phases_real_s: mean_phases(runs),
        regime: super::regime::mean(
            &runs
                .iter()
                .filter_map(|r| r.regime.as_ref())
                .collect::<Vec<_>>(),
        ),
        host_lateness: mean_lateness(runs),
        device_aging: mean_aging(runs),
        pool_fill: super::fill::PoolFill::mean(runs.iter().filter_map(|r| r.pool_fill.as_ref())),
        prewarm: super::prewarm::Prewarm::mean(runs.iter().filter_map(|r| r.prewarm.as_ref())),
        tail_profile: pooled_tail_profile(runs),
        repeats: None,
    })
}

/// The tail profile of every repeat's samples together (their counters summed).
fn pooled_tail_profile(runs: &[&RunResult]) -> Option<crate::core::tail_profile::TailProfile> {
    let scan_depth = runs
        .iter()
        .find_map(|r| r.tail_profile.as_ref())?
        .scan_depth;
    let mut summed = std::collections::BTreeMap::<String, f64>::new();
    for run in runs.iter().filter(|r| r.tail_profile.is_some()) {
        for (key, value) in &run.pool_stats.extra {
            if crate::core::tail_profile::is_counter(key) {
                *summed.entry(key.clone()).or_default() += value;
            }
        }
    }
    crate::core::tail_profile::TailProfile::from_extra(&summed, scan_depth)
}

fn mean_aging(runs: &[&RunResult]) -> Option<AgingReport> {
    let all: Vec<&AgingReport> = runs
        .iter()
        .filter_map(|r| r.device_aging.as_ref())
        .collect();
    let m = |f: fn(&AgingReport) -> f64| mean(all.iter().map(|a| f(a)));
    let count = |f: fn(&AgingReport) -> u64| mean(all.iter().map(|a| f(a) as f64)).round() as u64;
    (!all.is_empty()).then(|| AgingReport {
        sampled_writes: count(|a| a.sampled_writes),
        sampled_pages: count(|a| a.sampled_pages),
        logical_pages: count(|a| a.logical_pages),
        replayed_writes: count(|a| a.replayed_writes),
        passes: m(|a| a.passes),
        gc_per_write_first: m(|a| a.gc_per_write_first),
        gc_per_write_last: m(|a| a.gc_per_write_last),
        settled: all.iter().all(|a| a.settled),
    })
}

fn mean_bytes(runs: &[&RunResult]) -> Option<super::bytes::BytesPerOp> {
    let all: Vec<&super::bytes::BytesPerOp> = runs
        .iter()
        .filter_map(|r| r.bytes_per_op.as_ref())
        .collect();
    let m = |f: fn(&super::bytes::BytesPerOp) -> f64| mean(all.iter().map(|b| f(b)));
    (!all.is_empty()).then(|| super::bytes::BytesPerOp {
        data_reads: m(|b| b.data_reads),
        page_writes: m(|b| b.page_writes),
        doublewrite: m(|b| b.doublewrite),
        redo_written: m(|b| b.redo_written),
        redo_appended: m(|b| b.redo_appended),
        total_written: m(|b| b.total_written),
    })
}

fn mean_phases(runs: &[&RunResult]) -> super::progress::PhaseTimes {
    let m =
        |f: fn(&super::progress::PhaseTimes) -> f64| mean(runs.iter().map(|r| f(&r.phases_real_s)));
    super::progress::PhaseTimes {
        set_up: m(|p| p.set_up),
        warm_up: m(|p| p.warm_up),
        measure: m(|p| p.measure),
        check: m(|p| p.check),
        write_back: m(|p| p.write_back),
    }
}

fn mean_lateness(runs: &[&RunResult]) -> Option<super::lateness::Lateness> {
    let all: Vec<&super::lateness::Lateness> = runs
        .iter()
        .filter_map(|r| r.host_lateness.as_ref())
        .collect();
    let m = |f: fn(&super::lateness::Lateness) -> f64| mean(all.iter().map(|l| f(l)));
    let warnings = all.iter().filter(|l| l.warning.is_some()).count();
    (!all.is_empty()).then(|| super::lateness::Lateness {
        samples: mean(all.iter().map(|l| l.samples as f64)).round() as u64,
        mean_us: m(|l| l.mean_us),
        p50_us: m(|l| l.p50_us),
        p99_us: m(|l| l.p99_us),
        max_us: m(|l| l.max_us),
        device_mean_us: m(|l| l.device_mean_us),
        reference_us: m(|l| l.reference_us),
        error_share: m(|l| l.error_share),
        requests_per_op: m(|l| l.requests_per_op),
        op_error_share: m(|l| l.op_error_share),
        warning: (warnings > 0).then(|| {
            format!(
                "{warnings} of {} repeats: {}",
                all.len(),
                all.iter()
                    .find_map(|l| l.warning.as_deref())
                    .unwrap_or_default()
            )
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::cpu::CpuUtil;

    /// A run of `scheme` with throughput `tx` and figures derived from it.
    fn run(scheme: &str, tx: f64, bound: &str, steady: bool) -> RunResult {
        RunResult {
            scheme: scheme.into(),
            workload: "tpcc".into(),
            read_ratio: 0.5,
            locality: "tpcc: 1 warehouse".into(),
            device: "mem".into(),
            log_device: None,
            threads: 4,
            buffer_pages: 100,
            db_pages: 1000,
            page_size: 16384,
            duration_s: 3.0,
            duration_real_s: 3.0,
            scheme_real_s: 5.0,
            warmup_s: 1.0,
            time_scale: 1.0,
            model_host: "2 cores".into(),
            ops: (tx * 3.0) as u64,
            throughput: tx,
            unit: "tx/s".into(),
            latency_ms: LatencyMs {
                mean: 1000.0 / tx,
                p50: 1.0,
                p95: 2.0,
                p99: 3.0,
                max: 4.0,
            },
            latency_cdf: vec![(1000.0 / tx, 0.5), (2000.0 / tx, 1.0)],
            read_ops: 0,
            write_ops: 0,
            tpmc: Some(tx * 27.0),
            per_type: vec![TypeResult {
                name: "new_order".into(),
                count: (tx * 1.35) as u64,
                throughput: tx * 0.45,
                ..TypeResult::default()
            }],
            aborts: 0,
            aborts_unattributed: 0,
            retries: 2,
            rollbacks: 1,
            device_read_share: None,
            check: None,
            check_skipped: false,
            hit_ratio: 0.9,
            read_stall_ratio: 0.1,
            read_stall_wait_ms: StallWaitMs::default(),
            sync_write_pct: 10.0,
            io: IoRates::default(),
            fsync: FsyncStats::default(),
            doublewrite: DoublewriteStats::default(),
            log: None,
            bytes_per_op: None,
            mutex_wait_ms: [("lru".to_string(), tx / 100.0)].into(),
            mutex_wait_total_ms: tx / 100.0,
            cpu_util: Some(10.0),
            bound: bound.into(),
            cpu: CpuUtil {
                cores_used: Some(0.2),
                pct_of_available: Some(10.0),
                available_cores: 2,
                bound: bound.into(),
                run_queue_wait_threads: None,
                run_queue_wait_share: None,
            },
            steadiness: Steadiness {
                steady,
                verdict: if steady { "yes" } else { "no" }.into(),
                ..Steadiness::default()
            },
            config_diff: Vec::new(),
            timeline: Vec::new(),
            pool_stats: crate::pool::PoolStats::default(),
            device_stats: crate::device::DeviceStats::default(),
            phases_real_s: crate::bench::progress::PhaseTimes::default(),
            regime: None,
            host_lateness: None,
            device_aging: None,
            pool_fill: None,
            prewarm: None,
            tail_profile: None,
            repeats: None,
        }
    }

    #[test]
    fn one_run_stays_as_it_is() {
        let single = combine(vec![Some(run("vanilla", 100.0, "device-bound", true))]).unwrap();
        assert!(single.repeats.is_none());
        assert!((single.throughput - 100.0).abs() < 1e-12);
        assert!(combine(vec![None]).is_none());
        let json = serde_json::to_value(&single).unwrap();
        assert!(json.get("runs").is_none() && json.get("summary").is_none());
    }

    #[test]
    fn repeats_combine_into_means_with_intervals() {
        let runs = vec![
            Some(run("lru-c", 100.0, "device-bound", true)),
            Some(run("lru-c", 110.0, "device-bound", false)),
            Some(run("lru-c", 120.0, "mixed", true)),
        ];
        let mean = combine(runs).unwrap();
        assert!((mean.throughput - 110.0).abs() < 1e-9);
        assert_eq!(mean.ops, 330);
        assert!((mean.tpmc.unwrap() - 110.0 * 27.0).abs() < 1e-9);
        assert!((mean.per_type[0].throughput - 49.5).abs() < 1e-9);
        assert!((mean.mutex_wait_ms["lru"] - 1.1).abs() < 1e-9);
        // The CDF's quantiles are averaged at each fraction.
        assert_eq!(mean.latency_cdf.len(), 2);
        assert!((mean.latency_cdf[1].1 - 1.0).abs() < 1e-12);
        assert_eq!(mean.bound, "device-bound 2/3, mixed 1/3");
        assert!(!mean.steadiness.steady);
        assert!(
            mean.steadiness
                .verdict
                .starts_with("steady in 2 of 3 repeats")
        );
        let repeats = mean.repeats.as_ref().unwrap();
        assert_eq!(repeats.runs.len(), 3);
        // 100, 110, 120: s = 10, half-width t(2) x 10 / sqrt(3).
        let tx = repeats.summary["throughput"];
        assert_eq!(tx.n, 3);
        assert!((tx.mean - 110.0).abs() < 1e-9);
        assert!((tx.ci95.unwrap() - 4.3027 * 10.0 / 3f64.sqrt()).abs() < 1e-3);
        for path in [
            "latency_ms.p95",
            "per_type.new_order.throughput",
            "mutex_wait_ms.lru",
            "cpu.cores_used",
            "pool_stats.misses",
            "tpmc",
        ] {
            assert!(repeats.summary.contains_key(path), "{path}");
        }
        // Series and lists are not metrics; an absent option is not a zero.
        assert!(!repeats.summary.keys().any(|k| k.starts_with("timeline")));
        assert!(!repeats.summary.contains_key("device_read_share"));
        // The table's cell carries the interval.
        assert_eq!(
            cell(&mean, "throughput", mean.throughput, 1.0, 0),
            "110 ±25"
        );
        assert_eq!(
            cell(&mean, "hit_ratio", mean.hit_ratio, 100.0, 1),
            "90.0 ±0.0"
        );
        assert_eq!(repeats_label(&mean).as_deref(), Some("3 of 3 repeats"));
    }

    #[test]
    fn failed_repeats_leave_gaps_and_ratios_pair_by_repeat() {
        let base = combine(vec![
            Some(run("vanilla", 100.0, "device-bound", true)),
            Some(run("vanilla", 200.0, "device-bound", true)),
            Some(run("vanilla", 150.0, "device-bound", true)),
        ])
        .unwrap();
        let other = combine(vec![
            Some(run("lru-c", 300.0, "device-bound", true)),
            None,
            Some(run("lru-c", 450.0, "device-bound", true)),
        ])
        .unwrap();
        assert_eq!(repeats_label(&other).as_deref(), Some("2 of 3 repeats"));
        assert_eq!(other.repeats.as_ref().unwrap().summary["throughput"].n, 2);
        let mut records = vec![base, other];
        add_ratios(&mut records);
        let ratio = summary_of(&records[1], RATIO_KEY).unwrap();
        // Pairs (300, 100) and (450, 150): exactly 3x, repeat 2 left out.
        assert_eq!(ratio.n, 2);
        assert!((ratio.mean - 3.0).abs() < 1e-12);
        assert!(ratio.ci95.unwrap().abs() < 1e-9);
        let first = summary_of(&records[0], RATIO_KEY).unwrap();
        assert!((first.mean - 1.0).abs() < 1e-12);
        assert_eq!(ratio_cell(&records[1], &records[0]), "3.00 ±0.00x");
        let json = serde_json::to_value(&records[1]).unwrap();
        assert!(json["runs"][1].is_null());
        assert_eq!(json["runs"].as_array().unwrap().len(), 3);
        assert_eq!(json["summary"]["ratio"]["n"], 2);
        assert!(json["summary"]["throughput"]["ci95"].is_number());
    }
}
