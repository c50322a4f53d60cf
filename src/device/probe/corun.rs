//! Co-running streams: a read stream and a write stream at once, each its own set of closed-loop
//! submitters with its own concurrency, as the RW paper's section 5.2.1 ran two separate fio
//! processes (random 4 KB reads, random 4 KB writes) simultaneously for its Table 3. Each
//! stream's IOPS, bandwidth and latency are measured while the other runs; optionally each
//! stream is also measured alone, so the interference shows as a ratio.
//!
//! Method: precondition as the probe does ([`super::Precondition`]); then each phase runs a
//! warm-up of `warmup` device time (not counted) and a measured span of `duration` device time
//! (a request counts when it completes inside the span). Phases: the co-run, then (with
//! `solo`) the read stream alone and the write stream alone, the device let idle before each
//! solo phase. Fixed spans, as fio's `runtime`, not steady-state detection: a co-run is two
//! rates, and the paper reports what fio reported over its run.
//!
//! [`corun_model`] runs it on an emulated profile's timing model in virtual time (one
//! [`ClosedLoop`] with reader and writer clients; deterministic for a seed); [`corun`] on a
//! live device with one thread per submitter.
//!
//! Bounds: each phase runs `warmup + duration` of device time; the live one keeps at most
//! `MAX_SAMPLES` latency samples over all its threads (the latest ones). Lock order: none
//! (threads share atomics only and hand their samples back when joined).

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::live::{self, Samples, Shared};
use super::{MAX_CONCURRENCY, Precondition, ProbeConfig, ProbeOp, new_histogram, record};
use crate::device::emulated::profile::Profile;
use crate::device::emulated::sim::Window;
use crate::device::emulated::{ClientKind, ClosedLoop, Model};
use crate::device::{SharedDevice, WriteCache};
use crate::error::{Error, Result};

/// Latency samples a live phase keeps, over all its threads.
const MAX_SAMPLES: usize = 4_000_000;
/// How often a live phase checks for a failed thread while it sleeps.
const POLL: Duration = Duration::from_millis(100);

/// What a co-run measures.
#[derive(Debug, Clone)]
pub struct CorunConfig {
    /// Read submitters (each keeps one random page read outstanding).
    pub readers: usize,
    /// Write submitters (each keeps one random page write outstanding).
    pub writers: usize,
    /// Pages addressed (the first ones of the device); 0 = the whole device.
    pub region_pages: u64,
    /// Seed of the page choices.
    pub seed: u64,
    /// How the region is prepared.
    pub precondition: Precondition,
    /// Device time each phase runs before counting.
    pub warmup: Duration,
    /// Device time each phase counts.
    pub duration: Duration,
    /// Also measure each stream alone.
    pub solo: bool,
}

impl Default for CorunConfig {
    /// 32 readers and 32 writers (the RW paper's fio queue depth, its Table 1; section 5.2.1
    /// does not restate it), 1 s of warm-up and 5 s counted, device time.
    fn default() -> Self {
        CorunConfig {
            readers: 32,
            writers: 32,
            region_pages: 0,
            seed: 1,
            precondition: Precondition::default(),
            warmup: Duration::from_secs(1),
            duration: Duration::from_secs(5),
            solo: true,
        }
    }
}

impl CorunConfig {
    /// Checks the configuration.
    ///
    /// # Errors
    /// [`Error::Config`] naming the field that is wrong.
    pub fn validate(&self) -> Result<()> {
        for (name, n) in [("readers", self.readers), ("writers", self.writers)] {
            if n == 0 || n > MAX_CONCURRENCY {
                return Err(Error::Config(format!(
                    "co-run {name} must be within 1..={MAX_CONCURRENCY}, not {n}"
                )));
            }
        }
        if self.duration.is_zero() {
            return Err(Error::Config("co-run duration must be positive".into()));
        }
        self.as_probe_config().validate()
    }

