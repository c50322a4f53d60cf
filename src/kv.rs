//! The transactional key-value interface: what the B+-tree engine implements and what the
//! record-level workloads (TPC-C, YCSB, LinkBench) drive.
//!
//! A [`KvEngine`] holds named trees (tables and indexes). A [`KvTxn`] reads and writes any of
//! them atomically: `commit` makes every change visible and (per the engine's durability
//! setting) durable, `abort` or dropping the transaction leaves no trace. A conflict with
//! another transaction is [`Error::Conflict`], which is retryable: the transaction is already
//! rolled back when it is returned, and the caller runs it again from the start.
//!
//! **Abort on error.** Every engine follows one contract for errors inside a transaction: a
//! call (`get`, `put`, `delete`, `scan`) that returns an error has rolled the whole transaction
//! back, and every later call on it, `commit` included, fails naming that error. A caller that
//! ignores a failed `put` can therefore never commit the transaction's other writes; to go on
//! after an error, begin a new transaction. (This is PostgreSQL's rule, not MySQL's
//! statement-level rollback: it is the one that cannot commit half of what the caller meant.)
//!
//! Keys order bytewise (`memcmp`), so workloads encode composite keys big-endian. Engines
//! document their key and value size limits (the B+-tree store's are on
//! [`crate::txn::KvStore`]: 256-byte keys and 740-byte values at 4 KiB pages, 1,024 and 3,044
//! at 16 KiB); a key or value over the limit is [`Error::InvalidArgument`].
//!
//! [`MemoryKv`] is a reference engine for workload tests: `BTreeMap`s behind one lock that a
//! transaction holds from `begin` to its end, so transactions run one at a time (trivially
//! serializable). It is not a performance baseline.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use crate::error::{Error, Result};

/// A tree's handle, from [`KvEngine::open_tree`].
pub type TreeId = u32;

/// Direction of a range scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending keys, starting at the low bound.
    Forward,
    /// Descending keys, starting at the high bound.
    Backward,
}

/// A key range: `(low, high)` bounds as in `std::ops::RangeBounds`.
pub type KeyRange<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

/// The whole key space.
pub const FULL_RANGE: KeyRange<'static> = (Bound::Unbounded, Bound::Unbounded);

