//! Page-level transactions: a [`Transaction`] latches pages exclusively in ascending page order
//! (no deadlocks between transactions) and holds them to commit (strict two-phase locking on
//! pages), changes bytes in place, and commits atomically: all of its changes are recovered
//! after a crash, or none are.
//!
//! Changes are recorded as `PageRedo` records; under the `page-images` protection the first
//! change to a page that is clean in the pool also logs the page's whole image first. At commit
//! the records and a `Commit` record are appended in one batch ([`Database::append_batch`]),
//! the pages are marked dirty with the batch's LSN range, the latches are released, and the
//! commit is made durable per `flush_log_at_trx_commit`. An uncommitted change never reaches
//! the data device: it is held under the page latch until the commit record is appended, and a
//! page write needs that record durable first. Dropping a transaction without committing
//! restores the before-images.
//!
//! Before taking its first latch a transaction checks the log margins (InnoDB's
//! `log_free_check`), so a thread that must flush pages to make log space never waits for
//! latches others hold while they wait for log space.

use std::collections::BTreeMap;

use super::Database;
use crate::error::{Error, PageId, Result};
use crate::page::{Lsn, PAGE_HEADER_SIZE};
use crate::pool::PageWriteGuard;
use crate::wal::{LogRecord, TxnId};

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
    changed: bool,
}

impl<'db> Transaction<'db> {
    pub(super) fn new(db: &'db Database, txn: TxnId) -> Self {
        Transaction {
            db,
            txn,
            pages: BTreeMap::new(),
            records: Vec::new(),
            committed: false,
        }
    }

    /// The transaction's id.
    pub fn id(&self) -> TxnId {
        self.txn
    }

    /// Latches `pages` exclusively (sorted; already held ones are skipped). Pages must be
    /// locked in ascending order across calls, which rules out deadlocks between transactions.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a page below one already held (lock order); a poisoned
    /// database; page or device errors.
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
            self.db.check_usable()?;
            self.db.shared.log_free_check()?;
        }
        for page in wanted {
            let guard = self.db.pool().write(page)?;
            let before = guard.data().to_vec();
            self.pages.insert(
                page,
                LockedPage {
                    guard,
                    before,
                    changed: false,
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
        let page_size = self.db.pool().page_size();
        let end = offset.saturating_add(bytes.len());
        if offset < PAGE_HEADER_SIZE || end > page_size {
            return Err(Error::InvalidArgument(format!(
                "update of bytes {offset}..{end} of page {page}: the payload is {PAGE_HEADER_SIZE}..{page_size}"
            )));
        }
        let txn = self.txn;
        let not_locked = self.not_locked(page);
        let db = self.db;
        let locked = self.pages.get_mut(&page).ok_or(not_locked)?;
        if !locked.changed && db.needs_page_image(&locked.guard) {
            // First change since the page was last clean: log its image (torn-page
            // protection by page images).
            self.records.push(LogRecord::FullPageImage {
                txn,
                page,
                image: locked.before.clone(),
            });
        }
        locked.changed = true;
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
    /// once the commit is durable per `flush_log_at_trx_commit` (its end LSN).
    ///
    /// # Errors
    /// A poisoned database or log errors: the transaction is then rolled back if its records
    /// were not appended, and its outcome is unknown if the final flush failed (the log is
    /// poisoned either way).
    pub fn commit(mut self) -> Result<Lsn> {
        if self.records.is_empty() {
            self.committed = true;
            return Ok(self.db.wal().current_lsn());
        }
        let mut records = std::mem::take(&mut self.records);
        records.push(LogRecord::Commit { txn: self.txn });
        let mut guards: Vec<&mut PageWriteGuard<'db>> = self
            .pages
            .values_mut()
            .filter(|locked| locked.changed)
            .map(|locked| &mut locked.guard)
            .collect();
        let (range, in_flight) = match self.db.append_batch(&records, &mut guards) {
            Ok(appended) => appended,
            Err(err) => {
                drop(guards);
                self.rollback();
                return Err(err);
            }
        };
        drop(guards);
        self.committed = true;
        self.pages.clear(); // releases the latches, marking changed pages dirty
        drop(in_flight);
        self.db.make_durable(range.end)?;
        Ok(range.end)
    }

    fn rollback(&mut self) {
        for locked in self.pages.values_mut() {
            if locked.changed {
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
