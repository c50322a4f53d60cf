//! `flashbuf bench`: run schemes side by side on one device and database image (architecture.md
//! "Commands"), print the comparison table, optionally write results.json / plots / report.html.
//!
//! Every flag is parsed here into a [`BenchConfig`] with clear errors ([`parse_duration`],
//! [`parse_size`], [`parse_buffer`]); the harness does the rest.
//!
//! Defaults (what `flashbuf bench` with no arguments runs): the InnoDB family of schemes,
//! `emu:ssd-a` for the data, `emu:sata` for the redo log (the papers' separate log drive),
//! `flush_log_at_trx_commit = 0` (the papers' MySQL configuration), buffer 10% of a 512 MiB
//! database of 16 KiB pages (32768 pages, 3277 frames), the `ms` mix, 64 threads, warm-up
//! until the buffer is full and throughput steady, then a measured phase in device time. The
//! emulated devices' time scale is chosen so that this host models the LRU-C paper's 32 cores
//! (`--model-cores`), unless the device string sets `time_scale`.
//!
//! Why `ms` (50/50, 90/10) rather than `wis`: the schemes differ in what happens when a READ
//! misses and the victim is dirty (read stalls, synchronous writes); `ms` has many reads and, at
//! 50% writes, a buffer that is mostly dirty, so it exercises that path the most; `wis` has only
//! 10% reads, so few misses can stall.
//!
//! Why 64 threads (the papers' concurrency) rather than 16: on this 2-core host the harness
//! plus a simple mutex-protected target on `mem` ran ~330k ops/s with 64 threads using about
//! one core (lock-bound, not CPU-bound), far above the real-time op rate an emulated SSD allows,
//! so 64 workers do not make the host the bottleneck by themselves. Each run's report says
//! whether it was CPU-bound; if the real pool is, lower this constant to 16.
//!
//! Budget: with 8 schemes the default takes about 8 x (load + <= 5 s + 10 s + final flush),
//! under 3 minutes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::bench::{BenchConfig, LogSetup, WarmUp, default_factory, plot, report};
use crate::device::DeviceSpec;
use crate::engine::Composition;
use crate::error::{Error, Result};
use crate::workload::keys::Skew;
use crate::workload::synthetic::{Mix, SyntheticConfig};

/// Default worker threads (see the module docs).
pub const DEFAULT_THREADS: usize = 64;
/// Upper bound of the automatic warm-up, device time.
pub const DEFAULT_WARMUP_MAX: Duration = Duration::from_secs(10);
/// The host the default time scale models (the LRU-C paper's 32 cores).
pub const DEFAULT_MODEL_CORES: f64 = 32.0;

