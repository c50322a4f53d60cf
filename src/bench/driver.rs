//! What the bench's worker threads run (issue 11 item 1): a [`Driver`] per invocation, one
//! [`DriverRun`] per scheme, one [`DriverWorker`] per thread. The harness (`harness.rs`) owns
//! the loop (warm-up, timeline, steadiness, verdicts) and is the same for every driver.
//!
//! Two drivers:
//! - [`SyntheticDriver`]: the ACE page mixes (`ms`, `wis`, `ris`, `mu`) on the target's pages,
//!   exactly as before the abstraction: one operation per call, timed around `execute` only.
//!   Its operation types are `read` and `write`.
//! - [`RecordDriver`]: a record workload (TPC-C, YCSB A-F, LinkBench) on the target's
//!   key-value store ([`BenchTarget::kv`]); one transaction per call, timed around the whole
//!   call (retries included). Each scheme gets a fresh workload object built from the same
//!   [`RecordSpec`], so per-run state (YCSB's insert counter, LinkBench's next node id, TPC-C's
//!   session) starts from the loaded image's state every time. A transaction whose every
//!   attempt conflicted is counted as an abort of the type the worker drew
//!   ([`OpOutcome::aborted_type`]) and the worker goes on; any other error stops the scheme.
//!
//! Consistency ([`DriverRun::check`], item 4): after the measured phase, at quiescence, the
//! record driver runs the workload's own `check` (TPC-C conditions 1-4) and the B+-tree check
//! of every tree; the synthetic driver has nothing to check.
//!
//! No locks here: workers own their generators; the workload objects share only atomics.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::BenchTarget;
use super::image::Image;
use crate::datafile::DataFile;
use crate::device::SharedDevice;
use crate::error::{Error, Result};
use crate::workload::linkbench::{LinkBench, LinkBenchConfig};
use crate::workload::record::{RecordWorker, RecordWorkload};
use crate::workload::synthetic::{OpKind, SyntheticConfig, SyntheticWorkload, Worker};
use crate::workload::tpcc::{Tpcc, TpccConfig};
use crate::workload::ycsb::{KeyFormat, Ycsb, YcsbConfig};

/// What one [`DriverWorker::run_one`] call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpOutcome {
    /// Index into [`Driver::op_types`]; `None`: aborted (every attempt conflicted).
    pub op_type: Option<usize>,
    /// Real time the operation took (the harness converts to device time); `None`: the
    /// harness's loop times it, from the end of this client's previous operation to the end of
    /// this one. A record client runs its operations back to back (a closed loop), so that is
    /// the operation plus the loop's bookkeeping (tens of nanoseconds), for one clock read per
    /// operation instead of two: at a million lookups a second the clock was 4% of the cycles.
    pub latency: Option<Duration>,
    /// Conflicts retried.
    pub retries: usize,
    /// Rolled back by design (TPC-C's 1% of New-Orders).
    pub rolled_back: bool,
    /// When aborted (`op_type` is `None`): the aborted transaction's type, if the worker knows
    /// it ([`crate::workload::record::RecordWorker::last_txn_type`]).
    pub aborted_type: Option<usize>,
}

/// One thread's client.
pub trait DriverWorker {
    /// Runs one operation or transaction.
    ///
    /// # Errors
    /// Errors that must stop the scheme (device, corruption, engine failure).
    fn run_one(&mut self) -> Result<OpOutcome>;
}

/// The result of the consistency check after a scheme's run.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct ConsistencyCheck {
    /// The workload's conditions verified (TPC-C: 3.3.2.1-4).
    pub conditions: Vec<String>,
    /// Rows the workload's check read.
    pub rows_scanned: u64,
    /// Violations of the workload's conditions.
    pub violations: u64,
    /// The first few violations, as text.
    pub violation_samples: Vec<String>,
    /// Trees the B+-tree check walked.
    pub trees: usize,
    /// Structural problems the B+-tree check found (bad checksums included).
    pub tree_problems: u64,
    /// The first few tree problems.
    pub tree_problem_samples: Vec<String>,
    /// Real seconds the check took.
    pub elapsed_s: f64,
}

