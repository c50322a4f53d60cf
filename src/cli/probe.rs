//! `flashbuf device probe`: opens a device, says up front what the probe will do and about how
//! long it will take, runs [`crate::device::probe::probe`] with a progress bar, prints the
//! table, the derived alpha, k_r, k_w, the fsync latencies and (for emulated profiles) the
//! paper's figures beside the measured ones, and optionally writes JSON.
//!
//! Defaults follow the papers (`ProbeConfig::default`): random-overwrite preconditioning,
//! every point measured until steady, fsync phases. `--quick`, `--duration-ms`,
//! `--max-concurrency` and `--no-fsync` shorten it. `--model` runs the method on the timing
//! model of an emulated profile in virtual time (seconds, no host noise).
//!
//! The page size defaults to the I/O size of the profile's source paper (16 KiB for LRU-C
//! Table 1, 4 KiB for ACE Table I and the RW paper's OpenSSD), else 16 KiB.
//! For `file:PATH` the file is created (and every page written once) if it is missing or short.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::device::emulated::profile::{self, PaperFigures, Profile};
use crate::device::file::{FileBackend, FileDevice};
use crate::device::probe::{
    FsyncConfig, Precondition, ProbeConfig, ProbeEvent, ProbeOp, ProbeReport, SteadyConfig, probe,
    probe_model,
};
use crate::device::{DEFAULT_PAGE_SIZE, DeviceSpec, OpenOptions, SharedDevice, WriteCache};
use crate::error::{Error, Result};

/// Arguments of `device probe`.
#[derive(Debug, clap::Args)]
#[allow(clippy::struct_excessive_bools)] // independent switches
pub struct ProbeArgs {
    /// Device string: mem | file:PATH | emu:NAME[,key=value...] (`flashbuf devices` lists
    /// every profile and option with its default and range).
    #[arg(long, default_value = "emu:ssd-a")]
    pub device: String,
    /// Page size in bytes (a multiple of 4096); default: the I/O size the profile's paper
    /// measured at (emulated devices), else 16384.
    #[arg(long)]
    pub page_size: Option<usize>,
    /// Concurrency levels, ascending, comma-separated (default 1,2,3,4,6,8,...,192,256; a sweep
    /// stops once bandwidth has plateaued, from 32 on).
    #[arg(long, value_delimiter = ',')]
    pub concurrency: Option<Vec<usize>>,
    /// Instead of --concurrency: powers of two from 1 up to this.
    #[arg(long, conflicts_with = "concurrency")]
    pub max_concurrency: Option<usize>,
    /// Measure every level given even after bandwidth has plateaued.
    #[arg(long)]
    pub no_plateau_stop: bool,
    /// Size of the region addressed, in MiB.
    #[arg(long, default_value_t = 256)]
    pub region_mb: u64,
    /// Seed of the page choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Preconditioning: random (overwrites, as the papers; device time on emulated devices),
    /// sequential (one pass, real I/O) or none.
    #[arg(long, default_value = "random")]
    pub precondition: String,
    /// Region-sized passes of random preconditioning.
    #[arg(long, default_value_t = 2)]
    pub precondition_passes: u32,
    /// Same as --precondition none (only for devices already written).
    #[arg(long, conflicts_with_all = ["precondition", "precondition_passes"])]
    pub no_precondition: bool,
    /// Consecutive device-time windows that must agree for a point to be steady.
    #[arg(long)]
    pub windows: Option<usize>,
    /// Tolerance between agreeing windows, percent.
    #[arg(long)]
    pub tolerance_pct: Option<f64>,
    /// Windows after which a point stops even if not steady.
    #[arg(long)]
    pub max_windows: Option<usize>,
    /// Shorter, looser points (3 windows within 10%, at most 8 windows).
    #[arg(long)]
    pub quick: bool,
    /// Instead of steady-state detection: each point runs this many real milliseconds (with
    /// --model: device milliseconds); not with the steady-state flags.
    #[arg(
        long,
        conflicts_with_all = ["windows", "tolerance_pct", "max_windows", "quick"]
    )]
    pub duration_ms: Option<u64>,
    /// Skip the fsync measurement.
    #[arg(long, conflicts_with = "fsync_burst")]
    pub no_fsync: bool,
    /// Pages per burst (and writers under load) of the fsync measurement.
    #[arg(long, default_value_t = 32)]
    pub fsync_burst: usize,
    /// Emulated devices only: run the method on the timing model in virtual time (no real
    /// time, so not with --time-scale).
    #[arg(long, conflicts_with = "time_scale")]
    pub model: bool,
    /// Emulated devices only: time scale for this probe. `auto` raises the profile's default
    /// so that an I/O at concurrency 1 lasts at least 1 ms of real time (host scheduling
    /// noise then stays small in device time); `default` keeps the profile's; or a number.
    #[arg(long, default_value = "auto")]
    pub time_scale: String,
    /// Co-run mode (RW paper section 5.2.1, Table 3): a read stream and a write stream at
    /// once, each its own closed-loop submitters, each reported while the other runs (and
    /// alone, unless --no-solo). Not with the sweep, steady-state or fsync flags.
    #[arg(long)]
    pub corun: bool,
    /// With --corun: read submitters (default 32, the RW paper's fio queue depth).
    #[arg(long)]
    pub readers: Option<usize>,
    /// With --corun: write submitters (default 32).
    #[arg(long)]
    pub writers: Option<usize>,
    /// With --corun: device milliseconds counted per phase (default 5000).
    #[arg(long)]
    pub corun_ms: Option<u64>,
    /// With --corun: device milliseconds of warm-up per phase, not counted (default 1000).
    #[arg(long)]
    pub warmup_ms: Option<u64>,
    /// With --corun: skip measuring each stream alone.
    #[arg(long)]
    pub no_solo: bool,
    /// Write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Which flags the command line gave (see [`super::given`]).
    #[arg(skip)]
    pub given: super::given::Given,
}