/// Arguments of `bench`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = crate::bench::plot::columns_help())]
pub struct BenchArgs {
    /// Workload mix (ACE Table II): ms (50/50 r/w, 90/10 locality), wis (10/90, 90/10),
    /// ris (90/10, 90/10), mu (50/50, uniform).
    #[arg(long, default_value = "ms")]
    pub workload: String,
    /// Comma-separated schemes, run in this order (ratios are to the first): presets, `all`
    /// (the InnoDB family), `postgres` (the PostgreSQL family and ACE), or compositions
    /// PRESET+PART (e.g. `pg-clock+ace`, `vanilla+ace`; `flashbuf schemes` lists them all).
    #[arg(long, default_value = "all")]
    pub schemes: String,
    /// Data device: mem | file:PATH | emu:NAME[,key=value...]; every scheme gets a fresh device
    /// loaded with the same database image (`flashbuf devices` lists profiles and options).
    #[arg(long, default_value = "emu:ssd-a")]
    pub device: String,
    /// The redo log's own device (the papers' separate log drive).
    #[arg(long, default_value = "emu:sata")]
    pub log_device: String,
    /// Size of the redo log: bytes with a unit (`256MiB`).
    #[arg(long, default_value = "256MiB")]
    pub log_size: String,
    /// Run without a redo log (to compare with engines that keep none).
    #[arg(long)]
    pub no_log: bool,
    /// InnoDB's innodb_flush_log_at_trx_commit: 1 syncs the log at each commit; 0 and 2 sync
    /// it once a second (the papers' configuration is 0).
    #[arg(long, default_value_t = 0)]
    pub flush_log_at_trx_commit: u8,
    /// Cores of the host to model: emulated devices run at time scale MODEL_CORES / this
    /// host's cores, unless the device string sets time_scale.
    #[arg(long, default_value_t = DEFAULT_MODEL_CORES)]
    pub model_cores: f64,
    /// Buffer size: a percentage of the database (`10%`), a page count (`4096`) or a size
    /// (`64MiB`).
    #[arg(long, default_value = "10%")]
    pub buffer: String,
    /// Worker threads.
    #[arg(long, default_value_t = DEFAULT_THREADS)]
    pub threads: usize,
    /// Measured duration per scheme, in device time: `3s`, `500ms`, `1m`; a bare number is
    /// seconds. The real time is this times the time scale (shown before the run starts).
    #[arg(long, default_value = "3s")]
    pub duration: String,
    /// Warm-up per scheme, not measured, device time: a duration, or `auto` (until the buffer
    /// is full and throughput steady, at most 10 s), or `auto:DURATION` for another cap.
    #[arg(long, default_value = "auto")]
    pub warmup: String,
    /// Database size: bytes with a unit (`1GiB`, `512MiB`, `10GB`) or pages (`4096`).
    #[arg(long, default_value = "512MiB")]
    pub db_size: String,
    /// Page size in bytes (a multiple of 4096).
    #[arg(long, default_value_t = crate::device::DEFAULT_PAGE_SIZE)]
    pub page_size: usize,
    /// Override the mix's read ratio: a fraction (`0.9`) or a percentage (`90%`).
    #[arg(long)]
    pub read_ratio: Option<String>,
    /// Override the mix's locality: `uniform`, `OPS/PAGES` (`90/10` = 90% of operations on 10%
    /// of pages) or `zipf:THETA`.
    #[arg(long)]
    pub locality: Option<String>,
    /// Base seed of the workers' random generators.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Buffer-pool configuration file (TOML), passed to every scheme (`flashbuf config
    /// --default` prints every key with its meaning, default and range).
    #[arg(long)]
    pub pool_config: Option<PathBuf>,
    /// Write the results (results.json format) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write results.json, throughput/timeline/latency SVG plots and report.html here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Do not draw progress bars.
    #[arg(long)]
    pub no_progress: bool,
}

impl BenchArgs {
    /// Turns the flags into a harness configuration.
    ///
    /// # Errors
    /// [`Error::Config`] naming the bad flag and the accepted forms; [`Error::Io`] when the pool
    /// configuration file cannot be read.
    pub fn to_config(&self, command_line: &str) -> Result<BenchConfig> {
        let mix = Mix::parse(&self.workload)?;
        let schemes = Composition::parse_list(&self.schemes)?;
        let scale = self.time_scale()?;
        let device = with_time_scale(DeviceSpec::parse(&self.device)?, scale);
        let log = if self.no_log {
            None
        } else {
            let size = parse_size(&self.log_size, 1)
                .map_err(|why| flag_error("--log-size", &self.log_size, &why))?;
            let pages = size / crate::bench::LOG_PAGE_SIZE as u64;
            if pages < 64 {
                return Err(flag_error(
                    "--log-size",
                    &self.log_size,
                    "the log needs at least 256 KiB",
                ));
            }
            Some(LogSetup {
                device: with_time_scale(DeviceSpec::parse(&self.log_device)?, scale),
                size: pages * crate::bench::LOG_PAGE_SIZE as u64,
                flush_log_at_trx_commit: self.flush_log_at_trx_commit,
            })
        };
        let page_size = self.page_size;
        if page_size == 0 || !page_size.is_multiple_of(crate::device::IO_ALIGN) {
            return Err(flag_error(
                "--page-size",
                &page_size.to_string(),
                "must be a positive multiple of 4096",
            ));
        }
        let db_pages = parse_size(&self.db_size, page_size)
            .map_err(|why| flag_error("--db-size", &self.db_size, &why))?;
        let buffer_pages = parse_buffer(&self.buffer, db_pages, page_size)
            .map_err(|why| flag_error("--buffer", &self.buffer, &why))?;
        let duration = parse_duration(&self.duration)
            .map_err(|why| flag_error("--duration", &self.duration, &why))?;
        if duration.is_zero() {
            return Err(flag_error("--duration", &self.duration, "must be positive"));
        }
        let warmup =
            parse_warmup(&self.warmup).map_err(|why| flag_error("--warmup", &self.warmup, &why))?;
        let mut workload = SyntheticConfig::new(mix, db_pages, page_size);
        workload.seed = self.seed;
        if let Some(text) = &self.read_ratio {
            workload.read_ratio =
                parse_ratio(text).map_err(|why| flag_error("--read-ratio", text, &why))?;
        }
        if let Some(text) = &self.locality {
            workload.skew = Skew::parse(text)?;
        }
        let pool_config = self
            .pool_config
            .as_deref()
            .map(read_pool_config)
            .transpose()?;
        let config = BenchConfig {
            workload,
            schemes,
            device,
            log,
            step: crate::bench::timeline::STEP,
            buffer_pages,
            threads: self.threads,
            duration,
            warmup,
            pool_config,
            command_line: command_line.to_string(),
            progress: !self.no_progress,
        };
        config.validate()?;
        Ok(config)
    }
}

