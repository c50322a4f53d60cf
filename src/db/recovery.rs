//! Redo of the page-level transactions after a crash (issues 5 and 8).
//!
//! The log is scanned from the newest checkpoint's redo LSN (`wal::reader`). Each transaction's
//! records and its commit record were appended as one batch, so a transaction is replayed when
//! its commit record is found, in log order, and ignored without one (its changes never reached
//! the data pages: they were held under the page latches until the commit record was appended,
//! and a page write waits for the log to be durable past the page's newest change). A redo
//! record is skipped when the page already carries the commit's LSN.
//!
//! **Torn pages.** Under the doublewrite they were restored from their copies before this runs.
//! Under page images, a page whose image on the device does not verify is repaired from the
//! *next* full image of it that a committed transaction logged: the redo records of that page
//! before the image are skipped (the image already holds their effect: it was taken under the
//! page latch, with every earlier committed change and no uncommitted one). Such an image
//! always exists when the page tore: a write tears only if it was not synced; the pages it
//! wrote became dirty with a change that logged an image (the first change after the page was
//! last clean), at or after that change's batch start; and no checkpoint passes a dirty page's
//! oldest change, nor a written page's until the write is synced. So the image lies after the
//! redo point. Issue 8's failure was replay reading the torn page at an *earlier* redo record
//! (one logged while the page was dirty before its previous, successful write) and stopping
//! there. Without such an image (protection `none`) the page is an error naming it.
//!
//! **Mini-transactions** (the B+-tree's `PageOp` records, ending in `MtrEnd`): a complete batch
//! is applied in log order through the [`PageOpRedo`] hook, per page unless the page already
//! carries the batch's end LSN; a batch cut by the end of the log is ignored (a split or merge
//! is all or nothing). A page whose first operation in a batch defines it whole (an image, a
//! format) is rebuilt without trusting the device copy (torn pages are repaired so); a torn
//! page met by an operation that needs the old contents waits for the next batch that defines
//! it, by the same argument as above, and is an error when none comes. Key-value transactions
//! (`Undo`, `TxnCommit`, `TxnAbort`) without an outcome are reported as losers with their undo
//! bodies, for the caller to roll back.
//!
//! **Idempotence (issue 18).** Recovery can itself crash at any device operation, any number of
//! times; the next run starts again from the same redo point (no checkpoint moves it before
//! recovery's pages are written and synced) and must find a database it can recover. Two
//! invariants make it so:
//! 1. *Recovery never writes a page back older than the device held.* A batch is replayed on a
//!    page only when the page's LSN is below the batch's end; the LSN known for a page
//!    (`PageStates::lsn`, the `page_lsn` map of the mini-transactions) only grows: a batch
//!    skipped because the page is newer leaves it unchanged (issue 18's bug set it to the
//!    skipped batch's end, so the next, older batches were replayed over the newer page, which
//!    was then evicted with an older LSN), and an image restores a page only when the page is
//!    torn (or unreadable) or older than the image's batch. So a page recovery writes holds
//!    exactly the committed changes up to the last batch it replayed, stamped with that batch's
//!    end, at or past the device's LSN. A page the device already has current is never
//!    dirtied, so never written, so never torn by recovery.
//! 2. *A page recovery writes can be repaired if that write tears.* Under `doublewrite`,
//!    recovery's writes take the pool's doublewrite path like any other (the copy is synced
//!    before the in-place write), the next run restores torn pages from the area before
//!    replaying, and the restoration is synced before any slot is reused. Under `page-images`,
//!    recovery writes a page P only after replaying a batch B on it, so the device's P was older
//!    than B; the dirty period of P that contains B began with a change that logged P's image
//!    (or a defining operation), and that change lies at or after the redo point (no
//!    checkpoint passes a dirty page, and a write of P that carries B and was synced before the
//!    checkpoint would make the device's P current). So an image of P lies between the redo
//!    point and B, and the next run repairs a torn P from it exactly as it repairs a page torn
//!    by the run before the crash. A skipped batch gives no such guarantee (its page's image may
//!    precede the redo point), which is why invariant 1 must hold.
//!
//! Recovery does not change the log before its end (it rewrites the page holding the end with
//! the same bytes, then appends: the losers' rollback, the checkpoint), so the records and
//! images the next run relies on stay. `tests/suite/recovery_crash_sweep.rs` crashes recovery at
//! every operation of the data and the log device and recovers again.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::engine::TornPageProtection;
use crate::error::{Error, PageId, Result};
use crate::page::{Lsn, PAGE_HEADER_SIZE};
use crate::pool::BufferPool;
use crate::wal::{LogRecord, LsnRange, RecoveredRecord, Recovery, TxnId};

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
    /// Pages found torn or corrupt on the device and restored from a later image.
    pub torn_pages_repaired: usize,
    /// Redo records of torn pages skipped because a later image replaces them.
    pub redo_superseded: usize,
    /// Valid page copies in the doublewrite area.
    pub doublewrite_copies: usize,
    /// Pages restored from the doublewrite area.
    pub doublewrite_restored: usize,
    /// The largest transaction id seen (new transactions start after it).
    pub max_txn: TxnId,
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
    /// it with `Database::withdraw_in_flight` after logging the rollback.
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

    /// The page whose stored image names the layer's on-disk format (the B+-tree's meta
    /// page), read and passed to [`Self::check_format`] before any record is replayed; `None`
    /// (the default): no such page.
    fn format_page(&self) -> Option<PageId> {
        None
    }

    /// Refuses the stored, checksum-verified image of [`Self::format_page`] when it was
    /// written in a format this build does not read, so that recovery stops before it
    /// changes anything. The default accepts every image.
    ///
    /// # Errors
    /// The layer's error naming the format found.
    fn check_format(&self, image: &[u8]) -> Result<()> {
        let _ = image;
        Ok(())
    }
}