    /// The probe configuration its preconditioning is run with.
    fn as_probe_config(&self) -> ProbeConfig {
        ProbeConfig {
            region_pages: self.region_pages,
            seed: self.seed,
            precondition: self.precondition,
            fsync: None,
            ..ProbeConfig::default()
        }
    }
}

/// One stream's figures over a phase's counted span (device time).
#[derive(Debug, Clone, serde::Serialize)]
pub struct StreamStats {
    /// Reads or writes.
    pub op: ProbeOp,
    /// Submitters of the stream.
    pub concurrency: usize,
    /// I/Os completed in the span.
    pub ios: u64,
    /// I/Os per device second.
    pub iops: f64,
    /// Megabytes (10^6 bytes) per device second.
    pub mb_s: f64,
    /// Mean latency, microseconds.
    pub latency_mean_us: f64,
    /// 95th-percentile latency, microseconds.
    pub latency_p95_us: f64,
    /// 99th-percentile latency, microseconds.
    pub latency_p99_us: f64,
}

/// The co-run's result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CorunReport {
    /// The device's name.
    pub device: String,
    /// Page size in bytes (the I/O size of both streams).
    pub page_size: usize,
    /// Real time per device time unit.
    pub time_scale: f64,
    /// Whether this ran on the timing model in virtual time.
    pub model: bool,
    /// What `sync` has to do on the device (information).
    pub write_cache: WriteCache,
    /// Pages addressed.
    pub region_pages: u64,
    /// How the region was prepared.
    pub precondition: String,
    /// Device milliseconds of warm-up per phase.
    pub warmup_ms: f64,
    /// Device milliseconds counted per phase.
    pub duration_ms: f64,
    /// The read stream while the write stream ran.
    pub read: StreamStats,
    /// The write stream while the read stream ran.
    pub write: StreamStats,
    /// The read stream alone (with `solo`).
    pub read_alone: Option<StreamStats>,
    /// The write stream alone (with `solo`).
    pub write_alone: Option<StreamStats>,
    /// Real seconds the whole run took.
    pub real_seconds: f64,
}