impl BenchArgs {
    /// The time scale that makes this host model `--model-cores` cores.
    fn time_scale(&self) -> Result<f64> {
        let cores = crate::bench::cpu::available_cores().max(1) as f64;
        if !(self.model_cores.is_finite() && self.model_cores > 0.0 && self.model_cores <= 4096.0) {
            return Err(flag_error(
                "--model-cores",
                &self.model_cores.to_string(),
                "must be in (0, 4096]",
            ));
        }
        Ok((self.model_cores / cores).max(1.0))
    }
}

/// Adds `time_scale=SCALE` to an emulated device string that does not set one.
fn with_time_scale(spec: DeviceSpec, scale: f64) -> DeviceSpec {
    match spec {
        DeviceSpec::Emulated {
            profile,
            mut options,
        } => {
            if !options.iter().any(|(key, _)| key == "time_scale") {
                options.push(("time_scale".into(), format!("{scale}")));
            }
            DeviceSpec::Emulated { profile, options }
        }
        other => other,
    }
}

fn read_pool_config(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| Error::io(format!("reading pool config {}", path.display()), err))?;
    text.parse::<toml::Table>().map_err(|err| {
        Error::Config(format!(
            "pool config {} is not valid TOML: {err}",
            path.display()
        ))
    })?;
    Ok(text)
}

fn flag_error(flag: &str, value: &str, why: &str) -> Error {
    Error::Config(format!("bad {flag} `{value}`: {why}"))
}

/// Parses a duration: a non-negative number with unit `ms`, `s`, `m` or `h` (`30s`, `2m`,
/// `1.5s`); a bare number is seconds.
///
/// # Errors
/// A message naming the accepted forms.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let forms = "use a number with unit ms, s, m or h (e.g. 500ms, 30s, 2m)";
    let (value, unit) = split_number(text, forms)?;
    let seconds = match unit.trim() {
        "" | "s" | "sec" => value,
        "ms" => value / 1000.0,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => return Err(format!("unknown unit `{other}`; {forms}")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("out of range; {forms}"))
}

/// Splits `12.5MiB` into the number and the rest (the unit).
fn split_number<'a>(text: &'a str, forms: &str) -> Result<(f64, &'a str), String> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{number}` is not a number; {forms}"))?;
    Ok((value, unit))
}

