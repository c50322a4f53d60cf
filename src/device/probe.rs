//! The device probe: random page reads and writes at rising concurrency; IOPS and latency per
//! point, and the device parameters the schemes need (algorithms.md: alpha, the write/read cost
//! ratio; k_r and k_w, the read and write concurrency a device absorbs).
//!
//! Method: the region (the first `region_pages` pages) is written once and synced, so reads hit
//! the medium rather than unwritten extents. Then, for each concurrency N of the list, reads and
//! then writes: N threads each keep one page I/O outstanding (submit, wait, repeat) to uniformly
//! random pages of the region for `duration` of real time. Latencies go into an HDR histogram per
//! thread (nanoseconds, 3 significant digits), merged per point.
//!
//! Every figure is in device time: real durations are divided by [`DeviceInfo::time_scale`]
//! (and IOPS multiplied by it), so emulated devices report what they model.
//!
//! Derived: `alpha_latency` = mean write / mean read latency at the first (lowest) concurrency;
//! `alpha_iops` = read IOPS / write IOPS at the last (highest); `k_r`/`k_w` = the first
//! concurrency after which IOPS grows by no more than [`SATURATION_GAIN`] (the last concurrency
//! if it always grows).
//!
//! Bounds: each point runs until its deadline (each thread issues at most one I/O past it);
//! preconditioning is one pass over the region in batches of [`PRECONDITION_BATCH`] pages.
//! No locks: each thread owns its buffer, generator and histogram.
//!
//! [`DeviceInfo::time_scale`]: crate::device::DeviceInfo::time_scale

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

use super::ticket::wait_all;
use super::{AlignedBuf, Device, IoRequest, SharedDevice};
use crate::error::{Error, Result};

/// A point is saturated when the next one gains no more than this fraction of IOPS.
pub const SATURATION_GAIN: f64 = 0.10;
/// Pages written per batch while preconditioning.
pub const PRECONDITION_BATCH: usize = 64;
/// The largest concurrency the probe accepts.
pub const MAX_CONCURRENCY: usize = 1024;
/// Highest latency the histograms track (real time); longer I/Os are clamped to it.
const LATENCY_MAX_NS: u64 = 60_000_000_000;

/// What to measure.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    /// Concurrency levels, ascending (threads each keeping one I/O outstanding).
    pub concurrency: Vec<usize>,
    /// Real time each point runs.
    pub duration: Duration,
    /// Pages addressed (the first ones of the device); 0 = the whole device.
    pub region_pages: u64,
    /// Seed of the page choices.
    pub seed: u64,
    /// Write the region once (and sync) before measuring.
    pub precondition: bool,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            concurrency: vec![1, 2, 4, 8, 16, 32, 64],
            duration: Duration::from_millis(500),
            region_pages: 0,
            seed: 1,
            precondition: true,
        }
    }
}

impl ProbeConfig {
    /// Powers of two from 1 up to `max` (and `max` itself if it is not one).
    #[must_use]
    pub fn powers_of_two(max: usize) -> Vec<usize> {
        let mut levels: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
            .take_while(|&n| n <= max)
            .collect();
        if levels.last().is_some_and(|&last| last != max) && max > 0 {
            levels.push(max);
        }
        levels
    }

    fn validate(&self) -> Result<()> {
        if self.concurrency.is_empty() {
            return Err(Error::Config("probe needs at least one concurrency".into()));
        }
        if self
            .concurrency
            .iter()
            .any(|&n| n == 0 || n > MAX_CONCURRENCY)
        {
            return Err(Error::Config(format!(
                "probe concurrency must be within 1..={MAX_CONCURRENCY}"
            )));
        }
        if !self.concurrency.is_sorted_by(|a, b| a < b) {
            return Err(Error::Config(
                "probe concurrency levels must be strictly ascending".into(),
            ));
        }
        if self.duration.is_zero() {
            return Err(Error::Config("probe duration must be positive".into()));
        }
        Ok(())
    }
}

/// Random reads or random writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeOp {
    /// Random page reads.
    Read,
    /// Random page writes.
    Write,
}

impl std::fmt::Display for ProbeOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ProbeOp::Read => "read",
            ProbeOp::Write => "write",
        })
    }
}