impl ConsistencyCheck {
    /// Whether everything held.
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.violations == 0 && self.tree_problems == 0
    }
}

/// Samples kept per kind of problem.
const SAMPLES_KEPT: usize = 5;

/// One scheme's use of a driver.
pub trait DriverRun: Sync {
    /// A client for thread `thread` on `target`.
    ///
    /// # Errors
    /// The target lacks what the driver needs (a key-value store).
    fn worker<'a>(
        &'a self,
        target: &'a dyn BenchTarget,
        thread: usize,
    ) -> Result<Box<dyn DriverWorker + 'a>>;

    /// Verifies the workload's invariants and the trees at quiescence; `None` when the driver
    /// has nothing to check.
    ///
    /// # Errors
    /// Engine or device errors while checking.
    fn check(&self, target: &dyn BenchTarget) -> Result<Option<ConsistencyCheck>>;
}

/// What the harness drives.
pub trait Driver: Sync {
    /// The workload's name (`ms`, `tpcc`, `ycsb-a`, ...).
    fn name(&self) -> String;
    /// Names of the operation (transaction) types, indexed by [`OpOutcome::op_type`].
    fn op_types(&self) -> Vec<String>;
    /// Whether the unit is transactions (record workloads) rather than page operations.
    fn is_record(&self) -> bool;
    /// Page size of the data pages.
    fn page_size(&self) -> usize;
    /// Data pages of the database (its capacity: what the data device must hold).
    fn capacity_pages(&self) -> u64;
    /// Pages the loaded database occupies (what `--buffer P%` is a share of).
    fn loaded_pages(&self) -> u64;
    /// Fills a fresh, blank data device (of [`crate::datafile::DATA_START`] +
    /// [`Driver::capacity_pages`] pages) with the database image, not bound to any log.
    ///
    /// # Errors
    /// Device errors; a device that is not blank.
    fn load(&self, device: &SharedDevice) -> Result<()>;
    /// Starts a scheme's run.
    ///
    /// # Errors
    /// Workload construction errors.
    fn start(&self) -> Result<Box<dyn DriverRun + '_>>;
}

/// The ACE page mixes.
#[derive(Debug)]
pub struct SyntheticDriver {
    workload: SyntheticWorkload,
}

impl SyntheticDriver {
    /// A driver for `config`.
    ///
    /// # Errors
    /// An invalid configuration.
    pub fn new(config: SyntheticConfig) -> Result<SyntheticDriver> {
        Ok(SyntheticDriver {
            workload: SyntheticWorkload::new(config)?,
        })
    }
}

impl Driver for SyntheticDriver {
    fn name(&self) -> String {
        self.workload.config().mix.name().to_string()
    }
    fn op_types(&self) -> Vec<String> {
        vec!["read".into(), "write".into()]
    }
    fn is_record(&self) -> bool {
        false
    }
    fn page_size(&self) -> usize {
        self.workload.config().page_size
    }
    fn capacity_pages(&self) -> u64 {
        self.workload.config().db_pages
    }
    fn loaded_pages(&self) -> u64 {
        self.workload.config().db_pages
    }
    fn load(&self, device: &SharedDevice) -> Result<()> {
        let db_pages = self.workload.config().db_pages;
        let datafile = DataFile::create(Arc::clone(device), 0, Some(db_pages))?;
        self.workload.load(&datafile.data_device()?)?;
        datafile.raise_high_water_mark(db_pages)
    }
    fn start(&self) -> Result<Box<dyn DriverRun + '_>> {
        Ok(Box::new(SyntheticRun {
            workload: &self.workload,
        }))
    }
}

struct SyntheticRun<'w> {
    workload: &'w SyntheticWorkload,
}

impl DriverRun for SyntheticRun<'_> {
    fn worker<'a>(
        &'a self,
        target: &'a dyn BenchTarget,
        thread: usize,
    ) -> Result<Box<dyn DriverWorker + 'a>> {
        Ok(Box::new(SyntheticWorker {
            generator: self.workload.worker(thread),
            target,
        }))
    }
    fn check(&self, _target: &dyn BenchTarget) -> Result<Option<ConsistencyCheck>> {
        Ok(None)
    }
}