/// Parses a size into pages of `page_size` bytes: bytes with a unit (`B`, `KiB`, `MiB`, `GiB`,
/// `TiB`, `KB`, `MB`, `GB`, `TB`; partial pages are dropped) or a bare page count (`4096`,
/// `4096pages`).
///
/// # Errors
/// A message naming the accepted forms; less than one page is an error.
pub fn parse_size(text: &str, page_size: usize) -> Result<u64, String> {
    let text = text.trim();
    let forms = "use a page count (4096) or bytes with a unit (512MiB, 1GiB, 10GB)";
    let (value, unit) = split_number(text, forms)?;
    if !(value.is_finite() && value >= 0.0) {
        return Err(format!("not a size; {forms}"));
    }
    let multiplier: Option<f64> = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "p" | "pages" => None,
        "b" => Some(1.0),
        "kib" | "k" => Some(1024.0),
        "mib" | "m" => Some(1024.0 * 1024.0),
        "gib" | "g" => Some(1024.0 * 1024.0 * 1024.0),
        "tib" | "t" => Some(1024f64.powi(4)),
        "kb" => Some(1e3),
        "mb" => Some(1e6),
        "gb" => Some(1e9),
        "tb" => Some(1e12),
        other => return Err(format!("unknown unit `{other}`; {forms}")),
    };
    let pages = match multiplier {
        None => {
            if value.fract() != 0.0 {
                return Err(format!("a page count must be whole; {forms}"));
            }
            value
        }
        Some(bytes_per_unit) => (value * bytes_per_unit / page_size as f64).floor(),
    };
    if pages < 1.0 {
        return Err(format!("less than one page of {page_size} bytes"));
    }
    if pages > 1e15 {
        return Err("too large".into());
    }
    Ok(pages as u64)
}

/// Parses the buffer size: `P%` of `db_pages` (0 < P <= 100, rounded, at least 1 page) or a
/// size as [`parse_size`]; must not exceed the database.
///
/// # Errors
/// A message naming the accepted forms.
pub fn parse_buffer(text: &str, db_pages: u64, page_size: usize) -> Result<usize, String> {
    let text = text.trim();
    let pages = if let Some(percent) = text.strip_suffix('%') {
        let percent: f64 = percent
            .trim()
            .parse()
            .map_err(|_| format!("`{percent}` is not a percentage"))?;
        if !(percent > 0.0 && percent <= 100.0) {
            return Err("the percentage must be in (0, 100]".into());
        }
        ((db_pages as f64 * percent / 100.0).round() as u64).max(1)
    } else {
        parse_size(text, page_size)?
    };
    if pages > db_pages {
        return Err(format!(
            "{pages} pages is more than the database ({db_pages} pages)"
        ));
    }
    usize::try_from(pages).map_err(|_| "too large".to_string())
}

fn parse_warmup(text: &str) -> Result<WarmUp, String> {
    let text = text.trim();
    if text == "auto" {
        return Ok(WarmUp::UntilSteady {
            max: DEFAULT_WARMUP_MAX,
        });
    }
    if let Some(max) = text.strip_prefix("auto:") {
        return Ok(WarmUp::UntilSteady {
            max: parse_duration(max)?,
        });
    }
    parse_duration(text)
        .map(WarmUp::For)
        .map_err(|why| format!("{why}, or `auto` / `auto:DURATION`"))
}

fn parse_ratio(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let value = if let Some(percent) = text.strip_suffix('%') {
        percent.trim().parse::<f64>().map(|p| p / 100.0)
    } else {
        text.parse::<f64>()
    }
    .map_err(|_| "use a fraction (0.9) or a percentage (90%)".to_string())?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err("must be between 0 and 1 (0% and 100%)".into())
    }
}

