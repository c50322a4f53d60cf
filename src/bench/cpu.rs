//! CPU utilisation of this process, to classify a run as device-bound or CPU-bound.
//!
//! Reads `utime + stime` (fields 14 and 15, in clock ticks) from `/proc/self/stat` at the start
//! and end of the measured phase and divides the CPU time used by the wall time: the result is
//! the number of cores the process kept busy. It also sums the run-queue wait of every thread
//! (the second field of `/proc/self/task/*/schedstat`, nanoseconds spent runnable but not
//! running): divided by the wall time, the number of threads that on average wanted a core and
//! had none. On hosts without `/proc` (or without schedstat) the figures are `None`.
//!
//! Heuristic ([`classify`]): at or above [`CPU_BOUND_SHARE`] of the available cores the run is
//! `cpu-bound` (the host, not the device, limits throughput, so scheme differences are muted);
//! at or below [`DEVICE_BOUND_SHARE`] it is `device-bound` (workers mostly wait for I/O, the
//! regime the papers measure); in between `mixed`. [`classify_run`] adds `lock-bound`: not
//! CPU-bound, but the workers spend most of their time waiting on list mutexes;
//! [`on_latency_free_device`] makes it `wait-bound` on `mem`, which has no device time.
//!
//! Other processes on a shared host take cores: a run whose threads waited for a core at least
//! [`CPU_STARVED_SHARE`] of the time they wanted one (run-queue wait / (run-queue wait + CPU
//! time)), and spent at least [`CPU_STARVED_THREAD_SHARE`] of their whole time so waiting, is
//! `cpu-starved` (the host was short of CPU, not the device nor flashbuf's waits), before any
//! other verdict but `cpu-bound`. The second condition matters on emulated devices: 64 threads
//! that mostly wait for device time use little CPU, so a run queue of one thread on average is
//! half their CPU time yet 1.5% of their time, which bends the measured device times by no more
//! than that. Threads that exit during the phase take their run-queue wait with them, so the
//! shares are lower bounds.

use std::time::Duration;

use serde::Serialize;

/// Share of the available cores at or above which a run counts as CPU-bound.
pub const CPU_BOUND_SHARE: f64 = 0.85;
/// Share of the available cores at or below which a run counts as device-bound.
pub const DEVICE_BOUND_SHARE: f64 = 0.6;

/// Share of the time threads wanted a core that they spent waiting for one, at or above which
/// a run that is not CPU-bound counts as `cpu-starved`.
pub const CPU_STARVED_SHARE: f64 = 0.5;

/// Share of the threads' whole time spent waiting for a core at or above which (with
/// [`CPU_STARVED_SHARE`]) a run counts as `cpu-starved`.
pub const CPU_STARVED_THREAD_SHARE: f64 = 0.05;

/// Process CPU time and run-queue wait at one instant.
#[derive(Debug, Clone, Copy)]
pub struct CpuSample {
    cpu_seconds: Option<f64>,
    run_queue_seconds: Option<f64>,
}