/// A transaction. Dropping it without `commit` aborts it. An error from any call rolls the
/// whole transaction back and makes every later call fail (the module's "abort on error").
pub trait KvTxn {
    /// The value stored under `key`, seeing this transaction's own writes.
    ///
    /// # Errors
    /// [`Error::Conflict`] (retryable), an unknown tree, I/O errors.
    fn get(&mut self, tree: TreeId, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// As [`KvTxn::get`] for a row the transaction will write: SQL's `SELECT ... FOR UPDATE`.
    /// A store with record locks takes the exclusive lock at once, so two transactions that
    /// read and then update one row queue on it instead of both taking a shared lock and
    /// deadlocking on the upgrade. The default is [`KvTxn::get`].
    ///
    /// # Errors
    /// As [`KvTxn::get`].
    fn get_for_update(&mut self, tree: TreeId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get(tree, key)
    }

    /// As [`KvTxn::get`], but copies the value into `value` (cleared first) instead of
    /// returning a new `Vec`: a caller that reads many rows reuses one buffer per row it keeps
    /// and allocates nothing once the buffers have grown. Returns whether `key` was present;
    /// when it was not, `value` is left empty.
    ///
    /// The default goes through [`KvTxn::get`] (one allocation per call); engines that can copy
    /// straight from their storage override it.
    ///
    /// ```
    /// use flashbuf::kv::{KvEngine, KvTxn, MemoryKv};
    ///
    /// # fn main() -> flashbuf::error::Result<()> {
    /// let kv = MemoryKv::new();
    /// let tree = kv.open_tree("t")?;
    /// let mut txn = kv.begin()?;
    /// txn.put(tree, b"a", b"apple")?;
    /// txn.put(tree, b"b", b"banana")?;
    /// let mut value = Vec::new(); // reused for every read
    /// let mut total = 0;
    /// for key in [b"a", b"b", b"c"] {
    ///     if txn.get_into(tree, key, &mut value)? {
    ///         total += value.len();
    ///     }
    /// }
    /// assert_eq!(total, 11);
    /// assert!(!txn.get_into(tree, b"c", &mut value)? && value.is_empty());
    /// txn.commit()?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`KvTxn::get`].
    fn get_into(&mut self, tree: TreeId, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        Ok(copy_found(self.get(tree, key)?.as_deref(), value))
    }

    /// As [`KvTxn::get_into`], but at read-committed isolation for this one read: the latest
    /// committed value (or this transaction's own write), waiting for a transaction that holds
    /// the key for writing, and without keeping the key locked, so another transaction may
    /// change it before this one ends. For reads a workload's isolation rules allow to be
    /// weaker (TPC-C's Stock-Level needs only level 1, no dirty reads; clause 3.4.0.1). The
    /// default is [`KvTxn::get_into`], whose locking read is stronger.
    ///
    /// # Errors
    /// As [`KvTxn::get`].
    fn get_committed_into(
        &mut self,
        tree: TreeId,
        key: &[u8],
        value: &mut Vec<u8>,
    ) -> Result<bool> {
        self.get_into(tree, key, value)
    }

    /// As [`KvTxn::get_for_update`], copying into `value` as [`KvTxn::get_into`] does. The
    /// default goes through [`KvTxn::get_for_update`].
    ///
    /// # Errors
    /// As [`KvTxn::get`].
    fn get_for_update_into(
        &mut self,
        tree: TreeId,
        key: &[u8],
        value: &mut Vec<u8>,
    ) -> Result<bool> {
        Ok(copy_found(
            self.get_for_update(tree, key)?.as_deref(),
            value,
        ))
    }

    /// Stores `value` under `key`, inserting or replacing.
    ///
    /// # Errors
    /// [`Error::Conflict`], key or value too large ([`Error::InvalidArgument`]), I/O errors.
    fn put(&mut self, tree: TreeId, key: &[u8], value: &[u8]) -> Result<()>;

    /// Removes `key`; returns whether it was present.
    ///
    /// # Errors
    /// As [`KvTxn::put`].
    fn delete(&mut self, tree: TreeId, key: &[u8]) -> Result<bool>;

    /// Visits the pairs in `range` in `direction`, at most `limit` of them, until `visit`
    /// returns false. Sees this transaction's own writes.
    ///
    /// # Errors
    /// As [`KvTxn::get`].
    fn scan(
        &mut self,
        tree: TreeId,
        range: KeyRange<'_>,
        direction: Direction,
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()>;

    /// Commits: every change becomes visible at once and durable per the engine's setting.
    ///
    /// # Errors
    /// [`Error::Conflict`] (nothing was committed), log or device errors.
    fn commit(self: Box<Self>) -> Result<()>;

    /// Rolls back every change of this transaction.
    ///
    /// # Errors
    /// Device errors while undoing (the engine is then poisoned).
    fn abort(self: Box<Self>) -> Result<()>;
}

/// How a transaction body wants its transaction to end ([`KvEngine::transact`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnEnd {
    /// Commit it.
    Commit,
    /// Roll it back on purpose (not an error, not retried).
    Rollback,
}

/// A transactional store of named trees.
pub trait KvEngine: Send + Sync {
    /// The tree called `name`, created empty if it does not exist. Idempotent.
    ///
    /// # Errors
    /// A name that is too long or the catalog is full, I/O errors.
    fn open_tree(&self, name: &str) -> Result<TreeId>;

    /// Starts a transaction.
    ///
    /// # Errors
    /// A poisoned engine.
    fn begin(&self) -> Result<Box<dyn KvTxn + '_>>;

