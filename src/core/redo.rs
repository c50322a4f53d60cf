//! What the pool needs from the redo log: LSNs, the WAL rule, and log capacity for adaptive
//! flushing. [`NullLog`] stands in when no WAL is attached (synthetic page workloads): it hands
//! out increasing LSNs and is always durable.

use crate::sync::{AtomicU64, Ordering};

use crate::error::Result;
use crate::page::Lsn;

/// The pool's view of the redo log.
pub trait RedoLog: Send + Sync + std::fmt::Debug {
    /// The LSN the next log record will get (the end of the log so far).
    fn current_lsn(&self) -> Lsn;
    /// An LSN for a modification made without a log record (no-WAL mode); WAL-backed logs
    /// return the current LSN.
    fn lsn_for_unlogged_change(&self) -> Lsn;
    /// Blocks until the log is durable up to `lsn` (the WAL rule before a page write).
    ///
    /// # Errors
    /// The log's I/O error.
    fn flush_to(&self, lsn: Lsn) -> Result<()>;
    /// Usable log capacity in LSN units, if the log is bounded.
    fn capacity(&self) -> Option<u64>;
    /// Whether every page written to the data device carries an LSN at or below the log's
    /// current LSN (true for a real WAL after recovery: a page is written only once the log is
    /// durable past its LSN). The pool then rejects a page whose LSN is past the end of the log.
    fn bounds_page_lsns(&self) -> bool {
        false
    }
}

/// A log that records nothing: LSNs advance by one per change and are durable at once.
#[derive(Debug)]
pub struct NullLog {
    next: AtomicU64,
}

impl Default for NullLog {
    fn default() -> Self {
        NullLog {
            next: AtomicU64::new(1),
        }
    }
}

impl RedoLog for NullLog {
    fn current_lsn(&self) -> Lsn {
        self.next.load(Ordering::Acquire)
    }
    fn lsn_for_unlogged_change(&self) -> Lsn {
        self.next.fetch_add(1, Ordering::AcqRel)
    }
    fn flush_to(&self, _lsn: Lsn) -> Result<()> {
        Ok(())
    }
    fn capacity(&self) -> Option<u64> {
        None
    }
}
