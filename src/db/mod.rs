//! A recoverable page store: the buffer pool over a self-describing data file, and the redo
//! log on its own device (issues 5, 8 and 9).
//!
//! **Files.** The data device holds the data-file layout (`crate::datafile`,
//! `docs/datafile-format.md`): two header slots, InnoDB's doublewrite area, then the data pages,
//! which the pool sees through a region view. The header names the database, its capacity, a
//! high-water mark (pages below it must verify; an all-zero one is a lost write) and the log it
//! is bound to. [`Database::open`] classifies both devices before writing anything:
//! - both blank: a new database (the log is formatted first, then the data file bound to it);
//! - a data file never bound to a log (an image loaded by `flashbuf load` or the bench) and a
//!   blank log device: the log is formatted and the data file bound to it (and with a log
//!   formatted but never used, a crash between those two steps: the binding is finished);
//! - a data file and its log: recovery;
//! - a data file whose log is blank or lost its header, a log whose data file is blank (unless
//!   the log was never used), a data file bound to another log, or anything foreign: an
//!   [`Error::Format`] that changes nothing. A log is never formatted over a database.
//!
//! **Torn-page protection** (`PoolConfig::torn_page_protection`, by default the scheme's host
//! engine's): `doublewrite` (InnoDB) writes every page to the doublewrite area and syncs before
//! writing it in place, and recovery restores torn pages from there first (`doublewrite8`, MySQL
//! 8.0's segmented variant, uses the same area and the same recovery); `page-images`
//! (PostgreSQL's `full_page_writes`) logs a page's image with the first change after it was last
//! clean, and recovery restores a torn page from the next such image in the log (see
//! `recovery.rs` for why that image always exists); `none` leaves a torn page unrecoverable (a
//! clear error).
//!
//! **Commits** (`txn.rs`): a transaction's records and its commit record are appended in one
//! batch; durability per `flush_log_at_trx_commit` (InnoDB's): 1 waits for the log to be synced
//! (group commit); 0 returns at once and the log writer syncs every `log_flush_period_ms`; 2
//! returns at once and wakes the log writer (our devices have no OS cache to write into, so 2
//! differs from 0 only in that wake-up). With 0 and 2 a crash loses at most the last period's
//! commits, never part of one.
//!
//! **Checkpoints** sync the data device through the pool's sync gate, then raise the
//! high-water mark to cover every page written, then write the log's checkpoint slot; they use
//! the pool's oldest unflushed LSN (dirty pages and WAR's TWB) and never pass a batch that is
//! appended but whose pages are not yet marked dirty (`in_flight`).
//!
//! **Failure.** A failed write or sync poisons the pool (and a failed log write poisons the
//! log): the writes it covered may be lost (Linux drops them after a failed fsync), so no
//! checkpoint moves past them and every later commit returns [`Error::Poisoned`]. Reopening
//! recovers from the log, which still holds everything since the last good checkpoint.
//!
//! **Mini-transactions** (the B+-tree's, `src/btree/`): [`Database::append_mtr`] appends a
//! batch of `PageOp` (and `Undo`) records ending in an `MtrEnd` terminator while the caller
//! holds every changed page latched exclusive, registered in flight like a commit, then stamps
//! the pages with the batch's LSN range and releases them. Recovery applies a batch only when
//! its terminator is in the log, through the [`PageOpRedo`] hook given to
//! [`Database::open_with_redo`] (this module does not know the tree's page formats; see
//! `recovery.rs`). Key-value transactions without a `TxnCommit`/`TxnAbort` are reported as
//! losers with their undo entries; their first LSN stays registered in flight (no checkpoint
//! passes it) until the caller has rolled them back and calls [`Database::withdraw_in_flight`].
//!
//! Lock order: page latches (ascending page id) → pool internals → the log's mutex; the
//! registry of batches in flight and the checkpoint lock are leaves.

mod in_flight;
mod recovery;
mod txn;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

