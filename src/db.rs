//! A small transactional layer over the buffer pool and the redo log (issue 5): the
//! [`Database`] opens (and recovers) a data device and a log device; a [`Transaction`] latches
//! pages exclusively, changes bytes in place, and commits atomically: all of its changes are
//! recovered after a crash, or none are.
//!
//! **Protocol.** A transaction latches its pages in ascending page order (no deadlocks) and holds
//! them to commit (strict two-phase locking on pages). Changes are made in the frames and
//! recorded as `PageRedo` records; the first change to a page that is clean in the pool also
//! logs the page's whole image first (`FullPageImage`, torn-page protection in the style of
//! PostgreSQL's full_page_writes: every write of a page is preceded in the log by an image taken
//! when it was last dirtied, and no checkpoint passes that image while the page is dirty). At
//! commit, the records and a `Commit` record are appended in one batch; the pages are marked
//! dirty with the batch's LSN range (oldest = its start, so a checkpoint never passes it; newest
//! = its end, so the WAL rule makes a page write wait for the commit record); the latches are
//! released; then the commit waits for the log to be durable (group commit) and only then is
//! acknowledged. An uncommitted change never reaches the data device: it is held under the page
//! latch until the commit record is appended, and a page write needs that record durable first.
//! Dropping a transaction without committing restores the before-images.
//!
//! **Log space.** Before taking its first latch, a transaction checks the log margins (InnoDB's
//! `log_free_check`): past `max_modified_age_sync` it flushes the oldest pages itself (a
//! synchronous recoverability write, counted in the pool's stats) and takes a checkpoint; past
//! `max_checkpoint_age` it takes a checkpoint. A background thread also checkpoints once per
//! `checkpoint_period_ms` of device time.
//!
//! **Checkpoints** sync the data device, then write the log's checkpoint slot; they use the
//! pool's oldest unflushed LSN (dirty pages and WAR's TWB), and never
//! pass a commit that has appended but not yet marked its pages dirty: each commit registers a
//! lower bound of its start LSN before appending and withdraws it after marking its pages.
//!
//! **Recovery** (`Database::open`): the log is scanned from its newest checkpoint; committed
//! transactions are replayed in log order (full page images restore torn pages; a redo is
//! skipped when the page already carries the commit's LSN); uncommitted ones are ignored; then
//! every page is flushed and a checkpoint written, so a crash during recovery is harmless.
//!
//! **Mini-transactions** (the B+-tree's, `src/btree/`): [`Database::append_mtr`] appends a
//! batch of `PageOp` (and `Undo`) records ending in an `MtrEnd` terminator while the caller
//! still holds every changed page latched exclusive, registered in the in-flight registry like
//! a commit, then stamps the pages with the batch's LSN range and releases them. Recovery
//! applies a batch only when its terminator is in the log, through the [`PageOpRedo`] hook the
//! caller passes to [`Database::open_with_redo`] (this module does not know the page formats):
//! per page, a batch is skipped when the page already carries the batch's end LSN or later; a
//! page whose first operation in the batch defines the whole page (an image, a format) is
//! rebuilt without trusting its old contents (a torn page is repaired that way). Transactions
//! of the key-value layer (`TxnCommit`/`TxnAbort`) without an outcome are reported as losers
//! with their undo entries; their first LSN stays registered in flight (no checkpoint passes
//! it) until the caller has rolled them back and calls [`Database::withdraw_in_flight`].
//!
//! Lock order: page latches (ascending page id) → pool internals → the log's mutex; the
//! registry of commits in flight is a leaf.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::device::SharedDevice;
use crate::error::{Error, PageId, Result};
use crate::page::{Lsn, PAGE_HEADER_SIZE};
use crate::pool::{BufferPool, PageWriteGuard, PoolConfig, RedoLog};
use crate::wal::{LogRecord, TxnId, Wal, WalConfig};

/// The pool's view of the WAL.
#[derive(Debug)]
struct WalLog(Arc<Wal>);

impl RedoLog for WalLog {
    fn current_lsn(&self) -> Lsn {
        self.0.current_lsn()
    }
    fn lsn_for_unlogged_change(&self) -> Lsn {
        self.0.current_lsn()
    }
    fn flush_to(&self, lsn: Lsn) -> Result<()> {
        self.0.flush_to(lsn)
    }
    fn capacity(&self) -> Option<u64> {
        Some(self.0.capacity())
    }
}