impl CpuSample {
    /// Reads the process's CPU time and its threads' run-queue wait now.
    #[must_use]
    pub fn now() -> CpuSample {
        CpuSample {
            cpu_seconds: process_cpu_seconds(),
            run_queue_seconds: process_run_queue_seconds(),
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
    /// Threads that on average were runnable but waited for a core (run-queue wait seconds /
    /// wall seconds); `None` without `/proc/self/task/*/schedstat`.
    pub run_queue_wait_threads: Option<f64>,
    /// Run-queue wait / (run-queue wait + CPU time): the share of the time the process's
    /// threads wanted a core that they had none.
    pub run_queue_wait_share: Option<f64>,
    /// `cpu-bound`, `cpu-starved`, `device-bound`, `lock-bound`, `wait-bound`, `mixed` or
    /// `unknown` (see the module docs).
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
    let run_queue_wait_threads = match (start.run_queue_seconds, end.run_queue_seconds) {
        (Some(a), Some(b)) if wall.as_secs_f64() > 0.0 => {
            Some((b - a).max(0.0) / wall.as_secs_f64())
        }
        _ => None,
    };
    let run_queue_wait_share = match (run_queue_wait_threads, cores_used) {
        (Some(waiting), Some(running)) if waiting + running > 0.0 => {
            Some(waiting / (waiting + running))
        }
        _ => None,
    };
    CpuUtil {
        cores_used,
        pct_of_available,
        available_cores,
        run_queue_wait_threads,
        run_queue_wait_share,
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

/// [`classify`], refined with the share of the time the threads waited for a core
/// ([`CpuUtil::run_queue_wait_share`]) and the share of the workers' time spent waiting on list
/// mutexes (`mutex wait / (threads x wall)`): a run that is not CPU-bound but whose `threads`
/// mostly waited for a core when they wanted one, and for a noticeable share of their time, is
/// `cpu-starved`; else one whose workers mostly wait on a mutex is `lock-bound`, not
/// `device-bound`.
#[must_use]
pub fn classify_run(cpu: &CpuUtil, mutex_wait_share: f64, threads: usize) -> &'static str {
    let by_cpu = classify(cpu.cores_used, cpu.available_cores);
    let waited_for_a_core = cpu
        .run_queue_wait_threads
        .is_some_and(|waiting| waiting / threads.max(1) as f64 >= CPU_STARVED_THREAD_SHARE);
    if by_cpu == "cpu-bound" {
        by_cpu
    } else if waited_for_a_core
        && cpu
            .run_queue_wait_share
            .is_some_and(|share| share >= CPU_STARVED_SHARE)
    {
        "cpu-starved"
    } else if mutex_wait_share > LOCK_BOUND_SHARE {
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

/// The run-queue wait in a `schedstat` line (`/proc/PID/task/TID/schedstat`: nanoseconds on a
/// CPU, nanoseconds runnable but waiting on a run queue, time slices), in nanoseconds.
#[must_use]
pub fn parse_schedstat_wait_ns(line: &str) -> Option<u64> {
    let mut fields = line.split_whitespace();
    let _on_cpu: u64 = fields.next()?.parse().ok()?;
    fields.next()?.parse().ok()
}

/// The run-queue wait of every live thread of this process, summed, in seconds; `None` when no
/// thread's schedstat could be read.
fn process_run_queue_seconds() -> Option<f64> {
    let mut total_ns = 0u64;
    let mut read_any = false;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let Ok(line) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        if let Some(wait) = parse_schedstat_wait_ns(&line) {
            total_ns = total_ns.saturating_add(wait);
            read_any = true;
        }
    }
    read_any.then(|| total_ns as f64 / 1e9)
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

    fn util(cores_used: f64, run_queue_wait_share: Option<f64>) -> CpuUtil {
        CpuUtil {
            cores_used: Some(cores_used),
            pct_of_available: Some(50.0 * cores_used),
            available_cores: 2,
            run_queue_wait_threads: run_queue_wait_share.map(|s| s * cores_used / (1.0 - s)),
            run_queue_wait_share,
            bound: String::new(),
        }
    }

    #[test]
    fn classifies_by_share_of_cores() {
        assert_eq!(classify(Some(1.9), 2), "cpu-bound");
        assert_eq!(classify(Some(0.5), 2), "device-bound");
        assert_eq!(classify(Some(1.4), 2), "mixed");
        assert_eq!(classify(None, 2), "unknown");
        assert_eq!(classify_run(&util(0.5, None), 0.8, 2), "lock-bound");
        assert_eq!(classify_run(&util(1.9, None), 0.8, 2), "cpu-bound");
        assert_eq!(classify_run(&util(0.5, None), 0.1, 2), "device-bound");
        assert_eq!(on_latency_free_device("device-bound"), "wait-bound");
        assert_eq!(on_latency_free_device("cpu-bound"), "cpu-bound");
    }

    #[test]
    fn threads_waiting_for_a_core_make_a_run_cpu_starved() {
        // Little CPU, but the threads waited for a core as long as they ran: the host was
        // short of CPU, which `mem` must not report as waiting inside flashbuf.
        let starved = util(0.1, Some(0.6));
        assert_eq!(classify_run(&starved, 0.0, 2), "cpu-starved");
        assert_eq!(
            on_latency_free_device(classify_run(&starved, 0.0, 2)),
            "cpu-starved"
        );
        // Starvation explains mutex waits too (a holder waiting for a core).
        assert_eq!(classify_run(&starved, 0.8, 2), "cpu-starved");
        // A short run-queue wait changes nothing; a busy process stays cpu-bound.
        assert_eq!(classify_run(&util(0.1, Some(0.2)), 0.0, 2), "device-bound");
        assert_eq!(
            on_latency_free_device(classify_run(&util(0.1, Some(0.2)), 0.0, 2)),
            "wait-bound"
        );
        assert_eq!(classify_run(&util(1.9, Some(0.9)), 0.0, 2), "cpu-bound");
    }

    #[test]
    fn many_threads_waiting_for_the_device_are_not_starved_by_a_short_run_queue() {
        // TPC-C on an emulated SSD: 64 threads used 0.47 cores and one thread on average sat in
        // the run queue: two thirds of the CPU time they wanted, 1.5% of their time.
        let emulated = util(0.47, Some(0.66));
        assert_eq!(classify_run(&emulated, 0.0, 64), "device-bound");
        // The same run queue for 4 threads is a quarter of their time: starved.
        assert_eq!(classify_run(&emulated, 0.0, 4), "cpu-starved");
    }

    #[test]
    fn parses_the_run_queue_wait_of_a_schedstat_line() {
        assert_eq!(
            parse_schedstat_wait_ns("287997582 437160089604 1240\n"),
            Some(437_160_089_604)
        );
        assert_eq!(parse_schedstat_wait_ns("5 0 1"), Some(0));
        assert_eq!(parse_schedstat_wait_ns("287997582"), None);
        assert_eq!(parse_schedstat_wait_ns(""), None);
        assert_eq!(parse_schedstat_wait_ns("12 x 3"), None);
        assert_eq!(parse_schedstat_wait_ns("x 12 3"), None);
    }

    #[test]
    fn reads_this_process_run_queue_wait() {
        // Linux with schedstat: a number, never negative; elsewhere None.
        if std::path::Path::new("/proc/self/task").exists() {
            let sample = CpuSample::now();
            if let Some(seconds) = sample.run_queue_seconds {
                assert!(seconds >= 0.0);
            }
        }
        let start = CpuSample::now();
        let util = utilisation(start, CpuSample::now(), Duration::from_millis(10));
        if let Some(share) = util.run_queue_wait_share {
            assert!((0.0..=1.0).contains(&share), "{share}");
        }
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
