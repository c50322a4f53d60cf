//! The bench harness: each scheme, in order, on a fresh device with the same database image.
//!
//! Per scheme: open a fresh data device from the spec (room for the data-file header, the
//! doublewrite area and the data pages), create the data file and load the workload's image
//! into it (not bound to a log), open a fresh log device if the run has a log, build the target
//! with the [`TargetFactory`], start `threads` workers, warm up (unmeasured) until the pool is
//! full and throughput is steady (on an emulated SSD, ageing its flash layout with the run's
//! own writes once on the way, `Aging`), measure for the configured device time (with
//! `--duration auto`, on past it until the phase is steady enough to stop, at most its cap:
//! [`is_steady_enough_to_stop`]), stop the workers,
//! shut the target down (final write-back). Measured: per-op latency (HdrHistogram per worker,
//! merged), a timeline at the configured device-time step, pool, device and log counter deltas,
//! process CPU, and the device's peak bandwidth at the run's mix.
//!
//! With `repeats` = N (`--repeat`), every scheme runs N times, interleaved (s1, s2, s1, s2,
//! ...), each run as above on its own fresh device and image copy; each scheme's record is the
//! combination of its runs ([`super::repeat`]). Each run's steadiness also counts the whole
//! background-writer cycles its measured phase held ([`super::cycles`]).
//!
//! A scheme (repeat) that cannot be set up or fails while running is recorded in
//! [`BenchResults::failures`] and the next one runs. Runs kept from an interrupted earlier
//! attempt of the same point are taken instead of run ([`super::continuation`]).
//!
//! Threads: the workers and one control thread (the caller). Shared state is the `Control`
//! block: the phase word, per-worker op counters and the first error; no locks on the op path.
//!
//! Bounds: the control loop ticks every [`TICK`] of real time; the warm-up ends by its bound,
//! the measured phase by its duration (both device time, converted with the device's scale).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use parking_lot::Mutex;

use super::continuation::Continuation;
use super::cpu::{CpuSample, utilisation};
use super::driver::{Driver, DriverRun, OpOutcome, SyntheticDriver};
use super::fill::{FillWatch, PoolFill};
use super::interrupt;
use super::progress::{CommandProgress, Phase, SchemeProgress};
use super::report::{
    BenchResults, DoublewriteStats, FsyncStats, Header, IoRates, LatencyMs, LogRates, RunFailure,
    RunResult, StallWaitMs, Steadiness, TypeResult,
};
use super::timeline::{
    TimelineRecorder, background_is_steady, is_steady_enough_to_stop, judge_steadiness,
    tail_is_steady,
};
use super::{BenchConfig, BenchTarget, LOG_PAGE_SIZE, TargetFactory, TargetSpec, WarmUp};
use crate::datafile::DATA_START;
use crate::device::emulated::aging::AgingReport;
use crate::device::{DeviceStats, DeviceTimeControl, OpenOptions, SharedDevice, open};
use crate::engine::Composition;
use crate::error::{Error, Result};
use crate::pool::PoolStats;
use crate::wal::WalStats;

/// How often the control thread wakes up (real time).
pub const TICK: Duration = Duration::from_millis(50);
/// Highest latency the histograms hold (100 s); longer ops are clamped to it.
const MAX_LATENCY_NS: u64 = 100_000_000_000;
/// Longest steadiness window of the warm-up, device seconds (shorter when the warm-up's cap
/// is short: a quarter of the cap, at least `timeline::MIN_WINDOW_S`).
const WARMUP_WINDOW_MAX_S: f64 = 1.0;
/// Windows that must agree for the warm-up to end.
const STEADY_WINDOWS: usize = 3;
/// How close they must agree.
const STEADY_TOLERANCE: f64 = 0.10;
/// How far the background flush rate (`P_io`) may move over those windows, first to last, as
/// a share of its mean, for the warm-up to end: 5% over two to three device seconds. InnoDB's
/// adaptive flushing ramps for the redo log's headroom (10-15 s on the 50-warehouse TPC-C
/// setup, 15-50% across a 10 s phase when measured after a 3 s warm-up), which made the
/// measured throughput drift down by 10-16%.
const FLUSH_RATE_TOLERANCE: f64 = 0.05;

const PHASE_WARMUP: u8 = 0;
const PHASE_MEASURE: u8 = 1;
const PHASE_STOP: u8 = 2;

/// A counter on its own cache lines, so workers do not share lines.
type PaddedCounter = crate::sync::CacheLines<AtomicU64>;

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
/// # Errors
/// [`Error::Config`] for a bad configuration (nothing ran).
pub fn run_bench(config: &BenchConfig, factory: &TargetFactory) -> Result<BenchResults> {
    run_bench_with(config, factory, &mut Continuation::none(), &mut |_, _| {})
}