/// The device, profile, page size and region a probe's arguments name, checked.
pub(super) struct Resolved {
    pub(super) spec: DeviceSpec,
    pub(super) profile: Option<Profile>,
    pub(super) paper: Option<PaperFigures>,
    pub(super) page_size: usize,
    pub(super) options: OpenOptions,
}

/// Resolves and checks the arguments (nothing is opened).
///
/// # Errors
/// Bad arguments or device strings, naming the flag.
pub(super) fn resolve(args: &ProbeArgs) -> Result<Resolved> {
    let spec = DeviceSpec::parse(&args.device)?;
    let resolved = emulated_profile(&spec)?;
    check_flags(args, resolved.is_some())?;
    super::probe_corun::check_flags(args)?;
    let paper = resolved
        .as_ref()
        .and_then(|p| profile::paper_figures(p.name));
    let page_size = args
        .page_size
        .or_else(|| paper.map(|f| f.page_bytes))
        .unwrap_or(DEFAULT_PAGE_SIZE);
    let region_bytes = args
        .region_mb
        .checked_mul(1024 * 1024)
        .ok_or_else(|| Error::Config(format!("--region-mb {} is too large", args.region_mb)))?;
    let options = OpenOptions {
        page_size,
        pages: region_bytes / page_size.max(1) as u64,
        create: true,
    };
    if options.pages == 0 {
        return Err(Error::Config(format!(
            "bad --region-mb {}: the region holds no page of {page_size} bytes",
            args.region_mb
        )));
    }
    options.validate()?;
    Ok(Resolved {
        spec,
        profile: resolved,
        paper,
        page_size,
        options,
    })
}