/// The hook of `Database::open`: a log with `PageOp` records cannot be recovered without the
/// layer that wrote them.
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

/// Where the committed full images of each page are (their start LSNs, ascending).
fn committed_images(records: &[RecoveredRecord]) -> HashMap<PageId, Vec<Lsn>> {
    let committed: HashSet<TxnId> = records
        .iter()
        .filter_map(|r| match r.record {
            LogRecord::Commit { txn } => Some(txn),
            _ => None,
        })
        .collect();
    let mut images: HashMap<PageId, Vec<Lsn>> = HashMap::new();
    for recovered in records {
        if let LogRecord::FullPageImage { txn, page, .. } = &recovered.record
            && committed.contains(txn)
        {
            images.entry(*page).or_default().push(recovered.start);
        }
    }
    images
}

/// Per-page state of the replay.
#[derive(Default)]
struct PageStates {
    /// The LSN each touched page is known to carry: its header LSN when read, 0 when restored
    /// from an image, then the end LSN of each batch replayed on it. It only grows, except
    /// when an image restores the page (which happens only when the page is older than the
    /// image's batch, or torn).
    lsn: HashMap<PageId, Lsn>,
    /// Torn pages: skip their records until the image at this LSN.
    torn_until: HashMap<PageId, Lsn>,
}

impl PageStates {
    /// The LSN `page` carries: known, or read from the device (`None`: it does not read,
    /// torn or unreadable).
    fn known_lsn(&mut self, pool: &BufferPool, page: PageId) -> Option<Lsn> {
        if let Some(&lsn) = self.lsn.get(&page) {
            return Some(lsn);
        }
        let lsn = crate::page::page_lsn(pool.read(page).ok()?.data());
        self.lsn.insert(page, lsn);
        Some(lsn)
    }

