//! The record-level workload interface (TPC-C, YCSB, LinkBench) and the helpers they share.
//!
//! A [`RecordWorkload`] builds its tables in a [`KvEngine`] (`load`, through
//! [`KvEngine::bulk_load`], so every table is generated in key order), hands out one seeded
//! [`RecordWorker`] per client thread, and verifies its own invariants afterwards (`check`).
//! A worker runs one transaction per [`RecordWorker::run_one`] call, retrying conflicts up to
//! a bound, and says which transaction type it ran: the bench times each call and keeps
//! latencies per type.
//!
//! Shared helpers: [`run_txn`] (the bounded retry loop, with rollback by design),
//! [`RowWriter`] / [`RowReader`] (the fixed binary row layouts; all integers big-endian),
//! [`TableLoader`] (counts rows and bytes of a bulk load and reports progress),
//! [`seeded_rng`] (per-thread and per-table random streams from one seed).
//!
//! Invariants: keys are big-endian encodings so bytewise order is the logical order; a
//! malformed stored row is an [`Error::InvalidArgument`] naming the table, never a panic.
//! No locks here: concurrency control is the engine's.

use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::error::{Error, Result};
use crate::kv::{KvEngine, KvTxn, TreeId};

/// Progress of a load, reported every [`PROGRESS_ROWS`] rows and at the end of each table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadProgress {
    /// The table being loaded.
    pub table: String,
    /// Rows loaded into it so far.
    pub rows: u64,
    /// Tables finished before this one.
    pub tables_done: usize,
    /// Tables the load will fill.
    pub tables_total: usize,
}

/// Rows between two progress reports.
pub const PROGRESS_ROWS: u64 = 100_000;

/// What one table's load wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct TableLoad {
    /// Tree name in the engine.
    pub name: String,
    /// Rows (key-value pairs).
    pub rows: u64,
    /// Sum of key lengths.
    pub key_bytes: u64,
    /// Sum of value lengths.
    pub value_bytes: u64,
}

/// What a whole load wrote.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LoadReport {
    /// One entry per tree, in load order.
    pub tables: Vec<TableLoad>,
    /// Wall-clock time of the load.
    pub elapsed: Duration,
}

impl LoadReport {
    /// Rows over all tables.
    #[must_use]
    pub fn rows(&self) -> u64 {
        self.tables.iter().map(|t| t.rows).sum()
    }

    /// Key plus value bytes over all tables.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.tables
            .iter()
            .map(|t| t.key_bytes + t.value_bytes)
            .sum()
    }

    /// The entry of table `name`, if it was loaded.
    #[must_use]
    pub fn table(&self, name: &str) -> Option<&TableLoad> {
        self.tables.iter().find(|t| t.name == name)
    }
}

/// One violated invariant, as `check` found it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// The condition, e.g. `"3.3.2.1 W_YTD = sum(D_YTD)"`.
    pub condition: String,
    /// Where, e.g. `"warehouse 1, district 3"`.
    pub location: String,
    /// The values that disagree.
    pub detail: String,
}

/// Most violations a report keeps (the rest are only counted).
pub const VIOLATIONS_KEPT_MAX: usize = 1000;

/// The result of [`RecordWorkload::check`].
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CheckReport {
    /// The conditions verified.
    pub conditions: Vec<String>,
    /// Rows read to verify them (the cost of the check).
    pub rows_scanned: u64,
    /// The first [`VIOLATIONS_KEPT_MAX`] violations found.
    pub violations: Vec<Violation>,
    /// All violations found, kept or not.
    pub violations_total: u64,
}

impl CheckReport {
    /// Whether every condition held.
    #[must_use]
    pub fn is_consistent(&self) -> bool {
        self.violations_total == 0
    }

    /// Records a violation (kept while fewer than [`VIOLATIONS_KEPT_MAX`]).
    pub fn violate(
        &mut self,
        condition: impl Into<String>,
        location: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.violations_total += 1;
        if self.violations.len() < VIOLATIONS_KEPT_MAX {
            self.violations.push(Violation {
                condition: condition.into(),
                location: location.into(),
                detail: detail.into(),
            });
        }
    }