pub use recovery::{LoserTxn, NoPageOps, PageOpRedo, RecoveryReport};
pub use txn::Transaction;

use crate::datafile::{DataFile, DataFileContent};
use crate::device::{AlignedBuf, SharedDevice};
use crate::engine::innodb::doublewrite::{DoublewriteArea, restore_torn_pages};
use crate::engine::{PoolConfig, TornPageProtection, WriteTarget, open_pool};
use crate::error::{Error, FormatProblem, Result};
use crate::page::Lsn;
use crate::pool::{BufferPool, PageWriteGuard, RedoLog};
use crate::wal::{LogDeviceContent, LogRecord, LsnRange, Recovery, StopReason, Wal, WalConfig};

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
    fn bounds_page_lsns(&self) -> bool {
        true
    }
}

/// Options of a database.
#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    /// The buffer pool (its scheme chooses the default torn-page protection).
    pub pool: PoolConfig,
    /// The redo log.
    pub wal: WalConfig,
    /// Background checkpoint period in device-time milliseconds.
    pub checkpoint_period_ms: u64,
    /// InnoDB's `innodb_flush_log_at_trx_commit`: 1 (sync at commit), 0 or 2 (see the module
    /// docs).
    pub flush_log_at_trx_commit: u8,
    /// How often the log writer syncs the log with modes 0 and 2 (device-time ms; InnoDB: 1 s).
    pub log_flush_period_ms: u64,
    /// Data pages of a new database (`None`: all the data device holds after the header and
    /// the doublewrite area). Ignored when opening an existing one.
    pub data_pages: Option<u64>,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            pool: PoolConfig::default(),
            wal: WalConfig::default(),
            checkpoint_period_ms: 1000,
            flush_log_at_trx_commit: 1,
            log_flush_period_ms: 1000,
            data_pages: None,
        }
    }
}

impl DatabaseConfig {
    /// The configuration with `pool`, the other settings at their defaults.
    #[must_use]
    pub fn with_pool(pool: PoolConfig) -> Self {
        DatabaseConfig {
            pool,
            ..DatabaseConfig::default()
        }
    }

    fn validate(&self) -> Result<()> {
        if self.flush_log_at_trx_commit > 2 {
            return Err(Error::Config(format!(
                "flush_log_at_trx_commit = {} is not 0, 1 or 2",
                self.flush_log_at_trx_commit
            )));
        }
        if self.checkpoint_period_ms == 0 || self.log_flush_period_ms == 0 {
            return Err(Error::Config(
                "checkpoint_period_ms and log_flush_period_ms must be positive".into(),
            ));
        }
        Ok(())
    }
}

/// A background thread's wake-up flag.
#[derive(Debug, Default)]
struct Wakeup {
    flag: Mutex<bool>,
    cv: Condvar,
}

impl Wakeup {
    fn wake(&self) {
        *self.flag.lock() = true;
        self.cv.notify_all();
    }

    /// Waits for a wake-up or `period`; returns after clearing the flag.
    fn wait(&self, period: Duration) {
        let mut flag = self.flag.lock();
        if !*flag {
            let _ = self.cv.wait_for(&mut flag, period);
        }
        *flag = false;
    }
}

#[derive(Debug)]
struct Shared {
    pool: BufferPool,
    wal: Arc<Wal>,
    datafile: DataFile,
    protection: TornPageProtection,
    flush_log_at_trx_commit: u8,
    next_txn: std::sync::atomic::AtomicU64,
    /// Lower bounds of the start LSNs of batches between append and marking their pages.
    in_flight: in_flight::InFlightRegistry,
    checkpoint_lock: Mutex<()>,
    stop: AtomicBool,
    checkpointer_wakeup: Wakeup,
    log_writer_wakeup: Wakeup,
    checkpoint_period_ms: u64,
    log_flush_period_ms: u64,
}