/// Options of a database.
#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    /// The buffer pool.
    pub pool: PoolConfig,
    /// The redo log.
    pub wal: WalConfig,
    /// Background checkpoint period in device-time milliseconds.
    pub checkpoint_period_ms: u64,
}

/// What recovery did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RecoveryReport {
    /// The checkpoint's redo LSN recovery started from.
    pub redo_lsn: Lsn,
    /// End of the valid log.
    pub end_lsn: Lsn,
    /// Records scanned.
    pub records: usize,
    /// Committed transactions replayed.
    pub committed: usize,
    /// Transactions without a commit record (ignored).
    pub uncommitted: usize,
    /// Page changes applied.
    pub redo_applied: usize,
    /// Page changes skipped because the page already had them.
    pub redo_skipped: usize,
    /// Pages restored from a full page image.
    pub images_restored: usize,
    /// Pages found torn or corrupt on the device and restored from an image.
    pub torn_pages_repaired: usize,
    /// Why the log scan stopped.
    pub stop: String,
    /// Complete mini-transaction batches replayed (some pages may have been skipped).
    pub mtr_batches: usize,
    /// Mini-transaction records at the end of the log without their terminator (ignored).
    pub mtr_records_incomplete: usize,
    /// Key-value transactions without a commit or abort record, in log order of their first
    /// batch: the caller rolls them back (see [`LoserTxn`]).
    pub losers: Vec<LoserTxn>,
}

/// A key-value transaction recovery found without an outcome record.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LoserTxn {
    /// The transaction.
    pub txn: TxnId,
    /// Start LSN of its first complete batch; registered in flight until the caller withdraws
    /// it with [`Database::withdraw_in_flight`] after logging the rollback.
    pub first_lsn: Lsn,
    /// Its `Undo` bodies from complete batches, in log order (interpreted by the caller).
    pub undo: Vec<Vec<u8>>,
}

/// Re-applies a logged page operation (a `PageOp` record) to a page image during recovery.
/// Implemented by the layer that defines the page formats (the B+-tree), so that this module
/// stays independent of them.
pub trait PageOpRedo: Send + Sync + std::fmt::Debug {
    /// Applies `op` to `image` (the whole page, header included) of page `page`.
    ///
    /// # Errors
    /// [`Error::CorruptLog`] or [`Error::CorruptPage`] when the operation does not decode or
    /// does not fit the page.
    fn apply(&self, page: PageId, image: &mut [u8], op: &[u8]) -> Result<()>;

    /// Whether `op` sets the whole page regardless of its previous contents (an image, a
    /// format): recovery then does not need (or trust) the page on the device.
    fn defines_page(&self, op: &[u8]) -> bool;
}

/// The hook of [`Database::open`]: a log with `PageOp` records cannot be recovered without
/// the layer that wrote them.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPageOps;

impl PageOpRedo for NoPageOps {
    fn apply(&self, page: PageId, _image: &mut [u8], _op: &[u8]) -> Result<()> {
        Err(Error::CorruptLog {
            offset: 0,
            reason: format!(
                "a page operation on page {page} needs the B+-tree's redo hook \
                 (open the database through the key-value engine)"
            ),
        })
    }

    fn defines_page(&self, _op: &[u8]) -> bool {
        false
    }
}

#[derive(Debug)]
struct Shared {
    pool: BufferPool,
    wal: Arc<Wal>,
    next_txn: AtomicU64,
    /// Lower bounds of the start LSNs of commits between append and marking their pages.
    in_flight: Mutex<BTreeMap<Lsn, usize>>,
    checkpoint_lock: Mutex<()>,
    stop: AtomicBool,
    wakeup: Mutex<bool>,
    wakeup_cv: Condvar,
    checkpoint_period_ms: u64,
}

/// A recoverable page store: buffer pool + redo log.
#[derive(Debug)]
pub struct Database {
    shared: Arc<Shared>,
    checkpointer: Mutex<Option<JoinHandle<()>>>,
}

impl Database {
    /// Opens the database on `data` with its log on `log`, recovering from the log; a blank log
    /// device is formatted.
    ///
    /// # Errors
    /// Configuration, device, corrupt page (torn without an image) or corrupt log errors.
    pub fn open(
        data: SharedDevice,
        log: SharedDevice,
        config: &DatabaseConfig,
    ) -> Result<(Self, RecoveryReport)> {
        Self::open_with_redo(data, log, config, &NoPageOps)
    }