    /// Whether some violation names `condition` (a prefix match, e.g. `"3.3.2.1"`).
    #[must_use]
    pub fn violates(&self, condition: &str) -> bool {
        self.violations
            .iter()
            .any(|v| v.condition.starts_with(condition))
    }
}

impl std::fmt::Display for CheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_consistent() {
            return write!(
                f,
                "consistent: {} conditions, {} rows read",
                self.conditions.len(),
                self.rows_scanned
            );
        }
        writeln!(f, "{} violations:", self.violations_total)?;
        for v in &self.violations {
            writeln!(f, "  {} at {}: {}", v.condition, v.location, v.detail)?;
        }
        Ok(())
    }
}

/// What one [`RecordWorker::run_one`] call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnOutcome {
    /// Index into [`RecordWorkload::txn_types`].
    pub txn_type: usize,
    /// Conflicts retried before it finished.
    pub retries: usize,
    /// Rolled back by design (TPC-C's 1% of New-Orders on an unused item), not by conflict.
    pub rolled_back: bool,
}

/// A record-level workload: its tables, its clients and its invariants.
pub trait RecordWorkload: Send + Sync {
    /// Short name (`tpcc`, `ycsb-a`, `linkbench`).
    fn name(&self) -> &str;

    /// Names of the transaction types, indexed by [`TxnOutcome::txn_type`].
    fn txn_types(&self) -> &[&'static str];

    /// Creates and fills the tables with [`KvEngine::bulk_load`] (into empty trees).
    ///
    /// # Errors
    /// Non-empty trees, engine errors.
    fn load(
        &self,
        engine: &dyn KvEngine,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<LoadReport>;

    /// A client for thread `thread`, seeded from the workload's seed and `thread`.
    fn worker(&self, thread: usize) -> Box<dyn RecordWorker>;

    /// Verifies the workload's invariants. Reads in many short transactions: run it at
    /// quiescence (no workers running).
    ///
    /// # Errors
    /// Engine errors, malformed rows (a malformed row is an error, not a violation).
    fn check(&self, engine: &dyn KvEngine) -> Result<CheckReport>;
}

/// One client of a [`RecordWorkload`].
pub trait RecordWorker: Send {
    /// Runs one transaction, retrying conflicts (bounded), and says what it was.
    ///
    /// # Errors
    /// Engine errors; [`Error::Conflict`] when every attempt conflicted.
    fn run_one(&mut self, engine: &dyn KvEngine) -> Result<TxnOutcome>;

    /// The type (index into [`RecordWorkload::txn_types`]) the last [`RecordWorker::run_one`]
    /// drew, also when it failed: the bench attributes an abort (every attempt conflicted) to
    /// its type with it. `None`: not known (no call yet, or a worker that does not say).
    fn last_txn_type(&self) -> Option<usize> {
        None
    }
}

pub use crate::kv::TxnEnd;

/// Runs `body` in a transaction, up to `attempts` times while it (or its commit) conflicts.
/// Returns the body's value, how the transaction ended and the number of retries.
///
/// # Errors
/// The body's, the commit's or the abort's non-retryable error, or the last conflict when
/// every attempt conflicted.
pub fn run_txn<T>(
    engine: &dyn KvEngine,
    attempts: usize,
    mut body: impl FnMut(&mut dyn KvTxn) -> Result<(T, TxnEnd)>,
) -> Result<(T, TxnEnd, usize)> {
    let mut last = None;
    // Bound: `attempts` (at least one).
    for retry in 0..attempts.max(1) {
        let mut value = None;
        let outcome = engine.transact(&mut |txn| {
            let (body_value, end) = body(txn)?;
            value = Some(body_value);
            Ok(end)
        });
        match outcome {
            Ok(end) => {
                return match value {
                    Some(value) => Ok((value, end, retry)),
                    None => Err(Error::Failed(
                        "the engine ended a transaction without running its body".into(),
                    )),
                };
            }
            Err(err) if err.is_retryable() => last = Some(err),
            Err(err) => return Err(err),
        }
    }
    Err(last.unwrap_or_else(|| Error::Conflict("no attempt made".into())))
}

/// A random stream derived from `seed` and a list of labels (thread, table, warehouse...).
/// Different label lists give independent-looking streams; the same list gives the same one.
#[must_use]
pub fn seeded_rng(seed: u64, labels: &[u64]) -> SmallRng {
    let mut state = splitmix64(seed ^ 0x6a09_e667_f3bc_c908);
    for &label in labels {
        state = splitmix64(state ^ label.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
    SmallRng::seed_from_u64(state)
}

/// SplitMix64's finalizer: a fast, well-mixing bijection on `u64`.
#[must_use]
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Builds a row value: fixed-width big-endian integers and length-prefixed strings.
#[derive(Debug, Default)]
pub struct RowWriter {
    bytes: Vec<u8>,
}

impl RowWriter {
    /// An empty row with room for `capacity` bytes.
    #[must_use]
    pub fn with_capacity(capacity: usize) -> RowWriter {
        RowWriter {
            bytes: Vec::with_capacity(capacity),
        }
    }

    /// Appends a byte.
    pub fn u8(&mut self, value: u8) -> &mut Self {
        self.bytes.push(value);
        self
    }

    /// Appends a big-endian `u16`.
    pub fn u16(&mut self, value: u16) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    /// Appends a big-endian `u32`.
    pub fn u32(&mut self, value: u32) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    /// Appends a big-endian `u64`.
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    /// Appends a big-endian `i64`.
    pub fn i64(&mut self, value: i64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    /// Appends exactly `len` bytes: `value` cut or padded with spaces (a SQL `CHAR(len)`).
    pub fn fixed(&mut self, value: &[u8], len: usize) -> &mut Self {
        let take = value.len().min(len);
        self.bytes.extend_from_slice(&value[..take]);
        self.bytes.resize(self.bytes.len() + (len - take), b' ');
        self
    }

    /// Appends a string of at most 255 bytes with a one-byte length (a short `VARCHAR`).
    pub fn var8(&mut self, value: &[u8]) -> &mut Self {
        let len = value.len().min(usize::from(u8::MAX));
        self.bytes.push(len as u8);
        self.bytes.extend_from_slice(&value[..len]);
        self
    }

    /// Appends a string of at most 65,535 bytes with a two-byte length.
    pub fn var16(&mut self, value: &[u8]) -> &mut Self {
        let len = value.len().min(usize::from(u16::MAX));
        self.bytes.extend_from_slice(&(len as u16).to_be_bytes());
        self.bytes.extend_from_slice(&value[..len]);
        self
    }

    /// An empty row written into `buffer`'s allocation (a caller's reused buffer: no
    /// allocation once it has grown to the row's size).
    #[must_use]
    pub fn reusing(mut buffer: Vec<u8>) -> RowWriter {
        buffer.clear();
        RowWriter { bytes: buffer }
    }

    /// The finished row.
    #[must_use]
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }
}

/// Reads a row written by [`RowWriter`]; every read checks the length left.
#[derive(Debug)]
pub struct RowReader<'a> {
    table: &'static str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> RowReader<'a> {
    /// A reader over a row of `table` (the name goes into errors).
    #[must_use]
    pub fn new(table: &'static str, bytes: &'a [u8]) -> RowReader<'a> {
        RowReader {
            table,
            bytes,
            at: 0,
        }
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(Error::InvalidArgument(format!(
                "malformed {} row: wants {len} bytes at offset {} of {}",
                self.table,
                self.at,
                self.bytes.len()
            )));
        };
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// Reads a byte.
    ///
    /// # Errors
    /// A row too short ([`Error::InvalidArgument`]).
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// Reads a big-endian `u16`.
    ///
    /// # Errors
    /// A row too short.
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian `u32`.
    ///
    /// # Errors
    /// A row too short.
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian `u64`.
    ///
    /// # Errors
    /// A row too short.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// Reads a big-endian `i64`.
    ///
    /// # Errors
    /// A row too short.
    pub fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// Reads `len` fixed bytes, borrowed from the row.
    ///
    /// # Errors
    /// A row too short.
    pub fn fixed(&mut self, len: usize) -> Result<&'a [u8]> {
        self.take(len)
    }

    /// Reads a one-byte-length string, borrowed from the row.
    ///
    /// # Errors
    /// A row too short.
    pub fn var8(&mut self) -> Result<&'a [u8]> {
        let len = usize::from(self.u8()?);
        self.take(len)
    }

    /// Reads a two-byte-length string, borrowed from the row.
    ///
    /// # Errors
    /// A row too short.
    pub fn var16(&mut self) -> Result<&'a [u8]> {
        let len = usize::from(self.u16()?);
        self.take(len)
    }