/// What a run of one scheme (one repeat) ended with, as [`run_bench_with`]'s callback sees it.
#[derive(Debug, Clone, Copy)]
pub enum Finished<'a> {
    /// It completed: its own record (one repeat's, not the mean).
    Run(&'a RunResult),
    /// It was not run: an earlier attempt's record of it was kept ([`Continuation`]).
    Kept(&'a RunResult),
    /// It failed or did not run.
    Failed(&'a RunFailure),
}

/// [`run_bench`] with a callback after each run of a scheme: it sees the results so far (each
/// scheme's record the mean of its repeats so far), so a caller can write them as they come,
/// and the run that just ended.
///
/// With `config.repeats` = N, the schemes run N times, interleaved (every scheme once, then
/// every scheme again), each run on a fresh device with a fresh copy of the image; each
/// scheme's record is then the combination of its repeats ([`super::repeat`]).
///
/// A run that `continuation` holds from an earlier attempt is taken instead of run
/// ([`Finished::Kept`]); every run that completes here is handed to it
/// ([`super::continuation`]).
///
/// # Errors
/// As [`run_bench`].
pub fn run_bench_with(
    config: &BenchConfig,
    factory: &TargetFactory,
    continuation: &mut Continuation<'_>,
    on_result: &mut dyn FnMut(&BenchResults, Finished<'_>),
) -> Result<BenchResults> {
    config.validate()?;
    let scaled;
    let config = match paper_scaled(config)? {
        Some(with_defaults) => {
            scaled = with_defaults;
            &scaled
        }
        None => config,
    };
    let synthetic;
    let driver: &dyn Driver = if let Some(record) = &config.record {
        &**record
    } else {
        synthetic = SyntheticDriver::new(config.workload.clone())?;
        &synthetic
    };
    if config.buffer_pages as u64 > driver.capacity_pages() {
        return Err(Error::Config(format!(
            "the buffer ({} pages) is larger than the database ({} pages)",
            config.buffer_pages,
            driver.capacity_pages()
        )));
    }
    let mut header = Header::new(&config.command_line);
    header.repeats = config.repeats;
    let mut repeats: Vec<Vec<Option<RunResult>>> = vec![Vec::new(); config.schemes.len()];
    let mut failures = Vec::new();
    let mut progress = CommandProgress::new(config);
    let mut results = assemble(&header, &repeats, &failures);
    for repeat in 0..config.repeats {
        for (index, scheme) in config.schemes.iter().enumerate() {
            if let Some(kept) = continuation.take(repeat, &scheme.name) {
                repeats[index].push(Some(kept));
                results = assemble(&header, &repeats, &failures);
                if let Some(Some(run)) = repeats[index].last() {
                    on_result(&results, Finished::Kept(run));
                }
                continue;
            }
            progress.set_kept_ahead(continuation.kept_count());
            let run = run_one(config, driver, factory, &mut progress, repeat, index);
            let finished = match run {
                Ok(run) => {
                    continuation.ended(repeat, &scheme.name, &run);
                    repeats[index].push(Some(run));
                    None
                }
                Err(error) => {
                    repeats[index].push(None);
                    failures.push(RunFailure {
                        scheme: scheme.name.clone(),
                        error: if config.repeats > 1 {
                            format!("repeat {} of {}: {error}", repeat + 1, config.repeats)
                        } else {
                            error
                        },
                    });
                    failures.last()
                }
            };
            results = assemble(&header, &repeats, &failures);
            match (finished, repeats[index].last()) {
                (Some(failure), _) => on_result(&results, Finished::Failed(failure)),
                (None, Some(Some(run))) => on_result(&results, Finished::Run(run)),
                _ => {}
            }
        }
    }
    Ok(results)
}

/// A TPC-C run's configuration with the paper-scaled pool defaults
/// ([`super::paper_scale`]) where its pool config leaves them unset; `None` for other workloads.
fn paper_scaled(config: &BenchConfig) -> Result<Option<BenchConfig>> {
    let Some(record) = &config.record else {
        return Ok(None);
    };
    if !matches!(record.spec(), super::driver::RecordSpec::Tpcc(_)) {
        return Ok(None);
    }
    let text = super::paper_scale::with_tpcc_defaults(
        config.pool_config.as_deref(),
        record.loaded_pages(),
    )?;
    let mut scaled = config.clone();
    scaled.pool_config = Some(text);
    Ok(Some(scaled))
}

/// Runs scheme `index` once (repeat `repeat`, 0-based): set-up, run, scratch files removed.
///
/// # Errors
/// Why it failed or did not run, in words.
fn run_one(
    config: &BenchConfig,
    driver: &dyn Driver,
    factory: &TargetFactory,
    progress: &mut CommandProgress,
    repeat: usize,
    index: usize,
) -> std::result::Result<RunResult, String> {
    let scheme = &config.schemes[index];
    if interrupt::interrupted() {
        return Err("not run: interrupted (Ctrl-C)".into());
    }
    let first_phase = if driver.is_record() {
        Phase::Copy
    } else {
        Phase::Load
    };
    let label = if config.repeats > 1 {
        format!("{} #{}", scheme.name, repeat + 1)
    } else {
        scheme.name.clone()
    };
    let position = repeat * config.schemes.len() + index;
    let mut line = progress.start_scheme(position, &label, first_phase);
    let outcome = set_up(config, driver, factory, scheme).and_then(|run| {
        let devices = (&run.data, run.log.as_ref());
        run_scheme(config, driver, scheme, &mut line, devices, &*run.target)
    });
    line.finish();
    remove_scratch_files(config);
    let mut run = outcome.map_err(|err| err.to_string())?;
    run.scheme_real_s = line.elapsed().as_secs_f64();
    run.phases_real_s = line.phase_times();
    progress.finished(line.elapsed());
    Ok(run)
}

/// The results so far: per scheme (in order), the combination of its repeats
/// ([`super::repeat::combine`]) with its ratio to the first scheme's.
fn assemble(
    header: &Header,
    repeats: &[Vec<Option<RunResult>>],
    failures: &[RunFailure],
) -> BenchResults {
    let mut runs: Vec<RunResult> = repeats
        .iter()
        .filter_map(|runs| super::repeat::combine(runs.clone()))
        .collect();
    super::repeat::add_ratios(&mut runs);
    BenchResults {
        header: header.clone(),
        runs,
        failures: failures.to_vec(),
    }
}

/// Deletes the `file:` devices bench created for a scheme (validation refused existing ones,
/// so these are ours). The devices are closed by now: the targets are dropped.
fn remove_scratch_files(config: &BenchConfig) {
    for path in config.scratch_files() {
        if let Err(err) = std::fs::remove_file(&path)
            && err.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!("flashbuf: could not remove {}: {err}", path.display());
        }
    }
}

/// A fresh data device with the image loaded, a fresh log device, the target.
fn set_up(
    config: &BenchConfig,
    driver: &dyn Driver,
    factory: &TargetFactory,
    scheme: &Composition,
) -> Result<RunDevices> {
    let page_size = driver.page_size();
    let db_pages = driver.capacity_pages();
    let device = open(
        &config.device,
        &OpenOptions {
            page_size,
            pages: DATA_START + db_pages,
            create: true,
        },
    )?;
    let scale = device.info().time_scale;
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::Config(format!(
            "device reports time scale {scale}; it must be positive"
        )));
    }
    driver.load(&device)?;
    let log = match &config.log {
        Some(setup) => {
            let log_device = open(
                &setup.device,
                &OpenOptions {
                    page_size: LOG_PAGE_SIZE,
                    pages: setup.size / LOG_PAGE_SIZE as u64,
                    create: true,
                },
            )?;
            Some((log_device, setup.clone()))
        }
        None => None,
    };
    let log_device = log.as_ref().map(|(device, _)| Arc::clone(device));
    let spec = TargetSpec {
        data: Arc::clone(&device),
        log,
        frames: config.buffer_pages,
        pool_config: config.pool_config.clone(),
        records: driver.is_record(),
    };
    let target = factory(scheme, &spec)?;
    if target.pages() < db_pages || target.page_size() != page_size {
        return Err(Error::Config(format!(
            "target has {} pages of {} bytes, the workload needs {db_pages} of {page_size}",
            target.pages(),
            target.page_size(),
        )));
    }
    Ok(RunDevices {
        data: device,
        log: log_device,
        target,
    })
}

/// What [`set_up`] made for one run.
struct RunDevices {
    data: SharedDevice,
    log: Option<SharedDevice>,
    target: Arc<dyn BenchTarget>,
}

