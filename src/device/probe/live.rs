//! The probe against a live device: threads doing synchronous page reads or writes
//! (`Device::read_page`/`write_page`: submit + wait, in one system call on the file device's
//! rings), windows measured by the main thread sleeping to each window's end, preconditioning
//! and settling.
//!
//! Each I/O thread keeps one request outstanding, counts completions in a shared atomic and
//! keeps its latest `(completion, latency)` samples in a bounded ring; the main thread reads the
//! counter at each window boundary (so windows cost no coordination) and, once the point is
//! done, takes the latencies of the counted windows from the rings.
//!
//! Bounds: each thread keeps at most `MAX_SAMPLES_PER_POINT / concurrency` samples (at least
//! 1024); a window's sleep is checked every [`POLL`] for a failed thread; real-I/O
//! preconditioning issues exactly `writes` requests.
//!
//! Lock order: no locks; threads share only atomics (stop and failure flags, a completion
//! counter) and hand their samples back when joined.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

use super::steady::{self, PointRunner, WindowRate};
use super::{
    Precondition, ProbeConfig, ProbeEvent, ProbeOp, ProbePoint, new_histogram, point_from, record,
};
use crate::device::ticket::wait_all;
use crate::device::{AlignedBuf, Device, IoRequest, SharedDevice};
use crate::error::{Error, Result};

/// Latency samples kept per point, over all threads.
const MAX_SAMPLES_PER_POINT: usize = 4_000_000;
/// How often a sleeping window checks for a failed I/O thread.
const POLL: Duration = Duration::from_millis(100);
/// How long past its end a window waits for its first completed request (real time).
const EMPTY_WINDOW_GRACE: Duration = Duration::from_secs(10);
/// How long a real device is left alone to finish background work between phases.
const SETTLE_REAL: Duration = Duration::from_secs(2);
/// Pages written per batch by the sequential preconditioning pass.
const SEQUENTIAL_BATCH: usize = 64;

/// The device's current time in nanoseconds: its own clock if it models time, else real time
/// since `started` divided by its time scale.
pub(super) fn device_now(device: &SharedDevice, started: Instant) -> u64 {
    device.time_control().map_or_else(
        || to_device_ns(started.elapsed(), device.info().time_scale),
        crate::device::DeviceTimeControl::now_ns,
    )
}

pub(super) fn to_device_ns(real: Duration, scale: f64) -> u64 {
    let scale = if scale > 0.0 { scale } else { 1.0 };
    (real.as_nanos() as f64 / scale) as u64
}

/// Lets the device finish its background work: in device time if it can, else a pause.
pub(super) fn settle(device: &SharedDevice) {
    match device.time_control() {
        Some(control) => {
            control.settle();
        }
        None => std::thread::sleep(SETTLE_REAL),
    }
}