    /// Checks that the whole row was read.
    ///
    /// # Errors
    /// Trailing bytes ([`Error::InvalidArgument`]).
    pub fn end(&self) -> Result<()> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "malformed {} row: {} trailing bytes",
                self.table,
                self.bytes.len() - self.at
            )))
        }
    }
}

/// Loads tables one after another and keeps the [`LoadReport`]: opens each tree, feeds the
/// generated pairs to [`KvEngine::bulk_load`], counts rows and bytes, reports progress.
pub struct TableLoader<'e, 'p> {
    engine: &'e dyn KvEngine,
    progress: &'p mut dyn FnMut(LoadProgress),
    tables_total: usize,
    started: Instant,
    report: LoadReport,
}

impl<'e, 'p> TableLoader<'e, 'p> {
    /// A loader that will fill `tables_total` tables.
    pub fn new(
        engine: &'e dyn KvEngine,
        tables_total: usize,
        progress: &'p mut dyn FnMut(LoadProgress),
    ) -> TableLoader<'e, 'p> {
        TableLoader {
            engine,
            progress,
            tables_total,
            started: Instant::now(),
            report: LoadReport::default(),
        }
    }

    /// Bulk-loads tree `name` from `pairs` (strictly ascending keys). Returns the tree.
    ///
    /// # Errors
    /// The engine's (a non-empty tree, keys out of order, size limits, I/O).
    pub fn load(
        &mut self,
        name: &str,
        pairs: impl Iterator<Item = (Vec<u8>, Vec<u8>)>,
    ) -> Result<TreeId> {
        let tree = self.engine.open_tree(name)?;
        let mut table = TableLoad {
            name: name.to_string(),
            ..TableLoad::default()
        };
        let tables_done = self.report.tables.len();
        let tables_total = self.tables_total;
        let progress = &mut *self.progress;
        let mut counted = pairs.inspect(|(key, value)| {
            table.rows += 1;
            table.key_bytes += key.len() as u64;
            table.value_bytes += value.len() as u64;
            if table.rows.is_multiple_of(PROGRESS_ROWS) {
                progress(LoadProgress {
                    table: name.to_string(),
                    rows: table.rows,
                    tables_done,
                    tables_total,
                });
            }
        });
        let loaded = self.engine.bulk_load(tree, &mut counted)?;
        drop(counted);
        assert_eq!(loaded, table.rows, "the engine loaded what it was given");
        (self.progress)(LoadProgress {
            table: name.to_string(),
            rows: table.rows,
            tables_done: tables_done + 1,
            tables_total,
        });
        self.report.tables.push(table);
        Ok(tree)
    }

