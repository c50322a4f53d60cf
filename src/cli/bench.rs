//! `flashbuf bench`: run schemes side by side on one device and database image
//! (docs/architecture.md, "What users script against"), print the comparison table, optionally
//! write results.json / plots / report.html.
//!
//! Every flag is parsed here into a [`BenchConfig`] with clear errors ([`parse_duration`],
//! [`parse_size`], [`parse_buffer`]); the harness does the rest.
//!
//! Defaults (what `flashbuf bench` with no arguments runs): the InnoDB family of schemes,
//! `emu:ssd-a` for the data, `emu:sata` for the redo log (the papers' separate log drive),
//! `flush_log_at_trx_commit = 0` (the papers' MySQL configuration), buffer 10% of a 512 MiB
//! database of 16 KiB pages (32768 pages, 3277 frames), the `ms` mix, 64 threads, warm-up
//! until the buffer is full and throughput steady, then a measured phase in device time. The
//! emulated devices' time scale is chosen automatically: the lowest of 8..128 at which this
//! host's measured wake-up lateness stays within 2% of the device's reference wait (its
//! modelled sync, at most 1 ms: 8 for TPC-C on `emu:ssd-a` on a quiet host)
//! ([`crate::bench::lateness`]; docs/results.md, "How low the time scale can go"), unless
//! `--model-cores` (time scale = model cores / host cores) or the device string sets it.
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

use std::sync::Arc;

use super::given::Given;
use crate::bench::continuation::Continuation;
use crate::bench::driver::{RecordDriver, RecordSpec};
use crate::bench::image::Image;
use crate::bench::report::BenchResults;
use crate::bench::{BenchConfig, LogSetup, WarmUp, default_factory, plot, report};
use crate::device::DeviceSpec;
use crate::engine::Composition;
use crate::error::{Error, Result};
use crate::workload::keys::Skew;
use crate::workload::linkbench::LinkBenchConfig;
use crate::workload::synthetic::{Mix, SyntheticConfig};
use crate::workload::tpcc::{TpccConfig, TpccMix};
use crate::workload::ycsb::{KeyFormat, RequestDistribution, YcsbConfig, YcsbWorkload};

/// Default worker threads (see the module docs).
pub const DEFAULT_THREADS: usize = 64;
/// Upper bound of the automatic warm-up, device time.
pub const DEFAULT_WARMUP_MAX: Duration = Duration::from_secs(10);
/// The cap of `--duration auto`, device time.
pub const DEFAULT_MEASURE_MAX: Duration = Duration::from_mins(1);
/// The shortest measured phase of `--duration auto`, device time: enough windows for the
/// steadiness test to judge a drift.
pub const AUTO_MEASURE_MIN: Duration = Duration::from_secs(5);

/// Arguments of `bench`.
#[derive(Debug, Clone, clap::Args)]
#[allow(clippy::struct_excessive_bools)] // command-line switches are naturally booleans
#[command(after_long_help = crate::bench::plot::columns_help())]
pub struct BenchArgs {
    /// Workload: a synthetic page mix (ACE Table II): ms (50/50 r/w, 90/10 locality), wis
    /// (10/90, 90/10), ris (90/10, 90/10), mu (50/50, uniform); or a record workload on the
    /// transactional B+-tree store: tpcc, ycsb-a .. ycsb-f, linkbench. A record workload's
    /// database is loaded once per invocation (in memory) and copied into every scheme's fresh
    /// device; throughput is then in transactions/s (plus tpmC for TPC-C) and a second table
    /// gives, per transaction type: tx/s, mean/p95/p99 latency (device time), aborts
    /// (transactions whose every attempt conflicted), retries and rollbacks; results.json and
    /// report.html add a latency CDF per type.
    #[arg(long, default_value = "ms")]
    pub workload: String,
    /// Record-workload parameters.
    #[command(flatten)]
    pub record: RecordFlags,
    /// Record workloads: reuse the image file PATH made by `flashbuf load` (refused when it
    /// was loaded with other parameters) instead of loading in memory. The image sets the
    /// database's size and page size (not with --db-size).
    #[arg(long, conflicts_with = "db_size")]
    pub db: Option<PathBuf>,
    /// Record workloads loaded by this run (not with --db: an image file keeps the room it was
    /// built with, `flashbuf load --room`): room kept for the run's inserts, in percent of the
    /// loaded pages (at least 4,096 pages; default 100%). A run that outgrows it stops with
    /// "the database is full": in-memory TPC-C grows by about 0.17 pages of 4 KiB a
    /// transaction, so 15 s at 40,000 transactions a second need 400% at 5 warehouses. On
    /// RAM devices the room costs memory only where a run writes.
    #[arg(long, value_name = "PCT", conflicts_with = "db")]
    pub room: Option<String>,
    /// Record workloads: skip the consistency check (workload invariants, e.g. TPC-C
    /// conditions 1-4, and the B+-tree check) that otherwise runs after every scheme's
    /// measured phase and fails the scheme when violated.
    #[arg(long)]
    pub no_check: bool,
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
    /// Size of the redo log: bytes with a unit (`256MiB`). Record workloads given no size get
    /// 256 MiB or two thirds of the buffer pool, whichever is larger, so that the checkpoint
    /// age has the same headroom in pool turnovers at any database size (docs/regime.md).
    #[arg(long, default_value = "256MiB")]
    pub log_size: String,
    /// Run without a redo log (to compare with engines that keep none); not with the log's
    /// flags.
    #[arg(
        long,
        conflicts_with_all = ["log_size", "log_device", "flush_log_at_trx_commit"]
    )]
    pub no_log: bool,
    /// InnoDB's innodb_flush_log_at_trx_commit: 1 syncs the log at each commit; 0 and 2 sync
    /// it once a second (the papers' configuration is 0).
    #[arg(long, default_value_t = 0)]
    pub flush_log_at_trx_commit: u8,
    /// Cores of the host to model: emulated devices run at time scale MODEL_CORES / this
    /// host's cores, unless the device string sets time_scale. Default: automatic, the lowest
    /// of 8, 16, 32, 64, 128 at which a 0.5 s probe of how late this host wakes sleeping
    /// threads keeps that lateness within 2% of the device's reference wait (its modelled sync
    /// after a page write, at most 1 ms), else the lowest within 10% at twice the lateness
    /// (`--model-cores 32` is the former default, time scale 16 on 2 cores).
    #[arg(long)]
    pub model_cores: Option<f64>,
    /// Buffer size: a percentage of the database (`10%`), a page count (`4096`) or a size
    /// (`64MiB`). A record workload's pool may exceed its loaded database up to the room its
    /// image keeps for inserts (`200%`: the whole database stays cached as it grows).
    #[arg(long, default_value = "10%")]
    pub buffer: String,
    /// Worker threads.
    #[arg(long, default_value_t = DEFAULT_THREADS)]
    pub threads: usize,
    /// Measured duration per scheme, in device time: `3s`, `500ms`, `1m`; a bare number is
    /// seconds. Or `auto` (at least 5 s, then until the phase is steady with its drift's 95%
    /// interval within ±10%, at most 60 s) or `auto:DURATION` for another cap: each run
    /// measures as long as its own steadiness needs. The real time is this times the time
    /// scale (shown before the run starts). Default 3 s, and 10 s for TPC-C (its regime setup
    /// is not steady in 3 s; docs/regime.md).
    #[arg(long, default_value = "3s")]
    pub duration: String,
    /// Warm-up per scheme, not measured, device time: a duration, or `auto` (until the buffer
    /// is full, throughput steady and the background flush rate no longer ramping, at most
    /// 10 s), or `auto:DURATION` for another cap. Default `auto`, and `auto:15s` for TPC-C.
    #[arg(long, default_value = "auto")]
    pub warmup: String,
    /// Before the warm-up, fill the pool with the devices serving untimed (emulated devices:
    /// no device time passes), then warm up as --warmup says from the full pool. For pools
    /// that take minutes of device time to fill (a hard disk, a large pool); only the
    /// warm-up's starting point changes (docs/reproduce.md, "Filling the pool untimed").
    #[arg(long)]
    pub fill_pool: bool,
    /// Before the workers start, read the loaded database into the pool in page order until
    /// the pool is full, as InnoDB's buffer-pool load at startup does (emulated devices serve
    /// it untimed). With a pool that holds the database, the measured phase then sees hits
    /// only, as an in-memory engine that loads through its pool does (docs/performance.md,
    /// "The in-memory point's misses"). The warm-up still runs after it.
    #[arg(long)]
    pub prewarm: bool,
    /// Database size of the page mixes: bytes with a unit (`1GiB`, `512MiB`, `10GB`) or pages
    /// (`4096`). A record workload's size comes from its own flags (--warehouses, --records,
    /// --nodes) or its --db image.
    #[arg(long, default_value = "512MiB")]
    pub db_size: String,
    /// Page size in bytes: a power of two from 4096 to 65536 (record workloads: to 32768).
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
    /// --default` prints every key with its meaning, default and range), or a paper's own
    /// knobs built in: `paper:rw` (the RW paper's my.cnf: io_capacity 1,000 and 2,000,
    /// max_dirty_pages_pct 90, its low-water mark 10; experiments/configs/rw-mysql.toml),
    /// `paper:selftuning` (the self-tuning paper's Table 3: one instance, no neighbours,
    /// max_dirty_pages_pct 90, MySQL 5.6's io_capacity 200 and 2,000;
    /// experiments/configs/selftuning-mysql.toml), `paper:selftuning-fit` (the same with
    /// lru_scan_depth 90, fitted on the paper's naive synchronous-write share at 50
    /// warehouses; experiments/configs/selftuning-mysql-fit.toml).
    #[arg(long)]
    pub pool_config: Option<PathBuf>,
    /// The published setup each run's regime (results.json `regime`, the report's table, the
    /// printed warnings) is set beside: `lruc-tpcc` (the LRU-C paper's TPC-C: 1,000
    /// warehouses, 64 clients, buffer 10%) or `rw-tpcc` (the RW paper's: 100 warehouses, 8
    /// clients, buffer 20%, on the OpenSSD). docs/regime.md.
    #[arg(long, default_value = "lruc-tpcc")]
    pub regime_reference: String,
    /// Write the results (results.json format) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write results.json, throughput/timeline/latency SVG plots and report.html here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run each scheme N times, interleaved (every scheme, then every scheme again, ...), each
    /// on a fresh device with a fresh copy of the same image, and report the mean and 95%
    /// confidence interval (Student t) of every metric: `812 ±23` in the table; in
    /// results.json every run under its scheme's `runs` and per metric `summary` {mean, ci95,
    /// n}, the scheme's own fields being the means.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Do not draw the progress line (scheme i of N, its phase, the ETA of the whole command);
    /// the one-line summary of each finished scheme still prints.
    #[arg(long)]
    pub no_progress: bool,
    /// Which of these flags the command line gave (filled after parsing; empty when the
    /// arguments are built by hand, which then checks only what needs no such knowledge).
    #[arg(skip)]
    pub given: Given,
}