/// One measured point. Figures are in device time.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProbePoint {
    /// Reads or writes.
    pub op: ProbeOp,
    /// Threads, each with one I/O outstanding.
    pub concurrency: usize,
    /// I/Os completed.
    pub ios: u64,
    /// I/Os per second of device time.
    pub iops: f64,
    /// Mean latency in microseconds of device time.
    pub latency_mean_us: f64,
    /// 99th-percentile latency in microseconds of device time.
    pub latency_p99_us: f64,
}

/// The probe's result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProbeReport {
    /// The device's name.
    pub device: String,
    /// Page size in bytes.
    pub page_size: usize,
    /// Real time per device time unit (1.0 for real devices).
    pub time_scale: f64,
    /// Pages addressed.
    pub region_pages: u64,
    /// Real milliseconds each point ran.
    pub duration_ms: u64,
    /// Read points by ascending concurrency.
    pub reads: Vec<ProbePoint>,
    /// Write points by ascending concurrency.
    pub writes: Vec<ProbePoint>,
    /// Mean write latency / mean read latency at the lowest concurrency.
    pub alpha_latency: f64,
    /// Read IOPS / write IOPS at the highest concurrency.
    pub alpha_iops: f64,
    /// Concurrency where read IOPS stops growing by more than 10%.
    pub k_r: usize,
    /// Concurrency where write IOPS stops growing by more than 10%.
    pub k_w: usize,
}

/// Progress of a running probe.
#[derive(Debug, Clone)]
pub enum ProbeEvent<'a> {
    /// Preconditioning wrote `done` of `total` pages.
    Precondition {
        /// Pages written.
        done: u64,
        /// Pages to write.
        total: u64,
    },
    /// A point starts (`index` of `total`, 0-based).
    PointStarted {
        /// Reads or writes.
        op: ProbeOp,
        /// Threads.
        concurrency: usize,
        /// Position among all points.
        index: usize,
        /// Number of points.
        total: usize,
    },
    /// A point finished.
    PointDone(&'a ProbePoint),
}

