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

use std::collections::{HashMap, HashSet};

use crate::engine::TornPageProtection;
use crate::error::{Error, PageId, Result};
use crate::page::{Lsn, PAGE_HEADER_SIZE};
use crate::pool::BufferPool;
use crate::wal::{LogRecord, RecoveredRecord, Recovery, TxnId};

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
    /// The LSN each touched page is known to carry (its header LSN when read, 0 when restored
    /// from an image, the commit's end LSN after a replay).
    lsn: HashMap<PageId, Lsn>,
    /// Torn pages: skip their records until the image at this LSN.
    torn_until: HashMap<PageId, Lsn>,
}

/// Replays committed transactions (see the module docs).
pub(crate) fn replay(
    pool: &BufferPool,
    recovery: &Recovery,
    protection: TornPageProtection,
) -> Result<RecoveryReport> {
    let mut report = RecoveryReport::default();
    let images = committed_images(&recovery.records);
    let mut pending: HashMap<TxnId, Vec<&RecoveredRecord>> = HashMap::new();
    let mut states = PageStates::default();
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
                    if let LogRecord::PageRedo { page, .. } | LogRecord::FullPageImage { page, .. } =
                        record.record
                        && !states.torn_until.contains_key(&page)
                    {
                        states.lsn.insert(page, batch.end);
                    }
                }
                report.committed += 1;
            }
            LogRecord::Checkpoint { .. } => {}
        }
    }
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
            let torn = states.torn_until.remove(page).is_some() || pool.read(*page).is_err();
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
        LogRecord::Commit { .. } | LogRecord::Checkpoint { .. } => {}
    }
    Ok(())
}
