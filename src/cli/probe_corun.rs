//! `flashbuf device probe --corun`: a read stream and a write stream at once (the RW paper's
//! two fio processes, section 5.2.1, Table 3), each stream's IOPS, bandwidth and latency while
//! the other runs, and each alone for comparison. Runs
//! [`corun`](fn@crate::device::probe::corun) on the device, or
//! [`crate::device::probe::corun_model`] on an emulated profile's timing model with `--model`.
//!
//! Flags are checked before anything is opened: the co-run flags need `--corun`, and `--corun`
//! refuses the sweep, steady-state and fsync flags of the ordinary probe (each error names
//! the flag).

use std::time::Duration;

use super::probe::ProbeArgs;
use crate::device::DeviceSpec;
use crate::device::probe::{
    CorunConfig, CorunReport, Precondition, StreamStats, corun, corun_model,
};
use crate::error::{Error, Result};

/// Refuses co-run flags without `--corun`, and sweep flags with it.
///
/// # Errors
/// [`Error::Config`] naming the flag.
pub fn check_flags(args: &ProbeArgs) -> Result<()> {
    if !args.corun {
        let stray = [
            ("--readers", args.readers.is_some()),
            ("--writers", args.writers.is_some()),
            ("--corun-ms", args.corun_ms.is_some()),
            ("--warmup-ms", args.warmup_ms.is_some()),
            ("--no-solo", args.no_solo),
        ];
        return match stray.iter().find(|(_, given)| *given) {
            Some((flag, _)) => Err(Error::Config(format!(
                "{flag} sets the co-run mode's load: it needs --corun"
            ))),
            None => Ok(()),
        };
    }
    let sweep_flags = [
        ("--concurrency", args.concurrency.is_some()),
        ("--max-concurrency", args.max_concurrency.is_some()),
        ("--no-plateau-stop", args.no_plateau_stop),
        ("--windows", args.windows.is_some()),
        ("--tolerance-pct", args.tolerance_pct.is_some()),
        ("--max-windows", args.max_windows.is_some()),
        ("--quick", args.quick),
        ("--duration-ms", args.duration_ms.is_some()),
        ("--no-fsync", args.no_fsync),
        ("--fsync-burst", args.given.has("fsync_burst")),
    ];
    if let Some((flag, _)) = sweep_flags.iter().find(|(_, given)| *given) {
        return Err(Error::Config(format!(
            "{flag} is a flag of the concurrency sweep; --corun runs two fixed streams \
             (set them with --readers, --writers, --corun-ms, --warmup-ms)"
        )));
    }
    for (flag, value) in [("--readers", args.readers), ("--writers", args.writers)] {
        if let Some(n) = value
            && (n == 0 || n > crate::device::probe::MAX_CONCURRENCY)
        {
            return Err(Error::Config(format!(
                "bad {flag} {n}: submitters must be within 1..={}",
                crate::device::probe::MAX_CONCURRENCY
            )));
        }
    }
    if args.corun_ms == Some(0) {
        return Err(Error::Config(
            "bad --corun-ms 0: the counted span must be positive".into(),
        ));
    }
    Ok(())
}

/// The co-run configuration the arguments ask for.
fn config_from(args: &ProbeArgs, region_pages: u64, precondition: Precondition) -> CorunConfig {
    let defaults = CorunConfig::default();
    CorunConfig {
        readers: args.readers.unwrap_or(defaults.readers),
        writers: args.writers.unwrap_or(defaults.writers),
        region_pages,
        seed: args.seed,
        precondition,
        warmup: args
            .warmup_ms
            .map_or(defaults.warmup, Duration::from_millis),
        duration: args
            .corun_ms
            .map_or(defaults.duration, Duration::from_millis),
        solo: !args.no_solo,
    }
}

