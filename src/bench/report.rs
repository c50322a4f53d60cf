//! Results of a bench invocation: the serializable record (results.json, the docs/architecture.md
//! contract) and the comparison table printed at the end.
//!
//! results.json:
//!
//! ```text
//! { "header": { flashbuf_version, date, host_cores, command_line, time_base },
//!   "runs": [ { scheme, workload, read_ratio, locality, device, log_device, threads,
//!               buffer_pages, db_pages, page_size, duration_s, duration_real_s,
//!               scheme_real_s, phases_real_s {set_up,warm_up,measure,check,write_back},
//!               warmup_s,
//!               time_scale, model_host, ops, throughput, unit,
//!               latency_ms {mean,p50,p95,p99,max}, latency_cdf [[ms, fraction]..],
//!               read_ops, write_ops,
//!               tpmc | null, per_type [ {name, count, throughput, latency_ms {..},
//!                                        latency_cdf, retries, rollbacks, aborts} ],
//!               aborts, aborts_unattributed, retries, rollbacks,
//!               device_read_share | null,
//!               check {conditions, rows_scanned, violations, violation_samples, trees,
//!                      tree_problems, tree_problem_samples, elapsed_s} | null, check_skipped,
//!               hit_ratio,
//!               read_stall_ratio, read_stall_wait_ms {mean,p99,max,cdf}, sync_write_pct,
//!               io {read_iops,write_iops,read_mbps,write_mbps,write_amplification,peak_mbps,
//!                   bandwidth_share},
//!               fsync {count,mean_ms}, doublewrite {pages,batches,slot_waits,slot_wait_ms},
//!               bytes_per_op {data_reads,page_writes,doublewrite,redo_written,
//!                             redo_appended,total_written} | null,
//!               log {commits_per_s,mbps,flushes_per_s,mean_group_size,checkpoints} | null,
//!               mutex_wait_ms {name: ms}, mutex_wait_total_ms, cpu_util, bound, cpu {..},
//!               steadiness {warmup_steady, cv, steady, drift, window_s, windows, period_s,
//!                           cycle_s, cycle_of, whole_cycles, cycles_warning, verdict},
//!               config_diff [ {key, value, default, source} ],
//!               timeline [ {t_s, throughput, free_frames, dirty_pages, misses, read_stalls,
//!                           p_scan?, p_io?, gc_per_write?, host_writes, gc_writes,
//!                           tail_dirty_share?, tail_run_pages?} ],
//!               pool_stats {..}, device_stats {..},
//!               host_lateness {samples, mean_us, p50_us, p99_us, max_us, device_mean_us,
//!                              reference_us, error_share, requests_per_op,
//!                              op_error_share, warning} | null,
//!               device_aging {sampled_writes, sampled_pages, logical_pages, replayed_writes,
//!                             passes, gc_per_write_first, gc_per_write_last, settled} | null,
//!               pool_fill {real_s, misses, free_frames, full, cut_short} (absent without --fill-pool),
//!               tail_profile {samples, scan_depth, unevictable_run_mean, run_at_depth,
//!                             bands [ {from, to, dirty, writing} ]} (absent without a pool),
//!               runs [ {..} | null ], summary { PATH: {mean, ci95, n} } } ],
//!   "failures": [ { scheme, error } ] }
//! ```
//!
//! With `--repeat N` (N > 1; `header.repeats`), each scheme's record holds the means over its
//! repeats, `runs` every repeat's full record and `summary` the mean and 95% interval of every
//! metric, including `ratio` to the first scheme ([`super::repeat`] says how each is made).
//! A single run has neither `runs` nor `summary`.
//!
//! Record workloads (TPC-C, YCSB, LinkBench): `unit` is `tx/s`, `workload` the workload's
//! name, `locality` its parameters, `read_ratio` the device's observed read share,
//! `read_ops`/`write_ops` 0; `per_type` has one entry per transaction type (for the page
//! mixes: `read` and `write`).
//!
//! Durations (`duration_s`, `warmup_s`, timeline `t_s`), throughput, IOPS, MB/s and latencies
//! are in device time; `duration_real_s`, mutex waits and CPU are real time (see
//! `header.time_base`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::cpu::CpuUtil;
use super::repeat::cell;
use super::table::Table;
use super::timeline::TimelinePoint;
use crate::device::DeviceStats;
use crate::error::{Error, Result};
use crate::pool::PoolStats;