    /// [`Database::open`] with the hook that re-applies `PageOp` records (the B+-tree's).
    ///
    /// # Errors
    /// As [`Database::open`], plus the hook's errors.
    pub fn open_with_redo(
        data: SharedDevice,
        log: SharedDevice,
        config: &DatabaseConfig,
        redo: &dyn PageOpRedo,
    ) -> Result<(Self, RecoveryReport)> {
        let (wal, recovery) = Wal::open_or_create(log, config.wal.clone())?;
        let wal = Arc::new(wal);
        let pool = BufferPool::open_with_log(
            data,
            config.pool.clone(),
            Arc::new(WalLog(Arc::clone(&wal))),
        )?;
        let mut report = replay(&pool, &recovery, redo)?;
        report.redo_lsn = recovery.checkpoint.redo_lsn;
        report.end_lsn = recovery.end_lsn;
        report.records = recovery.records.len();
        report.stop = format!("{:?}", recovery.stop);
        let max_txn = recovery
            .records
            .iter()
            .filter_map(|r| match &r.record {
                LogRecord::PageRedo { txn, .. }
                | LogRecord::FullPageImage { txn, .. }
                | LogRecord::Commit { txn }
                | LogRecord::MtrEnd { txn }
                | LogRecord::Undo { txn, .. }
                | LogRecord::TxnCommit { txn }
                | LogRecord::TxnAbort { txn } => Some(*txn),
                LogRecord::Checkpoint { .. } | LogRecord::PageOp { .. } => None,
            })
            .max()
            .unwrap_or(0);
        // Make recovery's work durable and start the next recovery after it.
        pool.flush_all()?;
        let shared = Arc::new(Shared {
            pool,
            wal,
            next_txn: AtomicU64::new(max_txn + 1),
            in_flight: Mutex::new(BTreeMap::new()),
            checkpoint_lock: Mutex::new(()),
            stop: AtomicBool::new(false),
            wakeup: Mutex::new(false),
            wakeup_cv: Condvar::new(),
            checkpoint_period_ms: config.checkpoint_period_ms.max(1),
        });
        // Losers keep their log (their undo entries) until the caller has rolled them back.
        for loser in &report.losers {
            shared.register_in_flight_at(loser.first_lsn);
        }
        shared.checkpoint()?;
        let background = Arc::clone(&shared);
        let checkpointer = std::thread::Builder::new()
            .name("flashbuf-checkpointer".into())
            .spawn(move || background.checkpoint_loop())
            .map_err(|err| Error::io("starting the checkpointer thread", err))?;
        Ok((
            Database {
                shared,
                checkpointer: Mutex::new(Some(checkpointer)),
            },
            report,
        ))
    }

