//! The probe's fsync measurement: what `sync` costs on the device, in three situations.
//!
//! - `idle`: one thread writes a random page and then syncs, repeatedly, on an otherwise idle
//!   device (the commit of a log record, InnoDB's single-page flush). With a volatile cache the
//!   sync waits for that page's program; with a protected one it costs command time.
//! - `after_burst`: a burst of `burst` page writes submitted at once (InnoDB's doublewrite
//!   batch, an ACE write-back), then a sync once all are acknowledged.
//! - `under_load`: `writers` threads write continuously while one more thread syncs back to
//!   back. With a volatile cache each sync waits until everything acknowledged before it is
//!   programmed: with a full write buffer, the time to drain the buffer.
//!
//! Latencies in device time; mean, p99 and max. Bounds: `samples` syncs per phase (idle, after
//! a burst), `under_load_syncs` under load or `under_load_max` of device time, whichever first.
//! Lock order: no locks (the writers share only a stop flag).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

use super::{new_histogram, record};
use crate::device::emulated::{ClientKind, ClosedLoop, Model, ModelOp};
use crate::device::ticket::wait_all;
use crate::device::{AlignedBuf, IoRequest, SharedDevice, WriteCache};
use crate::error::{Error, Result};

/// Syncs discarded at the start of the under-load phase (the write buffer filling).
const WARMUP_SYNCS: usize = 2;

/// What the fsync phases do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsyncConfig {
    /// Syncs measured idle and after a burst.
    pub samples: usize,
    /// Pages per burst.
    pub burst: usize,
    /// Writer threads running during the under-load phase.
    pub writers: usize,
    /// Syncs measured under load.
    pub under_load_syncs: usize,
    /// Device time after which the under-load phase stops even with fewer syncs.
    pub under_load_max: Duration,
}

impl Default for FsyncConfig {
    fn default() -> Self {
        FsyncConfig {
            samples: 40,
            burst: 32,
            writers: 32,
            under_load_syncs: 20,
            under_load_max: Duration::from_secs(2),
        }
    }
}

impl FsyncConfig {
    /// Checks the bounds.
    ///
    /// # Errors
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        let fits = |n: usize| (1..=4096).contains(&n);
        if fits(self.samples)
            && fits(self.burst)
            && fits(self.writers)
            && fits(self.under_load_syncs)
            && !self.under_load_max.is_zero()
        {
            Ok(())
        } else {
            Err(Error::Config(
                "fsync probe: samples, burst, writers and syncs must be within 1..=4096".into(),
            ))
        }
    }
}

/// Latency of one phase's syncs, device time.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SyncLatency {
    /// Syncs measured.
    pub count: u64,
    /// Mean, microseconds.
    pub mean_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
    /// Maximum, microseconds.
    pub max_us: f64,
}

impl SyncLatency {
    fn from_histogram(histogram: &Histogram<u64>) -> Self {
        SyncLatency {
            count: histogram.len(),
            mean_us: histogram.mean() / 1000.0,
            p99_us: histogram.value_at_quantile(0.99) as f64 / 1000.0,
            max_us: histogram.max() as f64 / 1000.0,
        }
    }
}

/// The fsync measurement's result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FsyncReport {
    /// What the device's sync has to do.
    pub write_cache: WriteCache,
    /// `plp=on`, `plp=off` or what applies instead.
    pub plp: String,
    /// A write then a sync, on an idle device.
    pub idle: SyncLatency,
    /// A sync after a burst of `burst_pages` writes.
    pub after_burst: SyncLatency,
    /// Pages per burst.
    pub burst_pages: usize,
    /// Syncs while `writers` threads write.
    pub under_load: SyncLatency,
    /// Writer threads during `under_load`.
    pub writers: usize,
}

fn device_ns(real: Duration, scale: f64) -> u64 {
    (real.as_nanos() as f64 / scale.max(f64::MIN_POSITIVE)) as u64
}

/// Measures the live device.
///
/// # Errors
/// The device's first I/O error.
pub fn live(
    device: &SharedDevice,
    config: &FsyncConfig,
    region_pages: u64,
    seed: u64,
) -> Result<FsyncReport> {
    config.validate()?;
    crate::device::ticket::tight_timer();
    let scale = device.info().time_scale;
    let page_size = device.info().page_size;
    let mut rng = SmallRng::seed_from_u64(seed ^ 0xf5);
    let mut page = AlignedBuf::new(page_size);
    rng.fill_bytes(page.as_mut_slice());
    let timed_sync = || -> Result<u64> {
        let started = Instant::now();
        device.sync()?;
        Ok(device_ns(started.elapsed(), scale))
    };
    let mut idle = new_histogram()?;
    for _ in 0..config.samples {
        device.write_page(rng.gen_range(0..region_pages), &page)?;
        record(&mut idle, timed_sync()?);
    }
    let mut burst = new_histogram()?;
    let arena = AlignedBuf::new(config.burst * page_size);
    for _ in 0..config.samples {
        let batch = (0..config.burst)
            .map(|i| {
                IoRequest::write(
                    rng.gen_range(0..region_pages),
                    arena.chunk_io_buffer(i, page_size),
                )
            })
            .collect();
        // SAFETY: `arena` outlives the wait and is only read by writes.
        wait_all(unsafe { device.submit(batch) })?;
        record(&mut burst, timed_sync()?);
    }
    let loaded = live_under_load(device, config, region_pages, seed, &timed_sync)?;
    Ok(FsyncReport {
        write_cache: device.write_cache(),
        plp: device.write_cache().plp_label().to_string(),
        idle: SyncLatency::from_histogram(&idle),
        after_burst: SyncLatency::from_histogram(&burst),
        burst_pages: config.burst,
        under_load: SyncLatency::from_histogram(&loaded),
        writers: config.writers,
    })
}

