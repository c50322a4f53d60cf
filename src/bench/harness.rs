//! The bench harness: each scheme, in order, on a fresh device with the same database image.
//!
//! Per scheme: open a fresh device from the spec, load the workload's image, build the target
//! with the [`TargetFactory`], start `threads` workers, run the warm-up (unmeasured), then the
//! measured phase, stop the workers, shut the target down (final write-back). Measured: per-op
//! latency (HdrHistogram per worker, merged), a per-second timeline, pool and device counter
//! deltas, process CPU.
//!
//! Threads: the workers and one control thread (the caller). Shared state is the [`Control`]
//! block: the phase word, per-worker op counters and the first error; no locks on the op path
//! (the error slot's mutex is taken only when a worker fails). A worker error moves the phase
//! to STOP, the run ends and the failure is recorded under the scheme's name.
//!
//! Bounds: the control loop ticks every [`TICK`] and ends after `warmup + duration` (warm-up
//! `UntilFull` has its own `max`); workers loop until the phase is STOP.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use parking_lot::Mutex;

use super::cpu::{CpuSample, utilisation};
use super::report::{BenchResults, Header, IoRates, LatencyMs, RunFailure, RunResult};
use super::timeline::TimelineRecorder;
use super::{BenchConfig, BenchTarget, TargetFactory, WarmUp};
use crate::device::{DeviceStats, OpenOptions, SharedDevice, open};
use crate::error::{Error, Result};
use crate::pool::{PoolStats, Scheme};
use crate::workload::synthetic::{OpKind, SyntheticWorkload};

/// How often the control thread wakes up.
pub const TICK: Duration = Duration::from_millis(100);
/// Highest latency the histograms hold (100 s); longer ops are clamped to it.
const MAX_LATENCY_NS: u64 = 100_000_000_000;

const PHASE_WARMUP: u8 = 0;
const PHASE_MEASURE: u8 = 1;
const PHASE_STOP: u8 = 2;

/// A counter on its own cache line, so workers do not share lines.
#[derive(Debug, Default)]
#[repr(align(128))]
struct PaddedCounter(AtomicU64);

/// State shared between the control thread and the workers.
#[derive(Debug)]
struct Control {
    phase: AtomicU8,
    ops: Vec<PaddedCounter>,
    error: Mutex<Option<(usize, Error)>>,
}

impl Control {
    fn new(threads: usize) -> Control {
        Control {
            phase: AtomicU8::new(PHASE_WARMUP),
            ops: (0..threads).map(|_| PaddedCounter::default()).collect(),
            error: Mutex::new(None),
        }
    }

    fn total_ops(&self) -> u64 {
        self.ops.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }

    fn stopped(&self) -> bool {
        self.phase.load(Ordering::Acquire) == PHASE_STOP
    }

    fn fail(&self, thread: usize, error: Error) {
        let mut slot = self.error.lock();
        if slot.is_none() {
            *slot = Some((thread, error));
        }
        self.phase.store(PHASE_STOP, Ordering::Release);
    }
}

/// Runs every scheme of `config` and collects the results.
///
/// A failure to set a scheme up (device, image, factory) aborts the bench with an error naming
/// the scheme; a failure while running (a worker's or the shutdown's error) is recorded in
/// [`BenchResults::failures`] and the next scheme runs.
///
/// # Errors
/// [`Error::Config`] for a bad configuration or a scheme that cannot be set up.
pub fn run_bench(config: &BenchConfig, factory: &TargetFactory) -> Result<BenchResults> {
    config.validate()?;
    if config.buffer_pages as u64 > config.workload.db_pages {
        return Err(Error::Config(format!(
            "the buffer ({} pages) is larger than the database ({} pages)",
            config.buffer_pages, config.workload.db_pages
        )));
    }
    let workload = SyntheticWorkload::new(config.workload.clone())?;
    let mut results = BenchResults {
        header: Header::new(&config.command_line),
        runs: Vec::new(),
        failures: Vec::new(),
    };
    for &scheme in &config.schemes {
        let (device, target) = set_up(config, &workload, factory, scheme).map_err(|err| {
            let why = match err {
                Error::Config(message) => message,
                other => other.to_string(),
            };
            Error::Config(format!("scheme `{scheme}`: setup failed: {why}"))
        })?;
        match run_scheme(config, &workload, scheme, &device, &*target) {
            Ok(run) => results.runs.push(run),
            Err(err) => results.failures.push(RunFailure {
                scheme: scheme.name().to_string(),
                error: err.to_string(),
            }),
        }
    }
    Ok(results)
}

