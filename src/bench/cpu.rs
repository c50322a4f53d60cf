//! CPU utilisation of this process, to classify a run as device-bound or CPU-bound.
//!
//! Reads `utime + stime` (fields 14 and 15, in clock ticks) from `/proc/self/stat` at the start
//! and end of the measured phase and divides the CPU time used by the wall time: the result is
//! the number of cores the process kept busy. On hosts without `/proc` the figures are `None`.
//!
//! Heuristic ([`classify`]): at or above [`CPU_BOUND_SHARE`] of the available cores the run is
//! `cpu-bound` (the host, not the device, limits throughput, so scheme differences are muted);
//! at or below [`DEVICE_BOUND_SHARE`] it is `device-bound` (workers mostly wait for I/O, the
//! regime the papers measure); in between `mixed`. [`classify_run`] adds `lock-bound`: not
//! CPU-bound, but the workers spend most of their time waiting on list mutexes;
//! [`on_latency_free_device`] makes it `wait-bound` on `mem`, which has no device time. Other processes on a shared host take cores
//! this heuristic cannot see, so a `mixed` run on a busy host may really be CPU-bound.

use std::time::Duration;

use serde::Serialize;

/// Share of the available cores at or above which a run counts as CPU-bound.
pub const CPU_BOUND_SHARE: f64 = 0.85;
/// Share of the available cores at or below which a run counts as device-bound.
pub const DEVICE_BOUND_SHARE: f64 = 0.6;

/// Process CPU time at one instant.
#[derive(Debug, Clone, Copy)]
pub struct CpuSample {
    cpu_seconds: Option<f64>,
}

impl CpuSample {
    /// Reads the process's CPU time now.
    #[must_use]
    pub fn now() -> CpuSample {
        CpuSample {
            cpu_seconds: process_cpu_seconds(),
        }
    }
}

/// CPU use over an interval.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct CpuUtil {
    /// Cores kept busy on average (CPU seconds / wall seconds); `None` without `/proc`.
    pub cores_used: Option<f64>,
    /// `cores_used` as a percentage of the available cores.
    pub pct_of_available: Option<f64>,
    /// Cores available to this process.
    pub available_cores: usize,
    /// `cpu-bound`, `device-bound`, `lock-bound`, `mixed` or `unknown` (see the module docs).
    pub bound: String,
}

/// CPU use between two samples taken `wall` apart.
#[must_use]
pub fn utilisation(start: CpuSample, end: CpuSample, wall: Duration) -> CpuUtil {
    let available_cores = available_cores();
    let cores_used = match (start.cpu_seconds, end.cpu_seconds) {
        (Some(a), Some(b)) if wall.as_secs_f64() > 0.0 => {
            Some((b - a).max(0.0) / wall.as_secs_f64())
        }
        _ => None,
    };
    let pct_of_available = cores_used.map(|cores| 100.0 * cores / available_cores as f64);
    CpuUtil {
        cores_used,
        pct_of_available,
        available_cores,
        bound: classify(cores_used, available_cores).to_string(),
    }
}

/// The classification heuristic of the module docs.
#[must_use]
pub fn classify(cores_used: Option<f64>, available_cores: usize) -> &'static str {
    let Some(cores) = cores_used else {
        return "unknown";
    };
    let share = cores / available_cores.max(1) as f64;
    if share >= CPU_BOUND_SHARE {
        "cpu-bound"
    } else if share <= DEVICE_BOUND_SHARE {
        "device-bound"
    } else {
        "mixed"
    }
}

/// Share of the workers' time spent waiting on list mutexes above which a run that is not
/// CPU-bound counts as `lock-bound`.
pub const LOCK_BOUND_SHARE: f64 = 0.5;

/// [`classify`], refined with the share of the workers' time spent waiting on list mutexes
/// (`mutex wait / (threads x wall)`): a run that is not CPU-bound but whose workers mostly wait
/// on a mutex is `lock-bound`, not `device-bound`.
#[must_use]
pub fn classify_run(
    cores_used: Option<f64>,
    available_cores: usize,
    mutex_wait_share: f64,
) -> &'static str {
    let by_cpu = classify(cores_used, available_cores);
    if by_cpu != "cpu-bound" && mutex_wait_share > LOCK_BOUND_SHARE {
        "lock-bound"
    } else {
        by_cpu
    }
}

/// The verdict on a device without latency (`mem`): workers that are neither busy nor waiting
/// on list mutexes wait on page latches, background threads or the log there, not on a device,
/// so `device-bound` becomes `wait-bound`; other verdicts stay.
#[must_use]
pub fn on_latency_free_device(bound: &'static str) -> &'static str {
    if bound == "device-bound" {
        "wait-bound"
    } else {
        bound
    }
}

/// Cores available to this process (at least 1).
#[must_use]
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may contain spaces: split after the
    // last ')'. Fields after it start at field 3 (state), so utime (14) is index 11.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks <= 0 {
        return None;
    }
    Some((utime + stime) / ticks as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_share_of_cores() {
        assert_eq!(classify(Some(1.9), 2), "cpu-bound");
        assert_eq!(classify(Some(0.5), 2), "device-bound");
        assert_eq!(classify(Some(1.4), 2), "mixed");
        assert_eq!(classify(None, 2), "unknown");
        assert_eq!(classify_run(Some(0.5), 2, 0.8), "lock-bound");
        assert_eq!(classify_run(Some(1.9), 2, 0.8), "cpu-bound");
        assert_eq!(classify_run(Some(0.5), 2, 0.1), "device-bound");
        assert_eq!(on_latency_free_device("device-bound"), "wait-bound");
        assert_eq!(on_latency_free_device("cpu-bound"), "cpu-bound");
    }

    #[test]
    fn measures_busy_work() {
        let start = CpuSample::now();
        let begin = std::time::Instant::now();
        let mut x = 0u64;
        while begin.elapsed() < Duration::from_millis(200) {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let util = utilisation(start, CpuSample::now(), begin.elapsed());
        if let Some(cores) = util.cores_used {
            assert!(cores > 0.0, "a spinning thread used no CPU: {cores}");
        }
    }
}