/// Makes the run's emulated devices complete requests at once, or times them again
/// ([`DeviceTimeControl::set_untimed`]): during `--fill-pool` ([`fill_pool`]), and from the end
/// of the measured phase on (each run has fresh devices, so those are never timed again).
fn set_untimed(device: &SharedDevice, log: Option<&SharedDevice>, untimed: bool) {
    for device in std::iter::once(device).chain(log) {
        if let Some(control) = device.time_control() {
            control.set_untimed(untimed);
        }
    }
}

/// Counter snapshots at a phase boundary.
struct Snapshot {
    at: Instant,
    ops: u64,
    pool: PoolStats,
    device: DeviceStats,
    log: Option<WalStats>,
    locks: Option<crate::txn::lock::LockStats>,
    cpu: CpuSample,
}

impl Snapshot {
    fn take(control: &Control, target: &dyn BenchTarget, device: &SharedDevice) -> Snapshot {
        Snapshot {
            at: Instant::now(),
            ops: control.total_ops(),
            pool: target.stats(),
            device: device.stats(),
            log: target.log_stats(),
            locks: target.lock_stats(),
            cpu: CpuSample::now(),
        }
    }
}

/// What the control thread saw.
struct Measured {
    warmup_device_s: f64,
    warmup_steady: bool,
    pool_fill: Option<PoolFill>,
    aging: Option<AgingReport>,
    start: Snapshot,
    end: Snapshot,
    timeline: TimelineRecorder,
}

fn run_scheme(
    config: &BenchConfig,
    driver: &dyn Driver,
    scheme: &Composition,
    line: &mut SchemeProgress,
    (device, log): (&SharedDevice, Option<&SharedDevice>),
    target: &dyn BenchTarget,
) -> Result<RunResult> {
    // The pool's shape, once: the tail profile is judged against the miss path's first scan
    // depth, and the regime reports it.
    let shape = PoolShape::of(config, scheme, driver.page_size())?;
    let scan_depth = shape.scan_depth();
    let writer_cycle =
        super::cycles::writer_cycle(scheme, config.buffer_pages, config.pool_config.as_deref());
    let cycle = writer_cycle.as_ref();
    let prewarm = (config.prewarm)
        .then(|| prewarm_pool(driver, (device, log), target))
        .transpose()?;
    let run = driver.start()?;
    let types = driver.op_types().len();
    let control = Control::new(config.threads);
    let (measured, histograms, lateness) = std::thread::scope(|scope| {
        let control = &control;
        let lateness = spawn_lateness_probe(scope, control, device.info().emulated);
        let mut handles = Vec::with_capacity(config.threads);
        for thread in 0..config.threads {
            let run = &*run;
            let spawned = std::thread::Builder::new()
                .name(format!("bench-worker-{thread}"))
                .spawn_scoped(scope, move || {
                    worker_loop(run, target, control, thread, types)
                });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(err) => {
                    control.fail(thread, Error::io("starting a worker thread", err));
                    break;
                }
            }
        }
        let devices = (device, log);
        let measured = control_loop(config, control, target, devices, line, scan_depth, cycle);
        control.phase.store(PHASE_STOP, Ordering::Release);
        let lateness = lateness.and_then(|handle| handle.join().ok()).flatten();
        let histograms: Vec<Result<WorkerOutcome>> = handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(Error::Config("a worker thread panicked".into())))
            })
            .collect();
        (measured, histograms, lateness)
    });
    if interrupt::interrupted() {
        line.finish();
        let _ = target.shutdown();
        return Err(Error::Interrupted(
            "this scheme's partial measurement is discarded".into(),
        ));
    }
    if let Some((thread, error)) = control.error.lock().take() {
        line.finish();
        let shutdown = target.shutdown();
        return Err(Error::Failed(format!(
            "worker {thread} failed: {error}{}",
            shutdown
                .err()
                .map_or_else(String::new, |err| format!("; shutdown also failed: {err}"))
        )));
    }
    let outcome = merge(histograms, types)?;
    // Nothing after this point is measured: the check's reads and the final write-back cost
    // no device time (an emulated HDD's check took hours of real time at time scale 32).
    set_untimed(device, log, true);
    let check = if config.check {
        line.set_phase(Phase::Verify, 0.0);
        run.check(target)?
    } else {
        None
    };
    // Without the check nothing reads this device again (it is dropped with the target), so
    // writing the pool's dirty pages back is work nothing asks for: on 500 warehouses it took
    // longer than the warm-up and the measured phase together.
    let shutdown = if config.check {
        line.set_phase(Phase::WriteBack, 0.0);
        target.shutdown()
    } else {
        target.discard()
    };
    line.finish();
    shutdown.map_err(|err| Error::Failed(format!("shutdown failed: {err}")))?;
    if let Some(check) = check.as_ref().filter(|check| !check.is_clean()) {
        return Err(Error::Failed(format!(
            "CONSISTENCY CHECK FAILED after the run: {} workload violations ({}), {} tree \
             problems ({})",
            check.violations,
            check.violation_samples.join("; "),
            check.tree_problems,
            check.tree_problem_samples.join("; ")
        )));
    }
    let mut result = build_result(config, driver, scheme, device, &measured, &outcome);
    result.host_lateness = lateness.and_then(|probe| run_lateness(&probe, &result));
    super::cycles::record(&mut result.steadiness, cycle, result.duration_s);
    result.config_diff =
        super::report::config_diffs(scheme, config.buffer_pages, config.pool_config.as_deref())?;
    result.regime = Some(run_regime(config, &shape, &measured, &result)?);
    result.tail_profile =
        crate::core::tail_profile::TailProfile::from_extra(&result.pool_stats.extra, scan_depth);
    result.check = check;
    result.check_skipped = !config.check && driver.is_record();
    result.prewarm = prewarm;
    Ok(result)
}

/// `--prewarm` ([`super::prewarm`]): the loaded database read into the pool before the workers
/// start, with the devices serving untimed where they can.
///
/// # Errors
/// A read that failed.
fn prewarm_pool(
    driver: &dyn Driver,
    (device, log): (&SharedDevice, Option<&SharedDevice>),
    target: &dyn BenchTarget,
) -> Result<super::prewarm::Prewarm> {
    set_untimed(device, log, true);
    // The target's pages are the data file's data pages (its page 0 is the device's
    // `DATA_START`), the loaded database its first `loaded_pages`.
    let done = super::prewarm::prewarm(target, 0, driver.loaded_pages(), &interrupt::interrupted);
    set_untimed(device, log, false);
    done
}

/// Starts [`probe_lateness`] for a run on an emulated device. Only an emulated device's timing
/// depends on wake-ups (`mem` and real files do not sleep), so only its runs have the probe:
/// elsewhere its thousand wake-ups a second would take CPU from the workers for a figure
/// nobody reads.
fn spawn_lateness_probe<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    control: &'scope Control,
    emulated: bool,
) -> Option<std::thread::ScopedJoinHandle<'scope, Option<super::lateness::LatenessProbe>>> {
    if !emulated {
        return None;
    }
    std::thread::Builder::new()
        .name("bench-lateness".into())
        .spawn_scoped(scope, move || probe_lateness(control))
        .ok()
}

