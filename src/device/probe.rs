//! The device probe (docs/algorithms.md section 7; the method of the ACE authors' Parametric I/O
//! model, PIO): random page writes and reads at rising concurrency, each point measured until
//! steady, then the device parameters the schemes need and the cost of `sync`.
//!
//! Method, by default (`ProbeConfig::default`), as the papers measured:
//! 1. **Precondition** with random overwrites: two passes over the region from 32 writers
//!    (LRU-C Table 1: half-full devices, queue depth 32, 30 minutes). Emulated devices run it in
//!    device time only ([`crate::device::DeviceTimeControl::precondition`]): it costs no real
//!    time and leaves the device in its random-write steady state (flash layout, full write
//!    buffer, garbage collection under way). Other devices write for real.
//! 2. **Writes**, then **reads**, at each concurrency of the list: N threads each keep one page
//!    I/O outstanding to uniformly random pages of the region. Each point runs window by window
//!    (device time) until the last windows agree ([`steady`]), and reports only those windows.
//!    A sweep stops early once bandwidth has plateaued (two steps gaining under
//!    [`PLATEAU_GAIN`], from concurrency [`PLATEAU_FROM`] on). Writes come first so that they
//!    start from the preconditioned steady state; the device is let idle
//!    ([`crate::device::DeviceTimeControl::settle`], or a pause on real devices) before reads.
//! 3. **fsync** latency (`fsync`): a write then a sync on an idle device; a sync after a
//!    burst of writes; syncs while writers run. Mean and p99, device time.
//!
//! Derived (PIO's definitions, as ACE Table I reports them):
//! - `alpha` = peak read bandwidth / peak write bandwidth. Over the same concurrency, once both
//!   are saturated, this is also the write/read latency ratio (Little's law: latency =
//!   concurrency / IOPS), the "amortized" write cost ACE's cost model uses. At concurrency 1 the
//!   latency ratio is not the cost ratio (a drive acknowledges a write from its DRAM buffer
//!   faster than it reads flash); it is reported as `alpha_latency`, for information.
//! - `k_r`, `k_w` = the concurrency at which read (write) bandwidth reaches
//!   [`SATURATION_FRACTION`] of its peak ("the number of concurrent I/Os needed to saturate the
//!   bandwidth"), interpolated linearly between measured levels (`k_*_exact`) and rounded.
//!
//! Every figure is in device time: real durations are divided by [`DeviceInfo::time_scale`]
//! (and IOPS multiplied by it), so emulated devices report what they model.
//!
//! [`probe_model`] runs the same method on an emulated device's timing model in virtual time
//! (no threads, no sleeping, deterministic): for calibration, tests and `--model`.
//!
//! Bounds: at most `concurrency.len()` points per sweep, each bounded by its
//! [`SteadyConfig`]; preconditioning writes `passes x region` pages; the fsync phases are
//! bounded by sample counts and device time. Lock order: none here (each thread owns its
//! buffer, generator and samples; shared counters are atomics).
//!
//! [`DeviceInfo::time_scale`]: crate::device::DeviceInfo::time_scale

pub mod corun;
mod fsync_probe;
mod live;
mod model;
pub mod steady;

use std::time::Instant;

use hdrhistogram::Histogram;

pub use corun::{CorunConfig, CorunReport, StreamStats, corun, corun_model};
pub use fsync_probe::{FsyncConfig, FsyncReport, SyncLatency};
pub use model::probe_model;
pub use steady::{Convergence, SteadyConfig};

use super::{SharedDevice, WriteCache};
use crate::error::{Error, Result};

/// Bandwidth counts as saturated at this fraction of its peak.
pub const SATURATION_FRACTION: f64 = 0.9;
/// A sweep stops once two successive steps together gain less than this fraction...
pub const PLATEAU_GAIN: f64 = 0.05;
/// ...but never before this concurrency (LRU-C Table 1's queue depth is always measured).
pub const PLATEAU_FROM: usize = 32;
/// The largest concurrency the probe accepts.
pub const MAX_CONCURRENCY: usize = 1024;
/// The default concurrency levels (steps of 1.33-1.5x, so that k is resolved within about 15%).
pub const DEFAULT_LEVELS: &[usize] = &[1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256];
/// Highest latency the histograms track (device time); longer I/Os are clamped to it.
const LATENCY_MAX_NS: u64 = 600_000_000_000;