    /// After a committed batch's records: the page carries the batch, whether the batch was
    /// replayed on it or skipped because the page was newer (then its LSN stays: lowering it
    /// would replay older batches over a newer page, issue 18). A torn page waiting for its
    /// image carries nothing yet.
    fn note_batch(&mut self, page: PageId, end: Lsn) {
        if self.torn_until.contains_key(&page) {
            return;
        }
        let known = self.lsn.entry(page).or_insert(end);
        *known = (*known).max(end);
    }
}

/// Replays committed transactions (see the module docs).
pub(crate) fn replay(
    pool: &BufferPool,
    recovery: &Recovery,
    protection: TornPageProtection,
    redo: &dyn PageOpRedo,
) -> Result<RecoveryReport> {
    let mut report = RecoveryReport::default();
    let images = committed_images(&recovery.records);
    let mut pending: HashMap<TxnId, Vec<&RecoveredRecord>> = HashMap::new();
    let mut states = PageStates::default();
    let mut mtrs = MtrState {
        batch: Vec::new(),
        start: 0,
        kv_txns: BTreeMap::new(),
        torn: TornPages {
            last_definition: last_definitions(recovery, redo),
            awaiting: HashSet::new(),
        },
    };
    for recovered in &recovery.records {
        match &recovered.record {
            LogRecord::PageRedo { txn, page, .. } | LogRecord::FullPageImage { txn, page, .. } => {
                if *page >= pool.pages() {
                    return Err(Error::CorruptLog {
                        offset: recovered.start,
                        reason: format!(
                            "a record of transaction {txn} names page {page}, past the end of \
                             the data file ({} pages)",
                            pool.pages()
                        ),
                    });
                }
                report.max_txn = report.max_txn.max(*txn);
                pending.entry(*txn).or_default().push(recovered);
            }
            LogRecord::Commit { txn } => {
                report.max_txn = report.max_txn.max(*txn);
                let records = pending.remove(txn).unwrap_or_default();
                let batch = CommitBatch {
                    start: records.first().map_or(recovered.start, |r| r.start),
                    end: recovered.end,
                };
                for record in &records {
                    apply(
                        pool,
                        record,
                        batch,
                        &images,
                        protection,
                        &mut states,
                        &mut report,
                    )?;
                }
                for record in &records {
                    if let LogRecord::PageRedo { page, .. }
                    | LogRecord::FullPageImage { page, .. } = record.record
                    {
                        states.note_batch(page, batch.end);
                    }
                }
                report.committed += 1;
            }
            LogRecord::PageOp { .. } | LogRecord::Undo { .. } => {
                check_op_page(pool, recovered)?;
                mtrs.push(recovered, &mut report);
            }
            LogRecord::MtrEnd { txn } => {
                mtrs.end(pool, redo, *txn, recovered, &mut states.lsn, &mut report)?;
            }
            LogRecord::TxnCommit { txn } | LogRecord::TxnAbort { txn } => {
                report.max_txn = report.max_txn.max(*txn);
                mtrs.kv_txns.remove(txn);
            }
            LogRecord::Checkpoint { .. } => {}
        }
    }
    mtrs.finish(&mut report)?;
    report.uncommitted = pending.len();
    if let Some((&page, &until)) = states.torn_until.iter().next() {
        return Err(Error::CorruptPage {
            page,
            reason: format!(
                "torn, and the image at LSN {until} that would repair it was not applied"
            ),
        });
    }
    Ok(report)
}

/// A committed batch's LSN range.
#[derive(Debug, Clone, Copy)]
struct CommitBatch {
    start: Lsn,
    end: Lsn,
}