fn set_up(
    config: &BenchConfig,
    workload: &SyntheticWorkload,
    factory: &TargetFactory,
    scheme: Scheme,
) -> Result<(SharedDevice, Arc<dyn BenchTarget>)> {
    let options = OpenOptions {
        page_size: config.workload.page_size,
        pages: config.workload.db_pages,
        create: true,
    };
    let device = open(&config.device, &options)?;
    let scale = device.info().time_scale;
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::Config(format!(
            "device reports time scale {scale}; it must be positive"
        )));
    }
    workload.load(&device)?;
    let target = factory(
        scheme,
        Arc::clone(&device),
        config.buffer_pages,
        config.pool_config.as_deref(),
    )?;
    if target.pages() < config.workload.db_pages || target.page_size() != options.page_size {
        return Err(Error::Config(format!(
            "target has {} pages of {} bytes, the workload needs {} of {}",
            target.pages(),
            target.page_size(),
            config.workload.db_pages,
            options.page_size
        )));
    }
    Ok((device, target))
}

/// Counter snapshots at a phase boundary.
struct Snapshot {
    at: Instant,
    ops: u64,
    pool: PoolStats,
    device: DeviceStats,
    cpu: CpuSample,
}

impl Snapshot {
    fn take(control: &Control, target: &dyn BenchTarget, device: &SharedDevice) -> Snapshot {
        Snapshot {
            at: Instant::now(),
            ops: control.total_ops(),
            pool: target.stats(),
            device: device.stats(),
            cpu: CpuSample::now(),
        }
    }
}

/// What the control thread saw.
struct Measured {
    warmup: Duration,
    start: Snapshot,
    end: Snapshot,
    timeline: TimelineRecorder,
}

fn run_scheme(
    config: &BenchConfig,
    workload: &SyntheticWorkload,
    scheme: Scheme,
    device: &SharedDevice,
    target: &dyn BenchTarget,
) -> Result<RunResult> {
    let control = Control::new(config.threads);
    let bar = progress_bar(config, scheme);
    let (measured, histograms) = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(config.threads);
        for thread in 0..config.threads {
            let control = &control;
            let spawned = std::thread::Builder::new()
                .name(format!("bench-worker-{thread}"))
                .spawn_scoped(scope, move || {
                    worker_loop(workload, target, control, thread)
                });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(err) => {
                    control.fail(thread, Error::io("starting a worker thread", err));
                    break;
                }
            }
        }
        let measured = control_loop(config, &control, target, device, &bar);
        control.phase.store(PHASE_STOP, Ordering::Release);
        let histograms: Vec<Result<WorkerOutcome>> = handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(Error::Config("a worker thread panicked".into())))
            })
            .collect();
        (measured, histograms)
    });
    bar.finish_and_clear();
    let shutdown = target.shutdown();
    if let Some((thread, error)) = control.error.lock().take() {
        return Err(Error::Config(format!("worker {thread} failed: {error}")));
    }
    let outcome = merge(histograms)?;
    shutdown.map_err(|err| Error::Config(format!("shutdown failed: {err}")))?;
    Ok(build_result(config, scheme, device, &measured, &outcome))
}