/// How the region is prepared before measuring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    /// Nothing (the device is already in the state wanted).
    None,
    /// One sequential pass over the region (real I/O), then sync.
    Sequential,
    /// Random overwrites: `passes` x region pages from `concurrency` writers (device time on
    /// emulated devices, real I/O elsewhere).
    Random {
        /// Region-sized passes.
        passes: u32,
        /// Closed-loop writers.
        concurrency: usize,
    },
}

impl Default for Precondition {
    fn default() -> Self {
        Precondition::Random {
            passes: 2,
            concurrency: 32,
        }
    }
}

impl std::fmt::Display for Precondition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Precondition::None => write!(f, "none"),
            Precondition::Sequential => write!(f, "sequential pass"),
            Precondition::Random {
                passes,
                concurrency,
            } => write!(
                f,
                "random overwrites, {passes} passes from {concurrency} writers"
            ),
        }
    }
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    /// Concurrency levels, ascending (threads each keeping one I/O outstanding).
    pub concurrency: Vec<usize>,
    /// Stop a sweep once bandwidth has plateaued ([`PLATEAU_GAIN`], [`PLATEAU_FROM`]).
    pub stop_at_plateau: bool,
    /// Pages addressed (the first ones of the device); 0 = the whole device.
    pub region_pages: u64,
    /// Seed of the page choices.
    pub seed: u64,
    /// How the region is prepared.
    pub precondition: Precondition,
    /// How long each point runs.
    pub steady: SteadyConfig,
    /// The fsync measurement (`None`: skipped).
    pub fsync: Option<FsyncConfig>,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            concurrency: DEFAULT_LEVELS.to_vec(),
            stop_at_plateau: true,
            region_pages: 0,
            seed: 1,
            precondition: Precondition::default(),
            steady: SteadyConfig::default(),
            fsync: Some(FsyncConfig::default()),
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

    /// Checks the configuration.
    ///
    /// # Errors
    /// [`Error::Config`] saying what is wrong.
    pub fn validate(&self) -> Result<()> {
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
        if let Precondition::Random {
            passes,
            concurrency,
        } = self.precondition
            && (passes > 64 || concurrency == 0 || concurrency > MAX_CONCURRENCY)
        {
            return Err(Error::Config(format!(
                "random preconditioning needs at most 64 passes and 1..={MAX_CONCURRENCY} writers"
            )));
        }
        if let Some(fsync) = &self.fsync {
            fsync.validate()?;
        }
        self.steady.validate()
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

/// One measured point. Figures are in device time, over the counted (steady) windows.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProbePoint {
    /// Reads or writes.
    pub op: ProbeOp,
    /// Threads, each with one I/O outstanding.
    pub concurrency: usize,
    /// I/Os counted.
    pub ios: u64,
    /// I/Os per second of device time.
    pub iops: f64,
    /// Mean latency in microseconds of device time.
    pub latency_mean_us: f64,
    /// 99th-percentile latency in microseconds of device time.
    pub latency_p99_us: f64,
    /// How the measurement ended.
    pub convergence: Convergence,
    /// Windows run / windows counted.
    pub windows_run: usize,
    /// Windows the figures come from.
    pub windows_counted: usize,
    /// Device milliseconds the point ran (all windows).
    pub device_ms: f64,
    /// Coefficient of variation of the counted windows' rates.
    pub cv: f64,
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
    /// What `sync` has to do on the device.
    pub write_cache: WriteCache,
    /// `plp=on`, `plp=off` or what applies instead.
    pub plp: String,
    /// Whether this is a run of the timing model in virtual time (`--model`).
    pub model: bool,
    /// How the region was prepared.
    pub precondition: String,
    /// How points were measured.
    pub steady: SteadyConfig,
    /// Read points by ascending concurrency.
    pub reads: Vec<ProbePoint>,
    /// Write points by ascending concurrency.
    pub writes: Vec<ProbePoint>,
    /// Highest read IOPS measured.
    pub peak_read_iops: f64,
    /// Highest write IOPS measured.
    pub peak_write_iops: f64,
    /// Peak read / peak write bandwidth (PIO's alpha).
    pub alpha: f64,
    /// Mean write latency / mean read latency at the lowest concurrency (information only).
    pub alpha_latency: f64,
    /// Concurrency where read bandwidth reaches 90% of its peak, rounded.
    pub k_r: usize,
    /// Concurrency where write bandwidth reaches 90% of its peak, rounded.
    pub k_w: usize,
    /// `k_r` before rounding.
    pub k_r_exact: f64,
    /// `k_w` before rounding.
    pub k_w_exact: f64,
    /// fsync latency (absent when skipped).
    pub fsync: Option<FsyncReport>,
    /// Device seconds the measurement took (points and fsync phases; not preconditioning).
    pub device_seconds: f64,
    /// Device seconds preconditioning took (in device time only on emulated devices).
    pub precondition_device_seconds: f64,
    /// Real seconds the whole probe took.
    pub real_seconds: f64,
}

