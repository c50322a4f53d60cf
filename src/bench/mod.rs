//! The benchmark harness (issues 3 and 9): run schemes side by side on one device spec and one
//! database image, and report (docs/architecture.md, "What users script against": `flashbuf
//! bench` and results.json).
//!
//! - [`harness`]: per scheme, a fresh data device loaded with the same image (the data-file
//!   layout: header, doublewrite area, data pages), a fresh log device, warm-up until the pool
//!   is full and throughput is steady, a measured phase of a given device time.
//! - [`target`]: what each scheme runs on: a [`crate::db::Database`] (updates are logged,
//!   committed transactions) or, with `--no-log`, the bare pool over the same layout.
//! - [`timeline`]: the 100 ms device-time sampler and steadiness. [`cpu`]: CPU use and the
//!   CPU-/device-bound verdict. [`capacity`]: the device's peak bandwidth at a run's mix.
//!   [`bytes`]: bytes read and written per operation, by kind.
//! - [`report`]: the comparison table and results.json. [`plot`]: SVG plots and report.html.
//! - [`repeat`]: `--repeat N`, each scheme's repeats combined (means, every run kept, a
//!   summary); [`stats`]: the means and 95% confidence intervals. [`cycles`]: the whole
//!   background-writer cycles a measured phase held. [`lateness`]: how late the host wakes
//!   sleeping threads, the emulated devices' timing error.
//!   [`paper_scale`]: the LRU-C paper's TPC-C setup shrunk to the image (pool defaults).
//!   [`progress`]: the progress line (scheme i of N, phase, ETA of the whole command).
//!   [`estimate`]: the real time of a scheme, estimated before the run.
//!
//! The harness builds each scheme's target through a [`TargetFactory`]; [`default_factory`]
//! is the one `flashbuf bench` uses; tests pass their own.
//!
//! Time bases: emulated devices run `time_scale` times slower than real time. Durations,
//! throughput, IOPS, MB/s and latencies are in DEVICE time; mutex waits and CPU are in real
//! time (host-side costs). The model host a run stands for is `cores x time_scale` cores (the
//! device sees the host's work that many times faster). By default the CLI chooses the time
//! scale from how late this host wakes sleeping threads ([`lateness`]): the runs stay
//! device-bound at a few percent CPU even at low scales, so the limit is the emulated devices'
//! timing error, not the model host's size.

pub mod bytes;
pub mod capacity;
pub mod chart;
pub mod continuation;
pub mod cpu;
pub mod cycles;
pub mod driver;
pub mod estimate;
pub mod fill;
pub mod harness;
pub mod image;
pub mod interrupt;
pub mod lateness;
pub mod memory;
pub mod paper_scale;
pub mod plot;
pub mod prewarm;
pub mod progress;
pub mod regime;
pub mod repeat;
pub mod report;
pub mod stats;
pub mod table;
pub mod target;
pub mod timeline;

pub use harness::run_bench;

use std::sync::Arc;
use std::time::Duration;

use crate::datafile::DataFile;
use crate::db::{Database, DatabaseConfig};
use crate::device::{DeviceSpec, SharedDevice};
use crate::engine::Composition;
use crate::error::{Error, Result};
use crate::pool::PoolStats;
use crate::wal::{WalConfig, WalStats};
use crate::workload::PageAccess;
use crate::workload::synthetic::SyntheticConfig;

pub use report::{BenchResults, RunFailure, RunResult};

use progress::format_duration;

/// What the harness drives: a page store with pool counters and an orderly shutdown.
pub trait BenchTarget: PageAccess {
    /// A snapshot of the pool's counters (cheap: the harness calls it every timeline step).
    fn stats(&self) -> PoolStats;
    /// Profiles the pool's eviction end once against a first tail scan of `scan_depth` pages
    /// (`BufferPool::sample_tail`); the harness calls it every timeline step of the measured
    /// phase, within a budget of real time (`harness::TailSampler`). A target without a pool
    /// does nothing.
    fn sample_tail(&self, _scan_depth: usize) {}
    /// The redo log's counters, when the target has a log.
    fn log_stats(&self) -> Option<WalStats> {
        None
    }
    /// Writes back every dirty page and syncs (a checkpoint when there is a log).
    ///
    /// # Errors
    /// Device errors during the final write-back.
    fn shutdown(&self) -> Result<()>;
    /// Stops the target without writing back, when nothing will read its device again (a run
    /// without the consistency check: the device is dropped with the target). The default
    /// writes back ([`BenchTarget::shutdown`]).
    ///
    /// # Errors
    /// Those of the write-back, where the target has no cheaper way.
    fn discard(&self) -> Result<()> {
        self.shutdown()
    }
    /// The key-value store record workloads run on (`None`: a page-only target).
    fn kv(&self) -> Option<&dyn crate::kv::KvEngine> {
        None
    }
    /// The B+-tree check of every tree, at quiescence (`None`: the target has no trees).
    fn tree_check(&self) -> Option<Result<crate::btree::check::CheckReport>> {
        None
    }
    /// The record-lock manager's counters (`None`: the target takes no record locks).
    fn lock_stats(&self) -> Option<crate::txn::lock::LockStats> {
        None
    }
}