    /// The report of every table loaded so far.
    #[must_use]
    pub fn finish(mut self) -> LoadReport {
        self.report.elapsed = self.started.elapsed();
        self.report
    }
}

/// A key-value pair as scans return it.
pub type Pair = (Vec<u8>, Vec<u8>);

/// What [`scan_prefix_batches`] calls with each batch.
pub type BatchVisitor<'a> = dyn FnMut(&[Pair]) -> Result<()> + 'a;

/// Visits every pair of `tree` whose key starts with `prefix`, in key order, in batches of
/// `batch` pairs, each batch read in its own short transaction (so a check over a large
/// database holds no long transaction). Returns the pairs visited.
///
/// # Errors
/// The engine's, or `visit`'s.
pub fn scan_prefix_batches(
    engine: &dyn KvEngine,
    tree: TreeId,
    prefix: &[u8],
    batch: usize,
    visit: &mut BatchVisitor<'_>,
) -> Result<u64> {
    use std::ops::Bound;
    assert!(batch > 0, "batches hold at least one pair");
    let mut after: Option<Vec<u8>> = None;
    let mut visited = 0u64;
    // Bound: each round consumes `batch` pairs or ends; the tree is finite.
    loop {
        let mut pairs: Vec<Pair> = Vec::with_capacity(batch);
        let low = match &after {
            Some(key) => Bound::Excluded(key.as_slice()),
            None => Bound::Included(prefix),
        };
        let mut txn = engine.begin()?;
        txn.scan(
            tree,
            (low, Bound::Unbounded),
            crate::kv::Direction::Forward,
            batch,
            &mut |key, value| {
                if !key.starts_with(prefix) {
                    return false;
                }
                pairs.push((key.to_vec(), value.to_vec()));
                true
            },
        )?;
        txn.commit()?;
        visited += pairs.len() as u64;
        if !pairs.is_empty() {
            visit(&pairs)?;
        }
        if pairs.len() < batch {
            return Ok(visited);
        }
        after = pairs.pop().map(|(key, _)| key);
    }
}