fn live_under_load(
    device: &SharedDevice,
    config: &FsyncConfig,
    region_pages: u64,
    seed: u64,
    timed_sync: &dyn Fn() -> Result<u64>,
) -> Result<Histogram<u64>> {
    let stop = AtomicBool::new(false);
    let max_ns = u64::try_from(config.under_load_max.as_nanos()).unwrap_or(u64::MAX);
    let mut histogram = new_histogram()?;
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..config.writers)
            .map(|thread| {
                let stop = &stop;
                scope.spawn(move || -> Result<()> {
                    crate::device::ticket::tight_timer();
                    let mut rng = SmallRng::seed_from_u64(seed ^ 0xa11 ^ thread as u64);
                    let buf = AlignedBuf::new(device.info().page_size);
                    // Bounded by the stop flag, set after at most `under_load_max`.
                    while !stop.load(Ordering::Acquire) {
                        device.write_page(rng.gen_range(0..region_pages), &buf)?;
                    }
                    Ok(())
                })
            })
            .collect();
        let mut spent_ns = 0u64;
        let mut result = Ok(());
        // Bounded: stops after WARMUP_SYNCS + under_load_syncs syncs or `max_ns` of syncing.
        for index in 0..WARMUP_SYNCS + config.under_load_syncs {
            match timed_sync() {
                Ok(ns) => {
                    spent_ns += ns;
                    if index >= WARMUP_SYNCS {
                        record(&mut histogram, ns);
                    }
                }
                Err(err) => {
                    result = Err(err);
                    break;
                }
            }
            if spent_ns >= max_ns {
                break;
            }
        }
        stop.store(true, Ordering::Release);
        for writer in writers {
            match writer.join() {
                Ok(Ok(())) => {}
                Ok(Err(err)) => result = result.and(Err(err)),
                Err(_) => {
                    result = result.and(Err(Error::Config("an fsync writer panicked".into())));
                }
            }
        }
        result
    })?;
    Ok(histogram)
}

/// Measures the timing model in virtual time, starting at device time `start`; returns the
/// report and the device time the phases ended.
///
/// # Errors
/// [`Error::Config`] for a bad configuration.
pub fn model(
    model: &mut Model,
    write_cache: WriteCache,
    config: &FsyncConfig,
    region_pages: u64,
    seed: u64,
    start: u64,
) -> Result<(FsyncReport, u64)> {
    config.validate()?;
    let mut rng = SmallRng::seed_from_u64(seed ^ 0xf5);
    let mut now = start.max(model.quiescent_at());
    let sync_at = |model: &mut Model, at: u64| model.submit(at, ModelOp::Sync).unwrap_or(at);
    let mut idle = new_histogram()?;
    for _ in 0..config.samples {
        let acked = model
            .submit(now, ModelOp::Write(rng.gen_range(0..region_pages)))
            .unwrap_or(now);
        let done = sync_at(model, acked);
        record(&mut idle, done - acked);
        now = done;
    }
    let mut burst = new_histogram()?;
    for _ in 0..config.samples {
        let acked = (0..config.burst)
            .map(|_| {
                model
                    .submit(now, ModelOp::Write(rng.gen_range(0..region_pages)))
                    .unwrap_or(now)
            })
            .max()
            .unwrap_or(now);
        let done = sync_at(model, acked);
        record(&mut burst, done - acked);
        now = done;
    }
    let clients = vec![ClientKind::Writer; config.writers];
    let mut load = ClosedLoop::new(&clients, region_pages, now, seed ^ 0xa11);
    let max_ns = u64::try_from(config.under_load_max.as_nanos()).unwrap_or(u64::MAX);
    let mut loaded = new_histogram()?;
    // Bounded: WARMUP_SYNCS + under_load_syncs syncs, or `max_ns` of device time.
    for index in 0..WARMUP_SYNCS + config.under_load_syncs {
        let issued = load.now();
        let done = sync_at(model, issued);
        load.run_until(model, done.max(issued + 1));
        if index >= WARMUP_SYNCS {
            record(&mut loaded, done - issued);
        }
        if load.now() - now >= max_ns {
            break;
        }
    }
    let end = load.drained_at();
    Ok((
        FsyncReport {
            write_cache,
            plp: write_cache.plp_label().to_string(),
            idle: SyncLatency::from_histogram(&idle),
            after_burst: SyncLatency::from_histogram(&burst),
            burst_pages: config.burst,
            under_load: SyncLatency::from_histogram(&loaded),
            writers: config.writers,
        },
        end,
    ))
}