/// The lateness probe's thread ([`super::lateness`]): sleeps until the run stops, recording
/// the measured phase's wake-ups. Bound: until the control thread (or a failing worker) sets
/// STOP.
fn probe_lateness(control: &Control) -> Option<super::lateness::LatenessProbe> {
    let mut probe = super::lateness::LatenessProbe::new()?;
    loop {
        let phase = control.phase.load(Ordering::Acquire);
        if phase == PHASE_STOP {
            break;
        }
        probe.sleep_once(phase == PHASE_MEASURE);
    }
    Some(probe)
}

fn worker_loop(
    run: &dyn DriverRun,
    target: &dyn BenchTarget,
    control: &Control,
    thread: usize,
    types: usize,
) -> Result<WorkerOutcome> {
    let mut outcome = WorkerOutcome::new(types)?;
    let mut client = match run.worker(target, thread) {
        Ok(client) => client,
        Err(error) => {
            control.fail(thread, error);
            return Ok(outcome);
        }
    };
    let counter = &control.ops[thread].0;
    // The end of the previous operation: the start of the next one for a client that leaves
    // the timing to this loop (`OpOutcome::latency`).
    let mut previous_end = Instant::now();
    // Bound: until the control thread (or a failing worker) sets STOP.
    loop {
        let phase = control.phase.load(Ordering::Acquire);
        if phase == PHASE_STOP {
            break;
        }
        let done = match client.run_one() {
            Ok(done) => done,
            Err(error) => {
                control.fail(thread, error);
                break;
            }
        };
        let latency = done.latency.unwrap_or_else(|| {
            let end = Instant::now();
            let latency = end.saturating_duration_since(previous_end);
            previous_end = end;
            latency
        });
        if phase == PHASE_MEASURE {
            outcome.record(&done, latency);
        }
        if done.op_type.is_some() {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(outcome)
}

/// One operation type's measurements in one worker (or merged).
struct TypeOutcome {
    histogram: Histogram<u64>,
    count: u64,
    retries: u64,
    rollbacks: u64,
    aborts: u64,
}

/// What a worker measured: latencies and counts of the measured phase.
struct WorkerOutcome {
    /// Every completed operation.
    histogram: Histogram<u64>,
    /// Per operation type.
    types: Vec<TypeOutcome>,
    /// Operations whose every attempt conflicted (the types' `aborts` plus those of no known
    /// type).
    aborts: u64,
}

impl WorkerOutcome {
    fn new(types: usize) -> Result<WorkerOutcome> {
        Ok(WorkerOutcome {
            histogram: new_histogram()?,
            types: (0..types)
                .map(|_| {
                    Ok(TypeOutcome {
                        histogram: new_histogram()?,
                        count: 0,
                        retries: 0,
                        rollbacks: 0,
                        aborts: 0,
                    })
                })
                .collect::<Result<_>>()?,
            aborts: 0,
        })
    }

    fn record(&mut self, done: &OpOutcome, latency: Duration) {
        let Some(kind) = done.op_type.and_then(|kind| self.types.get_mut(kind)) else {
            self.aborts += 1;
            if let Some(kind) = done.aborted_type.and_then(|kind| self.types.get_mut(kind)) {
                kind.aborts += 1;
            }
            return;
        };
        let nanos = (latency.as_nanos() as u64).clamp(1, MAX_LATENCY_NS);
        self.histogram.saturating_record(nanos);
        kind.histogram.saturating_record(nanos);
        kind.count += 1;
        kind.retries += done.retries as u64;
        kind.rollbacks += u64::from(done.rolled_back);
    }

    /// Aborts of no known type: the total less the types' (the types' never exceed it: each
    /// typed abort also counts in the total).
    fn aborts_unattributed(&self) -> u64 {
        let typed: u64 = self.types.iter().map(|kind| kind.aborts).sum();
        assert!(typed <= self.aborts, "typed aborts exceed the total");
        self.aborts - typed
    }

    fn add(&mut self, other: &WorkerOutcome) -> Result<()> {
        let merge_error = |err: hdrhistogram::AdditionError| {
            Error::Config(format!("cannot merge latency histograms: {err}"))
        };
        self.histogram.add(&other.histogram).map_err(merge_error)?;
        for (mine, theirs) in self.types.iter_mut().zip(&other.types) {
            mine.histogram.add(&theirs.histogram).map_err(merge_error)?;
            mine.count += theirs.count;
            mine.retries += theirs.retries;
            mine.rollbacks += theirs.rollbacks;
            mine.aborts += theirs.aborts;
        }
        self.aborts += other.aborts;
        Ok(())
    }
}

/// The warm-up's aging of an emulated SSD with the workload's own writes
/// (`device::emulated::aging`): once per run, when the pool is full and half the warm-up is
/// spent or, for an automatic warm-up, throughput has levelled (the later, the more writes the
/// estimate rests on; steadiness is then judged again on the aged device), else at the
/// warm-up's end.
struct Aging {
    /// Aging is still to do (false on devices without time control, and once done).
    pending: bool,
    report: Option<AgingReport>,
}

impl Aging {
    /// Starts counting the device's host writes.
    fn new(device: &SharedDevice) -> Aging {
        let control = device.time_control();
        if let Some(control) = control {
            control.restart_write_history();
        }
        Aging {
            pending: control.is_some(),
            report: None,
        }
    }

    fn is_pending(&self) -> bool {
        self.pending
    }

    fn age(&mut self, device: &SharedDevice) {
        self.pending = false;
        self.report = device.time_control().and_then(DeviceTimeControl::age_flash);
    }
}

/// Whether the pool has been filled (no free frame, or as many misses as frames: schemes that
/// keep a free list replenished may never reach zero free).
pub(crate) fn pool_full(stats: &PoolStats) -> bool {
    stats.frames > 0 && (stats.free_frames == 0 || stats.misses >= stats.frames)
}

/// The run's wake-up lateness against its reference wait (its mean fsync, else its mean
/// operation) and per operation ([`super::lateness::Lateness::with_op_error`]).
fn run_lateness(
    probe: &super::lateness::LatenessProbe,
    result: &RunResult,
) -> Option<super::lateness::Lateness> {
    let reference = super::lateness::reference_us(
        result.fsync.count,
        result.fsync.mean_ms,
        result.latency_ms.mean,
    );
    let requests = (result.io.read_iops + result.io.write_iops) * result.duration_s
        + result.fsync.count as f64;
    probe
        .summary(result.time_scale, reference)
        .map(|late| late.with_op_error(requests, result.ops, result.latency_ms.mean))
}

/// The shortest measured phase, device time: `duration`; with `--duration auto`, also at
/// least [`super::cycles::MIN_WHOLE_CYCLES`] whole cycles of the scheme's background writer
/// (so that a stop does not depend on where in a cycle the phase began), within the cap.
fn measure_min(config: &BenchConfig, cycle: Option<&super::cycles::WriterCycle>) -> Duration {
    let Some(cap) = config.measure_cap else {
        return config.duration;
    };
    let cycles = cycle.map_or(Duration::ZERO, |cycle| {
        Duration::try_from_secs_f64(cycle.period_s * super::cycles::MIN_WHOLE_CYCLES as f64)
            .unwrap_or(cap)
    });
    config.duration.max(cycles).min(cap)
}

/// `--fill-pool` ([`super::fill`]): the workers run with the devices untimed until the pool is
/// full or stops missing, then the devices are timed again. Bound: [`super::fill`]'s.
fn fill_pool(
    control: &Control,
    target: &dyn BenchTarget,
    (device, log): (&SharedDevice, Option<&SharedDevice>),
    line: &mut SchemeProgress,
    duration_real: Duration,
) -> PoolFill {
    set_untimed(device, log, true);
    let mut stats = target.stats();
    let mut watch = FillWatch::new(Instant::now(), &stats);
    let mut ended = None;
    while ended.is_none() && !control.stopped() && !interrupt::interrupted() {
        std::thread::sleep(TICK);
        line.update(String::new(), duration_real.as_secs_f64());
        stats = target.stats();
        ended = watch.observe(Instant::now(), &stats);
    }
    set_untimed(device, log, false);
    watch.report(Instant::now(), &stats, ended)
}

fn control_loop(
    config: &BenchConfig,
    control: &Control,
    target: &dyn BenchTarget,
    (device, log): (&SharedDevice, Option<&SharedDevice>),
    line: &mut SchemeProgress,
    scan_depth: usize,
    cycle: Option<&super::cycles::WriterCycle>,
) -> Measured {
    let scale = device.info().time_scale;
    let duration_real = measure_min(config, cycle).mul_f64(scale);
    line.set_phase(Phase::WarmUp, duration_real.as_secs_f64());
    let pool_fill = config
        .fill_pool
        .then(|| fill_pool(control, target, (device, log), line, duration_real));
    let began = Instant::now();
    let (warmup_max, until_steady) = match config.warmup {
        WarmUp::For(duration) => (duration, false),
        WarmUp::UntilSteady { max } => (max, true),
    };
    let warmup_real = warmup_max.mul_f64(scale);
    let mut warm = TimelineRecorder::new(began, 0, &target.stats(), scale, config.step);
    warm.note_device(&device.stats());
    let mut warmup_steady = !until_steady;
    let window_s =
        (warmup_max.as_secs_f64() / 4.0).clamp(super::timeline::MIN_WINDOW_S, WARMUP_WINDOW_MAX_S);
    let mut aging = Aging::new(device);
    // Warm-up. Bound: `warmup_real`, in TICK steps.
    while !control.stopped() && !interrupt::interrupted() && began.elapsed() < warmup_real {
        std::thread::sleep(TICK);
        line.update(String::new(), duration_real.as_secs_f64());
        let stats = target.stats();
        let recorded = warm.poll(Instant::now(), control.total_ops(), || stats.clone());
        if recorded {
            warm.note_device(&device.stats());
        }
        if !recorded || !pool_full(&stats) {
            continue;
        }
        let throughput_steady =
            tail_is_steady(warm.points(), window_s, STEADY_WINDOWS, STEADY_TOLERANCE);
        let half_spent = began.elapsed() >= warmup_real / 2;
        // A fixed warm-up ages at its middle, counting as many writes as it can; an automatic
        // one as soon as throughput has levelled (it may end soon after).
        if aging.is_pending() && (half_spent || (until_steady && throughput_steady)) {
            aging.age(device);
            // Steadiness is judged afresh on the aged device.
            warm = TimelineRecorder::new(
                Instant::now(),
                control.total_ops(),
                &target.stats(),
                scale,
                config.step,
            );
            warm.note_device(&device.stats());
            continue;
        }
        if until_steady
            && !aging.is_pending()
            && throughput_steady
            && background_is_steady(
                warm.points(),
                stats.frames,
                window_s,
                STEADY_WINDOWS,
                FLUSH_RATE_TOLERANCE,
            )
        {
            warmup_steady = true;
            break;
        }
    }
    // A warm-up that ran out before the pool filled still hands the measured phase an aged
    // device.
    if aging.is_pending() && !control.stopped() && !interrupt::interrupted() {
        aging.age(device);
    }
    let warmup_device_s = began.elapsed().as_secs_f64() / scale;
    let start = Snapshot::take(control, target, device);
    // A worker that failed during the warm-up has set STOP; keep it.
    let _ = control.phase.compare_exchange(
        PHASE_WARMUP,
        PHASE_MEASURE,
        Ordering::AcqRel,
        Ordering::Acquire,
    );
    let mut timeline = measure(
        config,
        control,
        target,
        device,
        line,
        scan_depth,
        &start,
        duration_real,
    );
    // A worker records an operation by the phase it began in. Stopping the workers before the
    // end's counters are read leaves at most the one operation each has in flight to complete
    // after them; read first, a control thread the host preempted here let the workers record
    // whole runs of operations past the window's end (in-memory TPC-C under load: per-type
    // counts above the window's operations by more than four per thread).
    control.phase.store(PHASE_STOP, Ordering::Release);
    let end = Snapshot::take(control, target, device);
    timeline.finish(end.at, end.ops, &end.pool);
    timeline.note_device(&end.device);
    Measured {
        warmup_device_s,
        warmup_steady,
        pool_fill,
        aging: aging.report,
        start,
        end,
        timeline,
    }
}

/// The measured phase's profiles of the eviction end, kept to a budget of the control
/// thread's real time: a sample walks up to `core::tail_profile::MAX_WALK` pages under the
/// order mutexes (a chain of cache misses, 1-2 ms on a large pool), which at time scale 1 and
/// a 100 ms step was about 1.5% of a core and held each instance's LRU mutex for a fifth of a
/// millisecond ten times a second (in-memory TPC-C, `docs/performance.md`, "The tail profile
/// within a budget"). A sample is taken only once `TAIL_SAMPLE_BUDGET` times the previous
/// sample's duration has passed since it began; at the time scales of emulated runs (a step
/// is 0.8-13 s of real time) every step still gets its sample, and a point without one has no
/// tail figures (`TimelinePoint::tail_dirty_share` is `None`).
#[derive(Default)]
struct TailSampler {
    next: Option<Instant>,
}

/// The real time between two tail samples is at least this many times the previous sample's
/// (the sampler's share of the control thread at most 1/200).
const TAIL_SAMPLE_BUDGET: u32 = 200;

impl TailSampler {
    /// Runs `sample` unless the budget says the previous one was too recent.
    fn sample(&mut self, sample: impl FnOnce()) {
        let began = Instant::now();
        if !self.due(began) {
            return;
        }
        sample();
        self.took(began, began.elapsed());
    }

    /// Whether a sample may begin at `now`.
    fn due(&self, now: Instant) -> bool {
        self.next.is_none_or(|next| now >= next)
    }

    /// Notes a sample that began at `began` and took `cost`.
    fn took(&mut self, began: Instant, cost: Duration) {
        self.next = Some(began + cost * TAIL_SAMPLE_BUDGET);
    }
}

/// The measured phase: a timeline from `start` for `duration_real` of real time, or with
/// `--duration auto` on past it until steady enough to stop, at most the cap. Bound:
/// `measure_max_real` / TICK iterations.
#[allow(clippy::too_many_arguments)]
fn measure(
    config: &BenchConfig,
    control: &Control,
    target: &dyn BenchTarget,
    device: &SharedDevice,
    line: &mut SchemeProgress,
    scan_depth: usize,
    start: &Snapshot,
    duration_real: Duration,
) -> TimelineRecorder {
    let scale = device.info().time_scale;
    let measure_max_real = config.measure_max().mul_f64(scale);
    line.set_phase(Phase::Measure, measure_max_real.as_secs_f64());
    line.bar()
        .set_length(config.measure_max().as_millis() as u64);
    let mut timeline = TimelineRecorder::new(start.at, start.ops, &start.pool, scale, config.step);
    timeline.note_device(&start.device);
    let mut tail_sampler = TailSampler::default();
    while !control.stopped() && !interrupt::interrupted() && start.at.elapsed() < measure_max_real {
        std::thread::sleep(TICK.min(measure_max_real.saturating_sub(start.at.elapsed())));
        // The eviction end is profiled once a step, just before the point's counters are
        // read, so its profile weighs the phase evenly and each point carries its sample
        // (within the sampler's budget of real time: `TailSampler`).
        let stats = || {
            tail_sampler.sample(|| target.sample_tail(scan_depth));
            target.stats()
        };
        let recorded = timeline.poll(Instant::now(), control.total_ops(), stats);
        if recorded {
            timeline.note_device(&device.stats());
        }
        show_measure_progress(line, &timeline, start.at, measure_max_real, scale);
        if recorded
            && config.measure_cap.is_some()
            && start.at.elapsed() >= duration_real
            && is_steady_enough_to_stop(&judge_steadiness(timeline.points()))
        {
            break;
        }
    }
    timeline
}

/// The measured phase's progress line: the last point's throughput, the time left and the
/// device time measured so far.
fn show_measure_progress(
    line: &mut SchemeProgress,
    timeline: &TimelineRecorder,
    started: Instant,
    duration_real: Duration,
    scale: f64,
) {
    let remaining_s = duration_real
        .saturating_sub(started.elapsed())
        .as_secs_f64();
    let detail = timeline.points().last().map_or_else(String::new, |point| {
        format!("{:.0} ops/s", point.throughput)
    });
    line.update(detail, remaining_s);
    // The last tick may overshoot the phase by up to a tick: the bar stops at its end.
    let measured_ms = (started.elapsed().as_secs_f64() / scale * 1000.0) as u64;
    line.bar()
        .set_position(measured_ms.min(line.bar().length().unwrap_or(u64::MAX)));
}

fn new_histogram() -> Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 2)
        .map_err(|err| Error::Config(format!("cannot build a latency histogram: {err}")))
}