/// Runs the co-run the arguments ask for (`--device`, `--model`, the co-run flags).
///
/// # Errors
/// Bad arguments (naming the flag), `--model` without an emulated device, device and I/O
/// errors.
pub fn measure(args: &ProbeArgs) -> Result<CorunReport> {
    let super::probe::Resolved {
        spec,
        profile,
        options,
        ..
    } = super::probe::resolve(args)?;
    let precondition = super::probe::config_from(args, options.pages)?.precondition;
    let config = config_from(args, options.pages, precondition);
    config.validate()?;
    eprintln!(
        "co-running on {}: {} readers and {} writers of {} B pages over {} pages; {} ms warm-up \
         and {} ms counted per phase (device time){}; preconditioning: {}",
        args.device,
        config.readers,
        config.writers,
        options.page_size,
        options.pages,
        config.warmup.as_millis(),
        config.duration.as_millis(),
        if config.solo {
            "; then each stream alone"
        } else {
            ""
        },
        config.precondition
    );
    if args.model {
        let Some(profile) = &profile else {
            return Err(Error::Config(
                "--model needs an emulated device (emu:NAME)".into(),
            ));
        };
        return corun_model(profile, options.page_size, options.pages, &config);
    }
    let spec = with_time_scale(spec, profile.is_some(), &args.time_scale);
    let device = super::probe::open_device(&spec, &options)?;
    corun(&device, &config)
}

/// `spec` with `--time-scale` applied when it is a number (`auto` and `default` keep the
/// profile's own scale in co-run mode).
fn with_time_scale(spec: DeviceSpec, emulated: bool, scale: &str) -> DeviceSpec {
    match spec {
        DeviceSpec::Emulated { profile, options }
            if emulated && scale != "auto" && scale != "default" =>
        {
            let mut options = options;
            options.retain(|(key, _)| key != "time_scale");
            options.push(("time_scale".into(), scale.to_string()));
            DeviceSpec::Emulated { profile, options }
        }
        other => other,
    }
}

/// Prints the table and writes the JSON if asked.
///
/// # Errors
/// The JSON file cannot be written.
pub fn print_and_save(args: &ProbeArgs, report: &CorunReport) -> Result<()> {
    let mut out = std::io::stdout().lock();
    // Printing to a closed stdout is not worth an error.
    let _ = write_report(&mut out, report);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(report)
            .map_err(|err| Error::Config(format!("serialising the report: {err}")))?;
        std::fs::write(path, text)
            .map_err(|err| Error::io(format!("writing {}", path.display()), err))?;
    }
    Ok(())
}

/// The report as a table: each stream co-running, alone, and the ratio.
///
/// # Errors
/// The writer's.
pub fn write_report(out: &mut dyn std::io::Write, report: &CorunReport) -> std::io::Result<()> {
    writeln!(
        out,
        "{}{}: {} B pages, {} ms counted per phase (device time)",
        report.device,
        if report.model { "" } else { " (live)" },
        report.page_size,
        report.duration_ms
    )?;
    writeln!(
        out,
        "{:<22} {:>5} {:>11} {:>9} {:>10} {:>10} {:>10}",
        "stream", "qd", "IOPS", "MB/s", "mean ms", "p95 ms", "p99 ms"
    )?;
    let mut row = |label: &str, s: &StreamStats| {
        writeln!(
            out,
            "{:<22} {:>5} {:>11.0} {:>9.1} {:>10.3} {:>10.3} {:>10.3}",
            label,
            s.concurrency,
            s.iops,
            s.mb_s,
            s.latency_mean_us / 1000.0,
            s.latency_p95_us / 1000.0,
            s.latency_p99_us / 1000.0
        )
    };
    row("read (with writes)", &report.read)?;
    row("write (with reads)", &report.write)?;
    if let Some(alone) = &report.read_alone {
        row("read alone", alone)?;
    }
    if let Some(alone) = &report.write_alone {
        row("write alone", alone)?;
    }
    if let Some(alone) = &report.read_alone
        && report.read.iops > 0.0
        && alone.latency_p95_us > 0.0
    {
        writeln!(
            out,
            "co-running writes: read IOPS x{:.2}, read p95 x{:.2} of the read stream alone",
            report.read.iops / alone.iops.max(f64::MIN_POSITIVE),
            report.read.latency_p95_us / alone.latency_p95_us
        )?;
    }
    Ok(())
}