/// What `header.time_base` says.
pub const TIME_BASE_NOTE: &str = "durations (duration_s, warmup_s, timeline t_s), throughput, \
     IOPS, MB/s and latencies are in device time (real / time_scale for times, real x time_scale \
     for rates); duration_real_s, mutex waits and CPU are real time";

/// The top of results.json.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Header {
    /// `CARGO_PKG_VERSION`.
    pub flashbuf_version: String,
    /// The source it was built from ([`crate::BUILD`]; empty in files written before it was
    /// recorded).
    #[serde(default)]
    pub flashbuf_build: String,
    /// UTC date and time the bench started, ISO 8601.
    pub date: String,
    /// Cores available to the process.
    pub host_cores: usize,
    /// The command line.
    pub command_line: String,
    /// Which figures are in device time.
    pub time_base: String,
    /// Runs per scheme (`--repeat`): each scheme's record is their mean when more than one.
    pub repeats: usize,
}

impl Header {
    /// The version with the build it came from, as the reports print it: `0.1.0 (git ...)`,
    /// or the version alone in a file written before builds were recorded.
    #[must_use]
    pub fn version_and_build(&self) -> String {
        if self.flashbuf_build.is_empty() {
            self.flashbuf_version.clone()
        } else {
            format!("{} (git {})", self.flashbuf_version, self.flashbuf_build)
        }
    }

    /// A header for now.
    #[must_use]
    pub fn new(command_line: &str) -> Header {
        Header {
            flashbuf_version: crate::VERSION.to_string(),
            flashbuf_build: crate::BUILD.to_string(),
            date: utc_now_iso8601(),
            host_cores: super::cpu::available_cores(),
            command_line: command_line.to_string(),
            time_base: TIME_BASE_NOTE.to_string(),
            repeats: 1,
        }
    }
}

/// Latency figures in milliseconds of device time.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct LatencyMs {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// The cumulative fractions at which `latency_cdf` samples the latency histogram: dense in
/// the tail, where the schemes differ (29 points).
pub const CDF_QUANTILES: &[f64] = &[
    0.0, 0.01, 0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70,
    0.75, 0.80, 0.85, 0.90, 0.925, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9995, 0.9999, 1.0,
];

/// Device I/O rates in device time over the measured phase.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct IoRates {
    /// Page reads per second.
    pub read_iops: f64,
    /// Page writes per second.
    pub write_iops: f64,
    /// Read MB/s (10^6 bytes).
    pub read_mbps: f64,
    /// Write MB/s (10^6 bytes).
    pub write_mbps: f64,
    /// Flash programs per host write (1.0 when the device does not model it).
    pub write_amplification: f64,
    /// The device's peak MB/s at the run's mix of reads and flash writes (queue depth 32;
    /// `None` without a device model).
    pub peak_mbps: Option<f64>,
    /// (read + flash write MB/s) / `peak_mbps`: LRU-C Table 5's bandwidth used. Flash writes
    /// leave out the rewrites a lazy write buffer absorbed (`DeviceStats::flash_writes`): they
    /// never reach the flash, so counting them could put the share above 1.
    pub bandwidth_share: Option<f64>,
}

/// How long read stalls waited, device-time milliseconds.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct StallWaitMs {
    /// Mean.
    pub mean: f64,
    /// 99th percentile (within 19%: logarithmic buckets).
    pub p99: f64,
    /// Maximum.
    pub max: f64,
    /// The distribution at [`CDF_QUANTILES`]: `(wait ms, fraction)` pairs (each wait a
    /// logarithmic bucket's upper bound, within 19%); empty when no read stalled.
    pub cdf: Vec<(f64, f64)>,
}

/// Data-device syncs of the write path.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct FsyncStats {
    /// Syncs issued.
    pub count: u64,
    /// Mean device-time milliseconds of one.
    pub mean_ms: f64,
}

/// The doublewrite buffer's work.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct DoublewriteStats {
    /// Pages written to the doublewrite area.
    pub pages: u64,
    /// Batches written.
    pub batches: u64,
    /// Single-page flushes that waited for a slot.
    pub slot_waits: u64,
    /// Device-time milliseconds spent waiting for slots.
    pub slot_wait_ms: f64,
}

/// The redo log's rates over the measured phase (device time).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct LogRates {
    /// Commits served per second.
    pub commits_per_s: f64,
    /// Log MB written per second.
    pub mbps: f64,
    /// Log syncs (group commits) per second.
    pub flushes_per_s: f64,
    /// Commits per sync.
    pub mean_group_size: f64,
    /// Checkpoints taken.
    pub checkpoints: u64,
}