/// TPC-C warehouses when `--warehouses` is not given (docs/regime.md).
pub const DEFAULT_TPCC_WAREHOUSES: u16 = 50;
/// TPC-C's measured phase when `--duration` is not given: the 50-warehouse regime setup made
/// 0 steady runs of 6 with the general default of 3 s, 8 of 9 with 10 s (docs/regime.md, "After
/// the unlocked reads").
pub const TPCC_DEFAULT_DURATION: &str = "10s";
/// TPC-C's warm-up when `--warmup` is not given (the reproductions' cap).
pub const TPCC_DEFAULT_WARMUP: &str = "auto:15s";

/// The record workloads' parameters (`flashbuf bench` and `flashbuf load`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RecordFlags {
    /// TPC-C: warehouses (default 50: 64 clients on 50 warehouses and a 10% pool of 8
    /// instances of about 2,900 frames keep the LRU-C paper's regime within reach, see
    /// docs/regime.md; the image is about 3.8 GB and takes about 3 minutes to build; 500 puts
    /// 64 clients at the paper's clients per warehouse within 2x: a 38 GB image, built into a
    /// file by `flashbuf load` in about 17 minutes and mapped, not read, by `--db`).
    #[arg(long)]
    pub warehouses: Option<u16>,
    /// TPC-C: transaction mix in percent, e.g.
    /// `neworder=45,payment=43,orderstatus=4,delivery=4,stocklevel=4` (the standard mix).
    #[arg(long)]
    pub mix: Option<String>,
    /// TPC-C: a mix for a device read:write ratio (`1:1`, `2:1` = standard, `3:1`, `4:1` = the
    /// LRU-C paper's Figure 8); not with --mix.
    #[arg(long)]
    pub rw_ratio: Option<String>,
    /// TPC-C: bind client t to warehouse t mod W + 1 (default: a uniform warehouse per
    /// transaction).
    #[arg(long)]
    pub bind_warehouse: bool,
    /// YCSB: records loaded (default 100000).
    #[arg(long)]
    pub records: Option<u64>,
    /// YCSB: fields per record (default 10).
    #[arg(long)]
    pub field_count: Option<usize>,
    /// YCSB: bytes per field (default 100).
    #[arg(long)]
    pub field_length: Option<usize>,
    /// YCSB: `requestdistribution`: uniform, zipfian (YCSB's scrambled zipfian; the default,
    /// `latest` for ycsb-d), unscrambled-zipfian or latest.
    #[arg(long)]
    pub request_distribution: Option<String>,
    /// YCSB: how key numbers become keys: `text` (YCSB's `user` and the number in decimal,
    /// the default) or `binary` (the number's 8 big-endian bytes, the fixed-size integer keys
    /// of engines such as vmcache).
    #[arg(long)]
    pub key_format: Option<String>,
    /// LinkBench: nodes loaded (default 100000).
    #[arg(long)]
    pub nodes: Option<u64>,
}

