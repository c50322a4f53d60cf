//! Transactions over the B+-tree (issue 10): [`KvStore`] implements [`KvEngine`] with strict
//! two-phase key locking, logged undo, rollback, and loser rollback at recovery. Recovery is
//! described in `docs/recovery.md`.
//!
//! **Isolation.** Every read locks its key shared and every write exclusive, until commit or
//! abort (strict 2PL). Point operations are therefore serializable. A scan locks, shared, each
//! key it returns (and waits for keys other transactions hold exclusive: uncommitted data is
//! never returned); it locks no gaps, so a concurrent insert into the scanned range can commit
//! and a repeated scan in the same transaction sees it: phantoms are possible (repeatable read
//! for the keys read, not serializable for ranges). A key read as absent by `get` is locked
//! too, so it cannot be inserted by another transaction before this one ends.
//!
//! **Conflicts.** A lock request waits; a request that closes a cycle in the wait-for graph
//! (deadlock) or waits longer than [`KvConfig::lock_timeout`] fails with [`Error::Conflict`].
//! The transaction is then rolled back at once (its changes undone, its locks released) and
//! every later call on it returns the same kind of error: the client retries the whole
//! transaction from the start (see [`crate::kv::with_retries`]).
//!
//! **Errors end the transaction.** The same holds for every other error of a statement (`get`,
//! `put`, `delete`, `scan`): a key or value over the size limits, an unknown tree, an I/O error.
//! The transaction is rolled back before the error is returned, so a later `commit` cannot
//! commit the statements before the failed one: it fails, naming the first error (see
//! [`KvStore`]).
//!
//! **Changes.** Each row change is one mini-transaction on its leaf that logs the redo and,
//! in the same batch, the undo entry (the before-value). Commit appends a `TxnCommit` record,
//! releases the locks, then waits for durability ([`make_durable`]). Abort undoes the entries
//! newest first, each inverse change a mini-transaction logging a compensation, then appends
//! `TxnAbort`. From its first change to its outcome record a transaction keeps its first LSN
//! registered in flight, so no checkpoint passes its undo entries.
//!
//! Lock order: key locks (lock manager) are taken holding no latch (try-locks under a leaf
//! latch excepted); then the tree's order (`btree/mod.rs`).

pub mod lock;
pub mod undo;

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

use crate::btree::check::{CheckReport, check};
use crate::btree::{Prior, TreeStore, Visit, bulk};
use crate::db::{DatabaseConfig, RecoveryReport};
use crate::device::{DeviceSpec, OpenOptions, SharedDevice};
use crate::error::{Error, Result};
use crate::kv::{Direction, KeyRange, KvEngine, KvTxn, TreeId, TxnEnd};
use crate::page::Lsn;
use crate::pool::{PoolConfig, Scheme};
use crate::wal::{LogRecord, TxnId, WalConfig};
use lock::{HeldLocks, LockManager, Mode, TryLock};
use undo::{EntryRef, UndoEntry, UndoList};

/// Range of the random pause (microseconds) of a conflict victim before it returns.
const CONFLICT_BACKOFF_US: std::ops::Range<u64> = 200..3000;

/// Pairs a scan copies under one leaf latch before handing them to the caller.
const SCAN_BATCH: usize = 64;

/// Auto-commit reads ([`KvEngine::get_committed_into`]) that met a key held exclusive and ran
/// as a one-read transaction instead (process-wide; for tests and profiles).
static COMMITTED_READS_WAITED: AtomicU64 = AtomicU64::new(0);

/// How many auto-commit reads so far found their key held exclusive and waited for it as a
/// one-read transaction (process-wide, every store).
#[must_use]
pub fn committed_reads_waited() -> u64 {
    COMMITTED_READS_WAITED.load(Ordering::Relaxed)
}

/// Options of a key-value store.
#[derive(Debug, Clone)]
pub struct KvConfig {
    /// The database (pool, log, checkpoints).
    pub database: DatabaseConfig,
    /// How long a lock request waits before it fails with [`Error::Conflict`].
    pub lock_timeout: Duration,
}

impl KvConfig {
    /// LRU-C with `frames` frames, a 64 MiB log with 4 KiB log pages, a checkpoint per second,
    /// and a 2-second lock wait timeout.
    #[must_use]
    pub fn new(frames: usize) -> Self {
        KvConfig {
            database: DatabaseConfig {
                pool: PoolConfig::for_scheme(Scheme::LruC, frames),
                wal: WalConfig::default(),
                checkpoint_period_ms: 1000,
                ..DatabaseConfig::default()
            },
            lock_timeout: Duration::from_secs(2),
        }
    }
}