    /// Starts a transaction.
    pub fn begin(&self) -> Transaction<'_> {
        Transaction {
            db: self,
            txn: self.shared.next_txn.fetch_add(1, Ordering::Relaxed),
            pages: BTreeMap::new(),
            records: Vec::new(),
            committed: false,
        }
    }

    /// The buffer pool (for reads outside transactions and for stats).
    pub fn pool(&self) -> &BufferPool {
        &self.shared.pool
    }

    /// The redo log.
    pub fn wal(&self) -> &Wal {
        &self.shared.wal
    }

    /// Takes a checkpoint now: the redo point moves to the pool's oldest unflushed change.
    ///
    /// # Errors
    /// Log errors.
    pub fn checkpoint(&self) -> Result<()> {
        self.shared.checkpoint()
    }

    /// A fresh transaction id (unique across restarts: recovery starts above every id in the
    /// log), for transaction layers built on mini-transactions.
    pub fn next_txn_id(&self) -> TxnId {
        self.shared.next_txn.fetch_add(1, Ordering::Relaxed)
    }

    /// InnoDB's `log_free_check`: call holding no page latch before a change, so the log never
    /// fills while latches are held (see the module docs).
    ///
    /// # Errors
    /// [`Error::LogFull`] when the log cannot be freed within its timeout; write errors.
    pub fn log_free_check(&self) -> Result<()> {
        self.shared.log_free_check()
    }

    /// Registers a lower bound of the LSN of records about to be appended (the current end of
    /// the log): no checkpoint passes it until [`Database::withdraw_in_flight`]. A transaction
    /// layer holds one from its first change to its outcome record, so recovery always finds
    /// its undo entries.
    pub fn register_in_flight(&self) -> Lsn {
        self.shared.register_in_flight()
    }

    /// Withdraws a bound from [`Database::register_in_flight`] (or a loser's `first_lsn`).
    pub fn withdraw_in_flight(&self, bound: Lsn) {
        self.shared.withdraw_in_flight(bound);
    }

    /// Appends a mini-transaction: `records` (ending in `MtrEnd`) in one batch while `pages`
    /// (every page the records change, latched exclusive) are held; then stamps each page with
    /// the batch's LSN range and releases it (draining `pages`). Registered in flight from
    /// before the append until the pages are marked dirty, so no checkpoint passes the batch.
    /// On error nothing was appended and `pages` are left to the caller (to restore).
    ///
    /// # Errors
    /// Log errors ([`Error::LogFull`], [`Error::Poisoned`], a batch over the log's limit).
    pub fn append_mtr(
        &self,
        records: &[LogRecord],
        pages: &mut Vec<PageWriteGuard<'_>>,
    ) -> Result<crate::wal::LsnRange> {
        assert!(
            matches!(records.last(), Some(LogRecord::MtrEnd { .. })),
            "a mini-transaction batch ends with its terminator"
        );
        let bound = self.shared.register_in_flight();
        let range = match self.shared.wal.append_range(records) {
            Ok(range) => range,
            Err(err) => {
                self.shared.withdraw_in_flight(bound);
                return Err(err);
            }
        };
        for guard in pages.iter_mut() {
            guard.set_lsn_range(range.start, range.end);
        }
        pages.clear(); // releases the latches, marking the pages dirty
        self.shared.withdraw_in_flight(bound);
        Ok(range)
    }

    /// Stops the checkpointer, flushes every page, takes a final checkpoint.
    ///
    /// # Errors
    /// Write or log errors.
    pub fn close(&self) -> Result<()> {
        self.stop_checkpointer();
        self.shared.pool.shutdown()?;
        self.shared.checkpoint()
    }

    fn stop_checkpointer(&self) {
        self.shared.stop.store(true, Ordering::Release);
        {
            let mut flag = self.shared.wakeup.lock();
            *flag = true;
            self.shared.wakeup_cv.notify_all();
        }
        if let Some(handle) = self.checkpointer.lock().take() {
            let _ = handle.join();
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        self.stop_checkpointer();
    }
}

impl Shared {
    fn checkpoint(&self) -> Result<()> {
        let _one = self.checkpoint_lock.lock();
        // The registry stays locked while the redo point is computed: a batch registers before
        // its append and withdraws after its pages are dirty, so with no registration or
        // withdrawal in between, every appended batch is either still registered or has its
        // pages on the flush list (otherwise a withdrawal between reading the registry and
        // reading the flush list lets the redo point pass a batch whose pages are not yet dirty).
        let redo = {
            let in_flight = self.in_flight.lock();
            let mut redo = self.pool.oldest_unflushed_lsn().min(self.wal.current_lsn());
            if let Some(&bound) = in_flight.keys().next() {
                redo = redo.min(bound);
            }
            redo
        };
        let redo = redo.max(self.wal.checkpoint_lsn());
        // Every page write that completed before `redo` was computed must be durable before
        // the checkpoint says its changes need no redo (InnoDB fsyncs the data files here too).
        self.pool.device().sync().map_err(Error::Device)?;
        self.wal.write_checkpoint(redo)
    }

    fn checkpoint_loop(&self) {
        let period = Duration::from_secs_f64(
            self.checkpoint_period_ms as f64 / 1000.0 * self.pool.device().info().time_scale,
        );
        while !self.stop.load(Ordering::Acquire) {
            let mut flag = self.wakeup.lock();
            if !*flag {
                let _ = self.wakeup_cv.wait_for(&mut flag, period);
            }
            *flag = false;
            drop(flag);
            if self.stop.load(Ordering::Acquire) {
                break;
            }
            // A failed checkpoint poisons the log; commits report it.
            let _ = self.checkpoint();
        }
    }

