//! The per-run metrics a sweep plots and an experiment's claims compare: one table of id,
//! title, axis label and how to read it from a [`RunResult`] (some need the first scheme's run
//! of the same point, e.g. the ratio). Sweep plots, sweep.json's series and reproduce's claims
//! all read metrics through [`METRICS`], so an id means the same thing everywhere.
//!
//! With `--repeat N`, [`interval`] gives a metric's 95% confidence interval: centred on the
//! metric of the mean records (what [`Metric::read`] gives), its half-width the Student-t one of
//! the metric's per-repeat values ([`repeat_values`]: repeat k of the scheme with repeat k of the
//! first scheme); for `ratio`, the bench's delta-method interval of the ratio of the means
//! ([`crate::bench::repeat`]).

use crate::bench::repeat::{RATIO_KEY, summary_of};
use crate::bench::report::RunResult;
use crate::bench::stats::{self, Interval};
use crate::error::{Error, Result};

/// One metric.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// Its id (`throughput`, `ratio`, ...), used in sweep.json and experiment files.
    pub id: &'static str,
    /// Plot title.
    pub title: &'static str,
    /// Axis label, with the unit.
    pub y_label: &'static str,
    /// Whether a larger value is better (for "beats" claims).
    pub higher_is_better: bool,
    /// Reads it from a run, given the first scheme's run of the same point.
    pub read: fn(&RunResult, Option<&RunResult>) -> Option<f64>,
}

fn finite(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// Every metric, in plot order.
pub const METRICS: &[Metric] = &[
    Metric {
        id: "throughput",
        title: "Throughput",
        y_label: "ops (or tx) per device second",
        higher_is_better: true,
        read: |run, _| finite(run.throughput),
    },
    Metric {
        id: "ratio",
        title: "Throughput ratio to the first scheme",
        y_label: "x first scheme",
        higher_is_better: true,
        read: |run, first| {
            let base = first?.throughput;
            (base > 0.0).then(|| run.throughput / base).and_then(finite)
        },
    },
    Metric {
        id: "read_stall_pct",
        title: "Read stalls",
        y_label: "% of misses",
        higher_is_better: false,
        read: |run, _| finite(run.read_stall_ratio * 100.0),
    },
    Metric {
        id: "p95_ms",
        title: "p95 latency",
        y_label: "ms (device time)",
        higher_is_better: false,
        read: |run, _| finite(run.latency_ms.p95),
    },
    Metric {
        id: "p99_ms",
        title: "p99 latency",
        y_label: "ms (device time)",
        higher_is_better: false,
        read: |run, _| finite(run.latency_ms.p99),
    },
    Metric {
        id: "hit_pct",
        title: "Hit ratio",
        y_label: "% of page requests",
        higher_is_better: true,
        read: |run, _| finite(run.hit_ratio * 100.0),
    },
    Metric {
        id: "read_iops",
        title: "Device reads",
        y_label: "page reads per device second",
        higher_is_better: false,
        read: |run, _| finite(run.io.read_iops),
    },
    Metric {
        id: "write_iops",
        title: "Device writes",
        y_label: "page writes per device second",
        higher_is_better: false,
        read: |run, _| finite(run.io.write_iops),
    },
    Metric {
        id: "bandwidth_pct",
        title: "Device bandwidth used",
        y_label: "% of the device's peak at this mix",
        higher_is_better: true,
        read: |run, _| run.io.bandwidth_share.map(|s| s * 100.0).and_then(finite),
    },
    Metric {
        id: "sync_write_pct",
        title: "Synchronous writes",
        y_label: "% of page writes",
        higher_is_better: false,
        read: |run, _| finite(run.sync_write_pct),
    },
    Metric {
        id: "cpu_pct",
        title: "CPU",
        y_label: "% of the available cores (real time)",
        higher_is_better: false,
        read: |run, _| run.cpu_util.and_then(finite),
    },
    Metric {
        id: "mean_ms",
        title: "Mean latency",
        y_label: "ms (device time)",
        higher_is_better: false,
        read: |run, _| finite(run.latency_ms.mean),
    },
    Metric {
        id: "miss_pct",
        title: "Miss ratio",
        y_label: "% of page requests",
        higher_is_better: false,
        read: |run, _| finite(100.0 - run.hit_ratio * 100.0),
    },
    Metric {
        id: "mutex_wait_ms",
        title: "List mutex waits",
        y_label: "ms waited, summed over mutexes (real time)",
        higher_is_better: false,
        read: |run, _| finite(run.mutex_wait_total_ms),
    },
    Metric {
        id: "mutex_wait_pct",
        title: "List mutex waits, share of client time",
        y_label: "% of the threads' real time waiting for list mutexes",
        higher_is_better: false,
        read: |run, _| {
            let client_s = run.threads as f64 * run.duration_real_s;
            (client_s > 0.0)
                .then(|| run.mutex_wait_total_ms / 1000.0 / client_s * 100.0)
                .and_then(finite)
        },
    },
    Metric {
        id: "io_per_op",
        title: "Device I/Os per operation",
        y_label: "page reads + writes per op (or tx)",
        higher_is_better: false,
        read: |run, _| {
            (run.throughput > 0.0)
                .then(|| (run.io.read_iops + run.io.write_iops) / run.throughput)
                .and_then(finite)
        },
    },
    Metric {
        id: "tpmc",
        title: "TPC-C tpmC",
        y_label: "New-Order tx per device minute",
        higher_is_better: true,
        read: |run, _| run.tpmc.and_then(finite),
    },
];

/// The metric `id`.
///
/// # Errors
/// [`Error::Config`] listing the known ids.
pub fn metric(id: &str) -> Result<&'static Metric> {
    METRICS.iter().find(|m| m.id == id).ok_or_else(|| {
        let ids: Vec<&str> = METRICS.iter().map(|m| m.id).collect();
        Error::Config(format!(
            "unknown metric `{id}`: use one of {}",
            ids.join(", ")
        ))
    })
}

/// `metric` of each repeat of `run` (each with the first scheme's repeat of the same number),
/// in repeat order, `None` where the repeat failed or the metric does not apply; empty for a
/// single run.
#[must_use]
pub fn repeat_values(
    metric: &Metric,
    run: &RunResult,
    first: Option<&RunResult>,
) -> Vec<Option<f64>> {
    let Some(repeats) = &run.repeats else {
        return Vec::new();
    };
    let first_runs = first.and_then(|f| f.repeats.as_ref()).map(|r| &r.runs);
    repeats
        .runs
        .iter()
        .enumerate()
        .map(|(k, repeat)| {
            let repeat = repeat.as_ref()?;
            let first_repeat = first_runs
                .and_then(|runs| runs.get(k))
                .and_then(Option::as_ref);
            (metric.read)(repeat, first_repeat)
        })
        .collect()
}

/// `metric`'s 95% interval over `run`'s repeats (see the module docs); `None` for a single run
/// or a metric that does not apply.
#[must_use]
pub fn interval(metric: &Metric, run: &RunResult, first: Option<&RunResult>) -> Option<Interval> {
    run.repeats.as_ref()?;
    let value = (metric.read)(run, first)?;
    let spread = if metric.id == "ratio" {
        summary_of(run, RATIO_KEY)?
    } else {
        let values: Vec<f64> = repeat_values(metric, run, first)
            .into_iter()
            .flatten()
            .collect();
        stats::interval(&values)?
    };
    Some(Interval {
        mean: value,
        ci95: spread.ci95,
        n: spread.n,
    })
}