    /// Runs `body` in a new transaction and ends it as the body says: commits on
    /// [`TxnEnd::Commit`], rolls back on [`TxnEnd::Rollback`] or when the body fails (its
    /// error is returned). Returns how it ended.
    ///
    /// The default goes through [`KvEngine::begin`]; an engine may keep the transaction off
    /// the heap (the steady state of a benchmark allocates nothing per transaction).
    ///
    /// # Errors
    /// The body's error, or the commit's or the rollback's.
    fn transact(&self, body: &mut dyn FnMut(&mut dyn KvTxn) -> Result<TxnEnd>) -> Result<TxnEnd> {
        let mut txn = self.begin()?;
        let end = body(&mut *txn)?;
        match end {
            TxnEnd::Commit => txn.commit()?,
            TxnEnd::Rollback => txn.abort()?,
        }
        Ok(end)
    }

    /// Reads the latest committed value of `key` outside any transaction, into `value`
    /// (cleared first; left empty when absent); whether it was found. This is an auto-commit
    /// read, a lone `SELECT` with autocommit on: it never returns uncommitted data, it waits
    /// for a transaction that holds the key for writing as a transaction's read does, and it
    /// leaves no lock behind. Two such reads are not isolated from each other: use a
    /// transaction to read several keys consistently.
    ///
    /// The default runs a transaction of one read; an engine may read without one.
    ///
    /// # Errors
    /// [`Error::Conflict`] (retryable) when waiting for the writer failed, an unknown tree, a
    /// key over the size limit, I/O errors.
    fn get_committed_into(&self, tree: TreeId, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        let mut txn = self.begin()?;
        let found = txn.get_into(tree, key, value)?;
        txn.commit()?;
        Ok(found)
    }

    /// Fills an empty tree with `pairs`, which must come in strictly ascending key order
    /// (outside any transaction; used by loaders). Returns the pairs loaded.
    ///
    /// # Errors
    /// A non-empty tree, keys out of order, size limits, I/O errors.
    fn bulk_load(
        &self,
        tree: TreeId,
        pairs: &mut dyn Iterator<Item = (Vec<u8>, Vec<u8>)>,
    ) -> Result<u64>;
}

/// Runs `body` in a transaction, retrying it up to `attempts` times on [`Error::Conflict`].
/// Returns the body's result and the number of retries.
///
/// # Errors
/// The body's or the commit's non-retryable error, or the last conflict when every attempt
/// conflicted.
pub fn with_retries<T>(
    engine: &dyn KvEngine,
    attempts: usize,
    mut body: impl FnMut(&mut dyn KvTxn) -> Result<T>,
) -> Result<(T, usize)> {
    let mut last = None;
    for retry in 0..attempts.max(1) {
        let mut txn = engine.begin()?;
        let outcome = body(&mut *txn).and_then(|value| txn.commit().map(|()| value));
        match outcome {
            Ok(value) => return Ok((value, retry)),
            Err(err) if err.is_retryable() => last = Some(err),
            Err(err) => return Err(err),
        }
    }
    Err(last.unwrap_or_else(|| Error::Conflict("no attempt made".into())))
}

/// Copies a found value into `value` (left empty when absent); whether it was found. The
/// shared tail of the `get_into` implementations.
pub(crate) fn copy_found(found: Option<&[u8]>, value: &mut Vec<u8>) -> bool {
    value.clear();
    match found {
        Some(bytes) => {
            value.extend_from_slice(bytes);
            true
        }
        None => false,
    }
}

fn bound_key(bound: Bound<&[u8]>) -> Option<&[u8]> {
    match bound {
        Bound::Included(key) | Bound::Excluded(key) => Some(key),
        Bound::Unbounded => None,
    }
}

type Trees = Vec<(String, BTreeMap<Vec<u8>, Vec<u8>>)>;

/// The reference engine (see the module docs): serial transactions over `BTreeMap`s.
#[derive(Debug, Default, Clone)]
pub struct MemoryKv {
    trees: Arc<Mutex<Trees>>,
}

impl MemoryKv {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        MemoryKv::default()
    }