/// Builds a stream's figures from its counted I/Os and latencies.
fn stream_stats(
    op: ProbeOp,
    concurrency: usize,
    latencies: &Histogram<u64>,
    duration_ns: u64,
    page_size: usize,
) -> StreamStats {
    let ios = latencies.len();
    let seconds = duration_ns.max(1) as f64 / 1.0e9;
    let iops = ios as f64 / seconds;
    let quantile = |q: f64| {
        if ios == 0 {
            0.0
        } else {
            latencies.value_at_quantile(q) as f64 / 1000.0
        }
    };
    StreamStats {
        op,
        concurrency,
        ios,
        iops,
        mb_s: iops * page_size as f64 / 1.0e6,
        latency_mean_us: if ios == 0 {
            0.0
        } else {
            latencies.mean() / 1000.0
        },
        latency_p95_us: quantile(0.95),
        latency_p99_us: quantile(0.99),
    }
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Runs the co-run on a fresh timing model of `profile` (virtual time).
///
/// # Errors
/// [`Error::Config`] for a bad configuration, a model that does not fit, or sequential
/// preconditioning (not modelled).
pub fn corun_model(
    profile: &Profile,
    page_size: usize,
    region_pages: u64,
    config: &CorunConfig,
) -> Result<CorunReport> {
    config.validate()?;
    let started = Instant::now();
    let region_pages = region_pages.max(1);
    let mut model = Model::new(profile, page_size, region_pages)?;
    let mut now = super::model::precondition(&mut model, &config.as_probe_config(), region_pages)?;
    let mut phase = |clients: &[ClientKind], salt: u64, now: &mut u64| {
        let (read, write) = model_phase(
            &mut model,
            *now,
            clients,
            region_pages,
            config,
            salt,
            page_size,
        )?;
        *now = model.quiescent_at().max(*now);
        Ok::<_, Error>((read, write))
    };
    let mut clients = vec![ClientKind::Reader; config.readers];
    clients.extend(std::iter::repeat_n(ClientKind::Writer, config.writers));
    let (read, write) = phase(&clients, 0, &mut now)?;
    let (read_alone, write_alone) = if config.solo {
        let (alone, _) = phase(&vec![ClientKind::Reader; config.readers], 1, &mut now)?;
        let (_, w_alone) = phase(&vec![ClientKind::Writer; config.writers], 2, &mut now)?;
        (Some(alone), Some(w_alone))
    } else {
        (None, None)
    };
    let write_cache = profile.write_cache();
    Ok(CorunReport {
        device: format!("emu:{} (timing model)", profile.name),
        page_size,
        time_scale: profile.time_scale,
        model: true,
        write_cache,
        region_pages,
        precondition: config.precondition.to_string(),
        warmup_ms: config.warmup.as_secs_f64() * 1000.0,
        duration_ms: config.duration.as_secs_f64() * 1000.0,
        read,
        write,
        read_alone,
        write_alone,
        real_seconds: started.elapsed().as_secs_f64(),
    })
}

/// One phase on the model from device time `now`: warm-up, then the counted span, split into
/// the read and the write stream.
fn model_phase(
    model: &mut Model,
    now: u64,
    clients: &[ClientKind],
    region_pages: u64,
    config: &CorunConfig,
    salt: u64,
    page_size: usize,
) -> Result<(StreamStats, StreamStats)> {
    let mut load = ClosedLoop::new(clients, region_pages, now, config.seed ^ (salt << 40));
    let counted_from = now + duration_ns(config.warmup);
    load.run_until(model, counted_from);
    let span = duration_ns(config.duration);
    let window = load.run_until(model, counted_from + span);
    let (reads, writes) = split(&window)?;
    Ok((
        stream_stats(ProbeOp::Read, config.readers, &reads, span, page_size),
        stream_stats(ProbeOp::Write, config.writers, &writes, span, page_size),
    ))
}

/// The window's latencies by stream.
fn split(window: &Window) -> Result<(Histogram<u64>, Histogram<u64>)> {
    let (mut reads, mut writes) = (new_histogram()?, new_histogram()?);
    for (&latency, &kind) in window.latencies_ns.iter().zip(&window.kinds) {
        match kind {
            ClientKind::Reader => record(&mut reads, latency),
            _ => record(&mut writes, latency),
        }
    }
    Ok((reads, writes))
}

/// Runs the co-run on `device` (real threads; device time from its time scale).
///
/// # Errors
/// [`Error::Config`] for a bad configuration; the device's first I/O error.
pub fn corun(device: &SharedDevice, config: &CorunConfig) -> Result<CorunReport> {
    config.validate()?;
    let started = Instant::now();
    let info = device.info().clone();
    let region_pages = if config.region_pages == 0 {
        info.pages
    } else {
        config.region_pages.min(info.pages)
    };
    let probe_config = config.as_probe_config();
    live::precondition(device, &probe_config, region_pages, &mut |_| {})?;
    let (read, write) = live_phase(device, config, region_pages, config.readers, config.writers)?;
    let (read_alone, write_alone) = if config.solo {
        live::settle(device);
        let (alone, _) = live_phase(device, config, region_pages, config.readers, 0)?;
        live::settle(device);
        let (_, w_alone) = live_phase(device, config, region_pages, 0, config.writers)?;
        (Some(alone), Some(w_alone))
    } else {
        (None, None)
    };
    Ok(CorunReport {
        device: info.name.clone(),
        page_size: info.page_size,
        time_scale: info.time_scale,
        model: false,
        write_cache: device.write_cache(),
        region_pages,
        precondition: config.precondition.to_string(),
        warmup_ms: config.warmup.as_secs_f64() * 1000.0,
        duration_ms: config.duration.as_secs_f64() * 1000.0,
        read,
        write,
        read_alone,
        write_alone,
        real_seconds: started.elapsed().as_secs_f64(),
    })
}

/// One live phase: `readers` read threads and `writers` write threads for warm-up plus the
/// counted span; each stream's I/Os that completed inside the span.
fn live_phase(
    device: &SharedDevice,
    config: &CorunConfig,
    region_pages: u64,
    readers: usize,
    writers: usize,
) -> Result<(StreamStats, StreamStats)> {
    let scale = device.info().time_scale.max(f64::MIN_POSITIVE);
    let real = |d: Duration| Duration::from_secs_f64(d.as_secs_f64() * scale);
    let (warmup, span) = (real(config.warmup), real(config.duration));
    let cap = (MAX_SAMPLES / (readers + writers).max(1)).max(1024);
    let (read_shared, write_shared) = (Shared::default(), Shared::default());
    let start = Instant::now();
    let (read_samples, write_samples) = std::thread::scope(|scope| {
        let stream = Stream {
            device,
            region_pages,
            seed: config.seed,
            start,
            cap,
        };
        let read_handles = stream.spawn(scope, &read_shared, ProbeOp::Read, readers);
        let write_handles = stream.spawn(scope, &write_shared, ProbeOp::Write, writers);
        sleep_until(start + warmup + span, &[&read_shared, &write_shared]);
        for shared in [&read_shared, &write_shared] {
            shared
                .stop
                .store(true, std::sync::atomic::Ordering::Release);
        }
        let reads = live::join_all(read_handles);
        let writes = live::join_all(write_handles);
        Ok::<_, Error>((reads?, writes?))
    })?;
    let from = warmup.as_nanos() as u64;
    let to = (warmup + span).as_nanos() as u64;
    let span_ns = duration_ns(config.duration);
    let stats = |op: ProbeOp, n: usize, samples: &[Samples]| -> Result<StreamStats> {
        let mut histogram = new_histogram()?;
        for &(completed, latency) in samples.iter().flatten() {
            if completed > from && completed <= to {
                record(
                    &mut histogram,
                    live::to_device_ns(Duration::from_nanos(latency), scale),
                );
            }
        }
        Ok(stream_stats(
            op,
            n,
            &histogram,
            span_ns,
            device.info().page_size,
        ))
    };
    Ok((
        stats(ProbeOp::Read, readers, &read_samples)?,
        stats(ProbeOp::Write, writers, &write_samples)?,
    ))
}

/// What every thread of a live phase shares.
#[derive(Clone, Copy)]
struct Stream<'env> {
    device: &'env SharedDevice,
    region_pages: u64,
    seed: u64,
    start: Instant,
    cap: usize,
}