fn apply(
    pool: &BufferPool,
    record: &RecoveredRecord,
    batch: CommitBatch,
    images: &HashMap<PageId, Vec<Lsn>>,
    protection: TornPageProtection,
    states: &mut PageStates,
    report: &mut RecoveryReport,
) -> Result<()> {
    match &record.record {
        LogRecord::FullPageImage { page, image, .. } => {
            let torn = states.torn_until.remove(page).is_some()
                || match states.known_lsn(pool, *page) {
                    // The page already carries the batch (it was written after it): restoring
                    // the older image would take it back in time (issue 18).
                    Some(known) if known >= batch.end => {
                        report.redo_skipped += 1;
                        return Ok(());
                    }
                    Some(_) => false,
                    None => true,
                };
            let mut guard = pool.create(*page)?;
            if image.len() != guard.data().len() {
                return Err(Error::CorruptLog {
                    offset: record.start,
                    reason: format!("image of page {page} has {} bytes", image.len()),
                });
            }
            guard.data_mut().copy_from_slice(image);
            guard.set_lsn_range(batch.start, batch.end);
            states.lsn.insert(*page, 0);
            report.images_restored += 1;
            report.torn_pages_repaired += usize::from(torn);
        }
        LogRecord::PageRedo {
            page,
            offset,
            bytes,
            ..
        } => {
            if states.torn_until.contains_key(page) {
                report.redo_superseded += 1;
                return Ok(());
            }
            let mut guard = match pool.write(*page) {
                Ok(guard) => guard,
                Err(Error::CorruptPage { reason, .. }) => {
                    let Some(&until) = images
                        .get(page)
                        .and_then(|lsns| lsns.iter().find(|&&lsn| lsn > record.start))
                    else {
                        return Err(Error::CorruptPage {
                            page: *page,
                            reason: format!(
                                "{reason}; no later page image in the log repairs it \
                                 (torn_page_protection = {})",
                                protection.name()
                            ),
                        });
                    };
                    states.torn_until.insert(*page, until);
                    report.redo_superseded += 1;
                    return Ok(());
                }
                Err(err) => return Err(err),
            };
            let known = *states
                .lsn
                .entry(*page)
                .or_insert_with(|| crate::page::page_lsn(guard.data()));
            if known >= batch.end {
                report.redo_skipped += 1;
                return Ok(());
            }
            let offset = *offset as usize;
            let end = offset.saturating_add(bytes.len());
            if end > guard.data().len() || offset < PAGE_HEADER_SIZE {
                return Err(Error::CorruptLog {
                    offset: record.start,
                    reason: format!("redo of bytes {offset}..{end} of page {page}"),
                });
            }
            guard.data_mut()[offset..end].copy_from_slice(bytes);
            guard.set_lsn_range(batch.start, batch.end);
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
    Ok(())
}

/// Pages found torn on the device whose repair comes later in the log.
struct TornPages {
    /// Per page, the start LSN of the last complete batch that defines it whole (an image or a
    /// format as the page's first operation in the batch).
    last_definition: HashMap<PageId, Lsn>,
    /// Torn pages waiting for such a batch: earlier batches on them are skipped.
    awaiting: HashSet<PageId>,
}

/// The pre-pass of [`TornPages::last_definition`].
fn last_definitions(recovery: &Recovery, redo: &dyn PageOpRedo) -> HashMap<PageId, Lsn> {
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

/// A `PageOp` must name a data page.
fn check_op_page(pool: &BufferPool, recovered: &RecoveredRecord) -> Result<()> {
    if let LogRecord::PageOp { page, .. } = &recovered.record
        && *page >= pool.pages()
    {
        return Err(Error::CorruptLog {
            offset: recovered.start,
            reason: format!(
                "a page operation names page {page}, past the end of the data file ({} pages)",
                pool.pages()
            ),
        });
    }
    Ok(())
}

/// The losers, by their first LSN.
fn losers_in_order(kv_txns: BTreeMap<TxnId, LoserTxn>) -> Vec<LoserTxn> {
    let mut losers: Vec<LoserTxn> = kv_txns.into_values().collect();
    losers.sort_by_key(|loser| loser.first_lsn);
    losers
}

/// Records the undo bodies of a key-value transaction's batch (system batches have txn 0).
fn note_undo(
    kv_txns: &mut BTreeMap<TxnId, LoserTxn>,
    txn: TxnId,
    start: Lsn,
    batch: &[&LogRecord],
) {
    if txn == 0 {
        return;
    }
    let entry = kv_txns.entry(txn).or_insert_with(|| LoserTxn {
        txn,
        first_lsn: start,
        undo: Vec::new(),
    });
    for record in batch {
        if let LogRecord::Undo { body, .. } = record {
            entry.undo.push(body.clone());
        }
    }
}

/// Mini-transaction batches being collected and the key-value transactions they belong to.
struct MtrState<'r> {
    /// The batch being collected (its `PageOp` and `Undo` records).
    batch: Vec<&'r LogRecord>,
    /// Its start LSN.
    start: Lsn,
    /// Key-value transactions seen and not yet ended.
    kv_txns: BTreeMap<TxnId, LoserTxn>,
    torn: TornPages,
}

impl<'r> MtrState<'r> {
    fn push(&mut self, recovered: &'r RecoveredRecord, report: &mut RecoveryReport) {
        if let LogRecord::Undo { txn, .. } = &recovered.record {
            report.max_txn = report.max_txn.max(*txn);
        }
        if self.batch.is_empty() {
            self.start = recovered.start;
        }
        self.batch.push(&recovered.record);
    }

    /// The batch's terminator: apply it, note its undo entries.
    fn end(
        &mut self,
        pool: &BufferPool,
        redo: &dyn PageOpRedo,
        txn: TxnId,
        recovered: &RecoveredRecord,
        page_lsn: &mut HashMap<PageId, Lsn>,
        report: &mut RecoveryReport,
    ) -> Result<()> {
        report.max_txn = report.max_txn.max(txn);
        let start = if self.batch.is_empty() {
            recovered.start
        } else {
            self.start
        };
        let range = LsnRange {
            start,
            end: recovered.end,
        };
        MtrReplay {
            pool,
            redo,
            page_lsn,
            torn: &mut self.torn,
            report,
        }
        .apply_batch(&self.batch, range)?;
        note_undo(&mut self.kv_txns, txn, range.start, &self.batch);
        self.batch.clear();
        Ok(())
    }

    /// After the scan: incomplete records, losers, torn pages never rebuilt.
    fn finish(self, report: &mut RecoveryReport) -> Result<()> {
        report.mtr_records_incomplete = self.batch.len();
        report.losers = losers_in_order(self.kv_txns);
        if let Some(&page) = self.torn.awaiting.iter().next() {
            return Err(Error::CorruptPage {
                page,
                reason: "torn, and the batch that would rebuild it was not applied".into(),
            });
        }
        Ok(())
    }
}

/// What replaying a mini-transaction batch needs.
struct MtrReplay<'a> {
    pool: &'a BufferPool,
    redo: &'a dyn PageOpRedo,
    page_lsn: &'a mut HashMap<PageId, Lsn>,
    torn: &'a mut TornPages,
    report: &'a mut RecoveryReport,
}

impl MtrReplay<'_> {
    /// Applies one complete batch (see [`apply_mtr_batch`]).
    fn apply_batch(&mut self, batch: &[&LogRecord], range: LsnRange) -> Result<()> {
        apply_mtr_batch(
            self.pool,
            self.redo,
            batch,
            range,
            self.page_lsn,
            self.torn,
            self.report,
        )?;
        self.report.mtr_batches += 1;
        Ok(())
    }
}

/// Applies one complete mini-transaction batch: per page, in record order, unless the page
/// already carries the batch (its LSN is at or past the batch's end). A page that cannot be
/// read (torn: its last write was cut by the crash) while a later batch rebuilds it whole is
/// skipped until that batch (see the module docs).
fn apply_mtr_batch(
    pool: &BufferPool,
    redo: &dyn PageOpRedo,
    batch: &[&LogRecord],
    range: LsnRange,
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
                report.redo_superseded += ops.len();
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
                    report.redo_superseded += ops.len();
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