    /// Number of pairs in `tree` (for tests).
    #[must_use]
    pub fn len(&self, tree: TreeId) -> usize {
        self.trees
            .lock()
            .get(tree as usize)
            .map_or(0, |(_, map)| map.len())
    }
}

/// A serial transaction: holds the store's lock; writes go to the maps with an undo log.
struct MemoryTxn<'a> {
    trees: MutexGuard<'a, Trees>,
    undo: Vec<(TreeId, Vec<u8>, Option<Vec<u8>>)>,
    done: bool,
    /// The error that rolled the transaction back (abort on error), if any.
    failed: Option<String>,
}

fn tree_mut(trees: &mut Trees, tree: TreeId) -> Result<&mut BTreeMap<Vec<u8>, Vec<u8>>> {
    trees
        .get_mut(tree as usize)
        .map(|(_, map)| map)
        .ok_or_else(|| Error::InvalidArgument(format!("no tree {tree}")))
}

impl MemoryTxn<'_> {
    /// Runs one call: an error rolls the transaction back and is remembered.
    fn statement<T>(&mut self, op: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if let Some(cause) = &self.failed {
            return Err(Error::InvalidArgument(format!(
                "the transaction was rolled back when a statement failed ({cause})"
            )));
        }
        let result = op(self);
        if let Err(err) = &result {
            self.rollback();
            self.failed = Some(err.to_string());
        }
        result
    }

    fn rollback(&mut self) {
        while let Some((tree, key, before)) = self.undo.pop() {
            if let Ok(map) = tree_mut(&mut self.trees, tree) {
                match before {
                    Some(value) => map.insert(key, value),
                    None => map.remove(&key),
                };
            }
        }
        self.done = true;
    }
}

impl KvTxn for MemoryTxn<'_> {
    fn get(&mut self, tree: TreeId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.statement(|txn| Ok(tree_mut(&mut txn.trees, tree)?.get(key).cloned()))
    }

    fn get_into(&mut self, tree: TreeId, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        self.statement(|txn| {
            let found = tree_mut(&mut txn.trees, tree)?.get(key);
            Ok(copy_found(found.map(Vec::as_slice), value))
        })
    }

    fn put(&mut self, tree: TreeId, key: &[u8], value: &[u8]) -> Result<()> {
        self.statement(|txn| {
            let before = tree_mut(&mut txn.trees, tree)?.insert(key.to_vec(), value.to_vec());
            txn.undo.push((tree, key.to_vec(), before));
            Ok(())
        })
    }

    fn delete(&mut self, tree: TreeId, key: &[u8]) -> Result<bool> {
        self.statement(|txn| {
            let before = tree_mut(&mut txn.trees, tree)?.remove(key);
            let existed = before.is_some();
            if existed {
                txn.undo.push((tree, key.to_vec(), before));
            }
            Ok(existed)
        })
    }

    fn scan(
        &mut self,
        tree: TreeId,
        range: KeyRange<'_>,
        direction: Direction,
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.statement(|txn| txn.scan_statement(tree, range, direction, limit, visit))
    }

    fn commit(mut self: Box<Self>) -> Result<()> {
        self.statement(|_| Ok(()))?;
        self.undo.clear();
        self.done = true;
        Ok(())
    }

    fn abort(mut self: Box<Self>) -> Result<()> {
        self.rollback();
        Ok(())
    }
}