/// Progress of a running probe.
#[derive(Debug, Clone)]
pub enum ProbeEvent<'a> {
    /// A phase starts (preconditioning, a sweep, fsync).
    Phase(&'static str),
    /// Preconditioning wrote `done` of `total` pages (real I/O only).
    Precondition {
        /// Pages written.
        done: u64,
        /// Pages to write.
        total: u64,
    },
    /// A point starts (`index` of at most `total`, 0-based).
    PointStarted {
        /// Reads or writes.
        op: ProbeOp,
        /// Threads.
        concurrency: usize,
        /// Position among all points.
        index: usize,
        /// Most points there can be (sweeps may stop early).
        total: usize,
    },
    /// A window of the running point finished.
    Window {
        /// Its rate, I/Os per device second.
        iops: f64,
        /// Windows run so far in this point.
        windows: usize,
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
    let started = Instant::now();
    let info = device.info().clone();
    let region_pages = if config.region_pages == 0 {
        info.pages
    } else {
        config.region_pages.min(info.pages)
    };
    assert!(region_pages > 0, "devices have at least one page");
    progress(ProbeEvent::Phase("preconditioning"));
    let precondition_ns = live::precondition(device, config, region_pages, progress)?;
    let measure_started = live::device_now(device, started);
    let total = 2 * config.concurrency.len();
    let mut index = 0;
    progress(ProbeEvent::Phase("writes"));
    let writes = sweep(
        config,
        ProbeOp::Write,
        &mut index,
        total,
        progress,
        &mut |op, n, p| live::measure(device, config, region_pages, op, n, p),
    )?;
    live::settle(device);
    progress(ProbeEvent::Phase("reads"));
    let reads = sweep(
        config,
        ProbeOp::Read,
        &mut index,
        total,
        progress,
        &mut |op, n, p| live::measure(device, config, region_pages, op, n, p),
    )?;
    let fsync = match &config.fsync {
        Some(fsync) => {
            live::settle(device);
            progress(ProbeEvent::Phase("fsync"));
            Some(fsync_probe::live(device, fsync, region_pages, config.seed)?)
        }
        None => None,
    };
    let measured_ns = live::device_now(device, started).saturating_sub(measure_started);
    Ok(derive(ProbeReport {
        device: info.name.clone(),
        page_size: info.page_size,
        time_scale: info.time_scale,
        region_pages,
        write_cache: device.write_cache(),
        plp: device.write_cache().plp_label().to_string(),
        model: false,
        precondition: config.precondition.to_string(),
        steady: config.steady.clone(),
        reads,
        writes,
        fsync,
        device_seconds: measured_ns as f64 / 1.0e9,
        precondition_device_seconds: precondition_ns as f64 / 1.0e9,
        real_seconds: started.elapsed().as_secs_f64(),
        ..ProbeReport::empty()
    }))
}

impl ProbeReport {
    /// A report with nothing measured (fields filled in by the callers).
    fn empty() -> Self {
        ProbeReport {
            device: String::new(),
            page_size: 0,
            time_scale: 1.0,
            region_pages: 0,
            write_cache: WriteCache::Unknown,
            plp: String::new(),
            model: false,
            precondition: String::new(),
            steady: SteadyConfig::default(),
            reads: Vec::new(),
            writes: Vec::new(),
            peak_read_iops: 0.0,
            peak_write_iops: 0.0,
            alpha: 0.0,
            alpha_latency: 0.0,
            k_r: 0,
            k_w: 0,
            k_r_exact: 0.0,
            k_w_exact: 0.0,
            fsync: None,
            device_seconds: 0.0,
            precondition_device_seconds: 0.0,
            real_seconds: 0.0,
        }
    }

    /// The point of `op` at `concurrency`, if measured.
    #[must_use]
    pub fn point(&self, op: ProbeOp, concurrency: usize) -> Option<&ProbePoint> {
        let points = match op {
            ProbeOp::Read => &self.reads,
            ProbeOp::Write => &self.writes,
        };
        points.iter().find(|p| p.concurrency == concurrency)
    }
}

/// Measures one point: (operation, concurrency, progress) to the point.
type MeasurePoint<'a> =
    dyn FnMut(ProbeOp, usize, &mut dyn FnMut(ProbeEvent<'_>)) -> Result<ProbePoint> + 'a;

/// One sweep over the concurrency levels, stopping at the plateau if configured.
fn sweep(
    config: &ProbeConfig,
    op: ProbeOp,
    index: &mut usize,
    total: usize,
    progress: &mut dyn FnMut(ProbeEvent<'_>),
    measure_point: &mut MeasurePoint<'_>,
) -> Result<Vec<ProbePoint>> {
    let mut points: Vec<ProbePoint> = Vec::with_capacity(config.concurrency.len());
    for &concurrency in &config.concurrency {
        progress(ProbeEvent::PointStarted {
            op,
            concurrency,
            index: *index,
            total,
        });
        let point = measure_point(op, concurrency, progress)?;
        progress(ProbeEvent::PointDone(&point));
        *index += 1;
        points.push(point);
        if config.stop_at_plateau && plateaued(&points) {
            break;
        }
    }
    Ok(points)
}

/// Whether the last two steps together gained less than [`PLATEAU_GAIN`] (from
/// [`PLATEAU_FROM`] on).
#[must_use]
pub fn plateaued(points: &[ProbePoint]) -> bool {
    let [.., before, _, last] = points else {
        return false;
    };
    last.concurrency >= PLATEAU_FROM && last.iops <= before.iops * (1.0 + PLATEAU_GAIN)
}

/// Fills in the peaks, alpha and k from the points.
fn derive(mut report: ProbeReport) -> ProbeReport {
    let peak = |points: &[ProbePoint]| points.iter().map(|p| p.iops).fold(0.0, f64::max);
    report.peak_read_iops = peak(&report.reads);
    report.peak_write_iops = peak(&report.writes);
    report.alpha = ratio(report.peak_read_iops, report.peak_write_iops);
    report.alpha_latency = lowest_common(&report.reads, &report.writes)
        .map_or(0.0, |(read, write)| {
            ratio(write.latency_mean_us, read.latency_mean_us)
        });
    report.k_r_exact = saturation(&report.reads);
    report.k_w_exact = saturation(&report.writes);
    report.k_r = rounded_concurrency(report.k_r_exact);
    report.k_w = rounded_concurrency(report.k_w_exact);
    report
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

fn rounded_concurrency(k: f64) -> usize {
    if k > 0.0 {
        (k.round() as usize).max(1)
    } else {
        0
    }
}

/// The read and write points at the lowest concurrency both sweeps measured.
fn lowest_common<'a>(
    reads: &'a [ProbePoint],
    writes: &'a [ProbePoint],
) -> Option<(&'a ProbePoint, &'a ProbePoint)> {
    reads.iter().find_map(|read| {
        writes
            .iter()
            .find(|write| write.concurrency == read.concurrency)
            .map(|write| (read, write))
    })
}

/// The concurrency at which IOPS first reaches [`SATURATION_FRACTION`] of the peak,
/// interpolated linearly between the levels around the crossing (0 with no points).
#[must_use]
pub fn saturation(points: &[ProbePoint]) -> f64 {
    let peak = points.iter().map(|p| p.iops).fold(0.0, f64::max);
    let target = SATURATION_FRACTION * peak;
    let Some(first) = points.first() else {
        return 0.0;
    };
    if first.iops >= target {
        return first.concurrency as f64;
    }
    points
        .windows(2)
        .find(|pair| pair[1].iops >= target)
        .map_or(0.0, |pair| {
            let (a, b) = (&pair[0], &pair[1]);
            let fraction = (target - a.iops) / (b.iops - a.iops);
            a.concurrency as f64 + fraction * (b.concurrency - a.concurrency) as f64
        })
}

/// Builds a point from a steady-state measurement.
fn point_from(op: ProbeOp, concurrency: usize, outcome: &steady::PointOutcome) -> ProbePoint {
    let counted = outcome.counted();
    let latencies = &outcome.latencies;
    ProbePoint {
        op,
        concurrency,
        ios: counted.iter().map(|w| w.requests).sum(),
        iops: steady::combined_iops(counted),
        latency_mean_us: latencies.mean() / 1000.0,
        latency_p99_us: latencies.value_at_quantile(0.99) as f64 / 1000.0,
        convergence: outcome.convergence,
        windows_run: outcome.rates.len(),
        windows_counted: outcome.windows,
        device_ms: outcome.rates.iter().map(|w| w.device_ns).sum::<u64>() as f64 / 1.0e6,
        cv: steady::coefficient_of_variation(counted),
    }
}

/// A latency histogram in device nanoseconds.
fn new_histogram() -> Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, LATENCY_MAX_NS, 3)
        .map_err(|err| Error::Config(format!("latency histogram: {err}")))
}

/// Records `nanos` into `histogram`, clamped to its range.
fn record(histogram: &mut Histogram<u64>, nanos: u64) {
    histogram.saturating_record(nanos.clamp(1, LATENCY_MAX_NS));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(concurrency: usize, iops: f64) -> ProbePoint {
        ProbePoint {
            op: ProbeOp::Read,
            concurrency,
            ios: 1,
            iops,
            latency_mean_us: concurrency as f64 / iops * 1.0e6,
            latency_p99_us: 1.0,
            convergence: Convergence::Steady,
            windows_run: 4,
            windows_counted: 4,
            device_ms: 1.0,
            cv: 0.0,
        }
    }

    fn curve(points: &[(usize, f64)]) -> Vec<ProbePoint> {
        points.iter().map(|&(c, x)| synthetic(c, x)).collect()
    }

    #[test]
    fn saturation_interpolates_the_crossing_of_ninety_percent() {
        // A sharp knee at 5.5: linear to 5.5, flat after; 90% of the peak is reached at 4.95.
        let knee: Vec<ProbePoint> = [1, 2, 3, 4, 6, 8, 12]
            .iter()
            .map(|&c| synthetic(c, 100.0 * (c as f64).min(5.5)))
            .collect();
        let k = saturation(&knee);
        assert!((k - 5.27).abs() < 0.01, "{k}");
        assert_eq!(rounded_concurrency(k), 5);
        // Saturated from the first level.
        assert!((saturation(&curve(&[(1, 100.0), (2, 101.0)])) - 1.0).abs() < 1e-9);
        assert!(saturation(&[]).abs() < 1e-9);
        // A later dip does not move k.
        let dip = curve(&[(1, 10.0), (2, 50.0), (4, 100.0), (8, 80.0)]);
        assert!((saturation(&dip) - (2.0 + 2.0 * 40.0 / 50.0)).abs() < 1e-9);
    }

    #[test]
    fn alpha_is_the_peak_bandwidth_ratio() {
        let report = derive(ProbeReport {
            reads: curve(&[
                (1, 10_000.0),
                (8, 80_000.0),
                (64, 280_000.0),
                (128, 300_000.0),
            ]),
            writes: curve(&[(1, 40_000.0), (8, 100_000.0), (64, 100_000.0)]),
            ..ProbeReport::empty()
        });
        assert!((report.alpha - 3.0).abs() < 1e-9);
        // At concurrency 1 writes are faster than reads: the latency ratio is 0.25.
        assert!((report.alpha_latency - 0.25).abs() < 1e-9);
        // Writes reach 90% between 1 and 8 (1 + 7 x 50/60); reads between 8 and 64.
        assert_eq!(report.k_w, 7);
        assert_eq!(report.k_r, 61);
    }

    #[test]
    fn a_sweep_stops_at_the_plateau_but_not_before_thirty_two() {
        let early = curve(&[(1, 100.0), (2, 101.0), (3, 102.0), (4, 102.0)]);
        assert!(!plateaued(&early), "below PLATEAU_FROM");
        let flat = curve(&[(16, 100.0), (24, 103.0), (32, 104.0)]);
        assert!(plateaued(&flat));
        let growing = curve(&[(16, 100.0), (24, 103.0), (32, 106.0)]);
        assert!(!plateaued(&growing));
    }

    fn quick(levels: &[usize], precondition: Precondition) -> ProbeConfig {
        ProbeConfig {
            concurrency: levels.to_vec(),
            stop_at_plateau: false,
            region_pages: 64,
            seed: 5,
            precondition,
            steady: SteadyConfig::fixed(std::time::Duration::from_millis(20)),
            fsync: Some(FsyncConfig {
                samples: 3,
                burst: 4,
                writers: 2,
                under_load_syncs: 2,
                under_load_max: std::time::Duration::from_millis(50),
            }),
        }
    }

    fn check_report(device: &SharedDevice, levels: &[usize], precondition: Precondition) {
        let mut events = (0, 0, 0);
        let report = probe(
            device,
            &quick(levels, precondition),
            &mut |event| match event {
                ProbeEvent::PointStarted { .. } => events.0 += 1,
                ProbeEvent::PointDone(_) => events.1 += 1,
                ProbeEvent::Window { .. } => events.2 += 1,
                ProbeEvent::Phase(_) | ProbeEvent::Precondition { .. } => {}
            },
        )
        .unwrap();
        assert_eq!(
            events,
            (2 * levels.len(), 2 * levels.len(), 2 * levels.len())
        );
        assert_eq!(report.region_pages, 64);
        for (points, op) in [
            (&report.reads, ProbeOp::Read),
            (&report.writes, ProbeOp::Write),
        ] {
            let seen: Vec<usize> = points.iter().map(|p| p.concurrency).collect();
            assert_eq!(seen, levels);
            for p in points {
                assert_eq!((p.op, p.convergence), (op, Convergence::Fixed));
                assert!(
                    p.ios > 0 && p.iops > 0.0 && p.latency_mean_us > 0.0,
                    "{p:?}"
                );
            }
        }
        assert!(report.alpha > 0.0 && report.alpha_latency > 0.0);
        assert!(report.k_r >= 1 && report.k_w >= 1);
        let fsync = report.fsync.as_ref().unwrap();
        assert_eq!((fsync.idle.count, fsync.after_burst.count), (3, 3));
        let stats = device.stats();
        assert!(stats.writes >= 64 && stats.syncs >= 6, "{stats:?}");
    }

    #[test]
    fn probes_a_memory_device() {
        let device: SharedDevice =
            std::sync::Arc::new(crate::device::memory::MemoryDevice::new(4096, 256).unwrap());
        check_report(
            &device,
            &[1, 2],
            Precondition::Random {
                passes: 1,
                concurrency: 4,
            },
        );
        assert_eq!(device.write_cache(), WriteCache::Unknown);
    }

    #[test]
    fn probes_a_file_device() {
        let dir = tempfile::Builder::new()
            .prefix("probe-")
            .tempdir_in(env!("CARGO_MANIFEST_DIR").to_owned() + "/target")
            .unwrap();
        let options = crate::device::OpenOptions {
            page_size: 4096,
            pages: 64,
            create: true,
        };
        let device = crate::device::file::open(&dir.path().join("dev"), &options).unwrap();
        check_report(&device, &[1, 4], Precondition::Sequential);
    }

    #[test]
    fn bad_configurations_are_refused() {
        assert!(ProbeConfig::default().validate().is_ok());
        for levels in [vec![], vec![0], vec![4, 2], vec![MAX_CONCURRENCY + 1]] {
            let config = ProbeConfig {
                concurrency: levels.clone(),
                ..ProbeConfig::default()
            };
            assert!(
                matches!(config.validate(), Err(Error::Config(_))),
                "{levels:?}"
            );
        }
        let config = ProbeConfig {
            precondition: Precondition::Random {
                passes: 1,
                concurrency: 0,
            },
            ..ProbeConfig::default()
        };
        assert!(config.validate().is_err());
        assert_eq!(ProbeConfig::powers_of_two(64), vec![1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(ProbeConfig::powers_of_two(6), vec![1, 2, 4, 6]);
    }
}