/// Runs the benchmark with the buffer pool of [`default_factory`].
///
/// # Errors
/// Bad flags, a scheme that cannot be set up, failed runs (after printing what completed),
/// files that cannot be written.
pub fn run(args: &BenchArgs) -> Result<()> {
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    let config = args.to_config(&command_line)?;
    let scale = args.time_scale()?;
    let warmup_max = match config.warmup {
        WarmUp::For(d) | WarmUp::UntilSteady { max: d } => d,
    };
    eprintln!(
        "bench: workload {} (reads {:.0}%, locality {}), {} scheme(s), device {}, log {}, {} \
         threads, buffer {} of {} pages of {} bytes, warm-up {}, {:?} measured per scheme \
         (device time). Time scale {scale}: this host models {:.0} cores; each scheme takes \
         about {:.0}-{:.0} s of real time.",
        config.workload.mix.name(),
        config.workload.read_ratio * 100.0,
        config.workload.skew,
        config.schemes.len(),
        config.device,
        config
            .log
            .as_ref()
            .map_or_else(|| "none".to_string(), |log| log.device.to_string()),
        config.threads,
        config.buffer_pages,
        config.workload.db_pages,
        config.workload.page_size,
        config.warmup,
        config.duration,
        scale * crate::bench::cpu::available_cores() as f64,
        (config.duration.as_secs_f64() + 2.0) * scale,
        (config.duration + warmup_max).as_secs_f64() * scale,
    );
    let factory = default_factory();
    let results = crate::bench::harness::run_bench_with(&config, &*factory, &mut |so_far| {
        if let Some(run) = so_far.runs.last() {
            eprintln!(
                "  done: {} {:.0} ops/s, read stalls {:.1}%, {}",
                run.scheme,
                run.throughput,
                run.read_stall_ratio * 100.0,
                run.bound
            );
        }
    })?;
    print!("{}", report::format_table(&results));
    if let Some(path) = &args.json {
        results.write_json(path)?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(dir) = &args.out {
        plot::write_report_dir(dir, &results)?;
        eprintln!(
            "wrote results.json, plots and report.html to {}",
            dir.display()
        );
    }
    if results.failures.is_empty() {
        return Ok(());
    }
    let failed: Vec<String> = results
        .failures
        .iter()
        .map(|f| format!("scheme `{}`: {}", f.scheme, f.error))
        .collect();
    Err(Error::Config(format!(
        "{} of {} schemes failed: {}",
        failed.len(),
        config.schemes.len(),
        failed.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_mins(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_hours(1)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        for bad in ["", "s", "10x", "-3s", "1..2s", "ten"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1GiB", 16384), Ok(65_536));
        assert_eq!(parse_size("512MiB", 16384), Ok(32_768));
        assert_eq!(parse_size("4096", 16384), Ok(4096));
        assert_eq!(parse_size("4096pages", 16384), Ok(4096));
        assert_eq!(parse_size("1GB", 16384), Ok(61_035));
        assert_eq!(parse_size("20KiB", 16384), Ok(1));
        for bad in ["", "0", "1KiB", "1.5", "12XB", "-4", "MiB"] {
            assert!(parse_size(bad, 16384).is_err(), "{bad}");
        }
    }

    #[test]
    fn buffers_and_ratios() {
        assert_eq!(parse_buffer("10%", 32_768, 16384), Ok(3277));
        assert_eq!(parse_buffer("100", 32_768, 16384), Ok(100));
        assert_eq!(parse_buffer("16MiB", 32_768, 16384), Ok(1024));
        assert_eq!(parse_buffer("0.001%", 100, 16384), Ok(1));
        for bad in ["0%", "101%", "x%", "40000", "1TiB"] {
            assert!(parse_buffer(bad, 32_768, 16384).is_err(), "{bad}");
        }
        assert_eq!(parse_ratio("90%"), Ok(0.9));
        assert_eq!(parse_ratio("0.25"), Ok(0.25));
        assert!(parse_ratio("1.5").is_err());
        assert!(parse_ratio("abc").is_err());
        assert_eq!(
            parse_warmup("auto"),
            Ok(WarmUp::UntilSteady {
                max: DEFAULT_WARMUP_MAX
            })
        );
        assert_eq!(
            parse_warmup("auto:20s"),
            Ok(WarmUp::UntilSteady {
                max: Duration::from_secs(20)
            })
        );
        assert_eq!(parse_warmup("3s"), Ok(WarmUp::For(Duration::from_secs(3))));
        assert!(parse_warmup("soon").is_err());
    }
}