impl MemoryTxn<'_> {
    fn scan_statement(
        &mut self,
        tree: TreeId,
        range: KeyRange<'_>,
        direction: Direction,
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let map = tree_mut(&mut self.trees, tree)?;
        let (low, high) = range;
        // BTreeMap::range panics on inverted or doubly-excluded equal bounds: treat as empty.
        if let (Some(a), Some(b)) = (bound_key(low), bound_key(high))
            && (a > b
                || (a == b
                    && (matches!(low, Bound::Excluded(_)) || matches!(high, Bound::Excluded(_)))))
        {
            return Ok(());
        }
        let iter = map.range::<[u8], _>((low, high));
        let pairs: Box<dyn Iterator<Item = (&Vec<u8>, &Vec<u8>)>> = match direction {
            Direction::Forward => Box::new(iter),
            Direction::Backward => Box::new(iter.rev()),
        };
        for (key, value) in pairs.take(limit) {
            if !visit(key, value) {
                break;
            }
        }
        Ok(())
    }
}

impl Drop for MemoryTxn<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.rollback();
        }
    }
}

impl KvEngine for MemoryKv {
    fn open_tree(&self, name: &str) -> Result<TreeId> {
        let mut trees = self.trees.lock();
        if let Some(index) = trees.iter().position(|(existing, _)| existing == name) {
            return Ok(index as TreeId);
        }
        trees.push((name.to_string(), BTreeMap::new()));
        Ok((trees.len() - 1) as TreeId)
    }

    fn begin(&self) -> Result<Box<dyn KvTxn + '_>> {
        Ok(Box::new(MemoryTxn {
            trees: self.trees.lock(),
            undo: Vec::new(),
            done: false,
            failed: None,
        }))
    }

    fn bulk_load(
        &self,
        tree: TreeId,
        pairs: &mut dyn Iterator<Item = (Vec<u8>, Vec<u8>)>,
    ) -> Result<u64> {
        let mut trees = self.trees.lock();
        let map = tree_mut(&mut trees, tree)?;
        if !map.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "bulk load into tree {tree}, which is not empty"
            )));
        }
        let mut count = 0u64;
        let mut last: Option<Vec<u8>> = None;
        for (key, value) in pairs {
            if last.as_ref().is_some_and(|previous| *previous >= key) {
                return Err(Error::InvalidArgument(format!(
                    "bulk load into tree {tree}: keys are not strictly ascending at pair {count}"
                )));
            }
            last = Some(key.clone());
            map.insert(key, value);
            count += 1;
        }
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_abort_and_scans() {
        let kv = MemoryKv::new();
        let t = kv.open_tree("t").unwrap();
        assert_eq!(kv.open_tree("t").unwrap(), t);
        let mut txn = kv.begin().unwrap();
        txn.put(t, b"b", b"2").unwrap();
        txn.put(t, b"a", b"1").unwrap();
        txn.commit().unwrap();
        let mut txn = kv.begin().unwrap();
        txn.put(t, b"c", b"3").unwrap();
        assert!(txn.delete(t, b"a").unwrap());
        txn.abort().unwrap();
        let mut txn = kv.begin().unwrap();
        let mut seen = Vec::new();
        txn.scan(t, FULL_RANGE, Direction::Backward, 10, &mut |k, _| {
            seen.push(k.to_vec());
            true
        })
        .unwrap();
        assert_eq!(seen, vec![b"b".to_vec(), b"a".to_vec()]);
        drop(txn);
        let inverted: KeyRange<'_> = (Bound::Included(b"z"), Bound::Included(b"a"));
        let mut txn = kv.begin().unwrap();
        txn.scan(t, inverted, Direction::Forward, 10, &mut |_, _| {
            panic!("empty range")
        })
        .unwrap();
    }

    #[test]
    fn retries_stop_at_success() {
        let kv = MemoryKv::new();
        let t = kv.open_tree("t").unwrap();
        let mut calls = 0;
        let ((), retries) = with_retries(&kv, 5, |txn| {
            calls += 1;
            if calls < 3 {
                return Err(Error::Conflict("test".into()));
            }
            txn.put(t, b"k", b"v")
        })
        .unwrap();
        assert_eq!(retries, 2);
        assert_eq!(kv.len(t), 1);
    }
}