/// Runs the probe.
///
/// # Errors
/// Bad arguments or device strings (listing the valid forms), device and I/O errors.
pub fn run(args: &ProbeArgs) -> Result<()> {
    let Resolved {
        spec,
        profile: resolved,
        paper,
        page_size,
        options,
    } = resolve(args)?;
    if args.corun {
        let report = super::probe_corun::measure(args)?;
        return super::probe_corun::print_and_save(args, &report);
    }
    let mut config = config_from(args, options.pages)?;
    let report = if args.model {
        let Some(profile) = &resolved else {
            return Err(Error::Config(
                "--model needs an emulated device (emu:NAME)".into(),
            ));
        };
        print_plan(
            &args.device,
            profile.write_cache(),
            &config,
            page_size,
            paper.as_ref(),
            None,
        );
        run_with_bar(|progress| probe_model(profile, page_size, options.pages, &config, progress))?
    } else {
        // The method on the timing model first (well under a second): it sizes the time scale
        // and predicts the real time.
        let preview = resolved.as_ref().and_then(|profile| {
            probe_model(profile, page_size, options.pages, &config, &mut |_| {}).ok()
        });
        let (spec, scale_note) = match (&resolved, &preview) {
            (Some(profile), Some(preview)) => {
                let scale = choose_time_scale(&args.time_scale, profile, preview)?;
                (
                    with_time_scale(&spec, profile, scale),
                    Some(scale_note(profile, preview, scale)),
                )
            }
            _ => (spec.clone(), None),
        };
        let device = open_device(&spec, &options)?;
        if let Some(ms) = args.duration_ms {
            // Real milliseconds per point, in the device time the steady config works in.
            let device_s = ms.max(1) as f64 / 1000.0 / device.info().time_scale;
            config.steady = SteadyConfig::fixed(Duration::from_secs_f64(device_s));
        }
        let estimate = preview
            .as_ref()
            .filter(|_| config.steady.fixed.is_none())
            .map(|preview| preview.device_seconds * device.info().time_scale);
        let cache = detected_write_cache(&spec, &device);
        print_plan(
            &args.device,
            cache,
            &config,
            page_size,
            paper.as_ref(),
            estimate,
        );
        if let Some(note) = scale_note {
            eprintln!("  {note}");
        }
        let mut report = run_with_bar(|progress| probe(&device, &config, progress))?;
        if report.write_cache == WriteCache::Unknown && cache != WriteCache::Unknown {
            report.write_cache = cache;
            report.plp = cache.plp_label().to_string();
            if let Some(fsync) = report.fsync.as_mut() {
                fsync.write_cache = cache;
                fsync.plp.clone_from(&report.plp);
            }
        }
        report
    };
    print_report(&report, paper.as_ref());
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|err| Error::Config(format!("serialising the report: {err}")))?;
        std::fs::write(path, text)
            .map_err(|err| Error::io(format!("writing {}", path.display()), err))?;
    }
    Ok(())
}

/// Flags that do not go with the device or with each other (before anything is opened), and
/// the JSON path (written only at the end of a long probe).
fn check_flags(args: &ProbeArgs, emulated: bool) -> Result<()> {
    if let Some(size) = args.page_size
        && (size == 0 || !size.is_multiple_of(crate::device::IO_ALIGN))
    {
        return Err(Error::Config(format!(
            "bad --page-size {size}: a positive multiple of {}",
            crate::device::IO_ALIGN
        )));
    }
    let random = !args.no_precondition && args.precondition == "random";
    if args.given.has("precondition_passes") && !random {
        return Err(Error::Config(format!(
            "--precondition-passes sets the passes of random preconditioning, and the \
             preconditioning is `{}`",
            if args.no_precondition {
                "none"
            } else {
                args.precondition.as_str()
            }
        )));
    }
    if args.given.has("time_scale") && !emulated {
        return Err(Error::Config(format!(
            "--time-scale {} applies to emulated devices; --device {} runs in real time",
            args.time_scale, args.device
        )));
    }
    super::preflight::check_outputs(args.json.as_deref(), None)
}