impl LogRates {
    /// The rates between two snapshots `device_s` device seconds apart.
    #[must_use]
    pub fn between(
        start: &crate::wal::WalStats,
        end: &crate::wal::WalStats,
        device_s: f64,
    ) -> LogRates {
        let per_second =
            |a: u64, b: u64| b.saturating_sub(a) as f64 / device_s.max(f64::MIN_POSITIVE);
        let commits = end.commits.saturating_sub(start.commits);
        let flushes = end.flushes.saturating_sub(start.flushes);
        LogRates {
            commits_per_s: per_second(start.commits, end.commits),
            mbps: per_second(start.bytes_written, end.bytes_written) / 1e6,
            flushes_per_s: per_second(start.flushes, end.flushes),
            mean_group_size: if flushes == 0 {
                0.0
            } else {
                commits as f64 / flushes as f64
            },
            checkpoints: end.checkpoints.saturating_sub(start.checkpoints),
        }
    }
}

/// Whether a run measured a steady state ([`super::timeline::judge_steadiness`]).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct Steadiness {
    /// The warm-up ended because throughput was steady (not at its bound). For information:
    /// the verdict judges the measured phase itself.
    pub warmup_steady: bool,
    /// Coefficient of variation of the measured phase's window means (`window_s` windows).
    pub cv: f64,
    /// The measured phase was steady: window means vary at most `STEADY_CV` and drift at most
    /// `STEADY_DRIFT`, over at least three windows (`timeline::MIN_WINDOWS`).
    pub steady: bool,
    /// The throughput trend over the measured phase as a share of its mean (signed).
    pub drift: f64,
    /// Half-width of the drift's 95% interval (0: fewer than three windows, or a result saved
    /// before it was reported).
    #[serde(default)]
    pub drift_ci95: f64,
    /// Length of the windows judged, device seconds (at least 0.5 s, whole cycles of
    /// `period_s` when the throughput is periodic).
    pub window_s: f64,
    /// Windows judged.
    pub windows: usize,
    /// The throughput's period, device seconds (`None`: none found).
    pub period_s: Option<f64>,
    /// The scheme's background writer period, device seconds ([`super::cycles`]; `None`: no
    /// background writer).
    pub cycle_s: Option<f64>,
    /// That writer: `page cleaner`, `LRU-C flusher` or `bgwriter`.
    pub cycle_of: Option<String>,
    /// Whole writer cycles the measured phase held.
    pub whole_cycles: Option<u64>,
    /// Set when it held fewer than [`super::cycles::MIN_WHOLE_CYCLES`].
    pub cycles_warning: Option<String>,
    /// The verdict in words: `yes (cv 0.03, drift +2% over 5 windows of 0.6 s, whole 0.6 s
    /// cycles)`, `no: drifts (...)`, `no: too short (...)`.
    pub verdict: String,
}

impl Steadiness {
    /// The measured phase's verdict with the warm-up's outcome.
    #[must_use]
    pub fn from_verdict(warmup_steady: bool, verdict: super::timeline::SteadyVerdict) -> Self {
        Steadiness {
            warmup_steady,
            cv: verdict.cv,
            steady: verdict.steady,
            drift: verdict.drift,
            drift_ci95: verdict.drift_ci95,
            window_s: verdict.window_s,
            windows: verdict.windows,
            period_s: verdict.period_s,
            cycle_s: None,
            cycle_of: None,
            whole_cycles: None,
            cycles_warning: None,
            verdict: verdict.reason,
        }
    }
}