/// What opening did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct KvRecovery {
    /// Redo (see [`RecoveryReport`]).
    pub database: RecoveryReport,
    /// Transactions without an outcome, rolled back.
    pub losers_rolled_back: usize,
    /// Undo entries applied for them.
    pub undo_applied: usize,
}

/// Makes a commit that ended at `lsn` durable per the database's `flush_log_at_trx_commit`
/// (1: waits for the log sync; 0 and 2: returns at once, the log writer syncs periodically).
///
/// # Errors
/// Log errors (the log is then poisoned).
pub fn make_durable(store: &TreeStore, lsn: Lsn) -> Result<()> {
    store.database().make_durable(lsn)
}

/// The log file that goes with a data file in a database image: `PATH.log`.
#[must_use]
pub fn log_path_for(data: &Path) -> PathBuf {
    let mut name = data.as_os_str().to_owned();
    name.push(".log");
    PathBuf::from(name)
}

/// A transactional key-value store of named B+-trees.
///
/// # Errors inside a transaction: abort on error
///
/// A statement (`get`, `put`, `delete`, `scan`) that returns an error has rolled its whole
/// transaction back: no change of the transaction remains, its locks are released, and every
/// later call on it, `commit` included, returns an error that names the first one
/// ([`Error::Conflict`] when that was a conflict, so the transaction is retried; otherwise
/// [`Error::InvalidArgument`]). Ignoring a failed `put` therefore cannot lead to a commit of
/// the transaction's other writes. To handle an error and go on, begin a new transaction.
/// `abort` (or dropping the transaction) after such an error is a no-op.
///
/// **Size limits**, set by the page size the store was created with (the B+-tree takes pages of
/// 4 KiB to 32 KiB):
///
/// | page size | largest key | largest value |
/// |---|---|---|
/// | 4 KiB | 256 bytes | 740 bytes |
/// | 8 KiB | 512 bytes | 1,508 bytes |
/// | 16 KiB | 1,024 bytes | 3,044 bytes |
/// | 32 KiB | 1,024 bytes | 7,140 bytes |
///
/// Keys are at most `page_size / 16` bytes and 1,024; a value at most a quarter of a node less
/// its cell's overhead and the largest key ([`crate::btree::node::Limits::for_page`];
/// `store.trees().limits()` gives them for an open store). A `put` or `delete` with a longer
/// key or value fails with [`Error::InvalidArgument`] naming the size and the limit, before it
/// changes anything. Tree names are at most 64 bytes.
#[derive(Debug)]
pub struct KvStore {
    store: TreeStore,
    locks: LockManager,
    failed: Mutex<Option<String>>,
    /// Set once `failed` holds a reason: the check of every `begin` reads this word instead of
    /// locking the mutex (a shared write per transaction).
    has_failed: AtomicBool,
}

impl KvStore {
    /// Opens or creates the store on `data` with its log on `log`: redo, then rollback of the
    /// transactions the log leaves without an outcome.
    ///
    /// # Errors
    /// Configuration, device, log and corrupt-page errors.
    pub fn open(
        data: SharedDevice,
        log: SharedDevice,
        config: &KvConfig,
    ) -> Result<(Self, KvRecovery)> {
        let (store, report) = TreeStore::open(data, log, &config.database)?;
        let kv = KvStore {
            store,
            locks: LockManager::new(config.lock_timeout),
            failed: Mutex::new(None),
            has_failed: AtomicBool::new(false),
        };
        let mut recovery = KvRecovery {
            database: report,
            ..KvRecovery::default()
        };
        let losers = std::mem::take(&mut recovery.database.losers);
        for loser in &losers {
            let entries = undo::remaining(&loser.undo)?;
            recovery.undo_applied += entries.len();
            kv.roll_back(loser.txn, &entries)?;
            kv.store
                .database()
                .wal()
                .append(&[LogRecord::TxnAbort { txn: loser.txn }])?;
            kv.store.database().withdraw_in_flight(loser.first_lsn);
            recovery.losers_rolled_back += 1;
        }
        recovery.database.losers = losers;
        Ok((kv, recovery))
    }

    /// Opens the store on devices named by device strings (`mem`, `file:PATH`, `emu:...`): the
    /// data device with `data_pages` pages of `page_size` bytes, the log device sized by the
    /// configuration's log. Files are created when missing.
    ///
    /// # Errors
    /// As [`KvStore::open`], plus device-string and open errors.
    pub fn open_specs(
        data: &str,
        log: &str,
        page_size: usize,
        data_pages: u64,
        config: &KvConfig,
    ) -> Result<(Self, KvRecovery)> {
        let wal = &config.database.wal;
        let data = crate::device::open(
            &DeviceSpec::parse(data)?,
            &OpenOptions {
                page_size,
                pages: data_pages,
                create: true,
            },
        )?;
        let log = crate::device::open(
            &DeviceSpec::parse(log)?,
            &OpenOptions {
                page_size: wal.page_size,
                pages: wal.log_size / wal.page_size as u64,
                create: true,
            },
        )?;
        Self::open(data, log, config)
    }