/// Runs the probe on `device`.
///
/// # Errors
/// [`Error::Config`] for a bad configuration; the device's first I/O error.
pub fn probe(
    device: &SharedDevice,
    config: &ProbeConfig,
    progress: &mut dyn FnMut(ProbeEvent<'_>),
) -> Result<ProbeReport> {
    config.validate()?;
    let info = device.info();
    let region_pages = if config.region_pages == 0 {
        info.pages
    } else {
        config.region_pages.min(info.pages)
    };
    assert!(region_pages > 0, "devices have at least one page");
    if config.precondition {
        precondition(device.as_ref(), region_pages, config.seed, progress)?;
    }
    let total = 2 * config.concurrency.len();
    let mut points = Vec::with_capacity(total);
    for op in [ProbeOp::Read, ProbeOp::Write] {
        for &concurrency in &config.concurrency {
            progress(ProbeEvent::PointStarted {
                op,
                concurrency,
                index: points.len(),
                total,
            });
            let point = measure(device, config, region_pages, op, concurrency)?;
            progress(ProbeEvent::PointDone(&point));
            points.push(point);
        }
    }
    let (reads, writes): (Vec<_>, Vec<_>) = points.into_iter().partition(|p| p.op == ProbeOp::Read);
    Ok(derive(ProbeReport {
        device: info.name.clone(),
        page_size: info.page_size,
        time_scale: info.time_scale,
        region_pages,
        duration_ms: u64::try_from(config.duration.as_millis()).unwrap_or(u64::MAX),
        reads,
        writes,
        alpha_latency: 0.0,
        alpha_iops: 0.0,
        k_r: 0,
        k_w: 0,
    }))
}

/// Fills in alpha, k_r and k_w from the points.
fn derive(mut report: ProbeReport) -> ProbeReport {
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    if let (Some(read), Some(write)) = (report.reads.first(), report.writes.first()) {
        report.alpha_latency = ratio(write.latency_mean_us, read.latency_mean_us);
    }
    if let (Some(read), Some(write)) = (report.reads.last(), report.writes.last()) {
        report.alpha_iops = ratio(read.iops, write.iops);
    }
    report.k_r = saturation(&report.reads);
    report.k_w = saturation(&report.writes);
    report
}

/// The first concurrency whose successor gains no more than [`SATURATION_GAIN`] IOPS.
#[must_use]
pub fn saturation(points: &[ProbePoint]) -> usize {
    points
        .windows(2)
        .find(|pair| pair[1].iops <= pair[0].iops * (1.0 + SATURATION_GAIN))
        .map(|pair| pair[0].concurrency)
        .or_else(|| points.last().map(|p| p.concurrency))
        .unwrap_or(0)
}

/// Writes every page of the region once (random contents), then syncs.
fn precondition(
    device: &dyn Device,
    region_pages: u64,
    seed: u64,
    progress: &mut dyn FnMut(ProbeEvent<'_>),
) -> Result<()> {
    let page_size = device.info().page_size;
    let mut arena = AlignedBuf::new(PRECONDITION_BATCH * page_size);
    SmallRng::seed_from_u64(seed).fill_bytes(arena.as_mut_slice());
    let mut next = 0u64;
    // Bounded: `next` grows by at least one page per turn up to `region_pages`.
    while next < region_pages {
        let count = (region_pages - next).min(PRECONDITION_BATCH as u64) as usize;
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

/// One thread's share of a point.
struct ThreadResult {
    histogram: Histogram<u64>,
    elapsed: Duration,
}

/// Runs one point: `concurrency` threads until the deadline.
fn measure(
    device: &SharedDevice,
    config: &ProbeConfig,
    region_pages: u64,
    op: ProbeOp,
    concurrency: usize,
) -> Result<ProbePoint> {
    let start = Instant::now();
    let deadline = start + config.duration;
    let results: Vec<Result<ThreadResult>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..concurrency)
            .map(|thread| {
                let seed = config.seed ^ ((concurrency as u64) << 32) ^ thread as u64;
                scope.spawn(move || {
                    io_loop(device.as_ref(), region_pages, op, seed, start, deadline)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(Error::Config("a probe thread panicked".into())))
            })
            .collect()
    });
    let mut merged = new_histogram()?;
    let mut elapsed = Duration::ZERO;
    for result in results {
        let result = result?;
        merged
            .add(&result.histogram)
            .map_err(|err| Error::Config(format!("merging latency histograms: {err}")))?;
        elapsed = elapsed.max(result.elapsed);
    }
    Ok(point(
        op,
        concurrency,
        &merged,
        elapsed,
        device.info().time_scale,
    ))
}

/// Converts a merged histogram (real nanoseconds) into a point in device time.
fn point(
    op: ProbeOp,
    concurrency: usize,
    histogram: &Histogram<u64>,
    elapsed: Duration,
    time_scale: f64,
) -> ProbePoint {
    let scale = if time_scale > 0.0 { time_scale } else { 1.0 };
    let ios = histogram.len();
    let seconds = elapsed.as_secs_f64();
    ProbePoint {
        op,
        concurrency,
        ios,
        iops: if seconds > 0.0 {
            ios as f64 / seconds * scale
        } else {
            0.0
        },
        latency_mean_us: histogram.mean() / 1000.0 / scale,
        latency_p99_us: histogram.value_at_quantile(0.99) as f64 / 1000.0 / scale,
    }
}

fn new_histogram() -> Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, LATENCY_MAX_NS, 3)
        .map_err(|err| Error::Config(format!("latency histogram: {err}")))
}