    /// Registers a commit about to append; returns the lower bound registered.
    fn register_in_flight(&self) -> Lsn {
        let mut in_flight = self.in_flight.lock();
        let bound = self.wal.current_lsn();
        *in_flight.entry(bound).or_insert(0) += 1;
        bound
    }

    /// Registers an explicit bound (a loser transaction's first LSN during recovery).
    fn register_in_flight_at(&self, bound: Lsn) {
        *self.in_flight.lock().entry(bound).or_insert(0) += 1;
    }

    fn withdraw_in_flight(&self, bound: Lsn) {
        let mut in_flight = self.in_flight.lock();
        if let Some(count) = in_flight.get_mut(&bound) {
            *count -= 1;
            if *count == 0 {
                in_flight.remove(&bound);
            }
        }
    }

    /// InnoDB's `log_free_check` (called holding no latch): keep the log from filling. Past
    /// `max_modified_age_sync` the calling thread flushes the oldest pages itself (synchronous
    /// recoverability writes); past that or `max_checkpoint_age` it takes a checkpoint; and it
    /// waits until the log is back under both margins (pages it cannot flush are latched by
    /// transactions that will release them). Bound: the log's full timeout, then `LogFull`.
    fn log_free_check(&self) -> Result<()> {
        let margins = self.wal.margins();
        let deadline = std::time::Instant::now() + self.wal.config().full_timeout;
        loop {
            let state = self
                .wal
                .checkpoint_age_state(self.pool.oldest_unflushed_lsn());
            let flush = state.modified_age >= margins.max_modified_age_sync;
            let checkpoint = flush || state.checkpoint_age >= margins.max_checkpoint_age;
            if !checkpoint {
                return Ok(());
            }
            if flush {
                let target = self
                    .wal
                    .current_lsn()
                    .saturating_sub(margins.max_modified_age_async);
                self.pool.preflush(target)?;
            }
            self.checkpoint()?;
            let state = self
                .wal
                .checkpoint_age_state(self.pool.oldest_unflushed_lsn());
            if state.modified_age < margins.max_modified_age_sync
                && state.checkpoint_age < margins.max_checkpoint_age
            {
                return Ok(());
            }
            if std::time::Instant::now() >= deadline {
                return Err(Error::LogFull {
                    needed: state.checkpoint_age,
                    checkpoint_lsn: self.wal.checkpoint_lsn(),
                    capacity: margins.capacity,
                });
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// A transaction: exclusive page latches, changes in place, atomic commit.
#[derive(Debug)]
pub struct Transaction<'db> {
    db: &'db Database,
    txn: TxnId,
    pages: BTreeMap<PageId, LockedPage<'db>>,
    records: Vec<LogRecord>,
    committed: bool,
}

#[derive(Debug)]
struct LockedPage<'db> {
    guard: PageWriteGuard<'db>,
    before: Vec<u8>,
    imaged: bool,
}

impl Transaction<'_> {
    /// The transaction's id.
    pub fn id(&self) -> TxnId {
        self.txn
    }

    /// Latches `pages` exclusively (sorted; already held ones are skipped). Pages must be
    /// locked in ascending order across calls, which rules out deadlocks between transactions.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a page below one already held (lock order), page or
    /// device errors.
    pub fn lock(&mut self, pages: &[PageId]) -> Result<()> {
        let mut wanted: Vec<PageId> = pages
            .iter()
            .copied()
            .filter(|p| !self.pages.contains_key(p))
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        if let (Some(&first), Some((&held, _))) = (wanted.first(), self.pages.last_key_value())
            && first < held
        {
            return Err(Error::InvalidArgument(format!(
                "transaction {} locks page {first} after page {held}: lock pages in ascending order",
                self.txn
            )));
        }
        if self.pages.is_empty() && !wanted.is_empty() {
            // InnoDB's rule: check the log margins before taking any latch, so a thread that
            // must flush pages to make log space never waits for latches others hold while they
            // wait for log space.
            self.db.shared.log_free_check()?;
        }
        for page in wanted {
            let guard = self.db.shared.pool.write(page)?;
            let before = guard.data().to_vec();
            self.pages.insert(
                page,
                LockedPage {
                    guard,
                    before,
                    imaged: false,
                },
            );
        }
        Ok(())
    }

    /// The bytes of a locked page.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the page is not locked by this transaction.
    pub fn page(&self, page: PageId) -> Result<&[u8]> {
        self.pages
            .get(&page)
            .map(|locked| locked.guard.data())
            .ok_or_else(|| self.not_locked(page))
    }

    /// Writes `bytes` at `offset` of a locked page (past the page header).
    ///
    /// # Errors
    /// Page not locked, or the range is outside the page payload.
    pub fn update(&mut self, page: PageId, offset: usize, bytes: &[u8]) -> Result<()> {
        let page_size = self.db.shared.pool.page_size();
        let end = offset.saturating_add(bytes.len());
        if offset < PAGE_HEADER_SIZE || end > page_size {
            return Err(Error::InvalidArgument(format!(
                "update of bytes {offset}..{end} of page {page}: the payload is {PAGE_HEADER_SIZE}..{page_size}"
            )));
        }
        let txn = self.txn;
        let not_locked = self.not_locked(page);
        let locked = self.pages.get_mut(&page).ok_or(not_locked)?;
        if !locked.imaged && locked.guard.oldest_modification() == 0 {
            // First change since the page was last clean: log its image (torn-page protection).
            self.records.push(LogRecord::FullPageImage {
                txn,
                page,
                image: locked.before.clone(),
            });
        }
        locked.imaged = true;
        locked.guard.data_mut()[offset..end].copy_from_slice(bytes);
        self.records.push(LogRecord::PageRedo {
            txn,
            page,
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
            bytes: bytes.to_vec(),
        });
        Ok(())
    }

    /// Commits: appends the records and the commit record, releases the latches, and returns
    /// once the commit is durable (its end LSN).
    ///
    /// # Errors
    /// Log errors (the transaction is then rolled back if its records were not appended, and
    /// its outcome is unknown if the final flush failed: the log is poisoned either way).
    pub fn commit(mut self) -> Result<Lsn> {
        let shared = &self.db.shared;
        if self.records.is_empty() {
            self.committed = true;
            return Ok(shared.wal.current_lsn());
        }
        let mut records = std::mem::take(&mut self.records);
        records.push(LogRecord::Commit { txn: self.txn });
        let bound = shared.register_in_flight();
        let range = match shared.wal.append_range(&records) {
            Ok(range) => range,
            Err(err) => {
                shared.withdraw_in_flight(bound);
                self.rollback();
                return Err(err);
            }
        };
        for locked in self.pages.values_mut() {
            if locked.imaged {
                locked.guard.set_lsn_range(range.start, range.end);
            }
        }
        self.committed = true;
        self.pages.clear(); // releases the latches, marking changed pages dirty
        shared.withdraw_in_flight(bound);
        let end = range.end;
        shared.wal.flush_to(end)?;
        Ok(end)
    }

    fn rollback(&mut self) {
        for locked in self.pages.values_mut() {
            if locked.imaged {
                let before = std::mem::take(&mut locked.before);
                locked.guard.restore(&before);
            }
        }
        self.pages.clear();
        self.records.clear();
    }

    fn not_locked(&self, page: PageId) -> Error {
        Error::InvalidArgument(format!(
            "page {page} is not locked by transaction {}",
            self.txn
        ))
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if !self.committed {
            self.rollback();
        }
    }
}

/// Replays committed transactions and complete mini-transaction batches in log order, and
/// collects the key-value transactions without an outcome (see the module docs).
fn replay(
    pool: &BufferPool,
    recovery: &crate::wal::Recovery,
    redo: &dyn PageOpRedo,
) -> Result<RecoveryReport> {
    let mut report = RecoveryReport::default();
    let mut pending: HashMap<TxnId, Vec<&LogRecord>> = HashMap::new();
    let mut starts: HashMap<TxnId, Lsn> = HashMap::new();
    // The LSN each touched page is known to carry (its header LSN when read, 0 when restored
    // from an image, the commit's end LSN after a replay).
    let mut page_lsn: HashMap<PageId, Lsn> = HashMap::new();
    // The mini-transaction batch being collected: its records and its start LSN.
    let mut batch: Vec<&LogRecord> = Vec::new();
    let mut batch_start: Lsn = 0;
    // Key-value transactions seen (first LSN, undo bodies) and those with an outcome.
    let mut kv_txns: BTreeMap<TxnId, LoserTxn> = BTreeMap::new();
    let mut torn = TornPages {
        last_definition: last_definitions(recovery, redo),
        awaiting: std::collections::HashSet::new(),
    };
    for recovered in &recovery.records {
        match &recovered.record {
            LogRecord::PageRedo { txn, .. } | LogRecord::FullPageImage { txn, .. } => {
                starts.entry(*txn).or_insert(recovered.start);
                pending.entry(*txn).or_default().push(&recovered.record);
            }
            LogRecord::Commit { txn } => {
                let records = pending.remove(txn).unwrap_or_default();
                let start = starts.remove(txn).unwrap_or(recovered.start);
                apply_committed(
                    pool,
                    &records,
                    start,
                    recovered.end,
                    &mut page_lsn,
                    &mut report,
                )?;
                report.committed += 1;
            }
            LogRecord::PageOp { .. } | LogRecord::Undo { .. } => {
                if batch.is_empty() {
                    batch_start = recovered.start;
                }
                batch.push(&recovered.record);
            }
            LogRecord::MtrEnd { txn } => {
                let range = crate::wal::LsnRange {
                    start: if batch.is_empty() {
                        recovered.start
                    } else {
                        batch_start
                    },
                    end: recovered.end,
                };
                apply_mtr_batch(
                    pool,
                    redo,
                    &batch,
                    range,
                    &mut page_lsn,
                    &mut torn,
                    &mut report,
                )?;
                if *txn != 0 {
                    let entry = kv_txns.entry(*txn).or_insert_with(|| LoserTxn {
                        txn: *txn,
                        first_lsn: range.start,
                        undo: Vec::new(),
                    });
                    for record in &batch {
                        if let LogRecord::Undo { body, .. } = record {
                            entry.undo.push(body.clone());
                        }
                    }
                }
                batch.clear();
                report.mtr_batches += 1;
            }
            LogRecord::TxnCommit { txn } | LogRecord::TxnAbort { txn } => {
                kv_txns.remove(txn);
            }
            LogRecord::Checkpoint { .. } => {}
        }
    }
    report.uncommitted = pending.len();
    report.mtr_records_incomplete = batch.len();
    let mut losers: Vec<LoserTxn> = kv_txns.into_values().collect();
    losers.sort_by_key(|loser| loser.first_lsn);
    report.losers = losers;
    Ok(report)
}

/// Pages found torn on the device whose repair comes later in the log.
struct TornPages {
    /// Per page, the start LSN of the last complete batch that defines it whole (an image or a
    /// format as the page's first operation in the batch).
    last_definition: HashMap<PageId, Lsn>,
    /// Torn pages waiting for that batch: earlier batches on them are skipped.
    awaiting: std::collections::HashSet<PageId>,
}

/// The pre-pass of [`TornPages::last_definition`].
fn last_definitions(
    recovery: &crate::wal::Recovery,
    redo: &dyn PageOpRedo,
) -> HashMap<PageId, Lsn> {
    let mut last = HashMap::new();
    let mut firsts: Vec<(PageId, bool)> = Vec::new();
    let mut start = None;
    for recovered in &recovery.records {
        match &recovered.record {
            LogRecord::PageOp { page, op } => {
                start.get_or_insert(recovered.start);
                if firsts.iter().all(|(seen, _)| seen != page) {
                    firsts.push((*page, redo.defines_page(op)));
                }
            }
            LogRecord::Undo { .. } => {
                start.get_or_insert(recovered.start);
            }
            LogRecord::MtrEnd { .. } => {
                let batch_start = start.take().unwrap_or(recovered.start);
                for (page, defines) in firsts.drain(..) {
                    if defines {
                        last.insert(page, batch_start);
                    }
                }
            }
            _ => {}
        }
    }
    last
}

/// Applies one complete mini-transaction batch: per page, in record order, unless the page
/// already carries the batch (its LSN is at or past the batch's end). A page that cannot be
/// read (torn: its last write was cut by the crash) while a later batch rebuilds it whole is
/// skipped until that batch: the write that tore it came after that batch's image (the first
/// change after a page was clean logs its image), and every earlier change is in the image.
fn apply_mtr_batch(
    pool: &BufferPool,
    redo: &dyn PageOpRedo,
    batch: &[&LogRecord],
    range: crate::wal::LsnRange,
    page_lsn: &mut HashMap<PageId, Lsn>,
    torn: &mut TornPages,
    report: &mut RecoveryReport,
) -> Result<()> {
    // Pages in order of first appearance, each with its operations in log order. A batch
    // changes a handful of pages, so a vector is the right map.
    let mut pages: Vec<(PageId, Vec<&[u8]>)> = Vec::new();
    for record in batch {
        if let LogRecord::PageOp { page, op } = record {
            match pages.iter_mut().find(|(id, _)| id == page) {
                Some((_, ops)) => ops.push(op.as_slice()),
                None => pages.push((*page, vec![op.as_slice()])),
            }
        }
    }
    for (page, ops) in pages {
        let defines = ops.first().is_some_and(|op| redo.defines_page(op));
        if torn.awaiting.contains(&page) {
            if !defines {
                report.redo_skipped += ops.len();
                continue;
            }
            torn.awaiting.remove(&page);
            page_lsn.insert(page, 0);
        }
        let known = match page_lsn.get(&page) {
            Some(&lsn) => lsn,
            // A page the batch rebuilds whole may be torn on the device: unreadable means
            // "older than anything" (the batch repairs it).
            None if defines => {
                if let Ok(guard) = pool.read(page) {
                    crate::page::page_lsn(guard.data())
                } else {
                    report.torn_pages_repaired += 1;
                    0
                }
            }
            None => match pool.write(page) {
                Ok(guard) => crate::page::page_lsn(guard.data()),
                Err(Error::CorruptPage { .. })
                    if torn
                        .last_definition
                        .get(&page)
                        .is_some_and(|&at| at > range.start) =>
                {
                    report.torn_pages_repaired += 1;
                    report.redo_skipped += ops.len();
                    torn.awaiting.insert(page);
                    continue;
                }
                Err(err) => return Err(err),
            },
        };
        if known >= range.end {
            report.redo_skipped += ops.len();
            page_lsn.insert(page, known);
            continue;
        }
        let mut guard = if defines {
            pool.create(page)?
        } else {
            pool.write(page)?
        };
        for op in &ops {
            redo.apply(page, guard.data_mut(), op)?;
        }
        guard.set_lsn_range(range.start, range.end);
        report.redo_applied += ops.len();
        page_lsn.insert(page, range.end);
    }
    Ok(())
}

fn apply_committed(
    pool: &BufferPool,
    records: &[&LogRecord],
    start: Lsn,
    commit_end: Lsn,
    page_lsn: &mut HashMap<PageId, Lsn>,
    report: &mut RecoveryReport,
) -> Result<()> {
    for record in records {
        match record {
            LogRecord::FullPageImage { page, image, .. } => {
                let torn = pool.read(*page).is_err();
                let mut guard = pool.create(*page)?;
                if image.len() != guard.data().len() {
                    return Err(Error::CorruptLog {
                        offset: start,
                        reason: format!("image of page {page} has {} bytes", image.len()),
                    });
                }
                guard.data_mut().copy_from_slice(image);
                guard.set_lsn_range(start, commit_end);
                page_lsn.insert(*page, 0);
                report.images_restored += 1;
                report.torn_pages_repaired += usize::from(torn);
            }
            LogRecord::PageRedo {
                page,
                offset,
                bytes,
                ..
            } => {
                let mut guard = pool.write(*page)?;
                let known = *page_lsn
                    .entry(*page)
                    .or_insert_with(|| crate::page::page_lsn(guard.data()));
                if known >= commit_end {
                    report.redo_skipped += 1;
                    continue;
                }
                let offset = *offset as usize;
                let end = offset.saturating_add(bytes.len());
                if end > guard.data().len() || offset < PAGE_HEADER_SIZE {
                    return Err(Error::CorruptLog {
                        offset: start,
                        reason: format!("redo of bytes {offset}..{end} of page {page}"),
                    });
                }
                guard.data_mut()[offset..end].copy_from_slice(bytes);
                guard.set_lsn_range(start, commit_end);
                report.redo_applied += 1;
            }
            LogRecord::Commit { .. }
            | LogRecord::Checkpoint { .. }
            | LogRecord::PageOp { .. }
            | LogRecord::MtrEnd { .. }
            | LogRecord::Undo { .. }
            | LogRecord::TxnCommit { .. }
            | LogRecord::TxnAbort { .. } => {}
        }
    }
    for record in records {
        if let LogRecord::PageRedo { page, .. } | LogRecord::FullPageImage { page, .. } = record {
            page_lsn.insert(*page, commit_end);
        }
    }
    Ok(())
}