/// The redo log of a run (issue 9 item 4).
#[derive(Debug, Clone)]
pub struct LogSetup {
    /// The log's own device (the papers' separate log drive).
    pub device: DeviceSpec,
    /// Bytes of the log.
    pub size: u64,
    /// InnoDB's `innodb_flush_log_at_trx_commit` (the papers' configuration: 0).
    pub flush_log_at_trx_commit: u8,
}

/// The page size of log devices.
pub const LOG_PAGE_SIZE: usize = 4096;

/// What a factory builds a target from: the data device (whole, with the data-file layout and
/// the image loaded, not yet bound to a log), the log device if any, and the pool settings.
#[derive(Debug)]
pub struct TargetSpec {
    /// The data device.
    pub data: SharedDevice,
    /// The log device and its settings (`None`: `--no-log`).
    pub log: Option<(SharedDevice, LogSetup)>,
    /// Frames of the pool.
    pub frames: usize,
    /// Pool configuration TOML text.
    pub pool_config: Option<String>,
    /// Build a key-value store (record workloads) rather than a page target.
    pub records: bool,
}

impl TargetSpec {
    /// The data pages of the loaded image as a device of their own.
    ///
    /// # Errors
    /// The data device does not hold a data file.
    pub fn data_region(&self) -> Result<SharedDevice> {
        DataFile::open(Arc::clone(&self.data))?.data_device()
    }
}

/// Builds one scheme's target.
pub type TargetFactory = dyn Fn(&Composition, &TargetSpec) -> Result<Arc<dyn BenchTarget>> + Sync;

/// The pool configuration for `scheme` with the spec's frames and overrides.
///
/// # Errors
/// A bad TOML override.
pub fn pool_config(scheme: &Composition, spec: &TargetSpec) -> Result<crate::pool::PoolConfig> {
    match &spec.pool_config {
        Some(text) => crate::pool::PoolConfig::from_toml(scheme.clone(), spec.frames, text),
        None => Ok(crate::pool::PoolConfig::for_scheme(
            scheme.clone(),
            spec.frames,
        )),
    }
}

/// The factory `flashbuf bench` uses: a database on the data and log devices, or the bare
/// pool over the data file with `--no-log`.
#[must_use]
pub fn default_factory() -> Box<TargetFactory> {
    Box::new(|scheme, spec| {
        let pool = pool_config(scheme, spec)?;
        if spec.records && spec.log.is_none() {
            return Err(Error::Config(
                "record workloads run on the transactional store, which needs the redo log: \
                 drop --no-log"
                    .into(),
            ));
        }
        let Some((log, setup)) = &spec.log else {
            let datafile = DataFile::open(Arc::clone(&spec.data))?;
            let pool = target::open_unlogged_pool(&datafile, &pool)?;
            return Ok(Arc::new(pool) as Arc<dyn BenchTarget>);
        };
        if spec.records {
            return open_kv_target(spec, pool, log, setup);
        }
        let config = database_config(pool, setup);
        let (db, _) = Database::open(Arc::clone(&spec.data), Arc::clone(log), &config)?;
        Ok(Arc::new(target::DatabaseTarget::new(db)) as Arc<dyn BenchTarget>)
    })
}

/// The database settings of a bench run: the scheme's pool, the run's log.
fn database_config(pool: crate::pool::PoolConfig, setup: &LogSetup) -> DatabaseConfig {
    DatabaseConfig {
        pool,
        wal: WalConfig {
            log_size: setup.size,
            page_size: LOG_PAGE_SIZE,
            buffer_size: (setup.size / 16).clamp(64 << 10, 16 << 20) as usize / LOG_PAGE_SIZE
                * LOG_PAGE_SIZE,
            full_timeout: Duration::from_mins(1),
        },
        flush_log_at_trx_commit: setup.flush_log_at_trx_commit,
        ..DatabaseConfig::default()
    }
}