    /// The tree layer.
    pub fn trees(&self) -> &TreeStore {
        &self.store
    }

    /// Lock manager counters.
    pub fn lock_stats(&self) -> lock::LockStats {
        self.locks.stats()
    }

    /// Checks the structure of every tree through the pool (see [`crate::btree::check`]).
    ///
    /// # Errors
    /// The meta page cannot be read.
    pub fn check(&self) -> Result<CheckReport> {
        check(self.store.database().pool())
    }

    /// Flushes everything and writes a final checkpoint: a clean close (no recovery needed).
    ///
    /// # Errors
    /// Write or log errors.
    #[must_use = "close() returns the errors of the final write-back; dropping can only print them"]
    pub fn close(self) -> Result<()> {
        self.store.close()
    }

    /// Stops without writing anything back: what a crash leaves (tests, crash campaigns).
    pub fn abandon(self) {
        self.store.abandon();
    }

    /// Starts a transaction (the concrete type; [`KvEngine::begin`] boxes it).
    ///
    /// # Errors
    /// [`Error::EngineFailed`] after a rollback that could not be logged.
    pub fn transaction(&self) -> Result<Transaction<'_>> {
        self.check_not_failed()?;
        Ok(Transaction {
            kv: self,
            id: self.store.database().next_txn_id(),
            locks: HeldLocks::take_spare(),
            undo: UndoList::default(),
            registered: None,
            state: State::Active,
            failure: None,
        })
    }

    /// Applies `entries` (index, entry), newest first, each with its compensation.
    fn roll_back(&self, txn: TxnId, entries: &[(u32, UndoEntry)]) -> Result<()> {
        let mut rows = RollbackRows::default();
        for (index, entry) in entries {
            self.roll_back_entry(txn, *index, entry.as_entry_ref(), &mut rows)?;
        }
        Ok(())
    }

    /// Undoes one entry with its compensation; `rows` holds the row buffers it uses.
    fn roll_back_entry(
        &self,
        txn: TxnId,
        index: u32,
        entry: EntryRef<'_>,
        rows: &mut RollbackRows,
    ) -> Result<()> {
        let mut compensate = |_: Prior<'_>, out: &mut Vec<u8>| {
            undo::encode_compensation(index, out);
            true
        };
        let RollbackRows { value, replaced } = rows;
        match entry.before {
            Prior::Value(before) => {
                self.store.put_row(
                    entry.tree,
                    entry.key,
                    before,
                    txn,
                    &mut compensate,
                    replaced,
                )?;
            }
            Prior::Patched { len, restore } => {
                // The row is this transaction's (its exclusive lock, or recovery before
                // anyone else runs): its value is the one the patch was made against.
                self.patched_back(&entry, len, restore, value)?;
                self.store
                    .put_row(entry.tree, entry.key, value, txn, &mut compensate, replaced)?;
            }
            Prior::Absent => {
                // An insert being undone: the key must go (a compensation is logged even
                // when it is already gone, so the entry counts as undone).
                if self
                    .store
                    .delete(entry.tree, entry.key, txn, &mut compensate)?
                    .is_none()
                {
                    self.log_lone_compensation(txn, index)?;
                }
            }
        }
        Ok(())
    }

    /// The value `entry`'s key had before its change, into `value`: the current value with
    /// `restore` applied.
    fn patched_back(
        &self,
        entry: &EntryRef<'_>,
        len: usize,
        restore: &[u8],
        value: &mut Vec<u8>,
    ) -> Result<()> {
        let corrupt = |why: String| Error::CorruptLog {
            offset: 0,
            reason: format!(
                "undo of a patched row of tree {} ({} key bytes): {why}",
                entry.tree,
                entry.key.len()
            ),
        };
        if !self.store.get_into(entry.tree, entry.key, value)? {
            return Err(corrupt("the row is gone".into()));
        }
        if value.len() != len {
            return Err(corrupt(format!(
                "the row has {} bytes, the patch was made on {len}",
                value.len()
            )));
        }
        crate::btree::patch::apply(value, restore).map_err(|why| corrupt(why.to_string()))?;
        Ok(())
    }

    fn log_lone_compensation(&self, txn: TxnId, index: u32) -> Result<()> {
        let records = [
            LogRecord::Undo {
                txn,
                body: undo::compensation(index),
            },
            LogRecord::MtrEnd { txn },
        ];
        self.store
            .database()
            .append_mtr(&records, &mut Vec::new())?;
        Ok(())
    }

    fn fail(&self, err: &Error) {
        let mut failed = self.failed.lock();
        if failed.is_none() {
            *failed = Some(err.to_string());
        }
        self.has_failed.store(true, Ordering::Release);
    }

    /// [`Error::EngineFailed`] once a rollback could not be logged.
    fn check_not_failed(&self) -> Result<()> {
        if !self.has_failed.load(Ordering::Acquire) {
            return Ok(());
        }
        let why = self.failed.lock().clone().unwrap_or_default();
        Err(Error::EngineFailed(why))
    }

    /// The row `key` (of lock hash `hash`) read with no lock, or `None` (and `value` cleared)
    /// when a transaction holds the key exclusive: the copy and the lock probe with no change to
    /// the leaf between them (`TreeStore::read_row`), so a `Some` is committed.
    fn read_unless_held(
        &self,
        tree: TreeId,
        key: &[u8],
        hash: u64,
        value: &mut Vec<u8>,
    ) -> Result<Option<bool>> {
        self.store.read_row(tree, key, value, || {
            self.locks.is_held_exclusive(hash, tree, key)
        })
    }

    /// [`KvEngine::get_committed_into`] for this store. The row is copied from its leaf and
    /// then the lock manager is asked whether a transaction holds the key exclusive, with no
    /// change to the leaf in between (`TreeStore::read_row`: an optimistic read validated after
    /// the question, or the leaf's shared latch held across both). If none does, the copy is
    /// committed: a writer changes a row only while it holds the key exclusive, and releases it
    /// only after its commit record or its rollback (a rollback changes the leaf again). If one
    /// does, the read runs as a one-read transaction, which waits for the writer as any reader
    /// does.
    fn read_committed(&self, tree: TreeId, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        self.check_not_failed()?;
        self.store.limits().check(key, None)?;
        let hash = self.locks.hash(tree, key);
        if let Some(found) = self.read_unless_held(tree, key, hash, value)? {
            return Ok(found);
        }
        COMMITTED_READS_WAITED.fetch_add(1, Ordering::Relaxed);
        let mut txn = Box::new(self.transaction()?);
        let found = txn.get_into(tree, key, value)?;
        txn.commit()?;
        Ok(found)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Active,
    /// Rolled back after a failed statement (see `Transaction::failure`); every call fails.
    RolledBack,
    Done,
}