impl BenchArgs {
    /// Turns the flags into a harness configuration.
    ///
    /// # Errors
    /// [`Error::Config`] naming the bad flag and the accepted forms; [`Error::Io`] when the pool
    /// configuration file cannot be read.
    pub fn to_config(&self, command_line: &str) -> Result<BenchConfig> {
        let record = self.record_spec()?;
        if let Some(room) = &self.room
            && record.is_none()
        {
            return Err(flag_error(
                "--room",
                room,
                "only record workloads (tpcc, ycsb-*, linkbench) load an image with room",
            ));
        }
        self.room_pct()?;
        super::limits::check_page_size(self.page_size, record.is_some())
            .map_err(|why| flag_error("--page-size", &self.page_size.to_string(), &why))?;
        let mix = if record.is_some() {
            Mix::Ms
        } else {
            Mix::parse(&self.workload)?
        };
        let schemes = Composition::parse_list(&self.schemes)?;
        let scale = self.time_scale()?;
        let device = with_time_scale(DeviceSpec::parse(&self.device)?, scale);
        let log = self.log_setup(scale)?;
        self.check_model_cores_used()?;
        let page_size = self.page_size;
        let db_pages = parse_size(&self.db_size, page_size)
            .map_err(|why| flag_error("--db-size", &self.db_size, &why))?;
        // A record workload's size is known only from its image: check the form here, the
        // size in `prepare` (before loading) and `attach_image` (after).
        let buffer_pages = if record.is_some() {
            parse_buffer(
                &self.buffer,
                RECORD_PAGES_MAX,
                Image::capacity_with_room(RECORD_PAGES_MAX, self.room_pct()?),
                page_size,
            )
        } else {
            parse_buffer(&self.buffer, db_pages, db_pages, page_size)
        }
        .map_err(|why| flag_error("--buffer", &self.buffer, &why))?;
        if record.is_none() {
            super::limits::check_frames(&self.buffer, buffer_pages, Some((db_pages, true)))?;
        } else if !super::limits::is_percentage(&self.buffer) {
            super::limits::check_frames(&self.buffer, buffer_pages, None)?;
        }
        let (duration, measure_cap, warmup) = self.phases()?;
        if self.repeat == 0 || self.repeat > crate::bench::repeat::MAX_REPEATS {
            return Err(flag_error(
                "--repeat",
                &self.repeat.to_string(),
                &format!(
                    "runs per scheme must be between 1 and {}",
                    crate::bench::repeat::MAX_REPEATS
                ),
            ));
        }
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
        let regime_reference = crate::bench::regime::Reference::parse(&self.regime_reference)?;
        let config = BenchConfig {
            workload,
            schemes,
            device,
            log,
            step: crate::bench::timeline::STEP,
            buffer_pages,
            threads: self.threads,
            duration,
            measure_cap,
            warmup,
            fill_pool: self.fill_pool,
            prewarm: self.prewarm,
            pool_config,
            command_line: command_line.to_string(),
            progress: !self.no_progress,
            record: None,
            check: !self.no_check,
            repeats: self.repeat,
            regime_reference,
        };
        config.validate()?;
        Ok(config)
    }

    /// The redo log the flags ask for (`None` with `--no-log`).
    fn log_setup(&self, scale: f64) -> Result<Option<LogSetup>> {
        if self.no_log {
            return Ok(None);
        }
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
        if self.flush_log_at_trx_commit > 2 {
            return Err(flag_error(
                "--flush-log-at-trx-commit",
                &self.flush_log_at_trx_commit.to_string(),
                "must be 0, 1 or 2",
            ));
        }
        Ok(Some(LogSetup {
            device: with_time_scale(DeviceSpec::parse(&self.log_device)?, scale),
            size: pages * crate::bench::LOG_PAGE_SIZE as u64,
            flush_log_at_trx_commit: self.flush_log_at_trx_commit,
        }))
    }

    /// The texts of `--duration` and `--warmup`: as given, else the defaults, which TPC-C
    /// raises to [`TPCC_DEFAULT_DURATION`] and [`TPCC_DEFAULT_WARMUP`].
    fn phase_texts(&self) -> (&str, &str) {
        let tpcc = self.workload == "tpcc";
        let duration = if tpcc && !self.given.has("duration") {
            TPCC_DEFAULT_DURATION
        } else {
            &self.duration
        };
        let warmup = if tpcc && !self.given.has("warmup") {
            TPCC_DEFAULT_WARMUP
        } else {
            &self.warmup
        };
        (duration, warmup)
    }

    /// The measured duration (with `--duration auto`, its minimum and cap) and the warm-up
    /// (and the worker threads, checked with them).
    fn phases(&self) -> Result<(Duration, Option<Duration>, WarmUp)> {
        if self.threads == 0 || self.threads > crate::bench::MAX_THREADS {
            return Err(flag_error(
                "--threads",
                &self.threads.to_string(),
                &format!("must be from 1 to {}", crate::bench::MAX_THREADS),
            ));
        }
        let (duration_text, warmup_text) = self.phase_texts();
        let (duration, measure_cap) = parse_measure(duration_text)
            .map_err(|why| flag_error("--duration", duration_text, &why))?;
        if duration.is_zero() || measure_cap.unwrap_or(duration) > crate::bench::MAX_PHASE {
            return Err(flag_error(
                "--duration",
                duration_text,
                &format!(
                    "must be positive and at most {} hours of device time",
                    crate::bench::MAX_PHASE.as_secs() / 3600
                ),
            ));
        }
        let warmup =
            parse_warmup(warmup_text).map_err(|why| flag_error("--warmup", warmup_text, &why))?;
        if let WarmUp::For(d) | WarmUp::UntilSteady { max: d } = warmup
            && d > crate::bench::MAX_PHASE
        {
            return Err(flag_error(
                "--warmup",
                warmup_text,
                &format!(
                    "must be at most {} hours of device time",
                    crate::bench::MAX_PHASE.as_secs() / 3600
                ),
            ));
        }
        Ok((duration, measure_cap, warmup))
    }

    /// The record workload the flags ask for (`None`: a synthetic mix), its flags checked:
    /// flags of another workload are errors.
    ///
    /// # Errors
    /// [`Error::Config`] naming the flag.
    pub fn record_spec(&self) -> Result<Option<RecordSpec>> {
        let spec = self.record.spec(&self.workload, self.seed)?;
        let record = spec.is_some();
        let not_for = |flag: &str, given: bool| {
            if given {
                Err(Error::Config(format!(
                    "{flag} applies to {} only, not to workload `{}`",
                    if record {
                        "the page mixes"
                    } else {
                        "record workloads"
                    },
                    self.workload
                )))
            } else {
                Ok(())
            }
        };
        not_for("--read-ratio", record && self.read_ratio.is_some())?;
        not_for("--locality", record && self.locality.is_some())?;
        not_for("--db", !record && self.db.is_some())?;
        not_for("--no-check", !record && self.no_check)?;
        if record && self.given.has("db_size") {
            return Err(Error::Config(format!(
                "--db-size {} sets the size of the page mixes' database; workload `{}` gets its \
                 size from its own flags (--warehouses, --records, --nodes) or its --db image",
                self.db_size, self.workload
            )));
        }
        if record && self.no_log {
            return Err(Error::Config(
                "--no-log: record workloads run on the transactional store, which needs the \
                 redo log"
                    .into(),
            ));
        }
        Ok(spec)
    }
}