/// A recoverable page store: buffer pool + redo log + data file.
///
/// Close it with [`Database::close`] to write everything back and take a final checkpoint (and
/// learn about errors). Dropping it without closing does the same, reporting a failure on
/// standard error. [`Database::abandon`] stops it without writing anything: what a crash leaves.
#[derive(Debug)]
pub struct Database {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    closed: AtomicBool,
}

/// A batch appended whose pages are not yet marked dirty: while it lives, no checkpoint moves
/// past the batch. Drop it after the batch's page guards.
#[derive(Debug)]
#[must_use = "drop it after the batch's page guards"]
pub struct InFlight<'db> {
    shared: &'db Shared,
    bound: Lsn,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.shared.withdraw_in_flight(self.bound);
    }
}

/// What the two devices hold and what to do about it.
enum Plan {
    /// Both blank: a new database.
    Create,
    /// A data file never bound to a log (an image loaded outside a database): a new log, then
    /// bind the data file to it.
    CreateLog,
    /// A data file and its log.
    Open,
}

impl Database {
    /// Opens the database on `data` with its log on `log`, recovering from the log; both blank
    /// devices make a new database (see the module docs for every case).
    ///
    /// # Errors
    /// [`Error::Format`] when the devices do not hold a database and its log (nothing is
    /// written then); configuration, device, corrupt page (torn without a copy or an image)
    /// or corrupt log errors.
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
        config.validate()?;
        config.pool.validate()?;
        let (datafile, wal, recovery) = match plan(&data, &log, &config.wal)? {
            Plan::Create => create_files(data, log, config)?,
            Plan::CreateLog => create_log(data, log, &config.wal)?,
            Plan::Open => open_files(data, log, &config.wal)?,
        };
        Self::start(datafile, wal, &recovery, config, redo)
    }

    fn start(
        datafile: DataFile,
        wal: Arc<Wal>,
        recovery: &Recovery,
        config: &DatabaseConfig,
        redo: &dyn PageOpRedo,
    ) -> Result<(Self, RecoveryReport)> {
        let protection = config.pool.effective_torn_page_protection();
        let mut pool_config = config.pool.clone();
        pool_config.torn_page_protection = Some(protection);
        let data_view = datafile.data_device()?;
        let area = DoublewriteArea {
            device: datafile.doublewrite_device()?,
            first_page: 0,
        };
        let high_water = datafile.header().high_water_mark;
        // Copies left in the doublewrite area by any earlier run restore torn pages before the
        // log is replayed over them.
        let restored = restore_torn_pages(
            &area,
            &data_view,
            recovery.checkpoint.redo_lsn,
            &|bytes, page| crate::datafile::verify_data_page(bytes, page, high_water).is_ok(),
        )?;
        // A database of another on-disk format is refused before the log is replayed over it
        // (its records are in that format too): nothing is written then.
        check_stored_format(&data_view, high_water, redo)?;
        let target = WriteTarget {
            data: data_view,
            doublewrite: Some(area),
        };
        let pool = open_pool(&target, &pool_config, Arc::new(WalLog(Arc::clone(&wal))))?;
        pool.set_high_water(high_water);
        let mut report = recovery::replay(&pool, recovery, protection, redo)?;
        report.doublewrite_copies = restored.copies;
        report.doublewrite_restored = restored.restored;
        report.redo_lsn = recovery.checkpoint.redo_lsn;
        report.end_lsn = recovery.end_lsn;
        report.records = recovery.records.len();
        report.stop = format!("{:?}", recovery.stop);
        // Make recovery's work durable and start the next recovery after it.
        pool.flush_all()?;
        let shared = Arc::new(Shared {
            pool,
            wal,
            datafile,
            protection,
            flush_log_at_trx_commit: config.flush_log_at_trx_commit,
            next_txn: std::sync::atomic::AtomicU64::new(report.max_txn + 1),
            in_flight: in_flight::InFlightRegistry::default(),
            checkpoint_lock: Mutex::new(()),
            stop: AtomicBool::new(false),
            checkpointer_wakeup: Wakeup::default(),
            log_writer_wakeup: Wakeup::default(),
            checkpoint_period_ms: config.checkpoint_period_ms,
            log_flush_period_ms: config.log_flush_period_ms,
        });
        // Losers keep their log (their undo entries) until the caller has rolled them back.
        for loser in &report.losers {
            shared.register_in_flight_at(loser.first_lsn);
        }
        shared.checkpoint()?;
        let database = Database {
            shared,
            threads: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        };
        database.spawn("flashbuf-checkpointer", Shared::checkpoint_loop)?;
        if database.shared.flush_log_at_trx_commit != 1 {
            database.spawn("flashbuf-log-writer", Shared::log_writer_loop)?;
        }
        Ok((database, report))
    }

    fn spawn(&self, name: &str, body: fn(&Shared)) -> Result<()> {
        let shared = Arc::clone(&self.shared);
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || body(&shared))
            .map_err(|err| Error::io(format!("starting the {name} thread"), err))?;
        self.threads.lock().push(handle);
        Ok(())
    }

    /// Starts a transaction.
    pub fn begin(&self) -> Transaction<'_> {
        Transaction::new(self, self.shared.next_txn.fetch_add(1, Ordering::Relaxed))
    }

    /// The buffer pool (for reads outside transactions and for stats).
    pub fn pool(&self) -> &BufferPool {
        &self.shared.pool
    }

    /// The redo log.
    pub fn wal(&self) -> &Wal {
        &self.shared.wal
    }

    /// The data file (header, high-water mark, regions).
    pub fn datafile(&self) -> &DataFile {
        &self.shared.datafile
    }

    /// The torn-page protection in force.
    pub fn torn_page_protection(&self) -> TornPageProtection {
        self.shared.protection
    }

    /// Whether the first change to a page that was clean must log its image first (the
    /// `page-images` protection). `guard` is the page's write guard.
    pub fn needs_page_image(&self, guard: &PageWriteGuard<'_>) -> bool {
        self.shared.protection == TornPageProtection::PageImages && guard.oldest_modification() == 0
    }

    /// Fails once the pool or the log is poisoned by a failed write or sync.
    ///
    /// # Errors
    /// [`Error::Poisoned`] with the first failure.
    pub fn check_usable(&self) -> Result<()> {
        self.shared.check_usable()
    }

    /// Appends `records` (ending with a record that terminates the batch: a commit, or a
    /// mini-transaction's end) as one batch, and sets every guard's LSN range to the batch's
    /// (oldest = its start, so no checkpoint passes it; newest = its end, so the WAL rule makes
    /// a write of the page wait for the whole batch). The pages become dirty when the guards
    /// drop; until then the returned [`InFlight`] keeps checkpoints from passing the batch:
    /// drop it after the guards.
    ///
    /// # Errors
    /// A poisoned database; log errors (nothing was appended then).
    pub fn append_batch(
        &self,
        records: &[LogRecord],
        guards: &mut [&mut PageWriteGuard<'_>],
    ) -> Result<(LsnRange, InFlight<'_>)> {
        self.shared.check_usable()?;
        let in_flight = InFlight {
            shared: &self.shared,
            bound: self.shared.register_in_flight(),
        };
        let range = self.shared.wal.append_range(records)?;
        for guard in guards.iter_mut() {
            guard.set_lsn_range(range.start, range.end);
        }
        Ok((range, in_flight))
    }

    /// Appends a mini-transaction: `records` (ending in `MtrEnd`) in one batch while `pages`
    /// (every page the records change, latched exclusive) are held; then stamps each page with
    /// the batch's LSN range and releases it (draining `pages`). Registered in flight from
    /// before the append until the pages are marked dirty, so no checkpoint passes the batch.
    /// On error nothing was appended and `pages` are left to the caller (to restore).
    ///
    /// # Errors
    /// A poisoned database; log errors ([`Error::LogFull`], a batch over the log's limit).
    pub fn append_mtr(
        &self,
        records: &[LogRecord],
        pages: &mut Vec<PageWriteGuard<'_>>,
    ) -> Result<LsnRange> {
        let mut batch = crate::wal::EncodedBatch::new();
        for record in records {
            batch
                .push(record)
                .map_err(|e| Error::InvalidArgument(format!("record cannot be encoded: {e}")))?;
        }
        self.append_mtr_batch(&mut batch, pages)
    }

    /// [`Database::append_mtr`] of records already encoded into `batch` (ending in
    /// `MtrEnd`), which a mini-transaction fills as it goes and reuses: no buffer per record.
    ///
    /// # Errors
    /// As [`Database::append_mtr`].
    pub fn append_mtr_batch(
        &self,
        batch: &mut crate::wal::EncodedBatch,
        pages: &mut Vec<PageWriteGuard<'_>>,
    ) -> Result<LsnRange> {
        assert!(
            batch.ends_with_mtr_end(),
            "a mini-transaction batch ends with its terminator"
        );
        self.shared.check_usable()?;
        let bound = self.shared.register_in_flight();
        let range = match self.shared.wal.append_batch(batch) {
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

    /// A fresh transaction id, for transaction layers built on mini-transactions. Unique among
    /// the transactions the log can still hold: recovery starts above every id after the redo
    /// point. Ids are *not* unique across restarts (after a clean close the log holds none and
    /// ids start again at 1); an active transaction keeps its first LSN registered, so no
    /// checkpoint passes it and recovery never confuses two transactions with one id.
    pub fn next_txn_id(&self) -> crate::wal::TxnId {
        self.shared.next_txn.fetch_add(1, Ordering::Relaxed)
    }

    /// InnoDB's `log_free_check`: call holding no page latch before a change, so the log never
    /// fills while latches are held.
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

    /// Makes a commit that ended at `lsn` durable per `flush_log_at_trx_commit`.
    ///
    /// # Errors
    /// The log's failure (its outcome is then unknown; the log is poisoned).
    pub fn make_durable(&self, lsn: Lsn) -> Result<()> {
        match self.shared.flush_log_at_trx_commit {
            1 => self.shared.wal.flush_to(lsn),
            2 => {
                self.shared.log_writer_wakeup.wake();
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Takes a checkpoint now: the redo point moves to the pool's oldest unflushed change.
    ///
    /// # Errors
    /// A failed data sync (the database is then poisoned) or log errors.
    pub fn checkpoint(&self) -> Result<()> {
        self.shared.checkpoint()
    }

    /// Stops the background threads, writes every page back, takes a final checkpoint and
    /// syncs the log.
    ///
    /// # Errors
    /// Write, sync or log errors.
    #[must_use = "close() returns the errors of the final write-back; dropping can only print them"]
    pub fn close(self) -> Result<()> {
        self.close_inner()
    }

    fn close_inner(&self) -> Result<()> {
        self.closed.store(true, Ordering::Release);
        self.stop_threads();
        self.shared.pool.shutdown()?;
        self.shared.checkpoint()?;
        self.shared.wal.flush_to(Lsn::MAX)
    }

    /// Stops the background threads and the pool without writing anything back: the state a
    /// crash leaves (for tests and crash campaigns).
    pub fn abandon(self) {
        self.abandon_in_place();
    }

    /// [`Database::abandon`] through a shared reference, for a database another value owns
    /// (a bench target whose database nothing reads again): stops the background threads and
    /// the pool, and dropping the database later writes nothing back.
    pub fn abandon_in_place(&self) {
        self.closed.store(true, Ordering::Release);
        self.stop_threads();
        self.shared.pool.abandon_in_place();
    }

    fn stop_threads(&self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.checkpointer_wakeup.wake();
        self.shared.log_writer_wakeup.wake();
        for handle in self.threads.lock().drain(..) {
            let _ = handle.join();
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if self.closed.load(Ordering::Acquire) {
            // Abandoned or closed: also keep the pool from writing back on its own drop.
            return;
        }
        match self.shared.check_usable() {
            Ok(()) => {
                if let Err(err) = self.close_inner() {
                    eprintln!(
                        "flashbuf: database dropped without close(); closing it failed: {err}"
                    );
                }
            }
            Err(err) => eprintln!(
                "flashbuf: database dropped while failed ({err}); its pages were not all \
                 written back: reopening recovers from the log"
            ),
        }
        self.stop_threads();
    }
}

/// Decides from the two devices' contents whether to create or open (writes nothing).
fn plan(data: &SharedDevice, log: &SharedDevice, wal: &WalConfig) -> Result<Plan> {
    let data_content = crate::datafile::classify(data.as_ref())?;
    let log_content = crate::wal::inspect(log.as_ref(), wal)?;
    let refuse = |problem: String| {
        Err(Error::Format {
            device: format!("{} + {}", data.info().name, log.info().name),
            problem: FormatProblem::Damaged {
                what: "database",
                reason: problem,
            },
        })
    };
    match (&data_content, &log_content) {
        (DataFileContent::Blank, LogDeviceContent::Blank) => Ok(Plan::Create),
        // A log formatted and never used, whose data file was not yet created (a crash
        // between the two steps of creating a database): finish creating it.
        (DataFileContent::Blank, LogDeviceContent::Formatted(slot))
            if slot.seq == 1 && slot.redo_lsn == slot.durable_lsn =>
        {
            Ok(Plan::Create)
        }
        // An image never bound to a log and a log formatted for it but never used (a crash
        // between formatting the log and binding the data file to it): finish binding.
        (DataFileContent::Ours(header), LogDeviceContent::Formatted(slot))
            if header.log_id == 0 && slot.seq == 1 && slot.redo_lsn == slot.durable_lsn =>
        {
            Ok(Plan::CreateLog)
        }
        (DataFileContent::Ours(_), LogDeviceContent::Formatted(_)) => Ok(Plan::Open),
        (DataFileContent::Ours(header), LogDeviceContent::Blank) if header.log_id == 0 => {
            Ok(Plan::CreateLog)
        }
        (DataFileContent::Ours(header), LogDeviceContent::Blank | LogDeviceContent::HeaderLost) => {
            refuse(format!(
                "the data file holds database {:#x} (bound to log {:#x}), but the log device {} \
                 {}: refusing to format a new log, which would lose the database's committed \
                 changes since its last checkpoint",
                header.database_id,
                header.log_id,
                log.info().name,
                if matches!(log_content, LogDeviceContent::Blank) {
                    "is blank"
                } else {
                    "has lost its checkpoint slots"
                }
            ))
        }
        (DataFileContent::Blank, _) => refuse(format!(
            "the log device {} holds a log that was used, but the data device {} is blank (a \
             zeroed or replaced data file?)",
            log.info().name,
            data.info().name
        )),
        // Foreign, damaged or other-version data: the data file's own typed error.
        _ => DataFile::open(Arc::clone(data)).map(|_| Plan::Open),
    }
}

/// A new database: the log first, then the data file bound to it.
fn create_files(
    data: SharedDevice,
    log: SharedDevice,
    config: &DatabaseConfig,
) -> Result<(DataFile, Arc<Wal>, Recovery)> {
    let wal = match crate::wal::inspect(log.as_ref(), &config.wal)? {
        LogDeviceContent::Blank => Wal::create(log, config.wal.clone())?,
        _ => Wal::open(log, config.wal.clone())?.0,
    };
    let datafile = DataFile::create(data, wal.log_id(), config.data_pages)?;
    let recovery = Recovery {
        checkpoint: wal.newest_checkpoint(),
        records: Vec::new(),
        end_lsn: wal.current_lsn(),
        stop: StopReason::CapacityReached,
        proven_durable_lsn: wal.current_lsn(),
    };
    Ok((datafile, Arc::new(wal), recovery))
}

/// An image loaded outside a database (`log_id` 0): a new log, and the data file bound to it.
fn create_log(
    data: SharedDevice,
    log: SharedDevice,
    wal_config: &WalConfig,
) -> Result<(DataFile, Arc<Wal>, Recovery)> {
    let datafile = DataFile::open(data)?;
    // The log is blank, or formatted and never used (see `plan`).
    let wal = match crate::wal::inspect(log.as_ref(), wal_config)? {
        LogDeviceContent::Blank => Wal::create(log, wal_config.clone())?,
        _ => Wal::open(log, wal_config.clone())?.0,
    };
    datafile.bind_log(wal.log_id())?;
    let recovery = Recovery {
        checkpoint: wal.newest_checkpoint(),
        records: Vec::new(),
        end_lsn: wal.current_lsn(),
        stop: StopReason::CapacityReached,
        proven_durable_lsn: wal.current_lsn(),
    };
    Ok((datafile, Arc::new(wal), recovery))
}

/// Reads the redo hook's format page ([`PageOpRedo::format_page`]) from the data device and,
/// when it verifies (checksum, page id), lets the hook refuse its format. A page that does not
/// verify (never written, torn) is left to redo, which restores or rewrites it.
fn check_stored_format(data: &SharedDevice, high_water: u64, redo: &dyn PageOpRedo) -> Result<()> {
    let Some(page) = redo.format_page() else {
        return Ok(());
    };
    if page >= data.info().pages {
        return Ok(());
    }
    let mut buf = AlignedBuf::new(data.info().page_size);
    data.read_page(page, &mut buf)?;
    if crate::datafile::verify_data_page(buf.as_slice(), page, high_water).is_err() {
        return Ok(());
    }
    redo.check_format(buf.as_slice())
}

/// An existing database: the data file, its log (bound to it), recovery's scan.
fn open_files(
    data: SharedDevice,
    log: SharedDevice,
    wal_config: &WalConfig,
) -> Result<(DataFile, Arc<Wal>, Recovery)> {
    let datafile = DataFile::open(data)?;
    let (wal, recovery) = Wal::open(log, wal_config.clone())?;
    datafile.check_log(wal.log_id())?;
    Ok((datafile, Arc::new(wal), recovery))
}

impl Shared {
    fn check_usable(&self) -> Result<()> {
        self.pool.core().check_poisoned()?;
        if let Some(cause) = self.wal.poison_cause() {
            return Err(Error::Poisoned(cause));
        }
        Ok(())
    }

    fn checkpoint(&self) -> Result<()> {
        let _one = self.checkpoint_lock.lock();
        // The registry stays locked while the redo point is computed: a batch registers before
        // its append and withdraws after its pages are dirty, so with no registration or
        // withdrawal in between, every appended batch is either still registered or has its
        // pages on the flush list (otherwise a withdrawal between reading the registry and
        // reading the flush list lets the redo point pass a batch whose pages are not yet dirty).
        let redo = {
            let in_flight = self.in_flight.lock_all();
            let mut redo = self.pool.oldest_unflushed_lsn().min(self.wal.current_lsn());
            if let Some(bound) = in_flight.oldest() {
                redo = redo.min(bound);
            }
            redo
        };
        let redo = redo.max(self.wal.checkpoint_lsn());
        let written = self
            .pool
            .core()
            .written_prefix(self.datafile.header().high_water_mark);
        // Every page write that completed before `redo` was computed must be durable before
        // the checkpoint says its changes need no redo (InnoDB fsyncs the data files here
        // too). A failure poisons the pool: those writes may be lost, and the log still holds
        // their changes, so the redo point must not move.
        self.pool.sync_data()?;
        if written > self.datafile.header().high_water_mark {
            // The header's own write and sync reach the same device: a failure there may have
            // lost data writes too (Linux drops the failed range), so it poisons as well.
            if let Err(err) = self.datafile.raise_high_water_mark(written) {
                self.poison(&err);
                return Err(err);
            }
            self.pool.set_high_water(written);
        }
        self.wal.write_checkpoint(redo)
    }

    /// Poisons the pool with `err` (a failed write or sync of the data device outside the
    /// pool's own paths).
    fn poison(&self, err: &Error) {
        let cause = match err {
            Error::Device(cause) | Error::Poisoned(cause) => cause.clone(),
            other => crate::error::DeviceError::Io {
                page: None,
                kind: std::io::ErrorKind::Other,
                message: other.to_string(),
            },
        };
        self.pool.core().poison(&cause);
    }

    fn checkpoint_loop(&self) {
        let period = self.device_duration(self.checkpoint_period_ms);
        while !self.stop.load(Ordering::Acquire) {
            self.checkpointer_wakeup.wait(period);
            if self.stop.load(Ordering::Acquire) {
                break;
            }
            // A failed checkpoint poisons the pool or the log; commits report it.
            let _ = self.checkpoint();
        }
    }

    /// Syncs the log every period (and when a mode-2 commit wakes it).
    fn log_writer_loop(&self) {
        let period = self.device_duration(self.log_flush_period_ms);
        while !self.stop.load(Ordering::Acquire) {
            self.log_writer_wakeup.wait(period);
            // A failure poisons the log; commits report it.
            let _ = self.wal.flush_to(self.wal.current_lsn());
        }
    }

    fn device_duration(&self, ms: u64) -> Duration {
        Duration::from_secs_f64(ms as f64 / 1000.0 * self.pool.device().info().time_scale)
    }

    /// Registers a batch about to append; returns the lower bound registered.
    fn register_in_flight(&self) -> Lsn {
        self.in_flight.register_with(|| self.wal.current_lsn())
    }

    /// Registers an explicit bound (a loser transaction's first LSN during recovery).
    fn register_in_flight_at(&self, bound: Lsn) {
        self.in_flight.register(bound);
    }

    fn withdraw_in_flight(&self, bound: Lsn) {
        self.in_flight.withdraw(bound);
    }

    /// InnoDB's `log_free_check` (called holding no latch): keep the log from filling. Past
    /// `max_modified_age_sync` the calling thread flushes the oldest pages itself (synchronous
    /// recoverability writes); past that or `max_checkpoint_age` it takes a checkpoint; and it
    /// waits until the log is back under both margins (pages it cannot flush are latched by
    /// transactions that will release them). Bound: the log's full timeout without the
    /// checkpoint moving, then `LogFull` (a backlog that is being written is waited for).
    fn log_free_check(&self) -> Result<()> {
        let margins = self.wal.margins();
        // The fast path: a checkpoint never passes the oldest modification of a dirty page
        // (`checkpoint`: the redo point is at most the pool's oldest unflushed LSN and every
        // registered batch's bound, and a batch dirties its pages at LSNs past its bound), so
        // the modified age is at most the checkpoint age. A checkpoint age under both margins
        // therefore decides as the loop below would, without locking every instance's flush
        // list for the oldest unflushed LSN.
        if self.wal.checkpoint_age()
            < margins
                .max_modified_age_sync
                .min(margins.max_checkpoint_age)
        {
            return Ok(());
        }
        let timeout = self.wal.config().full_timeout;
        let mut deadline = std::time::Instant::now() + timeout;
        let mut checkpoint_seen = self.wal.checkpoint_lsn();
        // Bound: each round either moves the checkpoint (progress: the deadline restarts) or
        // brings the deadline closer.
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
            let checkpoint_now = self.wal.checkpoint_lsn();
            if checkpoint_now > checkpoint_seen {
                // Progress: a large backlog on a slow (or time-scaled) device may take longer
                // than the timeout to write, and is not a stuck log.
                checkpoint_seen = checkpoint_now;
                deadline = std::time::Instant::now() + timeout;
            } else if std::time::Instant::now() >= deadline {
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