/// The resolved profile of an emulated device string.
fn emulated_profile(spec: &DeviceSpec) -> Result<Option<Profile>> {
    match spec {
        DeviceSpec::Emulated { profile, options } => Ok(Some(profile::resolve(profile, options)?)),
        DeviceSpec::Memory | DeviceSpec::File(_) => Ok(None),
    }
}

/// The probe configuration the arguments ask for.
pub(super) fn config_from(args: &ProbeArgs, region_pages: u64) -> Result<ProbeConfig> {
    let defaults = ProbeConfig::default();
    let precondition = if args.no_precondition {
        Precondition::None
    } else {
        match args.precondition.as_str() {
            "random" => Precondition::Random {
                passes: args.precondition_passes,
                concurrency: 32,
            },
            "sequential" => Precondition::Sequential,
            "none" => Precondition::None,
            other => {
                return Err(Error::Config(format!(
                    "--precondition {other}: expected random, sequential or none"
                )));
            }
        }
    };
    let mut steady = if args.quick {
        SteadyConfig::quick()
    } else {
        SteadyConfig::default()
    };
    if let Some(windows) = args.windows {
        steady.windows = windows;
        steady.max_windows = steady.max_windows.max(windows);
    }
    if let Some(pct) = args.tolerance_pct {
        steady.tolerance = pct / 100.0;
    }
    if let Some(max) = args.max_windows {
        steady.max_windows = max;
    }
    let concurrency = match (&args.concurrency, args.max_concurrency) {
        (_, Some(max)) => ProbeConfig::powers_of_two(max),
        (Some(levels), None) => levels.clone(),
        (None, None) => defaults.concurrency.clone(),
    };
    let fsync = (!args.no_fsync).then(|| FsyncConfig {
        burst: args.fsync_burst,
        writers: args.fsync_burst,
        ..FsyncConfig::default()
    });
    let mut config = ProbeConfig {
        concurrency,
        stop_at_plateau: !args.no_plateau_stop,
        region_pages,
        seed: args.seed,
        precondition,
        steady,
        fsync,
    };
    if let Some(ms) = args.duration_ms {
        // Device milliseconds here; `run` converts real to device time once the device is open.
        config.steady = SteadyConfig::fixed(Duration::from_millis(ms.max(1)));
    }
    config.validate()?;
    Ok(config)
}

/// Real time an I/O at concurrency 1 should last at least, so that host scheduling noise
/// (about 0.1 ms on a busy 2-core host) stays near 10% in device time.
const QD1_REAL_MIN: f64 = 1.0e-3;
/// The profile's own time scale is kept when it reaches this fraction of [`QD1_REAL_MIN`].
const QD1_REAL_KEEP: f64 = 0.75;

/// The time scale for a live probe of `profile`, given the method's run on its model.
fn choose_time_scale(wanted: &str, profile: &Profile, preview: &ProbeReport) -> Result<f64> {
    match wanted {
        "default" => Ok(profile.time_scale),
        "auto" => {
            let seconds = sensitive_qd1_seconds(preview);
            if seconds <= 0.0 || profile.time_scale * seconds >= QD1_REAL_KEEP * QD1_REAL_MIN {
                Ok(profile.time_scale)
            } else {
                Ok((QD1_REAL_MIN / seconds).ceil().max(profile.time_scale))
            }
        }
        number => number
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .ok_or_else(|| {
                Error::Config(format!(
                    "--time-scale {number}: expected auto, default or a positive number"
                ))
            }),
    }
}

/// The shortest device-time latency at concurrency 1 among the sweeps where it matters: those
/// whose bandwidth still grows past concurrency 1 (k above 1.5), in seconds.
fn sensitive_qd1_seconds(preview: &ProbeReport) -> f64 {
    [
        (preview.k_r_exact, preview.reads.first()),
        (preview.k_w_exact, preview.writes.first()),
    ]
    .into_iter()
    .filter_map(|(k, point)| point.filter(|_| k > 1.5))
    .map(|point| point.latency_mean_us / 1.0e6)
    .fold(
        0.0,
        |shortest: f64, s| if shortest == 0.0 { s } else { shortest.min(s) },
    )
}