/// One scheme's measured run.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct RunResult {
    /// Scheme name.
    pub scheme: String,
    /// Workload name (`ms`, `wis`, ...).
    pub workload: String,
    /// Fraction of reads.
    pub read_ratio: f64,
    /// Locality (`90/10`, `uniform`, `zipf:0.99`).
    pub locality: String,
    /// Device string.
    pub device: String,
    /// The log's device string (`None`: no log).
    pub log_device: Option<String>,
    /// Worker threads.
    pub threads: usize,
    /// Frames in the pool.
    pub buffer_pages: usize,
    /// Database pages.
    pub db_pages: u64,
    /// Page size in bytes.
    pub page_size: usize,
    /// Measured phase, device seconds.
    pub duration_s: f64,
    /// Measured phase, real seconds.
    pub duration_real_s: f64,
    /// The whole scheme, real seconds: device set-up and image load or copy, warm-up, measured
    /// phase, check and final write-back (what the progress line's ETA learns from).
    pub scheme_real_s: f64,
    /// `scheme_real_s` by phase: set-up (load or copy), warm-up, measure, check, write-back.
    pub phases_real_s: super::progress::PhaseTimes,
    /// Warm-up, device seconds.
    pub warmup_s: f64,
    /// Device time runs this many times slower than real time.
    pub time_scale: f64,
    /// The host this run models: the device sees the real cores `time_scale` times faster.
    pub model_host: String,
    /// Operations completed in the measured phase.
    pub ops: u64,
    /// Operations per device second.
    pub throughput: f64,
    /// Unit of `throughput`.
    pub unit: String,
    /// Per-operation latency.
    pub latency_ms: LatencyMs,
    /// The latency distribution as `[latency_ms, cumulative fraction]` pairs from the
    /// histogram at [`CDF_QUANTILES`] (device-time ms, ascending; empty without operations).
    pub latency_cdf: Vec<(f64, f64)>,
    /// Reads begun in the measured phase (with `write_ops`: the achieved read ratio).
    pub read_ops: u64,
    /// Writes begun in the measured phase.
    pub write_ops: u64,
    /// TPC-C only: New-Order transactions completed per minute of device time (rolled-back
    /// ones included, as the specification counts them).
    pub tpmc: Option<f64>,
    /// Per operation (transaction) type: count, rate, latency, retries, rollbacks.
    pub per_type: Vec<TypeResult>,
    /// Transactions whose every attempt conflicted (record workloads): the sum of `per_type`'s
    /// `aborts` and `aborts_unattributed`.
    pub aborts: u64,
    /// Aborts whose type the worker did not know (0 for the built-in workloads).
    pub aborts_unattributed: u64,
    /// Conflicts retried over all types.
    pub retries: u64,
    /// Rollbacks by design over all types (TPC-C's 1% of New-Orders).
    pub rollbacks: u64,
    /// Device page reads / (reads + writes) observed in the measured phase.
    pub device_read_share: Option<f64>,
    /// The consistency check after the run (record workloads; `None`: not run).
    pub check: Option<super::driver::ConsistencyCheck>,
    /// Whether `--no-check` skipped the check.
    pub check_skipped: bool,
    /// Pool hit ratio over the measured phase.
    pub hit_ratio: f64,
    /// Read stalls / misses over the measured phase.
    pub read_stall_ratio: f64,
    /// How long read stalls waited.
    pub read_stall_wait_ms: StallWaitMs,
    /// Synchronous writes as % of all page writes.
    pub sync_write_pct: f64,
    /// Device I/O.
    pub io: IoRates,
    /// Data-device syncs.
    pub fsync: FsyncStats,
    /// The doublewrite buffer.
    pub doublewrite: DoublewriteStats,
    /// Bytes read and written per operation by kind (`bench::bytes`; `None`: no operation).
    pub bytes_per_op: Option<super::bytes::BytesPerOp>,
    /// The redo log (`None`: no log).
    pub log: Option<LogRates>,
    /// Real milliseconds spent waiting per list mutex.
    pub mutex_wait_ms: BTreeMap<String, f64>,
    /// Sum of `mutex_wait_ms`.
    pub mutex_wait_total_ms: f64,
    /// CPU use as % of the available cores (null when unknown).
    pub cpu_util: Option<f64>,
    /// `cpu-bound`, `cpu-starved`, `device-bound`, `lock-bound`, `wait-bound`, `mixed` or
    /// `unknown` (`bench::cpu`).
    pub bound: String,
    /// CPU details.
    pub cpu: CpuUtil,
    /// Whether the run measured a steady state.
    pub steadiness: Steadiness,
    /// The scheme's pool-config keys that differ from the defaults ([`config_diffs`]): from
    /// `--pool-config` and from the preset itself; empty when none.
    pub config_diff: Vec<ConfigDiff>,
    /// The timeline at the configured device-time step.
    pub timeline: Vec<TimelinePoint>,
    /// Raw pool counters over the measured phase.
    pub pool_stats: PoolStats,
    /// Raw device counters over the measured phase.
    pub device_stats: DeviceStats,
    /// The quantities that govern the pool's dynamics, beside the paper's
    /// ([`super::regime`]; `None` until the harness has measured them).
    pub regime: Option<super::regime::Regime>,
    /// How late the host woke sleeping threads in the measured phase, and the timing error
    /// that makes ([`super::lateness`]; `None`: not measured).
    pub host_lateness: Option<super::lateness::Lateness>,
    /// How the warm-up aged the emulated SSD's flash layout with the workload's own writes
    /// (`docs/devices.md`, "Aging the flash with the workload's writes"); `None`: not aged (no
    /// FTL, `age=off`, no writes counted, or a result saved before aging existed).
    #[serde(default)]
    pub device_aging: Option<crate::device::emulated::aging::AgingReport>,
    /// `--fill-pool`: how the pool was filled, untimed, before the warm-up
    /// ([`super::fill`]); `None` without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_fill: Option<super::fill::PoolFill>,
    /// `--prewarm`: the loaded database read into the pool before the workers started
    /// ([`super::prewarm`]); `None` without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prewarm: Option<super::prewarm::Prewarm>,
    /// The eviction end over the measured phase: dirty share by position and how often a
    /// miss's first tail scan would have found nothing to evict
    /// ([`crate::core::tail_profile`]); `None` without a pool or before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_profile: Option<crate::core::tail_profile::TailProfile>,
    /// `--repeat N` (N > 1): every repeat's record and the summary; the fields above are then
    /// the means ([`super::repeat`]). `None` for a single run.
    #[serde(flatten)]
    pub repeats: Option<Box<super::repeat::Repeats>>,
}