/// Why a transaction was rolled back before its end.
#[derive(Debug, Clone)]
struct Failure {
    /// The statement failed with [`Error::Conflict`] (later calls are retryable conflicts too).
    conflict: bool,
    /// The statement's error, as text.
    cause: String,
}

/// A transaction of a [`KvStore`]. Dropping it without commit aborts it.
#[derive(Debug)]
pub struct Transaction<'k> {
    kv: &'k KvStore,
    id: TxnId,
    /// The key locks held (buffers reused from the thread's previous transaction).
    locks: HeldLocks,
    /// The forward undo entries of the changes logged so far (the thread's spare buffers,
    /// taken at the first change: a read-only transaction does not touch them).
    undo: UndoList,
    /// The in-flight bound registered at the first change.
    registered: Option<Lsn>,
    state: State,
    /// Set with [`State::RolledBack`].
    failure: Option<Failure>,
}

/// The row buffers a rollback reuses: a patched row's rebuilt value and the value a restore
/// replaces (not needed, but `put_row` copies it).
#[derive(Debug, Default)]
struct RollbackRows {
    value: Vec<u8>,
    replaced: Vec<u8>,
}

/// Largest row buffer a thread keeps between rollbacks.
const SPARE_ROW_BYTES: usize = 64 << 10;

impl RollbackRows {
    /// Drops buffers too large to keep for the thread's life.
    fn shrink_for_keeping(&mut self) {
        for buffer in [&mut self.value, &mut self.replaced] {
            if buffer.capacity() > SPARE_ROW_BYTES {
                *buffer = Vec::new();
            }
        }
    }
}

std::thread_local! {
    static ROLLBACK_ROWS: std::cell::Cell<Option<RollbackRows>> = const { std::cell::Cell::new(None) };
}