/// A weighted choice among `N` kinds, in hundredths of a percent (the weights sum to 10,000).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weights<const N: usize> {
    basis_points: [u32; N],
}

impl<const N: usize> Weights<N> {
    /// Total weight: 100% in hundredths of a percent.
    pub const TOTAL: u32 = 10_000;

    /// Weights from percentages (rounded to hundredths; the last non-zero kind absorbs the
    /// rounding). `names` label the kinds in errors.
    ///
    /// # Errors
    /// [`Error::Config`] for a negative or non-finite share, or shares not summing to 100.
    pub fn from_percent(percent: [f64; N], names: &[&str; N]) -> Result<Weights<N>> {
        let mut basis_points = [0u32; N];
        let mut sum = 0.0;
        for (i, &share) in percent.iter().enumerate() {
            if !share.is_finite() || share < 0.0 {
                return Err(Error::Config(format!(
                    "share of {} is {share}: shares are percentages >= 0",
                    names[i]
                )));
            }
            sum += share;
            basis_points[i] = (share * 100.0).round() as u32;
        }
        if (sum - 100.0).abs() > 0.01 {
            return Err(Error::Config(format!(
                "shares sum to {sum}, not 100 ({})",
                names.join(", ")
            )));
        }
        let total: u32 = basis_points.iter().sum();
        if let Some(last) = basis_points.iter().rposition(|&w| w > 0) {
            basis_points[last] = (basis_points[last] + Self::TOTAL).saturating_sub(total);
        }
        assert_eq!(basis_points.iter().sum::<u32>(), Self::TOTAL);
        Ok(Weights { basis_points })
    }

    /// The share of kind `i` in percent.
    #[must_use]
    pub fn percent(&self, i: usize) -> f64 {
        f64::from(self.basis_points[i]) / 100.0
    }

    /// Every share in percent.
    #[must_use]
    pub fn percents(&self) -> [f64; N] {
        std::array::from_fn(|i| self.percent(i))
    }

    /// The kind drawn for `ticket`, uniform in `0..TOTAL`.
    #[must_use]
    pub fn pick(&self, ticket: u32) -> usize {
        assert!(ticket < Self::TOTAL, "ticket {ticket} out of range");
        let mut below = 0;
        for (i, &weight) in self.basis_points.iter().enumerate() {
            below += weight;
            if ticket < below {
                return i;
            }
        }
        unreachable!("weights sum to TOTAL")
    }

