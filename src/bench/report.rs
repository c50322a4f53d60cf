//! Results of a bench invocation: the serializable record (results.json, the architecture.md
//! contract) and the comparison table printed at the end.
//!
//! results.json:
//!
//! ```text
//! { "header": { flashbuf_version, date, host_cores, command_line, time_base },
//!   "runs": [ { scheme, workload, read_ratio, locality, device, threads, buffer_pages, db_pages,
//!               page_size, duration_s, duration_device_s, warmup_s, time_scale, ops,
//!               throughput, unit, latency_ms {mean,p50,p95,p99,max}, read_ops, write_ops,
//!               hit_ratio,
//!               read_stall_ratio, sync_write_pct,
//!               io {read_iops,write_iops,read_mbps,write_mbps,write_amplification},
//!               mutex_wait_ms {name: ms}, mutex_wait_total_ms, cpu_util, cpu {..},
//!               timeline [ {t_s, throughput, free_frames, dirty_pages} ],
//!               pool_stats {..}, device_stats {..} } ],
//!   "failures": [ { scheme, error } ] }
//! ```
//!
//! Throughput, IOPS, MB/s, latencies and `duration_device_s` are in device time; `duration_s`,
//! `warmup_s`, timeline `t_s`, mutex waits and CPU are real time (see `header.time_base`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::cpu::CpuUtil;
use super::timeline::TimelinePoint;
use crate::device::DeviceStats;
use crate::error::{Error, Result};
use crate::pool::PoolStats;

/// What `header.time_base` says.
pub const TIME_BASE_NOTE: &str = "throughput, IOPS, MB/s, latency and duration_device_s are in \
     device time (real x time_scale for rates, real / time_scale for latencies); duration_s, \
     warmup_s, timeline t_s, mutex waits and CPU are real time";

/// The top of results.json.
#[derive(Debug, Clone, Serialize)]
pub struct Header {
    /// `CARGO_PKG_VERSION`.
    pub flashbuf_version: String,
    /// UTC date and time the bench started, ISO 8601.
    pub date: String,
    /// Cores available to the process.
    pub host_cores: usize,
    /// The command line.
    pub command_line: String,
    /// Which figures are in device time.
    pub time_base: String,
}

impl Header {
    /// A header for now.
    #[must_use]
    pub fn new(command_line: &str) -> Header {
        Header {
            flashbuf_version: env!("CARGO_PKG_VERSION").to_string(),
            date: utc_now_iso8601(),
            host_cores: super::cpu::available_cores(),
            command_line: command_line.to_string(),
            time_base: TIME_BASE_NOTE.to_string(),
        }
    }
}

/// Latency figures in milliseconds of device time.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
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

/// Device I/O rates in device time over the measured phase.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
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
}

/// One scheme's measured run.
#[derive(Debug, Clone, Serialize)]
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
    /// Worker threads.
    pub threads: usize,
    /// Frames in the pool.
    pub buffer_pages: usize,
    /// Database pages.
    pub db_pages: u64,
    /// Page size in bytes.
    pub page_size: usize,
    /// Measured phase, real seconds.
    pub duration_s: f64,
    /// Measured phase, device seconds (real / time_scale).
    pub duration_device_s: f64,
    /// Warm-up, real seconds.
    pub warmup_s: f64,
    /// Device time runs this many times slower than real time.
    pub time_scale: f64,
    /// Operations completed in the measured phase.
    pub ops: u64,
    /// Operations per device second.
    pub throughput: f64,
    /// Unit of `throughput`.
    pub unit: String,
    /// Per-operation latency.
    pub latency_ms: LatencyMs,
    /// Reads begun in the measured phase (with `write_ops`: the achieved read ratio).
    pub read_ops: u64,
    /// Writes begun in the measured phase.
    pub write_ops: u64,
    /// Pool hit ratio over the measured phase.
    pub hit_ratio: f64,
    /// Read stalls / misses over the measured phase.
    pub read_stall_ratio: f64,
    /// Synchronous writes as % of all page writes.
    pub sync_write_pct: f64,
    /// Device I/O.
    pub io: IoRates,
    /// Real milliseconds spent waiting per list mutex.
    pub mutex_wait_ms: BTreeMap<String, f64>,
    /// Sum of `mutex_wait_ms`.
    pub mutex_wait_total_ms: f64,
    /// CPU use as % of the available cores (null when unknown).
    pub cpu_util: Option<f64>,
    /// CPU details and the device-/CPU-bound classification.
    pub cpu: CpuUtil,
    /// Per-second throughput.
    pub timeline: Vec<TimelinePoint>,
    /// Raw pool counters over the measured phase.
    pub pool_stats: PoolStats,
    /// Raw device counters over the measured phase.
    pub device_stats: DeviceStats,
}