fn merge(outcomes: Vec<Result<WorkerOutcome>>, types: usize) -> Result<WorkerOutcome> {
    let mut total = WorkerOutcome::new(types)?;
    for outcome in outcomes {
        total.add(&outcome?)?;
    }
    Ok(total)
}

/// The run's verdict ([`super::cpu::classify_run`]): CPU share, then the workers' share of time
/// waiting on list mutexes; on `mem` never `device-bound`.
fn run_bound(
    config: &BenchConfig,
    pool: &crate::core::stats::PoolStats,
    cpu: &super::cpu::CpuUtil,
    real_s: f64,
) -> String {
    let thread_seconds = config.threads as f64 * real_s;
    let wait_share = pool
        .mutexes
        .values()
        .map(|stats| stats.wait_ns as f64 / 1e9)
        .sum::<f64>()
        / thread_seconds;
    let bound = super::cpu::classify_run(cpu, wait_share, config.threads);
    if matches!(config.device, crate::device::DeviceSpec::Memory) {
        super::cpu::on_latency_free_device(bound)
    } else {
        bound
    }
    .to_string()
}

/// The run's regime ([`super::regime`]): the pool's effective shape from its configuration,
/// the workload's setup, and the record-lock waits of the measured phase.
/// The scheme's pool in this run: its configuration, instances and frames per instance.
struct PoolShape {
    pool: crate::pool::PoolConfig,
    instances: usize,
    instance_frames: usize,
}