/// How long a record workload's lock request waits before it conflicts.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(2);

fn open_kv_target(
    spec: &TargetSpec,
    pool: crate::pool::PoolConfig,
    log: &SharedDevice,
    setup: &LogSetup,
) -> Result<Arc<dyn BenchTarget>> {
    let config = crate::txn::KvConfig {
        database: database_config(pool, setup),
        lock_timeout: LOCK_TIMEOUT,
    };
    let (kv, _) = crate::txn::KvStore::open(Arc::clone(&spec.data), Arc::clone(log), &config)?;
    Ok(Arc::new(target::KvTarget::new(kv)) as Arc<dyn BenchTarget>)
}

impl BenchTarget for crate::pool::BufferPool {
    fn stats(&self) -> PoolStats {
        crate::pool::BufferPool::stats(self)
    }
    fn sample_tail(&self, scan_depth: usize) {
        crate::pool::BufferPool::sample_tail(self, scan_depth);
    }
    fn shutdown(&self) -> Result<()> {
        crate::pool::BufferPool::shutdown(self)
    }
}

/// How the unmeasured warm-up phase ends (device time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarmUp {
    /// A fixed device-time duration.
    For(Duration),
    /// Until the pool is full (no free frame, or as many misses as frames) and throughput is
    /// steady (the last three windows of a quarter of the cap, 0.5-1 s of device time and whole
    /// cycles of a periodic throughput, within 10% of their mean), at most this long.
    UntilSteady {
        /// Upper bound on the warm-up, device time.
        max: Duration,
    },
}

impl std::fmt::Display for WarmUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WarmUp::For(duration) if duration.is_zero() => write!(f, "none"),
            WarmUp::For(duration) => write!(f, "{} (device time)", format_duration(*duration)),
            WarmUp::UntilSteady { max } => {
                write!(
                    f,
                    "until the buffer is full, throughput steady, the flush rate, the device's GC and the dirty pages settled (at most {} device time)",
                    format_duration(*max)
                )
            }
        }
    }
}

/// Everything one `bench` invocation needs.
#[derive(Debug, Clone)]
#[allow(clippy::struct_excessive_bools)] // independent switches of the command line
pub struct BenchConfig {
    /// The workload (its `db_pages` and `page_size` size the device).
    pub workload: SyntheticConfig,
    /// Schemes, run in this order; ratios are to the first.
    pub schemes: Vec<Composition>,
    /// The data device every scheme gets a fresh copy of.
    pub device: DeviceSpec,
    /// The redo log (`None`: `--no-log`).
    pub log: Option<LogSetup>,
    /// Frames in the pool.
    pub buffer_pages: usize,
    /// Worker threads.
    pub threads: usize,
    /// Measured phase, device time (with `measure_cap`, its minimum).
    pub duration: Duration,
    /// `Some(max)`: the measured phase goes on past `duration` until it is steady with a
    /// drift interval no wider than the limit ([`timeline::is_steady_enough_to_stop`]), for
    /// at most `max` of device time (`--duration auto`). `None`: exactly `duration`.
    pub measure_cap: Option<Duration>,
    /// Warm-up phase.
    pub warmup: WarmUp,
    /// Fill the pool before the warm-up with the devices serving untimed (`--fill-pool`,
    /// [`fill`]); refused on devices whose time is the host's.
    pub fill_pool: bool,
    /// Read the loaded database into the pool, in page order, before the workers start
    /// (`--prewarm`, [`prewarm`]: InnoDB's buffer-pool load at startup).
    pub prewarm: bool,
    /// Timeline step, device time.
    pub step: Duration,
    /// Pool configuration TOML text, passed to the factory.
    pub pool_config: Option<String>,
    /// The command line, for the report header.
    pub command_line: String,
    /// Show progress.
    pub progress: bool,
    /// A record workload (TPC-C, YCSB, LinkBench) over its loaded image; when set, it is what
    /// the workers run and `workload` only carries the page size and the loaded pages.
    pub record: Option<Arc<driver::RecordDriver>>,
    /// Run the workload's consistency check and the tree check after each scheme's measured
    /// phase (record workloads; `--no-check` turns it off).
    pub check: bool,
    /// Runs of each scheme (`--repeat`, at least 1), interleaved ([`harness::run_bench_with`]).
    pub repeats: usize,
    /// The published regime each run's `regime` is set beside (`--regime-reference`).
    pub regime_reference: regime::Reference,
}