impl Transaction<'_> {
    /// The transaction id.
    pub fn id(&self) -> TxnId {
        self.id
    }

    fn check_active(&self) -> Result<()> {
        match (self.state, &self.failure) {
            (State::Active, _) => Ok(()),
            (State::RolledBack, Some(failure)) if !failure.conflict => {
                Err(Error::InvalidArgument(format!(
                    "transaction {} was rolled back when a statement failed ({}); nothing of it \
                     is committed: begin a new transaction",
                    self.id, failure.cause
                )))
            }
            (State::RolledBack, _) => Err(Error::Conflict(format!(
                "transaction {} was rolled back after a conflict; run it again",
                self.id
            ))),
            (State::Done, _) => Err(Error::InvalidArgument(format!(
                "transaction {} has ended",
                self.id
            ))),
        }
    }

    /// Runs one statement; an error rolls the whole transaction back (see [`KvStore`]'s
    /// "Errors" contract) and is returned.
    fn statement<T>(&mut self, op: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.check_active()?;
        let result = op(self);
        if let Err(err) = &result
            && self.state == State::Active
        {
            self.roll_back_after(err);
        }
        result
    }

    /// Rolls back after `err` and remembers why; a rollback that fails poisons the store
    /// ([`KvStore::transaction`] then refuses new transactions).
    fn roll_back_after(&mut self, err: &Error) {
        let _ = self.finish_rollback();
        self.state = State::RolledBack;
        self.failure = Some(Failure {
            conflict: err.is_retryable(),
            cause: err.to_string(),
        });
    }

    /// Takes a key lock (waiting); a conflict rolls the transaction back.
    fn lock(&mut self, tree: TreeId, key: &[u8], mode: Mode) -> Result<()> {
        let hash = self.kv.locks.hash(tree, key);
        let held = self.locks.held_at(hash, tree, key);
        if held.is_some_and(|(_, held_mode)| held_mode >= mode) {
            return Ok(());
        }
        if let Err(err) = self.kv.locks.lock_hashed(self.id, hash, tree, key, mode) {
            self.roll_back_after(&err);
            // Back off briefly (locks already released) so that an immediate retry does not
            // meet the same holders again: with more threads than cores, a holder may be
            // descheduled for milliseconds while retries cycle through deadlocks.
            let pause = rand::Rng::gen_range(&mut rand::thread_rng(), CONFLICT_BACKOFF_US);
            std::thread::sleep(Duration::from_micros(pause));
            return Err(err);
        }
        // The held set did not change since `held_at`: the lock manager does not touch it.
        match held {
            Some((at, _)) => self.locks.raise(at, mode),
            None => self.locks.insert_absent(hash, tree, key, mode),
        }
        Ok(())
    }

    /// Reads `key` into `value` once this transaction holds it in `mode` (waiting for it).
    fn locked_read_into(
        &mut self,
        tree: TreeId,
        key: &[u8],
        value: &mut Vec<u8>,
        mode: Mode,
    ) -> Result<bool> {
        self.kv.store.limits().check(key, None)?;
        self.kv.store.tree_ref(tree)?;
        self.lock(tree, key, mode)?;
        self.kv.store.get_into(tree, key, value)
    }

    fn register(&mut self) {
        if self.registered.is_none() {
            self.registered = Some(self.kv.store.database().register_in_flight());
        }
    }

    /// Undoes every change, logs the abort record, releases everything.
    fn finish_rollback(&mut self) -> Result<()> {
        let mut result = Ok(());
        if !self.undo.is_empty() {
            // Decoding the list's own bodies cannot fail; a failure is handled as one of the
            // rollback (the transaction stays a loser for recovery).
            let mut rows = crate::spare::take(&ROLLBACK_ROWS);
            let (kv, id) = (self.kv, self.id);
            result = self
                .undo
                .for_each_newest_first(|index, entry| {
                    kv.roll_back_entry(id, index, entry, &mut rows)
                })
                .and_then(|()| {
                    self.kv
                        .store
                        .database()
                        .wal()
                        .append(&[LogRecord::TxnAbort { txn: self.id }])
                        .map(|_| ())
                });
            rows.shrink_for_keeping();
            crate::spare::keep(&ROLLBACK_ROWS, rows);
            self.undo.clear();
            if let Err(err) = &result {
                self.kv.fail(err);
                self.keep_registered_as_loser();
            }
        }
        self.release();
        result
    }

    /// After a rollback that could not finish (no `TxnAbort` in the log): the transaction is a
    /// loser the next recovery must undo from its forward undo entries, so the log from its
    /// first change must stay. Its in-flight bound is therefore never withdrawn (the store
    /// refuses new transactions from now on): no checkpoint of this run passes it. Withdrawing
    /// it let a checkpoint move the redo point past the forward entries while only the
    /// compensations came after it, and recovery then undid nothing (docs/recovery.md).
    fn keep_registered_as_loser(&mut self) {
        self.registered = None;
    }

    fn release(&mut self) {
        if let Some(bound) = self.registered.take() {
            self.kv.store.database().withdraw_in_flight(bound);
        }
        self.kv.locks.release_all(self.id, &self.locks);
        self.locks.clear();
    }

    /// Puts (`Some(value)`) or deletes (`None`) `key`; returns whether a value was there.
    fn write(&mut self, tree: TreeId, key: &[u8], value: Option<&[u8]>) -> Result<bool> {
        self.kv.store.limits().check(key, value)?;
        self.kv.store.tree_ref(tree)?;
        self.lock(tree, key, Mode::Exclusive)?;
        self.register();
        if !self.undo.has_buffers() {
            self.undo = UndoList::take_spare();
        }
        let kv = self.kv;
        let id = self.id;
        let mut before = self.undo.take_before_buffer();
        let undo_list = &mut self.undo;
        let mut underfull = false;
        let mut make_undo = |before: Prior<'_>, out: &mut Vec<u8>| {
            out.extend_from_slice(undo_list.stage(tree, key, before));
            true
        };
        // The undo entry joins the list exactly when its row change reached the log (an
        // error from `put` or `delete_row` means nothing was logged): the rollback of a
        // failure that comes after the change, such as the merge of a leaf a delete left
        // underfull, must undo it too, or the abort record seals a partial transaction.
        let changed = match value {
            Some(value) => kv
                .store
                .put_row(tree, key, value, id, &mut make_undo, &mut before),
            None => kv
                .store
                .delete_row(tree, key, id, &mut make_undo)
                .map(|removed| {
                    removed.is_some_and(|removed| {
                        underfull = removed.underfull;
                        true
                    })
                }),
        };
        self.undo.return_before_buffer(before);
        match &changed {
            Ok(_) => self.undo.keep_staged(),
            Err(_) => self.undo.drop_staged(),
        }
        let existed = changed?;
        if underfull {
            self.kv.store.shrink_after_delete(tree, key)?;
        }
        Ok(existed)
    }

    /// One round of a scan: pairs copied under leaf latches from `start`; returns the pairs,
    /// the key the scan paused at (a lock to wait for), and whether it stopped because the
    /// batch was full.
    fn scan_round(
        &mut self,
        batch: &mut ScanBatch,
        tree: TreeId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        direction: Direction,
        want: usize,
    ) -> Result<(Option<Vec<u8>>, bool)> {
        batch.clear();
        let mut full = false;
        let id = self.id;
        let manager = &self.kv.locks;
        let locks = &mut self.locks;
        let mut visit = |key: &[u8], value: &[u8]| {
            if !within(key, end, direction) {
                return Visit::Stop;
            }
            if batch.len() >= want.min(SCAN_BATCH) {
                full = true;
                return Visit::Stop;
            }
            let hash = manager.hash(tree, key);
            if locks.mode(hash, tree, key).is_none() {
                if manager.try_lock_hashed(id, hash, tree, key, Mode::Shared) == TryLock::Busy {
                    return Visit::Pause;
                }
                locks.insert_absent(hash, tree, key, Mode::Shared);
            }
            batch.push(key, value);
            Visit::Continue
        };
        let paused = self.kv.store.scan(tree, start, direction, &mut visit)?;
        Ok((paused, full))
    }

    /// A scan's statement body ([`KvTxn::scan`] runs it through `statement`).
    fn scan_statement(
        &mut self,
        tree: TreeId,
        range: KeyRange<'_>,
        direction: Direction,
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.kv.store.tree_ref(tree)?;
        if limit == 0 || empty_range(range) {
            return Ok(());
        }
        let (near, far) = match direction {
            Direction::Forward => range,
            Direction::Backward => (range.1, range.0),
        };
        let mut buffers = crate::spare::take(&SCAN_SPARE);
        let result = self.scan_rounds(&mut buffers, tree, (near, far), direction, limit, visit);
        buffers.recycle();
        result
    }

    /// The rounds of a scan from `near` to `far` (in `direction`), each copying pairs into
    /// `batch` under leaf latches and handing them to `visit` with no latch held.
    fn scan_rounds(
        &mut self,
        buffers: &mut ScanBuffers,
        tree: TreeId,
        (near, far): KeyRange<'_>,
        direction: Direction,
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let ScanBuffers {
            batch,
            position: position_key,
        } = buffers;
        // The position is `position`'s kind of bound around the key in `position_key`.
        let mut position: Bound<()> = near.map(|key| set_key(position_key, key));
        let mut delivered = 0;
        // Bound: every round moves the position strictly past at least one key, or waits for
        // the lock of the key it then delivers; the tree holds finitely many keys.
        for _ in 0..usize::MAX {
            let want = limit - delivered;
            let start = position.map(|()| position_key.as_slice());
            let (paused, full) = self.scan_round(batch, tree, start, far, direction, want)?;
            for (key, value) in batch.pairs() {
                delivered += 1;
                if !visit(key, value) || delivered >= limit {
                    return Ok(());
                }
            }
            if let Some(key) = paused {
                self.lock(tree, &key, Mode::Shared)?;
                set_key(position_key, &key);
                position = Bound::Included(());
            } else if full {
                let Some(key) = batch.last_key() else {
                    return Ok(());
                };
                set_key(position_key, key);
                position = Bound::Excluded(());
            } else {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// Copies `key` into `buffer` (reusing its capacity).
fn set_key(buffer: &mut Vec<u8>, key: &[u8]) {
    buffer.clear();
    buffer.extend_from_slice(key);
}

std::thread_local! {
    /// The calling thread's spare scan buffers ([`ScanBuffers`]).
    static SCAN_SPARE: std::cell::Cell<Option<ScanBuffers>> = const { std::cell::Cell::new(None) };
}

/// Largest scan buffer that goes back to the thread's spare (bytes of pairs or of the key).
const SPARE_SCAN_BYTES: usize = 256 << 10;

/// A scan statement's buffers, the thread's spare between statements (a scan allocates
/// nothing once the thread's buffers have grown to its largest round): the pairs of the
/// current round and the key the next round starts from.
#[derive(Debug, Default)]
struct ScanBuffers {
    batch: ScanBatch,
    position: Vec<u8>,
}

impl ScanBuffers {
    /// Keeps these buffers as the thread's spare, unless a huge scan grew them.
    fn recycle(mut self) {
        if self.batch.bytes.capacity().max(self.position.capacity()) > SPARE_SCAN_BYTES {
            return;
        }
        self.batch.clear();
        crate::spare::keep(&SCAN_SPARE, self);
    }
}

/// The pairs one round of a scan copied, back to back in one buffer that the scan reuses
/// from round to round (and the thread from statement to statement: no allocation per
/// pair).
#[derive(Debug, Default)]
struct ScanBatch {
    bytes: Vec<u8>,
    /// Per pair: where its key ends (and its value starts) and where its value ends.
    ends: Vec<(usize, usize)>,
}

impl ScanBatch {
    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.ends.push((key_end, self.bytes.len()));
    }

    fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&(key_end, end)| {
            let pair = (&self.bytes[start..key_end], &self.bytes[key_end..end]);
            start = end;
            pair
        })
    }

    fn last_key(&self) -> Option<&[u8]> {
        let (key_end, _) = *self.ends.last()?;
        let start = match self.ends.len() {
            1 => 0,
            n => self.ends[n - 2].1,
        };
        Some(&self.bytes[start..key_end])
    }
}