struct SyntheticWorker<'a> {
    generator: Worker<'a>,
    target: &'a dyn BenchTarget,
}

impl DriverWorker for SyntheticWorker<'_> {
    fn run_one(&mut self) -> Result<OpOutcome> {
        let op = self.generator.next_op();
        // Timed around `execute` only, as before the driver abstraction.
        let begin = Instant::now();
        self.generator.execute(self.target, op)?;
        let latency = Some(begin.elapsed());
        Ok(OpOutcome {
            op_type: Some(match op.kind {
                OpKind::Read => 0,
                OpKind::Write => 1,
            }),
            latency,
            retries: 0,
            rolled_back: false,
            aborted_type: None,
        })
    }
}

/// A record workload and its parameters (what determines the loaded image).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordSpec {
    /// TPC-C.
    Tpcc(TpccConfig),
    /// YCSB A-F.
    Ycsb(YcsbConfig),
    /// LinkBench.
    LinkBench(LinkBenchConfig),
}

impl RecordSpec {
    /// A fresh workload object.
    ///
    /// # Errors
    /// An invalid configuration.
    pub fn build(&self) -> Result<Box<dyn RecordWorkload>> {
        Ok(match self {
            RecordSpec::Tpcc(config) => Box::new(Tpcc::new(config.clone())?),
            RecordSpec::Ycsb(config) => Box::new(Ycsb::new(config.clone())?),
            RecordSpec::LinkBench(config) => Box::new(LinkBench::new(config.clone())?),
        })
    }

    /// The workload's name.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            RecordSpec::Tpcc(_) => "tpcc".into(),
            RecordSpec::Ycsb(config) => config.name.clone(),
            RecordSpec::LinkBench(_) => "linkbench".into(),
        }
    }

    /// The workload and the parameters that determine the loaded database (not the run's mix
    /// or client binding): two specs with the same key load the same bytes.
    #[must_use]
    pub fn load_key(&self) -> String {
        match self {
            RecordSpec::Tpcc(c) => format!(
                "tpcc warehouses={} items={} customers_per_district={} seed={}",
                c.warehouses, c.scale.items, c.scale.customers_per_district, c.seed
            ),
            // The key format is named only when it is not YCSB's, so that images loaded before
            // it existed keep their key.
            RecordSpec::Ycsb(c) => format!(
                "ycsb records={} table={} field_count={} field_length={} key_prefix={} \
                 ordered={} zero_padding={}{} seed={}",
                c.record_count,
                c.table,
                c.field_count,
                c.field_length,
                c.key_prefix,
                c.ordered_inserts,
                c.zero_padding,
                match c.key_format {
                    KeyFormat::Text => String::new(),
                    KeyFormat::Binary => format!(" key_format={}", KeyFormat::Binary.name()),
                },
                c.seed
            ),
            RecordSpec::LinkBench(c) => format!(
                "linkbench nodes={} start_id={} link_types={} seed={}",
                c.nodes, c.start_id, c.link_type_count, c.seed
            ),
        }
    }

    /// A one-line description of the parameters.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            RecordSpec::Tpcc(c) => format!(
                "tpcc: {} warehouses, mix {}, {} clients{}",
                c.warehouses,
                c.mix,
                if c.bind_warehouse {
                    "bound to warehouses"
                } else {
                    "unbound"
                },
                if c.scale.is_spec() {
                    String::new()
                } else {
                    format!(
                        ", REDUCED scale ({} items, {} customers/district: not the \
                         specification)",
                        c.scale.items, c.scale.customers_per_district
                    )
                }
            ),
            RecordSpec::Ycsb(c) => format!(
                "{}: {} records, {} fields of {} bytes{}",
                c.name,
                c.record_count,
                c.field_count,
                c.field_length,
                match c.key_format {
                    KeyFormat::Text => "",
                    KeyFormat::Binary => ", 8-byte binary keys",
                }
            ),
            RecordSpec::LinkBench(c) => format!("linkbench: {} nodes", c.nodes),
        }
    }
}