impl PoolShape {
    fn of(config: &BenchConfig, scheme: &Composition, page_size: usize) -> Result<PoolShape> {
        let pool = match config.pool_config.as_deref() {
            Some(text) => {
                crate::pool::PoolConfig::from_toml(scheme.clone(), config.buffer_pages, text)?
            }
            None => crate::pool::PoolConfig::for_scheme(scheme.clone(), config.buffer_pages),
        };
        let instances = pool.effective_instances(page_size);
        let instance_frames = pool.frames / instances;
        Ok(PoolShape {
            pool,
            instances,
            instance_frames,
        })
    }

    /// The miss path's first tail-scan depth per instance.
    fn scan_depth(&self) -> usize {
        self.pool.scan_depth(self.instance_frames)
    }
}

fn run_regime(
    config: &BenchConfig,
    shape: &PoolShape,
    measured: &Measured,
    result: &RunResult,
) -> Result<super::regime::Regime> {
    let (pool, instance_frames) = (&shape.pool, shape.instance_frames);
    let warehouses = config
        .record
        .as_ref()
        .and_then(|record| match record.spec() {
            super::driver::RecordSpec::Tpcc(tpcc) => Some(tpcc.warehouses),
            _ => None,
        });
    let lock_wait_ns = match (&measured.start.locks, &measured.end.locks) {
        (Some(start), Some(end)) => Some(end.since(start).wait_ns),
        _ => None,
    };
    let inputs = super::regime::RegimeInputs {
        instances: shape.instances,
        instance_frames,
        scan_depth: shape.scan_depth(),
        cleaner_period_ms: pool.effective_cleaner_period_ms(instance_frames),
        time_constant_scale: pool.effective_time_constant_scale(instance_frames),
        warehouses,
        log_bytes: config.log.as_ref().map(|log| log.size),
        lock_wait_ns,
    };
    let paper = config.regime_reference.load()?;
    Ok(super::regime::regime(result, &inputs, Some(&paper)))
}