/// Whether `key` is inside the far end `end` of a scan going in `direction`.
fn within(key: &[u8], end: Bound<&[u8]>, direction: Direction) -> bool {
    match (direction, end) {
        (_, Bound::Unbounded) => true,
        (Direction::Forward, Bound::Included(high)) => key <= high,
        (Direction::Forward, Bound::Excluded(high)) => key < high,
        (Direction::Backward, Bound::Included(low)) => key >= low,
        (Direction::Backward, Bound::Excluded(low)) => key > low,
    }
}

fn empty_range(range: KeyRange<'_>) -> bool {
    fn key(bound: Bound<&[u8]>) -> Option<&[u8]> {
        match bound {
            Bound::Included(key) | Bound::Excluded(key) => Some(key),
            Bound::Unbounded => None,
        }
    }
    match (key(range.0), key(range.1)) {
        (Some(low), Some(high)) => {
            low > high
                || (low == high
                    && (matches!(range.0, Bound::Excluded(_))
                        || matches!(range.1, Bound::Excluded(_))))
        }
        _ => false,
    }
}

impl KvTxn for Transaction<'_> {
    fn get(&mut self, tree: TreeId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.statement(|txn| {
            txn.kv.store.limits().check(key, None)?;
            txn.kv.store.tree_ref(tree)?;
            txn.lock(tree, key, Mode::Shared)?;
            txn.kv.store.get(tree, key)
        })
    }

    fn get_for_update(&mut self, tree: TreeId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.statement(|txn| {
            txn.kv.store.limits().check(key, None)?;
            txn.kv.store.tree_ref(tree)?;
            txn.lock(tree, key, Mode::Exclusive)?;
            txn.kv.store.get(tree, key)
        })
    }

    fn get_into(&mut self, tree: TreeId, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        self.statement(|txn| txn.locked_read_into(tree, key, value, Mode::Shared))
    }

    /// Without a lock when this transaction holds none on the key and no other holds it
    /// exclusive (the auto-commit read's probe, `KvStore::read_committed`); otherwise a locking
    /// read (which reads this transaction's own write, or waits for the other writer).
    fn get_committed_into(
        &mut self,
        tree: TreeId,
        key: &[u8],
        value: &mut Vec<u8>,
    ) -> Result<bool> {
        self.statement(|txn| {
            txn.kv.store.limits().check(key, None)?;
            let hash = txn.kv.locks.hash(tree, key);
            if txn.locks.held_at(hash, tree, key).is_none()
                && let Some(found) = txn.kv.read_unless_held(tree, key, hash, value)?
            {
                return Ok(found);
            }
            txn.locked_read_into(tree, key, value, Mode::Shared)
        })
    }

    fn get_for_update_into(
        &mut self,
        tree: TreeId,
        key: &[u8],
        value: &mut Vec<u8>,
    ) -> Result<bool> {
        self.statement(|txn| txn.locked_read_into(tree, key, value, Mode::Exclusive))
    }

    fn put(&mut self, tree: TreeId, key: &[u8], value: &[u8]) -> Result<()> {
        self.statement(|txn| txn.write(tree, key, Some(value)).map(|_| ()))
    }

    fn delete(&mut self, tree: TreeId, key: &[u8]) -> Result<bool> {
        self.statement(|txn| txn.write(tree, key, None))
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
        self.commit_in_place()
    }

    fn abort(mut self: Box<Self>) -> Result<()> {
        self.abort_in_place()
    }
}