/// `spec` with `time_scale` set to `scale` when it differs from the profile's.
fn with_time_scale(spec: &DeviceSpec, profile: &Profile, scale: f64) -> DeviceSpec {
    match spec {
        DeviceSpec::Emulated {
            profile: name,
            options,
        } if (scale - profile.time_scale).abs() > f64::EPSILON => {
            let mut options: Vec<(String, String)> = options
                .iter()
                .filter(|(key, _)| key != "time_scale")
                .cloned()
                .collect();
            options.push(("time_scale".into(), format!("{scale}")));
            DeviceSpec::Emulated {
                profile: name.clone(),
                options,
            }
        }
        other => other.clone(),
    }
}

fn scale_note(profile: &Profile, preview: &ProbeReport, scale: f64) -> String {
    let qd1_us = sensitive_qd1_seconds(preview) * 1.0e6;
    if (scale - profile.time_scale).abs() <= f64::EPSILON {
        format!("time scale {scale} (the profile's)")
    } else {
        format!(
            "time scale {scale} for this probe (profile default {}): an I/O at concurrency 1 \
             takes {qd1_us:.0} us of device time, {:.2} ms real at this scale, so host \
             scheduling noise stays small in device time (--time-scale default to keep {})",
            profile.time_scale,
            qd1_us * scale / 1000.0,
            profile.time_scale
        )
    }
}

/// What the device's write cache is: the device's own answer, or for files what the kernel
/// says about the block device underneath.
fn detected_write_cache(spec: &DeviceSpec, device: &SharedDevice) -> WriteCache {
    match (device.write_cache(), spec) {
        (WriteCache::Unknown, DeviceSpec::File(path)) => {
            kernel_write_cache(path).unwrap_or(WriteCache::Unknown)
        }
        (cache, _) => cache,
    }
}

/// `/sys/dev/block/MAJ:MIN/queue/write_cache` (or its parent's, for a partition) of the block
/// device holding `path`: "write back" is a volatile cache, "write through" none or protected.
fn kernel_write_cache(path: &Path) -> Option<WriteCache> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path).ok()?;
    let dev = if metadata.file_type().is_file() || metadata.is_dir() {
        metadata.dev()
    } else {
        metadata.rdev()
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let base = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let text = std::fs::read_to_string(base.join("queue/write_cache"))
        .or_else(|_| std::fs::read_to_string(base.join("../queue/write_cache")))
        .ok()?;
    match text.trim() {
        "write back" => Some(WriteCache::Volatile),
        "write through" => Some(WriteCache::Protected),
        _ => None,
    }
}