/// One operation (transaction) type's measurements.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct TypeResult {
    /// Type name (`new_order`, `read`, ...).
    pub name: String,
    /// Completed in the measured phase.
    pub count: u64,
    /// Completed per device second.
    pub throughput: f64,
    /// Latency (device time, retries included).
    pub latency_ms: LatencyMs,
    /// Its distribution, as [`RunResult::latency_cdf`].
    pub latency_cdf: Vec<(f64, f64)>,
    /// Conflicts retried.
    pub retries: u64,
    /// Rolled back by design.
    pub rollbacks: u64,
    /// Transactions of this type whose every attempt conflicted (not in `count`).
    pub aborts: u64,
}

/// One pool-config key whose value in a run differs from the defaults.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct ConfigDiff {
    /// The key ([`crate::pool::PoolConfig::KEYS`]).
    pub key: String,
    /// The run's value (TOML syntax).
    pub value: String,
    /// The default (TOML syntax; `unset` for an optional key left unset).
    pub default: String,
    /// `pool-config` (set by the `--pool-config` file) or `preset` (the scheme's preset).
    pub source: String,
}

/// The pool-config keys of `scheme` with `frames` frames and the `--pool-config` text
/// `overrides` that differ from the defaults: the `vanilla` preset with the same frames, what
/// `flashbuf config --default --frames N` prints (`frames` and `scheme` are not keys).
///
/// # Errors
/// [`Error::Config`] for a bad override (as [`crate::pool::PoolConfig::from_toml`]).
pub fn config_diffs(
    scheme: &crate::engine::Composition,
    frames: usize,
    overrides: Option<&str>,
) -> Result<Vec<ConfigDiff>> {
    use crate::pool::PoolConfig;
    let config = match overrides {
        Some(text) => PoolConfig::from_toml(scheme.clone(), frames, text)?,
        None => PoolConfig::for_scheme(scheme.clone(), frames),
    };
    let from_file: toml::Table = overrides
        .map(str::parse)
        .transpose()
        .map_err(|err| Error::Config(format!("pool config: {err}")))?
        .unwrap_or_default();
    let as_table = |config: &PoolConfig| {
        toml::Table::try_from(config).map_err(|err| Error::Config(format!("pool config: {err}")))
    };
    let values = as_table(&config)?;
    let defaults = as_table(&PoolConfig::for_scheme(
        crate::engine::Scheme::Vanilla,
        frames,
    ))?;
    let text =
        |value: Option<&toml::Value>| value.map_or_else(|| "unset".into(), ToString::to_string);
    Ok(PoolConfig::KEYS
        .iter()
        .filter(|key| values.get(key.name) != defaults.get(key.name))
        .map(|key| ConfigDiff {
            key: key.name.to_string(),
            value: text(values.get(key.name)),
            default: text(defaults.get(key.name)),
            source: if from_file.contains_key(key.name) {
                "pool-config"
            } else {
                "preset"
            }
            .to_string(),
        })
        .collect())
}