impl Transaction<'_> {
    /// [`KvTxn::commit`] without the box: ends the transaction (it is done afterwards,
    /// whatever the outcome; dropping it then only recycles its buffers).
    fn commit_in_place(&mut self) -> Result<()> {
        self.check_active()?;
        self.state = State::Done;
        if self.undo.is_empty() {
            self.release();
            return Ok(());
        }
        let db = self.kv.store.database();
        let appended = db.wal().append(&[LogRecord::TxnCommit { txn: self.id }]);
        let end = match appended {
            Ok(end) => end,
            Err(err) => {
                // Not committed: undo what can be undone (the log is probably unusable).
                let _ = self.finish_rollback();
                return Err(err);
            }
        };
        self.undo.clear();
        self.release();
        make_durable(&self.kv.store, end)
    }

    /// [`KvTxn::abort`] without the box.
    fn abort_in_place(&mut self) -> Result<()> {
        if self.state != State::Active {
            self.state = State::Done;
            return Ok(());
        }
        self.state = State::Done;
        self.finish_rollback()
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.state == State::Active {
            self.state = State::Done;
            if let Err(err) = self.finish_rollback() {
                eprintln!("flashbuf: rolling back a dropped transaction failed: {err}");
            }
        }
        // Commit, abort and rollback released the locks already; the buffers go back to the
        // thread for its next transaction.
        if !self.locks.is_empty() {
            self.kv.locks.release_all(self.id, &self.locks);
        }
        std::mem::take(&mut self.locks).recycle();
        if self.undo.has_buffers() {
            std::mem::take(&mut self.undo).recycle();
        }
    }
}

impl KvEngine for KvStore {
    fn open_tree(&self, name: &str) -> Result<TreeId> {
        self.store.open_tree(name)
    }

    fn begin(&self) -> Result<Box<dyn KvTxn + '_>> {
        Ok(Box::new(self.transaction()?))
    }

    fn transact(&self, body: &mut dyn FnMut(&mut dyn KvTxn) -> Result<TxnEnd>) -> Result<TxnEnd> {
        // On the stack: a failing body's transaction rolls back when dropped, as a boxed one.
        let mut txn = self.transaction()?;
        let end = body(&mut txn)?;
        match end {
            TxnEnd::Commit => txn.commit_in_place()?,
            TxnEnd::Rollback => txn.abort_in_place()?,
        }
        Ok(end)
    }

    fn get_committed_into(&self, tree: TreeId, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        self.read_committed(tree, key, value)
    }

    fn bulk_load(
        &self,
        tree: TreeId,
        pairs: &mut dyn Iterator<Item = (Vec<u8>, Vec<u8>)>,
    ) -> Result<u64> {
        bulk::bulk_load(&self.store, tree, pairs)
    }
}