/// Prepares the region; returns the device nanoseconds it took.
pub(super) fn precondition(
    device: &SharedDevice,
    config: &ProbeConfig,
    region_pages: u64,
    progress: &mut dyn FnMut(ProbeEvent<'_>),
) -> Result<u64> {
    let started = Instant::now();
    let scale = device.info().time_scale;
    crate::device::ticket::tight_timer();
    match config.precondition {
        Precondition::None => Ok(0),
        Precondition::Sequential => {
            sequential(device.as_ref(), region_pages, config.seed, progress)?;
            Ok(to_device_ns(started.elapsed(), scale))
        }
        Precondition::Random {
            passes,
            concurrency,
        } => {
            let writes = u64::from(passes) * region_pages;
            if let Some(control) = device.time_control() {
                return Ok(control.precondition(region_pages, writes, concurrency, config.seed)?);
            }
            random(
                device,
                region_pages,
                writes,
                concurrency,
                config.seed,
                progress,
            )?;
            device.sync()?;
            Ok(to_device_ns(started.elapsed(), scale))
        }
    }
}

/// Writes every page of the region once in order (random contents), then syncs.
fn sequential(
    device: &dyn Device,
    region_pages: u64,
    seed: u64,
    progress: &mut dyn FnMut(ProbeEvent<'_>),
) -> Result<()> {
    let page_size = device.info().page_size;
    let mut arena = AlignedBuf::new(SEQUENTIAL_BATCH * page_size);
    SmallRng::seed_from_u64(seed).fill_bytes(arena.as_mut_slice());
    let mut next = 0u64;
    // Bounded: `next` grows by at least one page per turn up to `region_pages`.
    while next < region_pages {
        let count = (region_pages - next).min(SEQUENTIAL_BATCH as u64) as usize;
        let batch = (0..count)
            .map(|i| IoRequest::write(next + i as u64, arena.chunk_io_buffer(i, page_size)))
            .collect();
        // SAFETY: `arena` outlives the wait and is only read by writes.
        wait_all(unsafe { device.submit(batch) })?;
        next += count as u64;
        progress(ProbeEvent::Precondition {
            done: next,
            total: region_pages,
        });
    }
    device.sync()?;
    Ok(())
}

/// `writes` random page writes from `concurrency` threads (real I/O).
fn random(
    device: &SharedDevice,
    region_pages: u64,
    writes: u64,
    concurrency: usize,
    seed: u64,
    progress: &mut dyn FnMut(ProbeEvent<'_>),
) -> Result<()> {
    let issued = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..concurrency)
            .map(|thread| {
                let (issued, done) = (&issued, &done);
                scope.spawn(move || -> Result<()> {
                    crate::device::ticket::tight_timer();
                    let mut rng = SmallRng::seed_from_u64(seed ^ 0x9e37_79b9 ^ thread as u64);
                    let mut buf = AlignedBuf::new(device.info().page_size);
                    rng.fill_bytes(buf.as_mut_slice());
                    // Bounded: every turn claims one of the `writes` requests.
                    while issued.fetch_add(1, Ordering::Relaxed) < writes {
                        device.write_page(rng.gen_range(0..region_pages), &buf)?;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        // Bounded: ends when every thread has finished.
        while !handles.iter().all(ScopedJoinHandle::is_finished) {
            std::thread::sleep(POLL);
            progress(ProbeEvent::Precondition {
                done: done.load(Ordering::Relaxed).min(writes),
                total: writes,
            });
        }
        join_all(handles).map(|_| ())
    })
}

pub(super) fn join_all<T>(handles: Vec<ScopedJoinHandle<'_, Result<T>>>) -> Result<Vec<T>> {
    let mut results = Vec::with_capacity(handles.len());
    let mut first_error = None;
    for handle in handles {
        match handle.join() {
            Ok(Ok(value)) => results.push(value),
            Ok(Err(err)) => {
                first_error.get_or_insert(err);
            }
            Err(_) => {
                first_error.get_or_insert(Error::Config("a probe thread panicked".into()));
            }
        }
    }
    first_error.map_or(Ok(results), Err)
}

/// Measures one point on the live device.
pub(super) fn measure(
    device: &SharedDevice,
    config: &ProbeConfig,
    region_pages: u64,
    op: ProbeOp,
    concurrency: usize,
    progress: &mut dyn FnMut(ProbeEvent<'_>),
) -> Result<ProbePoint> {
    let shared = Shared::default();
    let seed =
        config.seed ^ ((concurrency as u64) << 32) ^ if op == ProbeOp::Write { 1 << 20 } else { 0 };
    std::thread::scope(|scope| {
        let runner = LiveRunner::start(scope, &shared, device, region_pages, op, concurrency, seed);
        let mut windows = 0;
        let outcome = steady::measure(runner, &config.steady, &mut |rate| {
            windows += 1;
            progress(ProbeEvent::Window {
                iops: rate.iops(),
                windows,
            });
        })?;
        Ok(point_from(op, concurrency, &outcome))
    })
}

/// State the I/O threads share with the main thread.
#[derive(Debug, Default)]
pub(super) struct Shared {
    pub(super) stop: AtomicBool,
    pub(super) failed: AtomicBool,
    completed: AtomicU64,
}

/// One thread's latest samples: (completion, latency), real nanoseconds since the point began.
pub(super) type Samples = VecDeque<(u64, u64)>;

struct LiveRunner<'scope> {
    shared: &'scope Shared,
    handles: Vec<ScopedJoinHandle<'scope, Result<Samples>>>,
    start: Instant,
    scale: f64,
    /// Window boundaries, real time since `start` (the first is 0).
    boundaries: Vec<Duration>,
    counted: u64,
}

impl<'scope> LiveRunner<'scope> {
    fn start<'env>(
        scope: &'scope Scope<'scope, 'env>,
        shared: &'scope Shared,
        device: &'scope SharedDevice,
        region_pages: u64,
        op: ProbeOp,
        concurrency: usize,
        seed: u64,
    ) -> Self {
        let start = Instant::now();
        let cap = (MAX_SAMPLES_PER_POINT / concurrency.max(1)).max(1024);
        let handles = (0..concurrency)
            .map(|thread| {
                let seed = seed ^ thread as u64;
                scope.spawn(move || {
                    let result =
                        io_loop(device.as_ref(), shared, region_pages, op, seed, start, cap);
                    if result.is_err() {
                        shared.failed.store(true, Ordering::Release);
                    }
                    result
                })
            })
            .collect();
        LiveRunner {
            shared,
            handles,
            start,
            scale: device.info().time_scale.max(f64::MIN_POSITIVE),
            boundaries: vec![Duration::ZERO],
            counted: 0,
        }
    }

    fn stop_and_join(&mut self) -> Result<Vec<Samples>> {
        self.shared.stop.store(true, Ordering::Release);
        join_all(std::mem::take(&mut self.handles))
    }
}

impl PointRunner for LiveRunner<'_> {
    fn run_window(&mut self, window_ns: u64) -> Result<WindowRate> {
        let last = self.boundaries.last().copied().unwrap_or_default();
        let real_window = Duration::from_nanos((window_ns as f64 * self.scale) as u64);
        let target = self.start + last + real_window;
        // A window ends at `target` once at least one request completed in it: on a starved
        // host a short window can otherwise see none and report 0 IOPS. Bounded: sleeps in
        // steps of at most POLL until `target`, then at most EMPTY_WINDOW_GRACE longer.
        loop {
            if self.shared.failed.load(Ordering::Acquire) {
                self.stop_and_join()?;
                return Err(Error::Config("a probe thread stopped".into()));
            }
            let now = Instant::now();
            let any_completed = self.shared.completed.load(Ordering::Acquire) > self.counted;
            if now >= target && (any_completed || now >= target + EMPTY_WINDOW_GRACE) {
                break;
            }
            let until = if now < target { target - now } else { POLL };
            std::thread::sleep(until.min(POLL));
        }
        let now = self.start.elapsed();
        let completed = self.shared.completed.load(Ordering::Acquire);
        let requests = completed - self.counted;
        self.counted = completed;
        self.boundaries.push(now);
        Ok(WindowRate {
            requests,
            device_ns: to_device_ns(now.saturating_sub(last), self.scale),
        })
    }

    fn finish(mut self, counted: std::ops::Range<usize>) -> Result<Histogram<u64>> {
        let samples = self.stop_and_join()?;
        let mut histogram = new_histogram()?;
        // Window i spans boundaries i..i + 1.
        let last = self.boundaries.len() - 1;
        let from = self.boundaries[counted.start.min(last)].as_nanos() as u64;
        let to = self.boundaries[counted.end.min(last)].as_nanos() as u64;
        for &(completed, latency) in samples.iter().flatten() {
            if completed > from && completed <= to {
                record(
                    &mut histogram,
                    to_device_ns(Duration::from_nanos(latency), self.scale),
                );
            }
        }
        Ok(histogram)
    }
}

/// One thread: keeps one I/O outstanding until told to stop.
pub(super) fn io_loop(
    device: &dyn Device,
    shared: &Shared,
    region_pages: u64,
    op: ProbeOp,
    seed: u64,
    start: Instant,
    cap: usize,
) -> Result<Samples> {
    crate::device::ticket::tight_timer();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut samples = Samples::with_capacity(cap.min(1 << 16));
    let mut buf = AlignedBuf::new(device.info().page_size);
    rng.fill_bytes(buf.as_mut_slice());
    // Bounded by the stop flag, which the main thread sets after at most `max_windows` windows.
    while !shared.stop.load(Ordering::Acquire) {
        let page = rng.gen_range(0..region_pages);
        let submitted = Instant::now();
        // The synchronous calls: a device may do them cheaper than submit + wait (the file
        // device's rings submit and wait in one system call).
        match op {
            ProbeOp::Read => device.read_page(page, &mut buf)?,
            ProbeOp::Write => device.write_page(page, &buf)?,
        }
        let completed = Instant::now();
        if samples.len() == cap {
            samples.pop_front();
        }
        samples.push_back((
            completed.duration_since(start).as_nanos() as u64,
            completed.duration_since(submitted).as_nanos() as u64,
        ));
        shared.completed.fetch_add(1, Ordering::AcqRel);
    }
    Ok(samples)
}