fn build_result(
    config: &BenchConfig,
    driver: &dyn Driver,
    scheme: &Composition,
    device: &SharedDevice,
    measured: &Measured,
    outcome: &WorkerOutcome,
) -> RunResult {
    let scale = device.info().time_scale;
    let real = measured.end.at.duration_since(measured.start.at);
    let real_s = real.as_secs_f64().max(f64::MIN_POSITIVE);
    let device_s = real_s / scale;
    let ops = measured.end.ops.saturating_sub(measured.start.ops);
    let pool = measured.end.pool.since(&measured.start.pool);
    let device_stats = measured.end.device.since(&measured.start.device);
    let per_device_second = |count: u64| count as f64 / device_s;
    let mutex_wait_ms: std::collections::BTreeMap<String, f64> = pool
        .mutexes
        .iter()
        .map(|(name, stats)| (name.clone(), stats.wait_ns as f64 / 1e6))
        .collect();
    let mut cpu = utilisation(measured.start.cpu, measured.end.cpu, real);
    cpu.bound = run_bound(config, &pool, &cpu, real_s);
    let io = io_rates(config, driver, &device_stats, device_s);
    let (name, read_ratio, locality, read_ops, write_ops) =
        workload_labels(config, driver, outcome, device_read_share(&device_stats));
    let log = match (&measured.start.log, &measured.end.log) {
        (Some(start), Some(end)) => Some(LogRates::between(start, end, device_s)),
        _ => None,
    };
    RunResult {
        scheme: scheme.name.clone(),
        workload: name,
        read_ratio,
        locality,
        device: device.info().name.clone(),
        log_device: config.log.as_ref().map(|log| log.device.to_string()),
        threads: config.threads,
        buffer_pages: config.buffer_pages,
        db_pages: driver.loaded_pages(),
        page_size: driver.page_size(),
        duration_s: device_s,
        duration_real_s: real_s,
        scheme_real_s: 0.0,
        phases_real_s: super::progress::PhaseTimes::default(),
        warmup_s: measured.warmup_device_s,
        time_scale: scale,
        model_host: model_host(cpu.available_cores, scale),
        ops,
        throughput: per_device_second(ops),
        unit: if driver.is_record() { "tx/s" } else { "ops/s" }.to_string(),
        latency_ms: latency_ms(&outcome.histogram, scale),
        latency_cdf: latency_cdf(&outcome.histogram, scale),
        read_ops,
        write_ops,
        tpmc: tpmc(driver, outcome, device_s),
        per_type: per_type_results(driver, outcome, scale, device_s),
        aborts: outcome.aborts,
        aborts_unattributed: outcome.aborts_unattributed(),
        retries: outcome.types.iter().map(|t| t.retries).sum(),
        rollbacks: outcome.types.iter().map(|t| t.rollbacks).sum(),
        device_read_share: device_read_share(&device_stats),
        check: None,
        check_skipped: false,
        hit_ratio: pool.hit_ratio(),
        read_stall_ratio: pool.read_stall_ratio(),
        read_stall_wait_ms: StallWaitMs {
            mean: pool.read_stall_wait.mean_ms(),
            p99: pool.read_stall_wait.quantile_ms(0.99),
            max: pool.read_stall_wait.max_ms(),
            cdf: pool.read_stall_wait.cdf_ms(super::report::CDF_QUANTILES),
        },
        sync_write_pct: pool.sync_write_pct(),
        io,
        fsync: FsyncStats {
            count: pool.write_path.fsyncs,
            mean_ms: pool.write_path.fsync_mean_ms(),
        },
        doublewrite: doublewrite_stats(&pool),
        bytes_per_op: super::bytes::BytesPerOp::measure(
            ops,
            &device_stats,
            pool.write_path.doublewrite_pages,
            driver.page_size(),
            measured.start.log.as_ref().zip(measured.end.log.as_ref()),
        ),
        log,
        mutex_wait_total_ms: mutex_wait_ms.values().sum(),
        mutex_wait_ms,
        cpu_util: cpu.pct_of_available,
        bound: cpu.bound.clone(),
        cpu,
        steadiness: Steadiness::from_verdict(
            measured.warmup_steady,
            judge_steadiness(measured.timeline.points()),
        ),
        config_diff: Vec::new(),
        timeline: measured.timeline.points().to_vec(),
        pool_stats: pool,
        device_stats,
        regime: None,
        host_lateness: None,
        device_aging: measured.aging,
        pool_fill: measured.pool_fill,
        prewarm: None,
        tail_profile: None,
        repeats: None,
    }
}

/// `2 cores x time scale 8 = 16 cores`: the host the device sees.
fn model_host(cores: usize, scale: f64) -> String {
    format!(
        "{cores} cores x time scale {scale} = {:.0} cores",
        cores as f64 * scale
    )
}

/// The doublewrite buffer's work over the measured phase.
fn doublewrite_stats(pool: &PoolStats) -> DoublewriteStats {
    DoublewriteStats {
        pages: pool.write_path.doublewrite_pages,
        batches: pool.write_path.doublewrite_batches,
        slot_waits: pool.write_path.doublewrite_slot_waits,
        slot_wait_ms: pool.write_path.doublewrite_slot_wait_ms,
    }
}

/// The workload's name, read ratio, locality (record workloads: parameters) and the
/// synthetic mix's read and write counts.
fn workload_labels(
    config: &BenchConfig,
    driver: &dyn Driver,
    outcome: &WorkerOutcome,
    device_read_share: Option<f64>,
) -> (String, f64, String, u64, u64) {
    let workload = &config.workload;
    if driver.is_record() {
        let params = config
            .record
            .as_ref()
            .map_or_else(String::new, |record| record.spec().describe());
        (
            driver.name(),
            device_read_share.unwrap_or(0.0),
            params,
            0,
            0,
        )
    } else {
        let count = |kind: usize| outcome.types.get(kind).map_or(0, |t| t.count);
        (
            workload.mix.name().to_string(),
            workload.read_ratio,
            workload.skew.to_string(),
            count(0),
            count(1),
        )
    }
}

