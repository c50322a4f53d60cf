//! Mini-transactions (InnoDB's mtr): a set of pages latched exclusive, changed by
//! [`PageOp`]s, and logged as ONE batch ending in an `MtrEnd` terminator. The pages stay latched
//! until the batch is appended; then each changed page gets the batch's LSN range
//! (`Database::append_mtr`) and its latch is released. Recovery applies a batch only when its
//! terminator made it to the log, so a mini-transaction is atomic across crashes.
//!
//! **Torn-page protection.** With page images on ([`log_page_images`]), the first change to a
//! page that is clean in the pool (`oldest_modification() == 0`) logs the page's compact image
//! before the change, unless the change itself defines the whole page (a format or an image).
//! Recovery rebuilds such a page from the image when the device copy is torn.
//!
//! **Failure.** Before each operation applies, the bytes it may write are saved
//! ([`RollbackLog`]: a few ranges of the page, not a copy of it). If the operation fails, its
//! ranges go back at once (the page is as before that operation). If the append fails, every
//! changed page gets all its saved ranges back, newest first, which makes it byte for byte
//! the page before the mini-transaction (nothing of it stays in memory), and the error is
//! returned. Dropping a mini-transaction without committing it does the same.
//!
//! **Buffers.** A mini-transaction takes its page list, encoded records and rollback log from a
//! per-thread spare and gives them back (emptied) when it ends, so a thread running
//! mini-transactions one after the other allocates them once (arenas that grew past
//! [`SPARE_LIMIT`] are not kept).
//!
//! Lock order: the caller latches pages in the tree's order (see `btree/mod.rs`) and adds
//! them here; this type takes no latch itself.

use super::op::{self, PageOp};
use super::rollback::RollbackLog;
use crate::db::Database;
use crate::error::Error;
use crate::error::{PageId, Result};
use crate::pool::PageWriteGuard;
use crate::wal::{EncodedBatch, LogRecord, LsnRange, OpaqueKind, TxnId};

/// Whether changes log a page image at the first change after a page was clean: the
/// database's torn-page protection is `page-images` (under the doublewrite or `none`, no image
/// is logged).
#[must_use]
pub fn log_page_images(db: &Database) -> bool {
    db.torn_page_protection() == crate::engine::TornPageProtection::PageImages
}

/// Largest rollback arena kept for the next mini-transaction of a thread (bytes).
pub const SPARE_LIMIT: usize = 256 * 1024;

/// The reusable buffers of a mini-transaction.
#[derive(Default)]
struct Buffers {
    pages: Vec<MtrPage>,
    /// Always empty; kept for its capacity (see [`relabel`]).
    guards: Vec<PageWriteGuard<'static>>,
    records: EncodedBatch,
    rollback: RollbackLog,
}

/// The allocation of an empty vector as a vector of another element type of the same layout
/// (here the same guard type with another lifetime): the standard library collects an
/// iterator of a vector in place when the layouts match, so no allocation is made.
fn relabel<T, U>(empty: Vec<T>) -> Vec<U> {
    debug_assert!(empty.is_empty());
    empty.into_iter().filter_map(|_| None).collect()
}

std::thread_local! {
    /// The buffers the last mini-transaction of this thread left.
    static SPARE: std::cell::Cell<Option<Buffers>> = const { std::cell::Cell::new(None) };
}

/// What a mini-transaction knows of one latched page (its guard is at the same index of
/// `Mtr::guards`).
#[derive(Debug, Clone, Copy)]
struct MtrPage {
    id: PageId,
    /// Whether an operation was applied to it (its saved ranges are in the rollback log).
    changed: bool,
}

/// A mini-transaction in progress.
pub struct Mtr<'a> {
    db: &'a Database,
    txn: TxnId,
    images: bool,
    pages: Vec<MtrPage>,
    guards: Vec<PageWriteGuard<'a>>,
    /// The batch's records, encoded as they are added (sealed by the log at the append).
    records: EncodedBatch,
    rollback: RollbackLog,
}

impl std::fmt::Debug for Mtr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mtr")
            .field("txn", &self.txn)
            .field(
                "pages",
                &self.pages.iter().map(|p| p.id).collect::<Vec<_>>(),
            )
            .field("records", &self.records.records())
            .finish_non_exhaustive()
    }
}

/// Index of a page inside a mini-transaction.
pub type Slot = usize;

impl<'a> Mtr<'a> {
    /// A mini-transaction on behalf of `txn` (0: a system one, e.g. a split).
    pub fn new(db: &'a Database, txn: TxnId) -> Self {
        let buffers = crate::spare::take(&SPARE);
        Mtr {
            db,
            txn,
            images: log_page_images(db),
            pages: buffers.pages,
            guards: relabel(buffers.guards),
            records: buffers.records,
            rollback: buffers.rollback,
        }
    }

    /// Adds a page latched exclusive by the caller; returns its slot.
    pub fn add(&mut self, guard: PageWriteGuard<'a>) -> Slot {
        let id = guard.page_id();
        assert!(
            self.pages.iter().all(|page| page.id != id),
            "page {id} added twice to a mini-transaction"
        );
        self.pages.push(MtrPage { id, changed: false });
        self.guards.push(guard);
        self.pages.len() - 1
    }

    /// Latches `page` exclusive through the pool and adds it.
    ///
    /// # Errors
    /// Pool errors.
    pub fn latch(&mut self, page: PageId) -> Result<Slot> {
        let guard = self.db.pool().write(page)?;
        Ok(self.add(guard))
    }