/// A record workload over a loaded image.
#[derive(Debug)]
pub struct RecordDriver {
    spec: RecordSpec,
    image: Arc<Image>,
    types: Vec<String>,
}

impl RecordDriver {
    /// A driver running `spec` on copies of `image` (which `spec` loaded).
    ///
    /// # Errors
    /// An invalid configuration.
    pub fn new(spec: RecordSpec, image: Arc<Image>) -> Result<RecordDriver> {
        let types = spec
            .build()?
            .txn_types()
            .iter()
            .map(ToString::to_string)
            .collect();
        Ok(RecordDriver { spec, image, types })
    }

    /// The workload's parameters.
    #[must_use]
    pub fn spec(&self) -> &RecordSpec {
        &self.spec
    }

    /// The image every scheme starts from.
    #[must_use]
    pub fn image(&self) -> &Image {
        &self.image
    }
}

impl Driver for RecordDriver {
    fn name(&self) -> String {
        self.spec.name()
    }
    fn op_types(&self) -> Vec<String> {
        self.types.clone()
    }
    fn is_record(&self) -> bool {
        true
    }
    fn page_size(&self) -> usize {
        self.image.page_size
    }
    fn capacity_pages(&self) -> u64 {
        self.image.capacity_pages
    }
    fn loaded_pages(&self) -> u64 {
        self.image.loaded_pages
    }
    fn load(&self, device: &SharedDevice) -> Result<()> {
        self.image.copy_to(device)
    }
    fn start(&self) -> Result<Box<dyn DriverRun + '_>> {
        Ok(Box::new(RecordRun {
            workload: self.spec.build()?,
        }))
    }
}

struct RecordRun {
    workload: Box<dyn RecordWorkload>,
}

impl DriverRun for RecordRun {
    fn worker<'a>(
        &'a self,
        target: &'a dyn BenchTarget,
        thread: usize,
    ) -> Result<Box<dyn DriverWorker + 'a>> {
        if target.kv().is_none() {
            return Err(Error::Config(
                "a record workload needs a target with a key-value store".into(),
            ));
        }
        Ok(Box::new(RecordClient {
            worker: self.workload.worker(thread),
            target,
        }))
    }

    fn check(&self, target: &dyn BenchTarget) -> Result<Option<ConsistencyCheck>> {
        let Some(kv) = target.kv() else {
            return Ok(None);
        };
        let began = Instant::now();
        let report = self.workload.check(kv)?;
        let mut out = ConsistencyCheck {
            conditions: report.conditions.clone(),
            rows_scanned: report.rows_scanned,
            violations: report.violations_total,
            violation_samples: report
                .violations
                .iter()
                .take(SAMPLES_KEPT)
                .map(|v| format!("{} at {}: {}", v.condition, v.location, v.detail))
                .collect(),
            ..ConsistencyCheck::default()
        };
        if let Some(trees) = target.tree_check() {
            let trees = trees?;
            out.trees = trees.trees.len();
            out.tree_problems = trees.problems.len() as u64 + trees.bad_checksums;
            out.tree_problem_samples = trees.problems.iter().take(SAMPLES_KEPT).cloned().collect();
        }
        out.elapsed_s = began.elapsed().as_secs_f64();
        Ok(Some(out))
    }
}

struct RecordClient<'a> {
    worker: Box<dyn RecordWorker>,
    target: &'a dyn BenchTarget,
}

impl DriverWorker for RecordClient<'_> {
    fn run_one(&mut self) -> Result<OpOutcome> {
        let kv = self
            .target
            .kv()
            .ok_or_else(|| Error::Config("the target has no key-value store".into()))?;
        match self.worker.run_one(kv) {
            Ok(outcome) => Ok(OpOutcome {
                op_type: Some(outcome.txn_type),
                latency: None,
                retries: outcome.retries,
                rolled_back: outcome.rolled_back,
                aborted_type: None,
            }),
            Err(err) if err.is_retryable() => Ok(OpOutcome {
                op_type: None,
                latency: None,
                retries: 0,
                rolled_back: false,
                aborted_type: self.worker.last_txn_type(),
            }),
            Err(err) => Err(err),
        }
    }
}