impl RecordFlags {
    /// The record workload `workload` names with these parameters (`None`: not a record
    /// workload), its seed `seed`; a parameter of another workload is an error.
    ///
    /// # Errors
    /// [`Error::Config`] naming the flag.
    pub fn spec(&self, workload: &str, seed: u64) -> Result<Option<RecordSpec>> {
        let name = workload.trim().to_ascii_lowercase();
        let is_tpcc = name == "tpcc";
        let ycsb = name
            .strip_prefix("ycsb-")
            .map(YcsbWorkload::parse)
            .transpose()?;
        let is_ycsb = ycsb.is_some();
        let is_linkbench = name == "linkbench";
        let not_for = |flag: &str, given: bool, wanted: bool, which: &str| {
            if given && !wanted {
                Err(Error::Config(format!(
                    "{flag} applies to {which} only, not to workload `{workload}`"
                )))
            } else {
                Ok(())
            }
        };
        not_for("--warehouses", self.warehouses.is_some(), is_tpcc, "tpcc")?;
        not_for("--mix", self.mix.is_some(), is_tpcc, "tpcc")?;
        not_for("--rw-ratio", self.rw_ratio.is_some(), is_tpcc, "tpcc")?;
        not_for("--bind-warehouse", self.bind_warehouse, is_tpcc, "tpcc")?;
        not_for("--records", self.records.is_some(), is_ycsb, "ycsb-*")?;
        not_for(
            "--field-count",
            self.field_count.is_some(),
            is_ycsb,
            "ycsb-*",
        )?;
        not_for(
            "--field-length",
            self.field_length.is_some(),
            is_ycsb,
            "ycsb-*",
        )?;
        not_for(
            "--request-distribution",
            self.request_distribution.is_some(),
            is_ycsb,
            "ycsb-*",
        )?;
        not_for("--key-format", self.key_format.is_some(), is_ycsb, "ycsb-*")?;
        not_for("--nodes", self.nodes.is_some(), is_linkbench, "linkbench")?;
        self.check_ranges()?;
        if is_tpcc {
            let mut config = TpccConfig::new(self.warehouses.unwrap_or(DEFAULT_TPCC_WAREHOUSES));
            config.seed = seed;
            config.bind_warehouse = self.bind_warehouse;
            config.mix = match (&self.mix, &self.rw_ratio) {
                (Some(_), Some(_)) => {
                    return Err(Error::Config("give --mix or --rw-ratio, not both".into()));
                }
                (Some(mix), None) => TpccMix::parse(mix)?,
                (None, Some(ratio)) => TpccMix::parse_rw_ratio(ratio)?,
                (None, None) => TpccMix::standard(),
            };
            config.validate()?;
            return Ok(Some(RecordSpec::Tpcc(config)));
        }
        if let Some(workload) = ycsb {
            let mut config = YcsbConfig::standard(workload, self.records.unwrap_or(100_000));
            config.seed = seed;
            if let Some(count) = self.field_count {
                config.field_count = count;
            }
            if let Some(length) = self.field_length {
                config.field_length = length;
            }
            if let Some(text) = &self.request_distribution {
                config.request_distribution = RequestDistribution::parse(text).map_err(|_| {
                    flag_error(
                        "--request-distribution",
                        text,
                        "uniform, zipfian, unscrambled-zipfian or latest",
                    )
                })?;
            }
            if let Some(text) = &self.key_format {
                config.key_format = KeyFormat::parse(text)
                    .map_err(|_| flag_error("--key-format", text, "text or binary"))?;
            }
            config.validate()?;
            return Ok(Some(RecordSpec::Ycsb(config)));
        }
        if is_linkbench {
            let mut config = LinkBenchConfig::new(self.nodes.unwrap_or(100_000));
            config.seed = seed;
            config.validate()?;
            return Ok(Some(RecordSpec::LinkBench(config)));
        }
        Ok(None)
    }
}

impl RecordFlags {
    /// The ranges the workloads' own checks apply, named by flag.
    fn check_ranges(&self) -> Result<()> {
        let range = |flag: &str, value: Option<u64>, min: u64, max: Option<u64>| match value {
            Some(v) if v < min || max.is_some_and(|max| v > max) => Err(flag_error(
                flag,
                &v.to_string(),
                &match max {
                    Some(max) => format!("must be from {min} to {max}"),
                    None => format!("must be at least {min}"),
                },
            )),
            _ => Ok(()),
        };
        let u16_max = Some(u64::from(u16::MAX));
        range("--warehouses", self.warehouses.map(u64::from), 1, u16_max)?;
        range("--records", self.records, 3, None)?;
        range(
            "--field-count",
            self.field_count.map(|v| v as u64),
            1,
            Some(1000),
        )?;
        range(
            "--field-length",
            self.field_length.map(|v| v as u64),
            0,
            u16_max,
        )?;
        range("--nodes", self.nodes, 2, None)
    }
}

/// The largest record database `--buffer` is checked against before the load.
const RECORD_PAGES_MAX: u64 = 1 << 40;

impl BenchArgs {
    /// The time scale that makes this host model `--model-cores` cores, or the automatic one
    /// ([`auto_time_scale`]) without the flag.
    fn time_scale(&self) -> Result<f64> {
        let cores = crate::bench::cpu::available_cores().max(1) as f64;
        if let Some(model_cores) = self.model_cores
            && !(model_cores.is_finite() && model_cores > 0.0 && model_cores <= 4096.0)
        {
            return Err(flag_error(
                "--model-cores",
                &model_cores.to_string(),
                "must be in (0, 4096]",
            ));
        }
        // A real data device (file:, mem) runs in real time, and so must an emulated log
        // beside it: the two share one clock.
        let data_is_emulated = matches!(
            DeviceSpec::parse(&self.device),
            Ok(DeviceSpec::Emulated { .. })
        );
        if !data_is_emulated {
            return Ok(1.0);
        }
        Ok(match self.model_cores {
            Some(model_cores) => (model_cores / cores).max(1.0),
            None => auto_time_scale(&self.device, self.page_size)?.scale,
        })
    }
}

impl BenchArgs {
    /// The room (percent of the loaded pages) an image this run loads keeps for inserts:
    /// `--room`, or [`crate::bench::image::DEFAULT_ROOM_PCT`].
    ///
    /// # Errors
    /// [`Error::Config`] naming `--room` when it is not a whole percentage up to 10,000%.
    pub(crate) fn room_pct(&self) -> Result<u64> {
        match &self.room {
            None => Ok(crate::bench::image::DEFAULT_ROOM_PCT),
            Some(text) => {
                super::limits::parse_room(text).map_err(|why| flag_error("--room", text, &why))
            }
        }
    }
}