    /// Latches a page that was never allocated (zeroed, no read) and adds it.
    ///
    /// # Errors
    /// Pool errors.
    pub fn latch_new(&mut self, page: PageId) -> Result<Slot> {
        let guard = self.db.pool().create(page)?;
        Ok(self.add(guard))
    }

    /// The slot of `page`, if it is part of this mini-transaction.
    pub fn slot_of(&self, page: PageId) -> Option<Slot> {
        self.pages.iter().position(|p| p.id == page)
    }

    /// The page id in `slot`.
    pub fn page_id(&self, slot: Slot) -> PageId {
        self.pages[slot].id
    }

    /// The bytes of the page in `slot`.
    pub fn data(&self, slot: Slot) -> &[u8] {
        self.guards[slot].data()
    }

    /// Applies `op` to the page in `slot` and records it (after the page's image when this is
    /// its first change since it was clean and page images are on).
    ///
    /// # Errors
    /// The operation does not apply ([`crate::Error::CorruptPage`]); the page is unchanged.
    pub fn apply(&mut self, slot: Slot, op: &PageOp) -> Result<()> {
        self.apply_op(slot, op)
    }

    /// [`Mtr::apply`] of an operation with operands of any byte type: a row change passes
    /// its key and value borrowed (`PageOp<&[u8]>`), not copied.
    ///
    /// # Errors
    /// As [`Mtr::apply`].
    pub fn apply_op<B: AsRef<[u8]>>(&mut self, slot: Slot, op: &PageOp<B>) -> Result<()> {
        let page = &mut self.pages[slot];
        let guard = &mut self.guards[slot];
        if !page.changed {
            if self.images && !op.defines_page() && guard.oldest_modification() == 0 {
                let image = op::image_of(page.id, guard.data())?;
                self.records
                    .push_opaque(OpaqueKind::PageOp, page.id, |out| {
                        image.encode_into(out);
                        true
                    })
                    .map_err(|err| unencodable(&err))?;
            }
            page.changed = true;
        }
        let mark = self.rollback.save(page.id, guard.data(), op);
        let logged = op::apply_op(page.id, guard.data_mut(), op).and_then(|()| {
            self.records
                .push_opaque(OpaqueKind::PageOp, page.id, |out| {
                    op.encode_into(out);
                    true
                })
                .map_err(|err| unencodable(&err))
        });
        if let Err(err) = logged {
            self.rollback.rewind(mark, page.id, guard.data_mut());
            return Err(err);
        }
        Ok(())
    }

    /// Adds an undo entry of the transaction to the batch: `write` appends its body to the
    /// buffer it is given and returns `true`, or returns `false` for no entry.
    ///
    /// # Errors
    /// The entry is larger than a log record can be; nothing is added then.
    pub fn undo_with(&mut self, write: impl FnOnce(&mut Vec<u8>) -> bool) -> Result<()> {
        self.records
            .push_opaque(OpaqueKind::Undo, self.txn, write)
            .map_err(|err| unencodable(&err))?;
        Ok(())
    }

    /// Releases the latch of an unchanged page early.
    pub fn release_unchanged(&mut self, slot: Slot) {
        assert!(
            !self.pages[slot].changed,
            "only unchanged pages may leave a mini-transaction early"
        );
        self.pages.remove(slot);
        self.guards.remove(slot);
    }

    /// Appends the batch and releases every page (see the module docs). Returns the batch's
    /// LSN range, or `None` when nothing was logged.
    ///
    /// # Errors
    /// Log errors; every change is then undone in memory.
    pub fn commit(mut self) -> Result<Option<LsnRange>> {
        // Unchanged pages are released first; changed ones go to the append.
        let mut index = 0;
        let pages = &self.pages;
        self.guards.retain(|_| {
            index += 1;
            pages[index - 1].changed
        });
        self.pages.retain(|page| page.changed);
        if self.records.is_empty() {
            // Only failed operations (each already undone): drop the modification marks.
            self.roll_back();
            return Ok(None);
        }
        let appended = self
            .records
            .push(&LogRecord::MtrEnd { txn: self.txn })
            .map_err(|err| unencodable(&err))
            .and_then(|()| {
                self.db
                    .append_mtr_batch(&mut self.records, &mut self.guards)
            });
        match appended {
            Ok(range) => {
                self.pages.clear();
                Ok(Some(range))
            }
            Err(err) => {
                self.roll_back();
                Err(err)
            }
        }
    }

    /// Puts every changed page back as it was before the mini-transaction and releases
    /// every page.
    fn roll_back(&mut self) {
        for (page, guard) in self.pages.iter().zip(&mut self.guards) {
            if page.changed {
                // The guard forgets the modification only through a whole image; this path
                // is the failure path, so the copy is not on the way of a commit.
                let mut image = guard.data().to_vec();
                self.rollback.undo_into(page.id, &mut image);
                guard.restore(&image);
            }
        }
        self.pages.clear();
        self.guards.clear();
        self.rollback.clear();
    }
}

impl Drop for Mtr<'_> {
    fn drop(&mut self) {
        // Not committed: undo every change in memory (after a commit nothing is left).
        self.roll_back();
        self.records.clear();
        if self.rollback.capacity() <= SPARE_LIMIT && self.records.capacity() <= SPARE_LIMIT {
            let buffers = Buffers {
                pages: std::mem::take(&mut self.pages),
                guards: relabel(std::mem::take(&mut self.guards)),
                records: std::mem::take(&mut self.records),
                rollback: std::mem::take(&mut self.rollback),
            };
            crate::spare::keep(&SPARE, buffers);
        }
    }
}

fn unencodable(err: &crate::wal::record::DecodeError) -> Error {
    Error::InvalidArgument(format!("record cannot be encoded: {err}"))
}