fn worker_loop(
    workload: &SyntheticWorkload,
    target: &dyn BenchTarget,
    control: &Control,
    thread: usize,
) -> Result<WorkerOutcome> {
    let mut outcome = WorkerOutcome {
        histogram: new_histogram()?,
        reads: 0,
        writes: 0,
    };
    let mut generator = workload.worker(thread);
    let counter = &control.ops[thread].0;
    // Bound: until the control thread (or a failing worker) sets STOP.
    loop {
        let phase = control.phase.load(Ordering::Acquire);
        if phase == PHASE_STOP {
            break;
        }
        let op = generator.next_op();
        let begin = Instant::now();
        if let Err(error) = generator.execute(target, op) {
            control.fail(thread, error);
            break;
        }
        if phase == PHASE_MEASURE {
            let nanos = (begin.elapsed().as_nanos() as u64).clamp(1, MAX_LATENCY_NS);
            outcome.histogram.saturating_record(nanos);
            match op.kind {
                OpKind::Read => outcome.reads += 1,
                OpKind::Write => outcome.writes += 1,
            }
        }
        counter.fetch_add(1, Ordering::Relaxed);
    }
    Ok(outcome)
}

/// What a worker measured: latencies and operation counts of the measured phase.
struct WorkerOutcome {
    histogram: Histogram<u64>,
    reads: u64,
    writes: u64,
}

fn control_loop(
    config: &BenchConfig,
    control: &Control,
    target: &dyn BenchTarget,
    device: &SharedDevice,
    bar: &ProgressBar,
) -> Measured {
    let scale = device.info().time_scale;
    let began = Instant::now();
    bar.set_message("warm-up");
    // Warm-up. Bound: the warm-up's duration or `max`, in TICK steps.
    while !control.stopped() && !warmup_done(config.warmup, began.elapsed(), target) {
        std::thread::sleep(TICK);
        bar.tick();
    }
    let warmup = began.elapsed();
    let start = Snapshot::take(control, target, device);
    // A worker that failed during the warm-up has set STOP; keep it.
    let _ = control.phase.compare_exchange(
        PHASE_WARMUP,
        PHASE_MEASURE,
        Ordering::AcqRel,
        Ordering::Acquire,
    );
    let mut timeline = TimelineRecorder::new(start.at, start.ops, scale);
    let mut last = (start.at, start.ops);
    // Measured phase. Bound: `duration` / TICK iterations.
    while !control.stopped() && start.at.elapsed() < config.duration {
        std::thread::sleep(TICK.min(config.duration.saturating_sub(start.at.elapsed())));
        let now = Instant::now();
        let ops = control.total_ops();
        timeline.poll(now, ops, || target.stats());
        let interval = now.duration_since(last.0).as_secs_f64();
        if interval >= 0.5 {
            let rate = ops.saturating_sub(last.1) as f64 / interval * scale;
            bar.set_message(format!("{rate:.0} ops/s (device time)"));
            last = (now, ops);
        }
        bar.set_position(start.at.elapsed().as_millis() as u64);
    }
    let end = Snapshot::take(control, target, device);
    timeline.finish(end.at, end.ops, &end.pool);
    Measured {
        warmup,
        start,
        end,
        timeline,
    }
}

fn warmup_done(warmup: WarmUp, elapsed: Duration, target: &dyn BenchTarget) -> bool {
    match warmup {
        WarmUp::For(duration) => elapsed >= duration,
        WarmUp::UntilFull { max } => {
            if elapsed >= max {
                return true;
            }
            // Full: no free frame left, or as many misses as frames (every frame was filled
            // once; schemes that keep a free list replenished may never reach zero free).
            let stats = target.stats();
            stats.frames > 0 && (stats.free_frames == 0 || stats.misses >= stats.frames)
        }
    }
}

fn progress_bar(config: &BenchConfig, scheme: Scheme) -> ProgressBar {
    if !config.progress {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(config.duration.as_millis() as u64);
    let style = ProgressStyle::with_template("{prefix:>16} [{bar:30}] {elapsed:>4} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style.progress_chars("=> "));
    bar.set_prefix(scheme.name());
    bar
}

fn new_histogram() -> Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 2)
        .map_err(|err| Error::Config(format!("cannot build a latency histogram: {err}")))
}