/// One thread: keeps one I/O outstanding until `deadline`.
fn io_loop(
    device: &dyn Device,
    region_pages: u64,
    op: ProbeOp,
    seed: u64,
    start: Instant,
    deadline: Instant,
) -> Result<ThreadResult> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut histogram = new_histogram()?;
    let mut buf = AlignedBuf::new(device.info().page_size);
    rng.fill_bytes(buf.as_mut_slice());
    // Bounded by the deadline: each turn is one I/O.
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let page = rng.gen_range(0..region_pages);
        let request = match op {
            ProbeOp::Read => IoRequest::read(page, buf.io_buffer()),
            ProbeOp::Write => IoRequest::write(page, buf.io_buffer_shared()),
        };
        // SAFETY: `buf` belongs to this thread and is not touched until the wait returns.
        let tickets = unsafe { device.submit(vec![request]) };
        wait_all(tickets)?;
        let nanos = u64::try_from(now.elapsed().as_nanos()).unwrap_or(u64::MAX);
        histogram.saturating_record(nanos.clamp(1, LATENCY_MAX_NS));
    }
    Ok(ThreadResult {
        histogram,
        elapsed: start.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::device::OpenOptions;
    use crate::device::memory::MemoryDevice;

    fn synthetic(concurrency: usize, iops: f64) -> ProbePoint {
        ProbePoint {
            op: ProbeOp::Read,
            concurrency,
            ios: 1,
            iops,
            latency_mean_us: 1.0,
            latency_p99_us: 1.0,
        }
    }

    fn quick(levels: &[usize]) -> ProbeConfig {
        ProbeConfig {
            concurrency: levels.to_vec(),
            duration: Duration::from_millis(20),
            region_pages: 64,
            seed: 5,
            precondition: true,
        }
    }

    #[test]
    fn saturation_is_where_growth_stops() {
        let points: Vec<_> = [(1, 100.0), (2, 190.0), (4, 300.0), (8, 320.0), (16, 400.0)]
            .into_iter()
            .map(|(c, iops)| synthetic(c, iops))
            .collect();
        assert_eq!(saturation(&points), 4);
        assert_eq!(saturation(&points[..3]), 4, "always growing: the last");
        assert_eq!(saturation(&[]), 0);
    }

    #[test]
    fn figures_are_converted_to_device_time() {
        let mut histogram = new_histogram().unwrap();
        for _ in 0..100 {
            histogram.record(8_000).unwrap();
        }
        let real = point(ProbeOp::Write, 2, &histogram, Duration::from_secs(1), 1.0);
        let scaled = point(ProbeOp::Write, 2, &histogram, Duration::from_secs(1), 4.0);
        assert!((real.iops - 100.0).abs() < 1e-9);
        assert!((scaled.iops - 400.0).abs() < 1e-9);
        assert!((real.latency_mean_us - 4.0 * scaled.latency_mean_us).abs() < 0.01);
        assert!((scaled.latency_p99_us - 2.0).abs() < 0.01);
    }

    #[test]
    fn bad_configurations_are_refused() {
        let device: SharedDevice = Arc::new(MemoryDevice::new(4096, 8).unwrap());
        for levels in [vec![], vec![0], vec![4, 2], vec![MAX_CONCURRENCY + 1]] {
            let result = probe(&device, &quick(&levels), &mut |_| {});
            assert!(matches!(result, Err(Error::Config(_))), "{levels:?}");
        }
        assert_eq!(ProbeConfig::powers_of_two(64), vec![1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(ProbeConfig::powers_of_two(6), vec![1, 2, 4, 6]);
    }

    fn check_report(device: &SharedDevice, levels: &[usize]) {
        let mut events = (0, 0, 0);
        let report = probe(device, &quick(levels), &mut |event| match event {
            ProbeEvent::Precondition { .. } => events.0 += 1,
            ProbeEvent::PointStarted { .. } => events.1 += 1,
            ProbeEvent::PointDone(_) => events.2 += 1,
        })
        .unwrap();
        assert_eq!(events, (1, 2 * levels.len(), 2 * levels.len()));
        assert_eq!(report.region_pages, 64);
        for (points, op) in [
            (&report.reads, ProbeOp::Read),
            (&report.writes, ProbeOp::Write),
        ] {
            let seen: Vec<usize> = points.iter().map(|p| p.concurrency).collect();
            assert_eq!(seen, levels);
            for p in points {
                assert_eq!(p.op, op);
                assert!(
                    p.ios > 0 && p.iops > 0.0 && p.latency_mean_us > 0.0,
                    "{p:?}"
                );
            }
        }
        assert!(levels.contains(&report.k_r) && levels.contains(&report.k_w));
        assert!(report.alpha_latency > 0.0 && report.alpha_iops > 0.0);
        let mut page = AlignedBuf::new(device.info().page_size);
        device.read_page(63, &mut page).unwrap();
        assert!(
            page.as_slice().iter().any(|&b| b != 0),
            "region preconditioned"
        );
        let stats = device.stats();
        assert!(stats.writes >= 64 && stats.syncs >= 1);
    }

    #[test]
    fn probes_a_memory_device() {
        let device: SharedDevice = Arc::new(MemoryDevice::new(4096, 256).unwrap());
        check_report(&device, &[1, 2]);
    }

    #[test]
    fn probes_a_file_device() {
        let dir = tempfile::Builder::new()
            .prefix("probe-")
            .tempdir_in(env!("CARGO_MANIFEST_DIR").to_owned() + "/target")
            .unwrap();
        let options = OpenOptions {
            page_size: 4096,
            pages: 64,
            create: true,
        };
        let device = crate::device::file::open(&dir.path().join("dev"), &options).unwrap();
        check_report(&device, &[1, 4]);
    }
}