/// Opens the device; a file device shows progress while its pages are written the first time.
pub(super) fn open_device(spec: &DeviceSpec, options: &OpenOptions) -> Result<SharedDevice> {
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

fn print_plan(
    device: &str,
    cache: WriteCache,
    config: &ProbeConfig,
    page_size: usize,
    paper: Option<&PaperFigures>,
    estimate_s: Option<f64>,
) {
    let steady = &config.steady;
    let mut lines = vec![format!(
        "probing {device}: {page_size} B pages{}, {} pages; write cache: {} ({})",
        paper.map_or(String::new(), |p| format!(
            " (the I/O size of {})",
            p.source
        )),
        config.region_pages,
        cache.plp_label(),
        cache.sync_meaning()
    )];
    lines.push(format!("  precondition: {}", config.precondition));
    lines.push(match steady.fixed {
        Some(time) => format!(
            "  points: {:.1} ms of device time each (no steady-state detection)",
            time.as_secs_f64() * 1000.0
        ),
        None => format!(
            "  points: writes then reads at concurrency {:?}{}; each until {} device-time windows \
             agree within {:.0}% (at most {})",
            config.concurrency,
            if config.stop_at_plateau {
                " (stopping at the plateau)"
            } else {
                ""
            },
            steady.windows,
            steady.tolerance * 100.0,
            steady.max_windows
        ),
    });
    if config.fsync.is_some() {
        lines.push("  then fsync: idle, after a burst, under load".into());
    }
    if let Some(seconds) = estimate_s {
        lines.push(format!(
            "  expected real time: about {} (from the timing model; host overhead adds some)",
            human_seconds(seconds)
        ));
    }
    eprintln!("{}", lines.join("\n"));
}

fn human_seconds(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else {
        format!(
            "{:.0} min {:.0} s",
            (seconds / 60.0).floor(),
            seconds % 60.0
        )
    }
}

fn run_with_bar(
    run: impl FnOnce(&mut dyn FnMut(ProbeEvent<'_>)) -> Result<ProbeReport>,
) -> Result<ProbeReport> {
    let bar = ProgressBar::new(0);
    let report = run(&mut |event| show(&bar, &event));
    bar.finish_and_clear();
    report
}

fn bar_style(prefix: &str) -> ProgressStyle {
    ProgressStyle::with_template(&format!(
        "{prefix} [{{elapsed_precise}}] {{bar:40}} {{pos}}/{{len}} {{msg}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
}

fn show(bar: &ProgressBar, event: &ProbeEvent<'_>) {
    match event {
        ProbeEvent::Phase(name) => bar.set_message((*name).to_string()),
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
                bar.set_style(bar_style("probing (points, at most)"));
                bar.set_length(*total as u64);
            }
            bar.set_position(*index as u64);
            bar.set_message(format!("{op} x{concurrency}"));
        }
        ProbeEvent::Window { iops, windows } => {
            let message = bar.message();
            let head = message
                .split(" window")
                .next()
                .unwrap_or_default()
                .to_string();
            bar.set_message(format!("{head} window {windows}: {iops:.0} IOPS"));
        }
        ProbeEvent::PointDone(_) => bar.inc(1),
    }
}

fn print_report(report: &ProbeReport, paper: Option<&PaperFigures>) {
    let mut out = std::io::stdout().lock();
    // Printing to a closed stdout is not worth an error.
    let _ = write_report(&mut out, report, paper);
}

fn pct(got: f64, want: f64) -> String {
    if want > 0.0 {
        format!("{:+.1}%", (got - want) / want * 100.0)
    } else {
        "-".into()
    }
}

/// ACE's `n_w` and `n_e` should be the device's `k_w`; a real device does not know its own.
fn write_ace_hint(out: &mut dyn Write, report: &ProbeReport) -> std::io::Result<()> {
    writeln!(
        out,
        "ACE on this device: set `ace_n_w = {k_w}` and `prefetch_pages = {k_w}` in a \
         --pool-config file (emulated profiles with an ACE Table I row default to theirs)",
        k_w = report.k_w
    )
}

/// Writes the human-readable report.
///
/// # Errors
/// The writer's errors.
pub fn write_report(
    out: &mut dyn Write,
    report: &ProbeReport,
    paper: Option<&PaperFigures>,
) -> std::io::Result<()> {
    writeln!(
        out,
        "device {}  page {} B  region {} pages  time scale {} (figures in device time)",
        report.device, report.page_size, report.region_pages, report.time_scale
    )?;
    writeln!(
        out,
        "write cache: {} ({})",
        report.plp,
        report.write_cache.sync_meaning()
    )?;
    writeln!(
        out,
        "precondition: {} ({:.1} s of device time)",
        report.precondition, report.precondition_device_seconds,
    )?;
    writeln!(
        out,
        "took {:.0} s of real time; measuring took {:.2} s of device time",
        report.real_seconds, report.device_seconds
    )?;
    writeln!(
        out,
        "{:<6} {:>5} {:>10} {:>10} {:>10} {:>8} {:>7}",
        "op", "conc", "IOPS", "mean_us", "p99_us", "windows", "steady"
    )?;
    for point in report.writes.iter().chain(&report.reads) {
        writeln!(
            out,
            "{:<6} {:>5} {:>10.0} {:>10.1} {:>10.1} {:>5}/{:<2} {:>7}",
            point.op.to_string(),
            point.concurrency,
            point.iops,
            point.latency_mean_us,
            point.latency_p99_us,
            point.windows_counted,
            point.windows_run,
            match point.convergence {
                crate::device::probe::Convergence::Steady => "yes",
                crate::device::probe::Convergence::NotSteady => "NO",
                crate::device::probe::Convergence::Fixed => "fixed",
            }
        )?;
    }
    writeln!(
        out,
        "alpha = {:.2} (peak read {:.0} / peak write {:.0} IOPS; write/read latency at \
         concurrency 1: {:.2})",
        report.alpha, report.peak_read_iops, report.peak_write_iops, report.alpha_latency
    )?;
    writeln!(
        out,
        "k_r = {} ({:.1})  k_w = {} ({:.1})  (concurrency reaching 90% of peak bandwidth)",
        report.k_r, report.k_r_exact, report.k_w, report.k_w_exact
    )?;
    write_ace_hint(out, report)?;
    let unsteady = report
        .reads
        .iter()
        .chain(&report.writes)
        .filter(|p| p.convergence == crate::device::probe::Convergence::NotSteady)
        .count();
    if unsteady > 0 {
        writeln!(
            out,
            "warning: {unsteady} point(s) did not become steady (figures from their steadiest windows)"
        )?;
    }
    if let Some(fsync) = &report.fsync {
        writeln!(
            out,
            "fsync ({}), device time:  mean_us  p99_us  max_us  count",
            fsync.plp
        )?;
        for (label, sync) in [
            ("idle (write + sync)".to_string(), fsync.idle),
            (
                format!("after {} writes", fsync.burst_pages),
                fsync.after_burst,
            ),
            (
                format!("under load ({} writers)", fsync.writers),
                fsync.under_load,
            ),
        ] {
            writeln!(
                out,
                "  {label:<26} {:>8.1} {:>7.1} {:>7.1} {:>6}",
                sync.mean_us, sync.p99_us, sync.max_us, sync.count
            )?;
        }
    }
    if let Some(paper) = paper {
        write_paper(out, report, paper)?;
    }
    Ok(())
}

fn write_paper(
    out: &mut dyn Write,
    report: &ProbeReport,
    paper: &PaperFigures,
) -> std::io::Result<()> {
    writeln!(out, "against {}:", paper.source)?;
    if paper.page_bytes != report.page_size {
        writeln!(
            out,
            "  (the paper measured {} B I/O; this probe used {} B)",
            paper.page_bytes, report.page_size
        )?;
    }
    for (op, want) in [
        (ProbeOp::Read, paper.read_iops),
        (ProbeOp::Write, paper.write_iops),
    ] {
        if let Some(want) = want {
            match report.point(op, paper.queue_depth) {
                Some(point) => writeln!(
                    out,
                    "  {op} IOPS at concurrency {}: {:.0} vs {want:.0} ({})",
                    paper.queue_depth,
                    point.iops,
                    pct(point.iops, want)
                )?,
                None => writeln!(
                    out,
                    "  {op} IOPS: concurrency {} not measured",
                    paper.queue_depth
                )?,
            }
        }
    }
    for (name, got, want) in [
        ("alpha", report.alpha, paper.alpha),
        ("k_r", report.k_r_exact, paper.k_r),
        ("k_w", report.k_w_exact, paper.k_w),
    ] {
        if let Some(want) = want {
            writeln!(out, "  {name}: {got:.2} vs {want} ({})", pct(got, want))?;
        }
    }
    Ok(())
}