impl BenchArgs {
    /// `--model-cores` given where no device takes its time scale from it: a real data device
    /// (everything then runs in real time), or emulated devices that set `time_scale`
    /// themselves.
    fn check_model_cores_used(&self) -> Result<()> {
        if !self.given.has("model_cores") {
            return Ok(());
        }
        let takes_scale = |text: &str| {
            matches!(DeviceSpec::parse(text), Ok(DeviceSpec::Emulated { options, .. })
                if !options.iter().any(|(key, _)| key == "time_scale"))
        };
        let data_emulated = matches!(
            DeviceSpec::parse(&self.device)?,
            DeviceSpec::Emulated { .. }
        );
        let used = data_emulated
            && (takes_scale(&self.device) || (!self.no_log && takes_scale(&self.log_device)));
        if used {
            return Ok(());
        }
        Err(flag_error(
            "--model-cores",
            &self
                .model_cores
                .map_or_else(String::new, |cores| cores.to_string()),
            &if data_emulated {
                "every emulated device of the run sets its own time_scale, so it would be \
                 ignored; drop one or the other"
                    .to_string()
            } else {
                format!(
                    "it sets the time scale of emulated devices, and --device {} runs in real \
                     time (so does the log beside it)",
                    self.device
                )
            },
        ))
    }
}

/// The automatic time scale and what it was chosen from.
#[derive(Debug, Clone)]
pub struct AutoTimeScale {
    /// The chosen time scale.
    pub scale: f64,
    /// The probe's mean wake-up lateness, real microseconds.
    pub lateness_us: f64,
    /// The device's reference wait the lateness was held to.
    pub reference: crate::bench::lateness::DeviceReference,
    /// The timing error expected at `scale`: `lateness_us / scale / reference.us`.
    pub expected_error: f64,
}

/// The automatic time scale for the emulated `device` with `page_size`-byte pages
/// ([`crate::bench::lateness::choose_time_scale`] against
/// [`crate::bench::lateness::device_reference`]). The host is probed once per process (the
/// first call sleeps for half a second), so that every point of a sweep and every experiment
/// of a reproduction sees the same lateness; points on the same device run at the same scale.
/// A device that is not emulated gets the highest scale against the 1 ms reference (it runs in
/// real time anyway).
///
/// # Errors
/// [`Error::Config`] naming `--device` when its model cannot be built.
pub fn auto_time_scale(device: &str, page_size: usize) -> Result<AutoTimeScale> {
    use crate::bench::lateness::{
        AUTO_PROBE, AUTO_REFERENCE_US, AUTO_SCALES, DeviceReference, LatenessProbe,
        choose_time_scale, device_reference, expected_error,
    };
    static LATENESS_US: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    // The device first: a bad option is refused before the host is probed.
    let reference = match DeviceSpec::parse(device)? {
        DeviceSpec::Emulated { profile, options } => {
            let bad = |err: Error| flag_error("--device", device, &err.message());
            let resolved =
                crate::device::emulated::profile::resolve(&profile, &options).map_err(bad)?;
            device_reference(&resolved, page_size).map_err(bad)?
        }
        DeviceSpec::File(_) | DeviceSpec::Memory => DeviceReference {
            us: AUTO_REFERENCE_US,
            source: format!("{AUTO_REFERENCE_US:.0} us (not an emulated device)"),
        },
    };
    let lateness_us = *LATENESS_US.get_or_init(|| {
        LatenessProbe::new().map_or(f64::INFINITY, |mut probe| {
            probe.run_for(AUTO_PROBE);
            probe.summary(1.0, 0.0).map_or(f64::INFINITY, |l| l.mean_us)
        })
    });
    let highest = AUTO_SCALES[AUTO_SCALES.len() - 1];
    let scale = choose_time_scale(lateness_us, reference.us, &AUTO_SCALES).unwrap_or(highest);
    Ok(AutoTimeScale {
        scale,
        lateness_us,
        expected_error: expected_error(lateness_us, scale, reference.us),
        reference,
    })
}

/// Adds `time_scale=SCALE` to an emulated device string that does not set one.
/// Whether the device flag is an emulated device string that sets its own `time_scale`.
fn device_sets_time_scale(device: &str) -> bool {
    matches!(DeviceSpec::parse(device), Ok(DeviceSpec::Emulated { options, .. })
        if options.iter().any(|(key, _)| key == "time_scale"))
}

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

/// The pool configurations built in, by the name `--pool-config` takes after `paper:`.
const BUILT_IN_POOL_CONFIGS: [(&str, &str); 3] = [
    (
        "rw",
        include_str!("../../experiments/configs/rw-mysql.toml"),
    ),
    (
        "selftuning",
        include_str!("../../experiments/configs/selftuning-mysql.toml"),
    ),
    (
        "selftuning-fit",
        include_str!("../../experiments/configs/selftuning-mysql-fit.toml"),
    ),
];

fn read_pool_config(path: &Path) -> Result<String> {
    if let Some(name) = path.to_str().and_then(|p| p.strip_prefix("paper:")) {
        return BUILT_IN_POOL_CONFIGS
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, text)| (*text).to_string())
            .ok_or_else(|| {
                let known: Vec<String> = BUILT_IN_POOL_CONFIGS
                    .iter()
                    .map(|(known, _)| format!("paper:{known}"))
                    .collect();
                flag_error(
                    "--pool-config",
                    &path.display().to_string(),
                    &format!(
                        "no such built-in configuration (known: {})",
                        known.join(", ")
                    ),
                )
            });
    }
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