/// Device I/O over the measured phase, and its share of the device's peak at the same mix.
fn io_rates(
    config: &BenchConfig,
    driver: &dyn Driver,
    stats: &DeviceStats,
    device_s: f64,
) -> IoRates {
    let per_second = |count: u64| count as f64 / device_s;
    let read_mbps = per_second(stats.read_bytes) / 1e6;
    let write_mbps = per_second(stats.write_bytes) / 1e6;
    // The share is of the flash's sustained peak, past the write buffer: a lazy buffer's
    // rewrites of pages it still holds (`buffer_write_hits`) never reach the flash.
    let flash_writes = stats.flash_writes();
    let flash_write_mbps = if stats.writes == 0 {
        0.0
    } else {
        write_mbps * flash_writes as f64 / stats.writes as f64
    };
    let ios = stats.reads + flash_writes;
    let peak = (ios > 0)
        .then(|| {
            super::capacity::peak_mbps(
                &config.device,
                driver.page_size(),
                driver.loaded_pages(),
                stats.reads as f64 / ios as f64,
            )
        })
        .flatten();
    IoRates {
        read_iops: per_second(stats.reads),
        write_iops: per_second(stats.writes),
        read_mbps,
        write_mbps,
        write_amplification: stats.write_amplification(),
        peak_mbps: peak,
        bandwidth_share: peak.map(|peak| (read_mbps + flash_write_mbps) / peak),
    }
}

/// Device page reads / (reads + writes); `None` without I/O.
fn device_read_share(stats: &DeviceStats) -> Option<f64> {
    let ios = stats.reads + stats.writes;
    (ios > 0).then(|| stats.reads as f64 / ios as f64)
}

/// TPC-C's New-Orders per device minute (rolled-back ones included, as the specification
/// counts them); `None` for other workloads.
fn tpmc(driver: &dyn Driver, outcome: &WorkerOutcome, device_s: f64) -> Option<f64> {
    (driver.name() == "tpcc").then(|| {
        outcome
            .types
            .first()
            .map_or(0.0, |new_order| new_order.count as f64 * 60.0 / device_s)
    })
}

/// Per operation type: counts, rates and latencies in device time.
fn per_type_results(
    driver: &dyn Driver,
    outcome: &WorkerOutcome,
    scale: f64,
    device_s: f64,
) -> Vec<TypeResult> {
    driver
        .op_types()
        .into_iter()
        .zip(&outcome.types)
        .map(|(name, kind)| TypeResult {
            name,
            count: kind.count,
            throughput: kind.count as f64 / device_s,
            latency_ms: latency_ms(&kind.histogram, scale),
            latency_cdf: latency_cdf(&kind.histogram, scale),
            retries: kind.retries,
            rollbacks: kind.rollbacks,
            aborts: kind.aborts,
        })
        .collect()
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

/// The histogram's CDF at [`super::report::CDF_QUANTILES`]: `(latency ms, fraction)` pairs in
/// device time, ascending in both (the minimum at 0, the maximum at 1).
fn latency_cdf(histogram: &Histogram<u64>, scale: f64) -> Vec<(f64, f64)> {
    if histogram.is_empty() {
        return Vec::new();
    }
    let to_ms = |nanos: u64| nanos as f64 / 1e6 / scale;
    super::report::CDF_QUANTILES
        .iter()
        .map(|&fraction| {
            let nanos = if fraction <= 0.0 {
                histogram.min()
            } else if fraction >= 1.0 {
                histogram.max()
            } else {
                histogram.value_at_quantile(fraction)
            };
            (to_ms(nanos), fraction)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tail sample costs the next ones `TAIL_SAMPLE_BUDGET` times its own duration of
    /// waiting: a 2 ms sample allows the next after 400 ms, so ten 100 ms steps get three.
    #[test]
    fn tail_samples_keep_to_their_budget_of_real_time() {
        let mut sampler = TailSampler::default();
        let start = Instant::now();
        let step = Duration::from_millis(100);
        let mut taken = Vec::new();
        for k in 0..10u32 {
            let now = start + step * k;
            if sampler.due(now) {
                taken.push(k);
                sampler.took(now, Duration::from_millis(2));
            }
        }
        assert_eq!(taken, vec![0, 4, 8]);
        // A cheap sample (a small pool, or a high time scale's long steps) is taken every step.
        let mut sampler = TailSampler::default();
        let every = (0..10u32)
            .filter(|&k| {
                let now = start + step * k;
                let due = sampler.due(now);
                if due {
                    sampler.took(now, Duration::from_micros(100));
                }
                due
            })
            .count();
        assert_eq!(every, 10);
        let mut runs = 0;
        TailSampler::default().sample(|| runs += 1);
        assert_eq!(runs, 1, "the first sample is always taken");
    }

    fn outcome(op_type: Option<usize>, aborted_type: Option<usize>, millis: u64) -> OpOutcome {
        OpOutcome {
            op_type,
            latency: Some(Duration::from_millis(millis)),
            retries: 1,
            rolled_back: false,
            aborted_type,
        }
    }

    #[test]
    fn aborts_are_attributed_to_their_type_and_add_up() {
        let mut first = WorkerOutcome::new(3).unwrap();
        let mut second = WorkerOutcome::new(3).unwrap();
        for done in [
            outcome(Some(0), None, 2),
            outcome(None, Some(0), 5),
            outcome(None, Some(2), 5),
            outcome(None, None, 5),
        ] {
            first.record(&done, done.latency.unwrap());
        }
        for done in [outcome(None, Some(2), 5), outcome(None, Some(7), 5)] {
            // Some(7) is out of range: unattributed.
            second.record(&done, done.latency.unwrap());
        }
        first.add(&second).unwrap();
        let aborts: Vec<u64> = first.types.iter().map(|kind| kind.aborts).collect();
        assert_eq!(aborts, [1, 0, 2]);
        assert_eq!(first.aborts, 5);
        assert_eq!(first.aborts_unattributed(), 2);
        assert_eq!(
            first.aborts,
            aborts.iter().sum::<u64>() + first.aborts_unattributed()
        );
        // Aborted transactions are not completions.
        assert_eq!(first.types[0].count, 1);
        assert_eq!(first.histogram.len(), 1);
    }

    #[test]
    fn latency_cdf_spans_min_to_max_in_order() {
        let mut histogram = new_histogram().unwrap();
        for micros in 1..=1000u64 {
            histogram.record(micros * 1000).unwrap();
        }
        // Time scale 2: device time is half the real time.
        let cdf = latency_cdf(&histogram, 2.0);
        assert_eq!(cdf.len(), super::super::report::CDF_QUANTILES.len());
        assert!(cdf.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
        let (first, last) = (cdf[0], cdf[cdf.len() - 1]);
        assert!(first.1.abs() < f64::EPSILON);
        assert!((last.1 - 1.0).abs() < f64::EPSILON);
        assert!((first.0 - 0.0005).abs() < 0.0001, "{first:?}");
        assert!((last.0 - 0.5).abs() < 0.01, "{last:?}");
        let median = cdf.iter().find(|(_, f)| (*f - 0.5).abs() < 1e-9).unwrap();
        assert!((median.0 - 0.25).abs() < 0.01, "{median:?}");
        assert!(latency_cdf(&new_histogram().unwrap(), 1.0).is_empty());
    }
}