/// A scheme whose run failed.
#[derive(Debug, Clone, Serialize)]
pub struct RunFailure {
    /// Scheme name.
    pub scheme: String,
    /// What went wrong.
    pub error: String,
}

/// Everything one bench invocation produced.
#[derive(Debug, Clone, Serialize)]
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

/// The comparison table (and per-mutex waits, and failures) as text.
#[must_use]
pub fn format_table(results: &BenchResults) -> String {
    let mut out = String::new();
    let Some(first) = results.runs.first() else {
        let _ = writeln!(out, "no completed runs");
        append_failures(&mut out, results);
        return out;
    };
    let _ = writeln!(
        out,
        "workload {} (reads {:.0}%, locality {}), device {} (time scale {}), {} threads, \
         buffer {} of {} pages, {:.1} s measured",
        first.workload,
        first.read_ratio * 100.0,
        first.locality,
        first.device,
        first.time_scale,
        first.threads,
        first.buffer_pages,
        first.db_pages,
        first.duration_s
    );
    let _ = writeln!(
        out,
        "throughput, latency and IOPS in device time; mutex wait and CPU in real time"
    );
    let header = [
        "scheme", "ops/s", "ratio", "p95 ms", "p99 ms", "hit %", "stall %", "syncw %", "mutex ms",
        "r IOPS", "w IOPS", "CPU", "bound",
    ];
    let mut rows = vec![header.iter().map(ToString::to_string).collect::<Vec<_>>()];
    for run in &results.runs {
        rows.push(table_row(run, first.throughput));
    }
    append_aligned(&mut out, &rows);
    append_mutex_table(&mut out, results);
    append_failures(&mut out, results);
    out
}

fn table_row(run: &RunResult, base_throughput: f64) -> Vec<String> {
    let ratio = if base_throughput > 0.0 {
        format!("{:.2}x", run.throughput / base_throughput)
    } else {
        "-".to_string()
    };
    let cpu = match (run.cpu.cores_used, run.cpu.pct_of_available) {
        (Some(cores), Some(pct)) => format!("{cores:.2} ({pct:.0}%)"),
        _ => "-".to_string(),
    };
    vec![
        run.scheme.clone(),
        format!("{:.0}", run.throughput),
        ratio,
        format!("{:.3}", run.latency_ms.p95),
        format!("{:.3}", run.latency_ms.p99),
        format!("{:.1}", run.hit_ratio * 100.0),
        format!("{:.1}", run.read_stall_ratio * 100.0),
        format!("{:.1}", run.sync_write_pct),
        format!("{:.1}", run.mutex_wait_total_ms),
        format!("{:.0}", run.io.read_iops),
        format!("{:.0}", run.io.write_iops),
        cpu,
        run.cpu.bound.clone(),
    ]
}

fn append_mutex_table(out: &mut String, results: &BenchResults) {
    let names: std::collections::BTreeSet<&String> = results
        .runs
        .iter()
        .flat_map(|run| run.mutex_wait_ms.keys())
        .collect();
    if names.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nmutex wait per list mutex (ms, real time)");
    let mut header = vec!["scheme".to_string()];
    header.extend(names.iter().map(|name| (*name).clone()));
    let mut rows = vec![header];
    for run in &results.runs {
        let mut row = vec![run.scheme.clone()];
        row.extend(names.iter().map(|name| {
            run.mutex_wait_ms
                .get(*name)
                .map_or_else(|| "-".to_string(), |ms| format!("{ms:.1}"))
        }));
        rows.push(row);
    }
    append_aligned(out, &rows);
}

fn append_failures(out: &mut String, results: &BenchResults) {
    for failure in &results.failures {
        let _ = writeln!(out, "FAILED {}: {}", failure.scheme, failure.error);
    }
}

/// Appends rows as a left-aligned first column and right-aligned others.
fn append_aligned(out: &mut String, rows: &[Vec<String>]) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|row| row.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let width = widths.get(c).copied().unwrap_or(0);
            if c == 0 {
                let _ = write!(line, "{cell:<width$}");
            } else {
                let _ = write!(line, "  {cell:>width$}");
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
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
}