pub(crate) fn flag_error(flag: &str, value: &str, why: &str) -> Error {
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
    if number.is_empty() {
        return Err(if text.starts_with('-') {
            format!("`{text}` is negative; {forms}")
        } else {
            format!("`{text}` does not start with a number; {forms}")
        });
    }
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

/// Parses the buffer size: `P%` of `db_pages` (rounded, at least 1 page) or a size as
/// [`parse_size`], at most `max_pages`: the device's data pages, which for a loaded image are
/// its loaded pages and as many again for the run's inserts, so that a pool may hold a
/// database that grows (`--buffer 200%`: in memory for the whole run).
///
/// # Errors
/// A message naming the accepted forms and the largest size.
pub fn parse_buffer(
    text: &str,
    db_pages: u64,
    max_pages: u64,
    page_size: usize,
) -> Result<usize, String> {
    let text = text.trim();
    // At least the database, so the percentage's bound is at least 100.
    let max_pages = max_pages.max(db_pages);
    let max_percent = (max_pages as f64 * 100.0 / db_pages.max(1) as f64 * 10.0).floor() / 10.0;
    let pages = if let Some(percent) = text.strip_suffix('%') {
        let percent: f64 = percent
            .trim()
            .parse()
            .map_err(|_| format!("`{percent}` is not a percentage"))?;
        if !(percent > 0.0 && percent <= max_percent) {
            return Err(format!(
                "the percentage must be in (0, {max_percent}] (the database and the room for \
                 its inserts)"
            ));
        }
        ((db_pages as f64 * percent / 100.0).round() as u64).max(1)
    } else {
        parse_size(text, page_size)?
    };
    if pages > max_pages {
        return Err(if max_pages > db_pages {
            format!(
                "{pages} pages is more than the device's {max_pages} data pages (the \
                 database's {db_pages} and the room for its inserts)"
            )
        } else {
            format!("{pages} pages is more than the database ({db_pages} pages)")
        });
    }
    usize::try_from(pages).map_err(|_| "too large".to_string())
}

/// `--duration`: a fixed duration (no cap), or `auto` / `auto:MAX`: at least
/// [`AUTO_MEASURE_MIN`] (or `MAX` if shorter), then until steady, at most `MAX`
/// ([`DEFAULT_MEASURE_MAX`] for `auto`).
fn parse_measure(text: &str) -> Result<(Duration, Option<Duration>), String> {
    let text = text.trim();
    let cap = if text == "auto" {
        Some(DEFAULT_MEASURE_MAX)
    } else if let Some(max) = text.strip_prefix("auto:") {
        Some(parse_duration(max)?)
    } else {
        None
    };
    match cap {
        Some(max) => Ok((AUTO_MEASURE_MIN.min(max), Some(max))),
        None => parse_duration(text)
            .map(|duration| (duration, None))
            .map_err(|why| format!("{why}, or `auto` / `auto:DURATION`")),
    }
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

/// Loads `spec`'s image once (in memory), prints what was loaded, and makes `config` run it:
/// the buffer is re-read as a share of the loaded pages.
///
/// # Errors
/// Load errors; a buffer larger than the loaded database.
pub fn attach_record(args: &BenchArgs, config: &mut BenchConfig, spec: RecordSpec) -> Result<()> {
    let image = load_image(args, config, &spec)?;
    attach_image(args, config, spec, image)
}

/// Loads `spec`'s image (in memory, or read from `--db`) and prints what was loaded.
///
/// # Errors
/// Load errors; an image file loaded with other parameters.
pub fn load_image(args: &BenchArgs, config: &BenchConfig, spec: &RecordSpec) -> Result<Arc<Image>> {
    if args.db.is_none() {
        eprintln!(
            "loading {} ({} KiB pages, in memory; every scheme gets a copy)...",
            spec.describe(),
            config.workload.page_size / 1024
        );
    }
    let image = if let Some(path) = &args.db {
        let image = Image::read_file(path, spec)?;
        eprintln!(
            "read image {} ({}): {} pages of {} bytes = {:.1} MB in {:.1} s",
            path.display(),
            image.load_key,
            image.loaded_pages,
            image.page_size,
            image.loaded_bytes() as f64 / 1e6,
            image.build_s
        );
        image
    } else {
        let image = Image::build_with_room(
            spec,
            config.workload.page_size,
            args.room_pct()?,
            &mut print_progress,
        )?;
        eprint!("{}", load_summary(&image));
        image
    };
    Ok(Arc::new(image))
}

/// Makes `config` run `spec` on a loaded `image` (shared, e.g. by every point of a sweep): the
/// buffer is re-read as a share of the loaded pages.
///
/// # Errors
/// A buffer larger than the loaded database; an invalid configuration.
pub fn attach_image(
    args: &BenchArgs,
    config: &mut BenchConfig,
    spec: RecordSpec,
    image: Arc<Image>,
) -> Result<()> {
    let loaded = image.loaded_pages;
    config.buffer_pages = parse_buffer(&args.buffer, loaded, image.capacity_pages, image.page_size)
        .map_err(|why| flag_error("--buffer", &args.buffer, &why))?;
    super::limits::check_frames(&args.buffer, config.buffer_pages, Some((loaded, true)))?;
    if !args.given.has("log_size") {
        scale_log_with_pool(config, image.page_size);
    }
    config.workload.db_pages = loaded;
    config.workload.page_size = image.page_size;
    config.record = Some(Arc::new(RecordDriver::new(spec, image)?));
    config.validate()
}

/// The default redo log: [`DEFAULT_LOG_BYTES`], or [`LOG_OVER_POOL`] of the buffer pool's
/// bytes when that is larger. The log's headroom is measured in pool turnovers
/// (`redo_headroom_over_turnover`, docs/regime.md): a fixed log on a ten times larger pool
/// (500 warehouses instead of 50) leaves a tenth of the turnovers, and a scheme that keeps
/// many old dirty pages (LRU-C's mixed region) then waits in synchronous checkpoint flushing.
fn scale_log_with_pool(config: &mut BenchConfig, page_size: usize) {
    let Some(log) = config.log.as_mut() else {
        return;
    };
    log.size = log_bytes_for_pool(log.size, config.buffer_pages, page_size);
}

/// `size`, raised to [`LOG_OVER_POOL`] of a pool of `frames` pages of `page_size` bytes (whole
/// log pages) when that is larger.
fn log_bytes_for_pool(size: u64, frames: usize, page_size: usize) -> u64 {
    let log_page = crate::bench::LOG_PAGE_SIZE as u64;
    let pool_bytes = frames as u64 * page_size as u64;
    let scaled = (pool_bytes as f64 * LOG_OVER_POOL) as u64 / log_page * log_page;
    size.max(scaled)
}

/// The redo log's default size (`--log-size`).
pub const DEFAULT_LOG_BYTES: u64 = 256 << 20;
/// The default log's least size over the buffer pool's: two thirds, which the 50-warehouse
/// regime setup (a 383 MB pool, a 256 MiB log, about 10 turnovers of headroom) sits at.
pub const LOG_OVER_POOL: f64 = 2.0 / 3.0;

/// Prints a load's progress every million rows.
#[allow(clippy::needless_pass_by_value)] // the load's callback type passes progress by value
pub fn print_progress(progress: crate::workload::record::LoadProgress) {
    if progress.rows > 0 && progress.rows.is_multiple_of(1_000_000) {
        eprintln!("  {}: {} rows", progress.table, progress.rows);
    }
}

/// What a load wrote: rows and bytes per table, pages, MB, time.
#[must_use]
pub fn load_summary(image: &Image) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for table in &image.load.tables {
        let _ = writeln!(
            out,
            "  {:<28} {:>12} rows {:>10.1} MB of keys+values",
            table.name,
            table.rows,
            (table.key_bytes + table.value_bytes) as f64 / 1e6
        );
    }
    let _ = writeln!(
        out,
        "loaded {} rows in {:.1} s (load {:.1} s): {} pages of {} bytes = {:.1} MB (image \
         capacity {} pages)",
        image.load.rows(),
        image.build_s,
        image.load.elapsed.as_secs_f64(),
        image.loaded_pages,
        image.page_size,
        image.loaded_bytes() as f64 / 1e6,
        image.capacity_pages
    );
    out
}

/// Runs the benchmark with the buffer pool of [`default_factory`].
///
/// # Errors
/// Bad flags, a scheme that cannot be set up, failed runs (after printing what completed),
/// files that cannot be written.
pub fn run(args: &BenchArgs) -> Result<()> {
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    let results = run_to_results(args, &command_line, &mut Continuation::none())?;
    failures_error(&results)
}

/// Everything `bench` does except turning failed schemes into an error: checks, load, runs
/// (taking the runs `continuation` kept), the printed table and the files; returns the results.
///
/// # Errors
/// Bad flags, a failed load, files that cannot be written (failed schemes are in the results).
pub fn run_to_results(
    args: &BenchArgs,
    command_line: &str,
    continuation: &mut Continuation<'_>,
) -> Result<BenchResults> {
    let (mut config, record) = prepare(args, command_line)?;
    if let Some(spec) = record {
        attach_record(args, &mut config, spec)?;
    }
    run_prepared(args, &config, continuation)
}

/// Parses the flags and runs every check that needs no loaded image (the preflight); returns
/// the configuration and the record workload to attach, if any.
///
/// # Errors
/// Bad flags, devices, pool configuration or output paths, named.
pub fn prepare(args: &BenchArgs, command_line: &str) -> Result<(BenchConfig, Option<RecordSpec>)> {
    let mut config = args.to_config(command_line)?;
    super::preflight::drop_unsupported_from_groups(&mut config, &args.schemes);
    let record = args.record_spec()?;
    if let Some(spec) = &record {
        super::limits::check_record_sizes(args, &mut config, spec)?;
    }
    super::preflight::check(
        &config,
        record.is_some(),
        args.json.as_deref(),
        args.out.as_deref(),
    )?;
    Ok((config, record))
}

/// `Err` naming the failed schemes, if any.
///
/// # Errors
/// One or more schemes failed.
pub fn failures_error(results: &BenchResults) -> Result<()> {
    if results.failures.is_empty() {
        return Ok(());
    }
    let failed: Vec<String> = results
        .failures
        .iter()
        .map(|f| format!("scheme `{}`: {}", f.scheme, f.error))
        .collect();
    let completed: usize = results
        .runs
        .iter()
        .map(|run| run.repeats.as_ref().map_or(1, |r| r.completed().count()))
        .sum();
    let unit = if results.header.repeats > 1 {
        "runs"
    } else {
        "schemes"
    };
    Err(Error::Failed(format!(
        "{} of {} {unit} failed: {}",
        failed.len(),
        completed + results.failures.len(),
        failed.join("; ")
    )))
}

/// Runs a prepared configuration (record image attached): the banner, each scheme with its
/// progress and summary line (runs that `continuation` kept from an earlier attempt are taken,
/// not run: [`crate::bench::continuation`]), the printed table, `--json` and `--out`.
///
/// # Errors
/// Files that cannot be written; a configuration the harness refuses.
pub fn run_prepared(
    args: &BenchArgs,
    config: &BenchConfig,
    continuation: &mut Continuation<'_>,
) -> Result<BenchResults> {
    let scale = args.time_scale()?;
    let workload = config.record.as_ref().map_or_else(
        || {
            format!(
                "{} (reads {:.0}%, locality {})",
                config.workload.mix.name(),
                config.workload.read_ratio * 100.0,
                config.workload.skew
            )
        },
        |record| record.spec().describe(),
    );
    let host = if matches!(config.device, DeviceSpec::Emulated { .. }) {
        let chosen = if args.model_cores.is_none() && !device_sets_time_scale(&args.device) {
            let auto = auto_time_scale(&args.device, args.page_size)?;
            format!(
                " (automatic: this host woke sleeping threads {:.0} us late, {:.2} us of device \
                 time, an expected timing error of {:.1}% of the reference wait, {}; \
                 --model-cores sets it)",
                auto.lateness_us,
                auto.lateness_us / scale,
                auto.expected_error * 100.0,
                auto.reference.source
            )
        } else {
            String::new()
        };
        format!(
            "Time scale {scale}{chosen}: this host models {:.0} cores",
            scale * crate::bench::cpu::available_cores() as f64
        )
    } else {
        "A real device: time scale 1, this host is the host".to_string()
    };
    let repeats = if config.repeats > 1 {
        format!(
            " x {} repeats (interleaved, {} runs)",
            config.repeats,
            config.repeats * config.schemes.len()
        )
    } else {
        String::new()
    };
    let memory = crate::bench::memory::MemoryEstimate::for_config(config);
    eprintln!(
        "bench: workload {workload}, {} scheme(s){repeats}, device {}, log {}, {} threads, \
         buffer {} of {} pages of {} bytes, warm-up {}, {} measured per run (device time). \
         {host}; each run takes {} and {}.",
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
        match config.measure_cap {
            Some(cap) => format!(
                "{} to {}, until steady,",
                crate::bench::progress::format_duration(config.duration),
                crate::bench::progress::format_duration(cap)
            ),
            None => crate::bench::progress::format_duration(config.duration),
        },
        crate::bench::estimate::SchemeEstimate::for_config(config).describe(),
        memory.describe(),
    );
    if let Some(warning) = memory.warning(crate::bench::memory::available_bytes()) {
        eprintln!("{warning}");
    }
    let factory = default_factory();
    crate::bench::interrupt::install();
    announce_kept(continuation, config);
    let results = crate::bench::harness::run_bench_with(
        config,
        &*factory,
        continuation,
        &mut |so_far, finished| {
            on_run_finished(args, so_far, finished);
        },
    )?;
    super::out(&report::format_table(&results));
    if config.record.is_some() && !config.check {
        super::out("consistency check: SKIPPED (--no-check)\n");
    }
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
    Ok(results)
}

/// Says how many runs an interrupted earlier attempt kept, if any.
fn announce_kept(continuation: &Continuation<'_>, config: &BenchConfig) {
    if continuation.kept_count() > 0 {
        eprintln!(
            "bench: continuing an interrupted attempt: {} of {} runs kept from it",
            continuation.kept_count(),
            config.repeats * config.schemes.len()
        );
    }
}

/// `, flash aged: GC 0.25 -> 0.52 per write in 3.5 passes from 45k writes` (or `, not
/// settled in ...`).
fn describe_aging(aging: &crate::device::emulated::aging::AgingReport) -> String {
    format!(
        ", flash aged: GC {:.2} -> {:.2} per write in {:.1} passes from {} counted writes{}",
        aging.gc_per_write_first,
        aging.gc_per_write_last,
        aging.passes,
        aging.sampled_writes,
        if aging.settled { "" } else { " (not settled)" }
    )
}

/// After each run: the results so far go to disk at once (results.json grows run by run, so
/// a kill or a failing later scheme loses nothing measured) and a summary line is printed.
fn on_run_finished(
    args: &BenchArgs,
    so_far: &crate::bench::report::BenchResults,
    finished: crate::bench::harness::Finished<'_>,
) {
    if let Some(path) = &args.json
        && let Err(err) = so_far.write_json(path)
    {
        eprintln!("flashbuf: writing {}: {err}", path.display());
    }
    if let Some(dir) = &args.out
        && let Err(err) = so_far.write_json(&dir.join("results.json"))
    {
        eprintln!("flashbuf: writing {}: {err}", dir.display());
    }
    match finished {
        crate::bench::harness::Finished::Run(run) => {
            eprintln!(
                "  done: {} {:.0} {}, read stalls {:.1}%, {}{}{}{}{}, steady {}, {} real{}{}",
                run.scheme,
                run.throughput,
                run.unit,
                run.read_stall_ratio * 100.0,
                run.bound,
                run.host_lateness
                    .as_ref()
                    .map_or_else(String::new, |late| format!(
                        ", wake-ups {:.0} us late (timing error {:.2}%, per operation {:.2}%)",
                        late.mean_us,
                        late.error_share * 100.0,
                        late.op_error_share * 100.0
                    )),
                run.device_aging
                    .as_ref()
                    .map_or_else(String::new, describe_aging),
                run.pool_fill
                    .as_ref()
                    .map_or_else(String::new, |fill| format!("; {}", fill.describe())),
                run.prewarm
                    .as_ref()
                    .map_or_else(String::new, |prewarm| format!("; {}", prewarm.describe())),
                run.steadiness.verdict,
                crate::bench::progress::format_seconds(run.scheme_real_s),
                match run.phases_real_s.describe(run.unit == "tx/s") {
                    phases if phases.is_empty() => String::new(),
                    phases => format!(" ({phases})"),
                },
                run.check.as_ref().map_or_else(String::new, |check| format!(
                    ", check clean ({} rows, {} trees)",
                    check.rows_scanned, check.trees
                ))
            );
            if let Some(tail) = &run.tail_profile {
                eprintln!("        {}", tail.describe());
            }
        }
        crate::bench::harness::Finished::Kept(run) => {
            eprintln!(
                "  kept: {} {:.0} {} from the interrupted attempt (time scale {})",
                run.scheme, run.throughput, run.unit, run.time_scale
            );
        }
        crate::bench::harness::Finished::Failed(failure) => {
            eprintln!("  failed: {}: {}", failure.scheme, failure.error);
        }
    }
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
    fn built_in_pool_configs_parse_into_a_pool_config_and_unknown_names_are_refused() {
        let text = read_pool_config(Path::new("paper:rw")).unwrap();
        let table: toml::Table = text.parse().unwrap();
        assert_eq!(table["io_capacity"].as_integer(), Some(1000));
        assert_eq!(table["io_capacity_max"].as_integer(), Some(2000));
        assert_eq!(table["max_dirty_pages_pct"].as_float(), Some(90.0));
        assert_eq!(table["max_dirty_pages_pct_lwm"].as_float(), Some(10.0));
        let config = crate::engine::config::PoolConfig::from_toml(
            crate::engine::compose::Scheme::Vanilla,
            4096,
            &text,
        )
        .unwrap();
        assert_eq!((config.io_capacity, config.io_capacity_max), (1000, 2000));
        // Every built-in configuration is a valid pool config; the fitted self-tuning one is
        // the paper's with only the scan depth set.
        for (name, _) in BUILT_IN_POOL_CONFIGS {
            let text = read_pool_config(Path::new(&format!("paper:{name}"))).unwrap();
            crate::engine::config::PoolConfig::from_toml(
                crate::engine::compose::Scheme::Vanilla,
                4096,
                &text,
            )
            .unwrap_or_else(|err| panic!("paper:{name}: {err}"));
        }
        let paper: toml::Table = read_pool_config(Path::new("paper:selftuning"))
            .unwrap()
            .parse()
            .unwrap();
        let mut fit: toml::Table = read_pool_config(Path::new("paper:selftuning-fit"))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            fit.remove("lru_scan_depth").and_then(|v| v.as_integer()),
            Some(90)
        );
        assert_eq!(fit, paper);
        let err = read_pool_config(Path::new("paper:nope"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--pool-config") && err.contains("paper:rw"),
            "{err}"
        );
    }

    /// `bench` flags parsed as the CLI parses them (which flags were given included).
    fn bench_args(flags: &[&str]) -> BenchArgs {
        use clap::Parser as _;
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            bench: BenchArgs,
        }
        let line = std::iter::once("bench").chain(flags.iter().copied());
        let matches = <Flags as clap::CommandFactory>::command().get_matches_from(line.clone());
        let mut args = Flags::parse_from(line).bench;
        args.given = Given::from_matches(&matches);
        args
    }

    #[test]
    fn tpcc_defaults_to_the_phases_its_regime_setup_needs_and_keeps_given_ones() {
        let phases = |flags: &[&str]| bench_args(flags).phases().unwrap();
        let auto = |secs| WarmUp::UntilSteady {
            max: Duration::from_secs(secs),
        };
        let secs = Duration::from_secs;
        assert_eq!(phases(&["--workload", "tpcc"]), (secs(10), None, auto(15)));
        assert_eq!(
            phases(&["--workload", "tpcc", "--duration", "3s", "--warmup", "auto"]),
            (secs(3), None, auto(10)),
            "the general defaults, given explicitly, stand"
        );
        assert_eq!(
            phases(&["--workload", "tpcc", "--duration", "2s"]),
            (secs(2), None, auto(15))
        );
        assert_eq!(phases(&["--workload", "ycsb-a"]), (secs(3), None, auto(10)));
        assert_eq!(phases(&[]), (secs(3), None, auto(10)));
        assert_eq!(
            phases(&["--duration", "auto"]),
            (AUTO_MEASURE_MIN, Some(DEFAULT_MEASURE_MAX), auto(10))
        );
        assert_eq!(
            phases(&["--duration", "auto:30s"]),
            (AUTO_MEASURE_MIN, Some(secs(30)), auto(10))
        );
        assert_eq!(
            phases(&["--duration", "auto:2s"]),
            (secs(2), Some(secs(2)), auto(10)),
            "a cap below the minimum is the whole phase"
        );
        for bad in ["auto:", "auto:soon", "auto:0s", "auto:25h", "soon"] {
            let err = bench_args(&["--duration", bad])
                .phases()
                .unwrap_err()
                .to_string();
            assert!(err.contains("--duration"), "{bad}: {err}");
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

    /// The 50-warehouse regime setup keeps 256 MiB; 500 warehouses get two thirds of their
    /// ten times larger pool.
    #[test]
    fn the_default_log_grows_with_the_pool() {
        assert_eq!(
            log_bytes_for_pool(DEFAULT_LOG_BYTES, 23_396, 16_384),
            DEFAULT_LOG_BYTES
        );
        let big = log_bytes_for_pool(DEFAULT_LOG_BYTES, 233_472, 16_384);
        assert!(
            big > 9 * DEFAULT_LOG_BYTES && big <= 233_472 * 16_384 * 2 / 3,
            "{big}"
        );
        assert_eq!(big % crate::bench::LOG_PAGE_SIZE as u64, 0);
    }

    #[test]
    fn buffers_and_ratios() {
        assert_eq!(parse_buffer("10%", 32_768, 32_768, 16384), Ok(3277));
        assert_eq!(parse_buffer("100", 32_768, 32_768, 16384), Ok(100));
        assert_eq!(parse_buffer("16MiB", 32_768, 32_768, 16384), Ok(1024));
        assert_eq!(parse_buffer("0.001%", 100, 100, 16384), Ok(1));
        for bad in ["0%", "101%", "x%", "40000", "1TiB"] {
            assert!(parse_buffer(bad, 32_768, 32_768, 16384).is_err(), "{bad}");
        }
        // A device with room for inserts: a pool may hold the grown database, no more.
        assert_eq!(parse_buffer("200%", 1_000, 2_000, 16384), Ok(2_000));
        assert_eq!(parse_buffer("150%", 1_000, 2_000, 16384), Ok(1_500));
        assert_eq!(parse_buffer("2000", 1_000, 2_000, 16384), Ok(2_000));
        let too_big = parse_buffer("201%", 1_000, 2_000, 16384).unwrap_err();
        assert!(too_big.contains("(0, 200]"), "{too_big}");
        let too_big = parse_buffer("2001", 1_000, 2_000, 16384).unwrap_err();
        assert!(too_big.contains("2000 data pages"), "{too_big}");
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
