//! The benchmark harness (issue 3): run schemes side by side on one device spec and one database
//! image, and report (architecture.md, "flashbuf bench" and results.json contracts).
//!
//! - [`harness`]: per scheme, a fresh device, the same image, warm-up, a measured phase.
//! - [`timeline`]: the per-second throughput sampler. [`cpu`]: process CPU utilisation.
//! - [`report`]: the comparison table and results.json. [`plot`]: SVG plots and report.html.
//!
//! The harness does not know the buffer pool: it builds each scheme's target through a
//! [`TargetFactory`]. **The buffer pool plugs in at [`default_factory`]**, the one place that
//! maps a [`Scheme`] to a pool; tests pass their own factory.
//!
//! Time bases: emulated devices run `time_scale` times slower than real time. Throughput, IOPS,
//! MB/s and latencies in the results are in DEVICE time (throughput x scale, latency / scale);
//! mutex waits and CPU are in real time (they are host-side costs). Every report says so.

pub mod cpu;
pub mod harness;
pub mod plot;
pub mod report;
pub mod timeline;

pub use harness::run_bench;

use std::sync::Arc;
use std::time::Duration;

use crate::device::{DeviceSpec, SharedDevice};
use crate::error::{Error, Result};
use crate::pool::{PoolStats, Scheme};
use crate::workload::PageAccess;
use crate::workload::synthetic::SyntheticConfig;

pub use report::{BenchResults, RunFailure, RunResult};

/// What the harness drives: a page store with pool counters and an orderly shutdown.
pub trait BenchTarget: PageAccess {
    /// A snapshot of the pool's counters (cheap: the harness calls it once a second).
    fn stats(&self) -> PoolStats;
    /// Writes back every dirty page, syncs the device and stops background threads.
    ///
    /// # Errors
    /// Device errors during the final write-back.
    fn shutdown(&self) -> Result<()>;
}

/// Builds one scheme's target over a freshly loaded device: `(scheme, device, frames,
/// pool config TOML text)`.
pub type TargetFactory =
    dyn Fn(Scheme, SharedDevice, usize, Option<&str>) -> Result<Arc<dyn BenchTarget>> + Sync;

/// The factory `flashbuf bench` uses: the buffer pool for `scheme` over `device` with
/// `frames` frames, its preset overridden by the optional TOML configuration.
#[must_use]
pub fn default_factory() -> Box<TargetFactory> {
    Box::new(|scheme, device, frames, config| {
        let config = match config {
            Some(text) => crate::pool::PoolConfig::from_toml(scheme, frames, text)?,
            None => crate::pool::PoolConfig::for_scheme(scheme, frames),
        };
        let pool = crate::pool::BufferPool::open(device, config)?;
        Ok(Arc::new(pool) as Arc<dyn BenchTarget>)
    })
}

impl BenchTarget for crate::pool::BufferPool {
    fn stats(&self) -> PoolStats {
        crate::pool::BufferPool::stats(self)
    }
    fn shutdown(&self) -> Result<()> {
        crate::pool::BufferPool::shutdown(self)
    }
}

/// How the unmeasured warm-up phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarmUp {
    /// A fixed real-time duration.
    For(Duration),
    /// Until the pool reports no free frames (the buffer is full), at most this long.
    UntilFull {
        /// Upper bound on the warm-up.
        max: Duration,
    },
}

impl std::fmt::Display for WarmUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WarmUp::For(duration) => write!(f, "{duration:?}"),
            WarmUp::UntilFull { max } => {
                write!(f, "until the buffer is full (at most {max:?})")
            }
        }
    }
}

/// Everything one `bench` invocation needs.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// The workload (its `db_pages` and `page_size` size the device).
    pub workload: SyntheticConfig,
    /// Schemes, run in this order; ratios are to the first.
    pub schemes: Vec<Scheme>,
    /// The device every scheme gets a fresh copy of.
    pub device: DeviceSpec,
    /// Frames in the pool.
    pub buffer_pages: usize,
    /// Worker threads.
    pub threads: usize,
    /// Measured phase, real time.
    pub duration: Duration,
    /// Warm-up phase.
    pub warmup: WarmUp,
    /// Pool configuration TOML text, passed to the factory.
    pub pool_config: Option<String>,
    /// The command line, for the report header.
    pub command_line: String,
    /// Show a progress bar.
    pub progress: bool,
}

/// Upper bound on worker threads (every loop and queue is bounded).
pub const MAX_THREADS: usize = 4096;

impl BenchConfig {
    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        self.workload.validate()?;
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
        if self.duration.is_zero() {
            return Err(Error::Config(
                "the measured duration must be positive".into(),
            ));
        }
        Ok(())
    }
}