/// A scheme whose run failed.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RunFailure {
    /// Scheme name.
    pub scheme: String,
    /// What went wrong.
    pub error: String,
}

/// Everything one bench invocation produced.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct BenchResults {
    /// Provenance.
    pub header: Header,
    /// Completed runs, in scheme order.
    pub runs: Vec<RunResult>,
    /// Runs that stopped on an error.
    pub failures: Vec<RunFailure>,
}

impl BenchResults {
    /// The results as pretty JSON.
    ///
    /// # Errors
    /// Serialization errors (none expected).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self)
            .map_err(|err| Error::Config(format!("cannot serialize results: {err}")))
    }

    /// Writes results.json-format output to `path`.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn write_json(&self, path: &Path) -> Result<()> {
        let json = self.to_json()?;
        std::fs::write(path, json)
            .map_err(|err| Error::io(format!("writing {}", path.display()), err))
    }
}

/// What the comparison shows: notes on the run, then tables (the comparison, for record
/// workloads the transactions and the per-type tables, the per-mutex waits), then the failed
/// schemes. [`format_table`] prints it; report.html renders its tables as HTML.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    /// Lines on the run as a whole (workload, device, threads, time bases).
    pub notes: Vec<String>,
    /// The tables, the comparison first.
    pub tables: Vec<Table>,
    /// `scheme: warning` per run whose figures need care: too few whole cleaner cycles
    /// ([`super::cycles`]), a host that woke threads late ([`super::lateness`]).
    pub warnings: Vec<String>,
    /// `scheme: error` per failed scheme.
    pub failures: Vec<String>,
}

impl Comparison {
    /// As printed at the end of `flashbuf bench`: the notes, the tables (a blank line between
    /// two), `FAILED scheme: error` lines.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for note in &self.notes {
            let _ = writeln!(out, "{note}");
        }
        for (index, table) in self.tables.iter().enumerate() {
            if index > 0 {
                out.push('\n');
            }
            out.push_str(&table.to_text());
        }
        for warning in &self.warnings {
            let _ = writeln!(out, "warning: {warning}");
        }
        for failure in &self.failures {
            let _ = writeln!(out, "FAILED {failure}");
        }
        out
    }
}

/// The comparison table (and per-mutex waits, and failures) as text.
#[must_use]
pub fn format_table(results: &BenchResults) -> String {
    let mut text = comparison(results).to_text();
    let regime = super::regime::warnings(&results.runs);
    if !regime.is_empty() {
        text.push('\n');
        text.push_str(&regime);
    }
    text
}

/// The comparison of a bench's runs ([`Comparison`]).
#[must_use]
pub fn comparison(results: &BenchResults) -> Comparison {
    let failures = results
        .failures
        .iter()
        .map(|failure| format!("{}: {}", failure.scheme, failure.error))
        .collect();
    let Some(first) = results.runs.first() else {
        return Comparison {
            notes: vec!["no completed runs".to_string()],
            tables: Vec::new(),
            warnings: Vec::new(),
            failures,
        };
    };
    let record = first.unit == "tx/s";
    let mut tables = vec![main_table(results, record)];
    if record {
        tables.push(record_table(results));
        tables.push(type_table(results));
    }
    tables.extend(super::bytes::table(
        &first.unit,
        results
            .runs
            .iter()
            .map(|run| (run.scheme.as_str(), run.bytes_per_op.as_ref())),
    ));
    tables.extend(mutex_table(results));
    let mut warnings = super::cycles::warnings(&results.runs);
    warnings.extend(super::lateness::warnings(&results.runs));
    Comparison {
        notes: run_notes(first, record),
        tables,
        warnings,
        failures,
    }
}

/// The setup every run shares, and which figures are in which time base.
fn run_notes(first: &RunResult, record: bool) -> Vec<String> {
    let workload = if record {
        first.locality.clone()
    } else {
        format!(
            "{} (reads {:.0}%, locality {})",
            first.workload,
            first.read_ratio * 100.0,
            first.locality
        )
    };
    vec![
        format!(
            "workload {workload}, device {}, log {}, {} threads, buffer {} of {} pages, {:.1} s \
             measured (device time), model host {}",
            first.device,
            first.log_device.as_deref().unwrap_or("none"),
            first.threads,
            first.buffer_pages,
            first.db_pages,
            first.duration_s,
            first.model_host
        ),
        "throughput, latency, IOPS, stall waits and fsyncs in device time; mutex wait and CPU in \
         real time (columns: `flashbuf bench --help`)"
            .to_string(),
    ]
}