    /// Draws a kind.
    pub fn draw<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> usize {
        self.pick(rng.gen_range(0..Self::TOTAL))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::MemoryKv;

    #[test]
    fn rows_round_trip_and_reject_short_input() {
        let row = RowWriter::default()
            .u8(7)
            .u16(300)
            .u32(70_000)
            .u64(1 << 40)
            .i64(-5)
            .fixed(b"ab", 4)
            .var8(b"hello")
            .var16(b"world")
            .finish();
        let mut reader = RowReader::new("test", &row);
        assert_eq!(reader.u8().unwrap(), 7);
        assert_eq!(reader.u16().unwrap(), 300);
        assert_eq!(reader.u32().unwrap(), 70_000);
        assert_eq!(reader.u64().unwrap(), 1 << 40);
        assert_eq!(reader.i64().unwrap(), -5);
        assert_eq!(reader.fixed(4).unwrap(), b"ab  ");
        assert_eq!(reader.var8().unwrap(), b"hello");
        assert_eq!(reader.var16().unwrap(), b"world");
        reader.end().unwrap();
        let mut short = RowReader::new("test", &row[..3]);
        short.u8().unwrap();
        assert!(short.u32().is_err());
        assert!(RowReader::new("test", &row).end().is_err());
    }

    #[test]
    fn weights_sum_and_pick() {
        let names = ["a", "b", "c"];
        let w = Weights::from_percent([50.0, 25.5, 24.5], &names).unwrap();
        assert_eq!(w.pick(0), 0);
        assert_eq!(w.pick(4999), 0);
        assert_eq!(w.pick(5000), 1);
        assert_eq!(w.pick(9999), 2);
        assert!(Weights::from_percent([50.0, 25.0, 24.0], &names).is_err());
        assert!(Weights::from_percent([-1.0, 51.0, 50.0], &names).is_err());
        assert!(Weights::from_percent([f64::NAN, 50.0, 50.0], &names).is_err());
    }

    #[test]
    fn rollback_by_design_is_not_retried() {
        let kv = MemoryKv::new();
        let t = kv.open_tree("t").unwrap();
        let mut calls = 0;
        let ((), end, retries) = run_txn(&kv, 5, |txn| {
            calls += 1;
            if calls < 2 {
                return Err(Error::Conflict("test".into()));
            }
            txn.put(t, b"k", b"v")?;
            Ok(((), TxnEnd::Rollback))
        })
        .unwrap();
        assert_eq!((end, retries, calls), (TxnEnd::Rollback, 1, 2));
        assert_eq!(kv.len(t), 0);
    }

    #[test]
    fn batches_cover_a_prefix_exactly() {
        let kv = MemoryKv::new();
        let mut seen = Vec::new();
        let mut record = |p| seen.push(p);
        let mut loader = TableLoader::new(&kv, 1, &mut record);
        let pairs = (0u16..1000).map(|i| (i.to_be_bytes().to_vec(), vec![1u8; 3]));
        let tree = loader.load("t", pairs).unwrap();
        let report = loader.finish();
        assert_eq!(report.rows(), 1000);
        assert_eq!(report.bytes(), 5000);
        assert_eq!(seen.last().unwrap().tables_done, 1);
        let mut count = 0;
        let visited = scan_prefix_batches(&kv, tree, &[1], 7, &mut |batch| {
            assert!(batch.iter().all(|(k, _)| k[0] == 1));
            count += batch.len();
            Ok(())
        })
        .unwrap();
        assert_eq!((visited, count), (256, 256));
    }

    #[test]
    fn seeded_streams_differ_by_label() {
        use rand::Rng;
        let a: u64 = seeded_rng(1, &[1, 2]).r#gen();
        let b: u64 = seeded_rng(1, &[2, 1]).r#gen();
        let c: u64 = seeded_rng(1, &[1, 2]).r#gen();
        assert_ne!(a, b);
        assert_eq!(a, c);
    }
}