impl<'env> Stream<'env> {
    /// Starts `n` threads of `op` reporting to `shared`.
    fn spawn<'scope>(
        self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        shared: &'env Shared,
        op: ProbeOp,
        n: usize,
    ) -> Vec<std::thread::ScopedJoinHandle<'scope, Result<Samples>>> {
        (0..n)
            .map(|thread| {
                let seed = self.seed ^ ((thread as u64) << 8) ^ op_salt(op);
                scope.spawn(move || {
                    let result = live::io_loop(
                        self.device.as_ref(),
                        shared,
                        self.region_pages,
                        op,
                        seed,
                        self.start,
                        self.cap,
                    );
                    if result.is_err() {
                        shared
                            .failed
                            .store(true, std::sync::atomic::Ordering::Release);
                    }
                    result
                })
            })
            .collect()
    }
}

fn op_salt(op: ProbeOp) -> u64 {
    match op {
        ProbeOp::Read => 0x5eed_0000_0000,
        ProbeOp::Write => 0xa11e_0000_0000,
    }
}

/// Sleeps until `deadline`, waking every [`POLL`] to stop early if a thread failed.
fn sleep_until(deadline: Instant, streams: &[&Shared]) {
    // Bounded: each turn sleeps at least until the deadline or POLL.
    loop {
        let now = Instant::now();
        if now >= deadline
            || streams
                .iter()
                .any(|s| s.failed.load(std::sync::atomic::Ordering::Acquire))
        {
            return;
        }
        std::thread::sleep((deadline - now).min(POLL));
    }
}