/// One row per scheme: throughput, ratio to the first, latency, stalls, I/O, waits, CPU.
fn main_table(results: &BenchResults, record: bool) -> Table {
    let mut table = Table::new(&[
        "scheme",
        if record { "tx/s" } else { "ops/s" },
        "ratio",
        "p95 ms",
        "p99 ms",
        "hit %",
        "stall %",
        "stall ms",
        "syncw %",
        "fsync ms",
        "r IOPS",
        "w IOPS",
        "bw %",
        "mutex ms",
        "CPU",
        "bound",
        "steady",
    ]);
    if let Some(label) = results.runs.first().and_then(super::repeat::repeats_label) {
        table = table.with_caption(format!(
            "each figure the mean of {label} (interleaved, fresh image copies); ±: half-width of \
             its 95% confidence interval (Student t); ratio: of the means, delta-method interval \
             over the repeat pairs"
        ));
    }
    if let Some(first) = results.runs.first() {
        for run in &results.runs {
            table.rows.push(table_row(run, first));
        }
    }
    table
}

/// Record workloads: tpmC, aborts, retries, rollbacks, device read share, the check.
fn record_table(results: &BenchResults) -> Table {
    let mut table = Table::new(&[
        "scheme",
        "tx/s",
        "tpmC",
        "aborts",
        "retries",
        "rollbacks",
        "dev reads %",
        "check",
    ])
    .with_caption(
        "transactions (device time); aborts = every attempt conflicted; check = workload \
         invariants + B+-tree check after the run",
    );
    for run in &results.runs {
        let check = match (&run.check, run.check_skipped) {
            (Some(check), _) if check.is_clean() => {
                format!("clean ({} rows, {} trees)", check.rows_scanned, check.trees)
            }
            (Some(check), _) => format!(
                "VIOLATED ({} + {} tree problems)",
                check.violations, check.tree_problems
            ),
            (None, true) => "skipped (--no-check)".to_string(),
            (None, false) => "-".to_string(),
        };
        let count = |path: &str, value: u64| cell(run, path, value as f64, 1.0, 0);
        table.rows.push(vec![
            run.scheme.clone(),
            cell(run, "throughput", run.throughput, 1.0, 0),
            run.tpmc
                .map_or_else(|| "-".to_string(), |tpmc| cell(run, "tpmc", tpmc, 1.0, 0)),
            count("aborts", run.aborts),
            count("retries", run.retries),
            count("rollbacks", run.rollbacks),
            run.device_read_share.map_or_else(
                || "-".to_string(),
                |share| cell(run, "device_read_share", share, 100.0, 1),
            ),
            check,
        ]);
    }
    table
}

/// Per transaction type and scheme: rate, latency (device time), aborts, retries, rollbacks.
fn type_table(results: &BenchResults) -> Table {
    let mut table = Table::new(&[
        "scheme",
        "type",
        "count",
        "tx/s",
        "mean ms",
        "p95 ms",
        "p99 ms",
        "aborts",
        "retries",
        "rollbacks",
    ])
    .with_caption(
        "per transaction type (latency in device-time ms; aborts = every attempt conflicted, \
         not in count)",
    );
    for run in &results.runs {
        for kind in &run.per_type {
            let typed = |field: &str, value: f64, decimals: usize| {
                cell(
                    run,
                    &format!("per_type.{}.{field}", kind.name),
                    value,
                    1.0,
                    decimals,
                )
            };
            table.rows.push(vec![
                run.scheme.clone(),
                kind.name.clone(),
                kind.count.to_string(),
                typed("throughput", kind.throughput, 1),
                typed("latency_ms.mean", kind.latency_ms.mean, 3),
                typed("latency_ms.p95", kind.latency_ms.p95, 3),
                typed("latency_ms.p99", kind.latency_ms.p99, 3),
                kind.aborts.to_string(),
                kind.retries.to_string(),
                kind.rollbacks.to_string(),
            ]);
        }
    }
    table
}

