//! The probe's method on an emulated device's timing model, in virtual time: the same
//! preconditioning, sweeps, steady-state windows, fsync phases and derivation as the live probe,
//! driven by [`ClosedLoop`] instead of threads. No sleeping, no host noise, deterministic for a
//! seed; a full default probe takes seconds of CPU. Used by `device probe --model`, the
//! calibration example and tests of the probe's logic.
//!
//! Bounds: as the live probe (points bounded by their [`super::SteadyConfig`], the fsync phases
//! by their sample counts); each window keeps the latencies of its requests. Single-threaded,
//! no locks.

use std::time::Instant;

use hdrhistogram::Histogram;

use super::steady::{self, PointRunner, WindowRate};
use super::{
    Precondition, ProbeConfig, ProbeEvent, ProbeOp, ProbePoint, ProbeReport, derive, fsync_probe,
    new_histogram, point_from, record, sweep,
};
use crate::device::emulated::profile::Profile;
use crate::device::emulated::sim::Window;
use crate::device::emulated::{ClientKind, ClosedLoop, Model};
use crate::error::{Error, Result};

/// Runs the probe on a fresh timing model of `profile` with `region_pages` pages of
/// `page_size` bytes (the model is preconditioned at build time as the live device is).
///
/// # Errors
/// [`Error::Config`] for a bad configuration, a model that does not fit, or sequential
/// preconditioning (not modelled: use random or none).
pub fn probe_model(
    profile: &Profile,
    page_size: usize,
    region_pages: u64,
    config: &ProbeConfig,
    progress: &mut dyn FnMut(ProbeEvent<'_>),
) -> Result<ProbeReport> {
    config.validate()?;
    let started = Instant::now();
    let region_pages = region_pages.max(1);
    let mut model = Model::new(profile, page_size, region_pages)?;
    progress(ProbeEvent::Phase("preconditioning"));
    let mut now = precondition(&mut model, config, region_pages)?;
    let precondition_ns = now;
    let total = 2 * config.concurrency.len();
    let mut index = 0;
    progress(ProbeEvent::Phase("writes"));
    let writes = sweep(
        config,
        ProbeOp::Write,
        &mut index,
        total,
        progress,
        &mut |op, n, p| measure(&mut model, &mut now, config, region_pages, op, n, p),
    )?;
    now = now.max(model.quiescent_at());
    progress(ProbeEvent::Phase("reads"));
    let reads = sweep(
        config,
        ProbeOp::Read,
        &mut index,
        total,
        progress,
        &mut |op, n, p| measure(&mut model, &mut now, config, region_pages, op, n, p),
    )?;
    let write_cache = profile.write_cache();
    let fsync = match &config.fsync {
        Some(fsync) => {
            progress(ProbeEvent::Phase("fsync"));
            let (report, end) = fsync_probe::model(
                &mut model,
                write_cache,
                fsync,
                region_pages,
                config.seed,
                now,
            )?;
            now = end;
            Some(report)
        }
        None => None,
    };
    Ok(derive(ProbeReport {
        device: format!("emu:{} (timing model)", profile.name),
        page_size,
        time_scale: profile.time_scale,
        region_pages,
        write_cache,
        plp: write_cache.plp_label().to_string(),
        model: true,
        precondition: config.precondition.to_string(),
        steady: config.steady.clone(),
        reads,
        writes,
        fsync,
        device_seconds: now.saturating_sub(precondition_ns) as f64 / 1.0e9,
        precondition_device_seconds: precondition_ns as f64 / 1.0e9,
        real_seconds: started.elapsed().as_secs_f64(),
        ..ProbeReport::empty()
    }))
}

/// Preconditions `model` as `config` says; returns the device time it drained at.
///
/// # Errors
/// [`Error::Config`] for sequential preconditioning (not modelled: use random or none).
pub(super) fn precondition(
    model: &mut Model,
    config: &ProbeConfig,
    region_pages: u64,
) -> Result<u64> {
    Ok(match config.precondition {
        Precondition::None => 0,
        Precondition::Sequential => {
            return Err(Error::Config(
                "the model probe preconditions with random writes or not at all".into(),
            ));
        }
        Precondition::Random {
            passes,
            concurrency,
        } => {
            let clients = vec![ClientKind::Writer; concurrency];
            let mut load = ClosedLoop::new(&clients, region_pages, 0, config.seed);
            load.run_requests(model, u64::from(passes) * region_pages);
            load.drained_at()
        }
    })
}

/// Measures one point on the model from device time `now`; moves `now` to where its load
/// drained.
fn measure(
    model: &mut Model,
    now: &mut u64,
    config: &ProbeConfig,
    region_pages: u64,
    op: ProbeOp,
    concurrency: usize,
    progress: &mut dyn FnMut(ProbeEvent<'_>),
) -> Result<ProbePoint> {
    let kind = match op {
        ProbeOp::Read => ClientKind::Reader,
        ProbeOp::Write => ClientKind::Writer,
    };
    let seed =
        config.seed ^ ((concurrency as u64) << 32) ^ if op == ProbeOp::Write { 1 << 20 } else { 0 };
    let mut runner = ModelRunner {
        load: ClosedLoop::new(&vec![kind; concurrency], region_pages, *now, seed),
        model,
        windows: Vec::new(),
    };
    let mut windows = 0;
    let outcome = steady::measure(&mut runner, &config.steady, &mut |rate| {
        windows += 1;
        progress(ProbeEvent::Window {
            iops: rate.iops(),
            windows,
        });
    })?;
    *now = runner.load.drained_at();
    Ok(point_from(op, concurrency, &outcome))
}

/// A point's load on the model.
struct ModelRunner<'m> {
    model: &'m mut Model,
    load: ClosedLoop,
    windows: Vec<Window>,
}

impl PointRunner for &mut ModelRunner<'_> {
    fn run_window(&mut self, window_ns: u64) -> Result<WindowRate> {
        let end = self.load.now() + window_ns.max(1);
        let window = self.load.run_until(self.model, end);
        let rate = WindowRate {
            requests: window.requests(),
            device_ns: window.end_ns - window.start_ns,
        };
        self.windows.push(window);
        Ok(rate)
    }

    fn finish(self, counted: std::ops::Range<usize>) -> Result<Histogram<u64>> {
        let mut histogram = new_histogram()?;
        let end = counted.end.min(self.windows.len());
        for window in &self.windows[counted.start.min(end)..end] {
            for &latency in &window.latencies_ns {
                record(&mut histogram, latency);
            }
        }
        Ok(histogram)
    }
}