fn merge(outcomes: Vec<Result<WorkerOutcome>>) -> Result<WorkerOutcome> {
    let mut total = WorkerOutcome {
        histogram: new_histogram()?,
        reads: 0,
        writes: 0,
    };
    for outcome in outcomes {
        let outcome = outcome?;
        total
            .histogram
            .add(&outcome.histogram)
            .map_err(|err| Error::Config(format!("cannot merge latency histograms: {err}")))?;
        total.reads += outcome.reads;
        total.writes += outcome.writes;
    }
    Ok(total)
}

fn build_result(
    config: &BenchConfig,
    scheme: Scheme,
    device: &SharedDevice,
    measured: &Measured,
    outcome: &WorkerOutcome,
) -> RunResult {
    let scale = device.info().time_scale;
    let real = measured.end.at.duration_since(measured.start.at);
    let real_s = real.as_secs_f64().max(f64::MIN_POSITIVE);
    let ops = measured.end.ops.saturating_sub(measured.start.ops);
    let pool = measured.end.pool.since(&measured.start.pool);
    let device_stats = measured.end.device.since(&measured.start.device);
    let per_device_second = |count: u64| count as f64 / real_s * scale;
    let mutex_wait_ms: std::collections::BTreeMap<String, f64> = pool
        .mutexes
        .iter()
        .map(|(name, stats)| (name.clone(), stats.wait_ns as f64 / 1e6))
        .collect();
    let mut cpu = utilisation(measured.start.cpu, measured.end.cpu, real);
    let thread_seconds = config.threads as f64 * real_s;
    let wait_share = pool
        .mutexes
        .values()
        .map(|stats| stats.wait_ns as f64 / 1e9)
        .sum::<f64>()
        / thread_seconds;
    cpu.bound =
        super::cpu::classify_run(cpu.cores_used, cpu.available_cores, wait_share).to_string();
    let workload = &config.workload;
    RunResult {
        scheme: scheme.name().to_string(),
        workload: workload.mix.name().to_string(),
        read_ratio: workload.read_ratio,
        locality: workload.skew.to_string(),
        device: device.info().name.clone(),
        threads: config.threads,
        buffer_pages: config.buffer_pages,
        db_pages: workload.db_pages,
        page_size: workload.page_size,
        duration_s: real_s,
        duration_device_s: real_s / scale,
        warmup_s: measured.warmup.as_secs_f64(),
        time_scale: scale,
        ops,
        throughput: per_device_second(ops),
        unit: "ops/s".to_string(),
        latency_ms: latency_ms(&outcome.histogram, scale),
        read_ops: outcome.reads,
        write_ops: outcome.writes,
        hit_ratio: pool.hit_ratio(),
        read_stall_ratio: pool.read_stall_ratio(),
        sync_write_pct: pool.sync_write_pct(),
        io: IoRates {
            read_iops: per_device_second(device_stats.reads),
            write_iops: per_device_second(device_stats.writes),
            read_mbps: per_device_second(device_stats.read_bytes) / 1e6,
            write_mbps: per_device_second(device_stats.write_bytes) / 1e6,
            write_amplification: device_stats.write_amplification(),
        },
        mutex_wait_total_ms: mutex_wait_ms.values().sum(),
        mutex_wait_ms,
        cpu_util: cpu.pct_of_available,
        cpu,
        timeline: measured.timeline_points(),
        pool_stats: pool,
        device_stats,
    }
}

impl Measured {
    fn timeline_points(&self) -> Vec<super::timeline::TimelinePoint> {
        self.timeline.points().to_vec()
    }
}

fn latency_ms(histogram: &Histogram<u64>, scale: f64) -> LatencyMs {
    if histogram.is_empty() {
        return LatencyMs::default();
    }
    let to_ms = |nanos: f64| nanos / 1e6 / scale;
    LatencyMs {
        mean: to_ms(histogram.mean()),
        p50: to_ms(histogram.value_at_quantile(0.50) as f64),
        p95: to_ms(histogram.value_at_quantile(0.95) as f64),
        p99: to_ms(histogram.value_at_quantile(0.99) as f64),
        max: to_ms(histogram.max() as f64),
    }
}
