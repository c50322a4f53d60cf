//! `flashbuf device probe`: opens a device, runs [`crate::device::probe::probe`] with a progress
//! bar, prints the table and the derived alpha, k_r, k_w, and optionally writes JSON.
//!
//! For `file:PATH` the file is created (and every page written once) if it is missing or short.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::device::file::{FileBackend, FileDevice};
use crate::device::probe::{ProbeConfig, ProbeEvent, ProbeReport, probe};
use crate::device::{DEFAULT_PAGE_SIZE, DeviceSpec, OpenOptions, SharedDevice};
use crate::error::{Error, Result};

/// Arguments of `device probe`.
#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    /// Device string: mem | file:PATH | emu:NAME[,key=value...].
    #[arg(long, default_value = "emu:ssd-a")]
    pub device: String,
    /// Page size in bytes (a multiple of 4096).
    #[arg(long, default_value_t = DEFAULT_PAGE_SIZE)]
    pub page_size: usize,
    /// Concurrency levels, ascending, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
    pub concurrency: Vec<usize>,
    /// Instead of --concurrency: powers of two from 1 up to this.
    #[arg(long)]
    pub max_concurrency: Option<usize>,
    /// Real milliseconds per point.
    #[arg(long, default_value_t = 500)]
    pub duration_ms: u64,
    /// Size of the region addressed, in MiB.
    #[arg(long, default_value_t = 256)]
    pub region_mb: u64,
    /// Seed of the page choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Skip writing the region once before measuring (only for devices already written).
    #[arg(long)]
    pub no_precondition: bool,
    /// Write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Runs the probe.
///
/// # Errors
/// Bad arguments or device strings (listing the valid forms), device and I/O errors.
pub fn run(args: &ProbeArgs) -> Result<()> {
    let spec = DeviceSpec::parse(&args.device)?;
    let region_bytes = args
        .region_mb
        .checked_mul(1024 * 1024)
        .ok_or_else(|| Error::Config(format!("--region-mb {} is too large", args.region_mb)))?;
    let options = OpenOptions {
        page_size: args.page_size,
        pages: region_bytes / args.page_size.max(1) as u64,
        create: true,
    };
    options.validate()?;
    let device = open_device(&spec, &options)?;
    let config = ProbeConfig {
        concurrency: args
            .max_concurrency
            .map_or_else(|| args.concurrency.clone(), ProbeConfig::powers_of_two),
        duration: Duration::from_millis(args.duration_ms),
        region_pages: options.pages,
        seed: args.seed,
        precondition: !args.no_precondition,
    };
    let bar = ProgressBar::new(0);
    let report = probe(&device, &config, &mut |event| show(&bar, &event));
    bar.finish_and_clear();
    let report = report?;
    print_report(&report);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|err| Error::Config(format!("serialising the report: {err}")))?;
        std::fs::write(path, text)
            .map_err(|err| Error::io(format!("writing {}", path.display()), err))?;
    }
    Ok(())
}

/// Opens the device; a file device shows progress while its pages are written the first time.
fn open_device(spec: &DeviceSpec, options: &OpenOptions) -> Result<SharedDevice> {
    let DeviceSpec::File(path) = spec else {
        return crate::device::open(spec, options);
    };
    let bar = ProgressBar::new(0);
    bar.set_style(bar_style("creating file"));
    let device = FileDevice::open(path, options, FileBackend::Auto, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    });
    bar.finish_and_clear();
    Ok(Arc::new(device?))
}

fn bar_style(prefix: &str) -> ProgressStyle {
    ProgressStyle::with_template(&format!(
        "{prefix} [{{elapsed_precise}}] {{bar:40}} {{pos}}/{{len}} {{msg}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
}

fn show(bar: &ProgressBar, event: &ProbeEvent<'_>) {
    match event {
        ProbeEvent::Precondition { done, total } => {
            if bar.length() != Some(*total) {
                bar.set_style(bar_style("preconditioning (pages)"));
                bar.set_length(*total);
            }
            bar.set_position(*done);
        }
        ProbeEvent::PointStarted {
            op,
            concurrency,
            index,
            total,
        } => {
            if *index == 0 {
                bar.set_style(bar_style("probing (points)"));
                bar.set_length(*total as u64);
            }
            bar.set_position(*index as u64);
            bar.set_message(format!("{op} x{concurrency}"));
        }
        ProbeEvent::PointDone(_) => bar.inc(1),
    }
}

fn print_report(report: &ProbeReport) {
    let mut out = std::io::stdout().lock();
    // Printing to a closed stdout is not worth an error.
    let _ = write_report(&mut out, report);
}

fn write_report(out: &mut dyn Write, report: &ProbeReport) -> std::io::Result<()> {
    writeln!(
        out,
        "device {}  page {} B  region {} pages  {} ms/point  time scale {} (figures in device time)",
        report.device, report.page_size, report.region_pages, report.duration_ms, report.time_scale
    )?;
    writeln!(
        out,
        "{:<6} {:>5} {:>10} {:>12} {:>12} {:>10}",
        "op", "conc", "IOPS", "mean_us", "p99_us", "ios"
    )?;
    for point in report.reads.iter().chain(&report.writes) {
        writeln!(
            out,
            "{:<6} {:>5} {:>10.0} {:>12.1} {:>12.1} {:>10}",
            point.op.to_string(),
            point.concurrency,
            point.iops,
            point.latency_mean_us,
            point.latency_p99_us,
            point.ios
        )?;
    }
    writeln!(
        out,
        "alpha (write/read latency at lowest concurrency) = {:.2}\n\
         alpha (read/write IOPS at highest concurrency)   = {:.2}\n\
         k_r = {}  k_w = {}  (concurrency where IOPS stops growing by more than 10%)",
        report.alpha_latency, report.alpha_iops, report.k_r, report.k_w
    )
}