/// Upper bound on worker threads (every loop and queue is bounded).
pub const MAX_THREADS: usize = 4096;
/// Upper bound on a phase, device time (a typo of `99999h` must not hang a run).
pub const MAX_PHASE: Duration = Duration::from_hours(24);

impl BenchConfig {
    /// The longest the measured phase can run, device time: the cap, else `duration`.
    #[must_use]
    pub fn measure_max(&self) -> Duration {
        self.measure_cap.unwrap_or(self.duration).max(self.duration)
    }

    /// The `file:` paths of the data and log devices: bench creates them for each scheme and
    /// deletes them after it (a real device gets a fresh file per scheme, like an emulated
    /// one gets a fresh model).
    #[must_use]
    pub fn scratch_files(&self) -> Vec<std::path::PathBuf> {
        let log = self.log.as_ref().map(|log| &log.device);
        [Some(&self.device), log]
            .into_iter()
            .flatten()
            .filter_map(|spec| match spec {
                DeviceSpec::File(path) => Some(path.clone()),
                _ => None,
            })
            .collect()
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        self.workload.validate()?;
        if let (Some(log), DeviceSpec::File(data)) = (&self.log, &self.device)
            && log.device == self.device
        {
            return Err(Error::Config(format!(
                "the data and the log device are the same file ({}): give the log its own path",
                data.display()
            )));
        }
        if self.schemes.is_empty() {
            return Err(Error::Config("no scheme to run".into()));
        }
        if self.threads == 0 || self.threads > MAX_THREADS {
            return Err(Error::Config(format!(
                "threads must be between 1 and {MAX_THREADS}, not {}",
                self.threads
            )));
        }
        if self.buffer_pages == 0 {
            return Err(Error::Config("the buffer needs at least one page".into()));
        }
        if self.duration.is_zero() || self.duration > MAX_PHASE {
            return Err(Error::Config(format!(
                "the measured duration must be positive and at most {MAX_PHASE:?} of device time"
            )));
        }
        if let Some(cap) = self.measure_cap
            && (cap < self.duration || cap > MAX_PHASE)
        {
            return Err(Error::Config(format!(
                "the measured phase's cap ({cap:?}) must be at least its minimum ({:?}) and at \
                 most {MAX_PHASE:?} of device time",
                self.duration
            )));
        }
        let warmup = match self.warmup {
            WarmUp::For(d) | WarmUp::UntilSteady { max: d } => d,
        };
        if warmup > MAX_PHASE {
            return Err(Error::Config(format!(
                "the warm-up must be at most {MAX_PHASE:?} of device time"
            )));
        }
        if self.repeats == 0 || self.repeats > repeat::MAX_REPEATS {
            return Err(Error::Config(format!(
                "repeats must be between 1 and {}, not {}",
                repeat::MAX_REPEATS,
                self.repeats
            )));
        }
        if self.step.is_zero() {
            return Err(Error::Config("the timeline step must be positive".into()));
        }
        if self.fill_pool
            && let Some(spec) = [Some(&self.device), self.log.as_ref().map(|log| &log.device)]
                .into_iter()
                .flatten()
                .find(|spec| matches!(spec, DeviceSpec::File(_)))
        {
            return Err(Error::Config(format!(
                "--fill-pool fills the pool with the devices serving untimed, and {spec} is a \
                 real device whose time is the host's: use it with emulated devices (emu:...), \
                 or warm a real device up with --warmup"
            )));
        }
        for path in self.scratch_files() {
            if path.exists() {
                return Err(Error::Config(format!(
                    "file:{} exists: bench creates a fresh data and log file for every scheme at \
                     the paths given and deletes them afterwards, so it never overwrites a file \
                     it did not create; remove it or give a new path",
                    path.display()
                )));
            }
        }
        if let Some(log) = &self.log
            && log.flush_log_at_trx_commit > 2
        {
            return Err(Error::Config(format!(
                "flush_log_at_trx_commit = {} is not 0, 1 or 2",
                log.flush_log_at_trx_commit
            )));
        }
        Ok(())
    }
}