fn table_row(run: &RunResult, first: &RunResult) -> Vec<String> {
    let cpu = match (run.cpu.cores_used, run.cpu.pct_of_available) {
        (Some(cores), Some(pct)) => format!(
            "{cores:.2} ({}%)",
            cell(run, "cpu.pct_of_available", pct, 1.0, 0)
        ),
        _ => "-".to_string(),
    };
    vec![
        run.scheme.clone(),
        cell(run, "throughput", run.throughput, 1.0, 0),
        super::repeat::ratio_cell(run, first),
        cell(run, "latency_ms.p95", run.latency_ms.p95, 1.0, 3),
        cell(run, "latency_ms.p99", run.latency_ms.p99, 1.0, 3),
        cell(run, "hit_ratio", run.hit_ratio, 100.0, 1),
        cell(run, "read_stall_ratio", run.read_stall_ratio, 100.0, 1),
        cell(
            run,
            "read_stall_wait_ms.mean",
            run.read_stall_wait_ms.mean,
            1.0,
            2,
        ),
        cell(run, "sync_write_pct", run.sync_write_pct, 1.0, 1),
        cell(run, "fsync.mean_ms", run.fsync.mean_ms, 1.0, 2),
        cell(run, "io.read_iops", run.io.read_iops, 1.0, 0),
        cell(run, "io.write_iops", run.io.write_iops, 1.0, 0),
        run.io.bandwidth_share.map_or_else(
            || "-".to_string(),
            |share| cell(run, "io.bandwidth_share", share, 100.0, 0),
        ),
        cell(run, "mutex_wait_total_ms", run.mutex_wait_total_ms, 1.0, 1),
        cpu,
        run.bound.clone(),
        steady_cell(run),
    ]
}

/// `yes`, or `no` with the figure that failed and the window (the whole verdict is in
/// results.json and the report's setup); for repeats, how many were steady (`yes (3/3)`).
fn steady_cell(run: &RunResult) -> String {
    if let Some(repeats) = &run.repeats {
        let steady = repeats.completed().filter(|r| r.steadiness.steady).count();
        let of = repeats.completed().count();
        return format!(
            "{} ({steady}/{of})",
            if steady == of { "yes" } else { "no" }
        );
    }
    let s = &run.steadiness;
    if s.steady {
        format!("yes ({:.1}s w)", s.window_s)
    } else if s.windows < super::timeline::MIN_WINDOWS {
        "no (short)".to_string()
    } else if s.cv > super::timeline::STEADY_CV {
        format!("no (cv {:.2}, {:.1}s w)", s.cv, s.window_s)
    } else {
        format!(
            "no (drift {:+.0}% ±{:.0}%)",
            s.drift * 100.0,
            s.drift_ci95 * 100.0
        )
    }
}

/// Waits per list mutex and scheme (`None`: no run reported a mutex).
fn mutex_table(results: &BenchResults) -> Option<Table> {
    let names: std::collections::BTreeSet<&String> = results
        .runs
        .iter()
        .flat_map(|run| run.mutex_wait_ms.keys())
        .collect();
    if names.is_empty() {
        return None;
    }
    let mut header = vec!["scheme"];
    header.extend(names.iter().map(|name| name.as_str()));
    let mut table = Table::new(&header).with_caption("mutex wait per list mutex (ms, real time)");
    for run in &results.runs {
        let mut row = vec![run.scheme.clone()];
        row.extend(names.iter().map(|name| {
            run.mutex_wait_ms.get(*name).map_or_else(
                || "-".to_string(),
                |ms| cell(run, &format!("mutex_wait_ms.{name}"), *ms, 1.0, 1),
            )
        }));
        table.rows.push(row);
    }
    Some(table)
}

/// This host's name (`unknown` if the system will not say).
#[must_use]
pub fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length, which is passed along.
    let status = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    if status != 0 {
        return "unknown".into();
    }
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    String::from_utf8_lossy(&buffer[..end]).into_owned()
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
#[must_use]
pub fn utc_now_iso8601() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    iso8601_from_unix(secs)
}

/// Formats Unix seconds as ISO 8601 UTC (proleptic Gregorian, days-from-civil inverse).
#[must_use]
pub fn iso8601_from_unix(secs: u64) -> String {
    let days = (secs / 86_400).cast_signed();
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_dates() {
        assert_eq!(iso8601_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601_from_unix(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn the_header_names_the_build() {
        let header = Header::new("flashbuf bench");
        let build = header.flashbuf_build.clone();
        let commit = build.strip_suffix("-dirty").unwrap_or(&build);
        assert!(
            build == "unknown"
                || (commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit())),
            "{build}"
        );
        assert_eq!(
            header.version_and_build(),
            format!("{} (git {build})", crate::VERSION)
        );
        let old = Header {
            flashbuf_build: String::new(),
            ..header
        };
        assert_eq!(old.version_and_build(), crate::VERSION);
    }
}
