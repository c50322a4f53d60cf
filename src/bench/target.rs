//! What `flashbuf bench` runs each scheme on (issue 9 item 4): a [`Database`] (buffer pool over
//! the data file, the redo log on its own device) whose page updates are logged, committed
//! transactions, or, with `--no-log`, the bare pool over the same data-file layout (doublewrite
//! area included) for comparison with engines that keep no WAL.
//!
//! A synthetic operation's update changes the page's record; as a transaction it latches the
//! page, applies the change to a copy, logs the changed byte range as a redo record and
//! commits (durable per `flush_log_at_trx_commit`; the papers ran 0). Reads take the page's
//! shared latch outside any transaction.

use std::sync::Arc;

use super::BenchTarget;
use crate::datafile::DataFile;
use crate::db::Database;
use crate::engine::innodb::doublewrite::DoublewriteArea;
use crate::engine::{PoolConfig, WriteTarget, open_pool};
use crate::error::{Error, PageId, Result};
use crate::page::PAGE_HEADER_SIZE;
use crate::pool::{BufferPool, PoolStats};
use crate::wal::WalStats;
use crate::workload::PageAccess;

/// A database as a bench target.
#[derive(Debug)]
pub struct DatabaseTarget {
    db: Option<Database>,
    pages: u64,
    page_size: usize,
}

impl DatabaseTarget {
    /// Wraps an open database.
    #[must_use]
    pub fn new(db: Database) -> Self {
        let pages = db.pool().pages();
        let page_size = db.pool().page_size();
        DatabaseTarget {
            db: Some(db),
            pages,
            page_size,
        }
    }

    fn db(&self) -> Result<&Database> {
        self.db
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument("the database is closed".into()))
    }
}

impl PageAccess for DatabaseTarget {
    fn pages(&self) -> u64 {
        self.pages
    }

    fn page_size(&self) -> usize {
        self.page_size
    }

    fn read_with(&self, page: PageId, f: &mut dyn FnMut(&[u8])) -> Result<()> {
        let guard = self.db()?.pool().read(page)?;
        f(guard.data());
        Ok(())
    }

    fn update_with(&self, page: PageId, f: &mut dyn FnMut(&mut [u8])) -> Result<()> {
        let db = self.db()?;
        let mut tx = db.begin();
        tx.lock(&[page])?;
        let mut copy = tx.page(page)?.to_vec();
        f(&mut copy);
        let current = tx.page(page)?;
        let first = (PAGE_HEADER_SIZE..copy.len()).find(|&i| copy[i] != current[i]);
        let Some(first) = first else {
            return tx.commit().map(|_| ());
        };
        let last = (first..copy.len())
            .rev()
            .find(|&i| copy[i] != current[i])
            .unwrap_or(first);
        tx.update(page, first, &copy[first..=last])?;
        tx.commit().map(|_| ())
    }
}

impl BenchTarget for DatabaseTarget {
    fn stats(&self) -> PoolStats {
        self.db
            .as_ref()
            .map_or_else(PoolStats::default, |db| db.pool().stats())
    }

    fn sample_tail(&self, scan_depth: usize) {
        if let Some(db) = self.db.as_ref() {
            db.pool().sample_tail(scan_depth);
        }
    }

    fn log_stats(&self) -> Option<WalStats> {
        self.db.as_ref().map(|db| db.wal().stats())
    }

    fn shutdown(&self) -> Result<()> {
        let db = self.db()?;
        db.pool().flush_all()?;
        db.checkpoint()
    }

    fn discard(&self) -> Result<()> {
        self.db()?.abandon_in_place();
        Ok(())
    }
}

/// The bare pool over a data file's layout (`--no-log`): writes go through the same write path
/// (the doublewrite included), LSNs are counted, nothing is logged.
///
/// # Errors
/// Configuration or device errors.
pub fn open_unlogged_pool(datafile: &DataFile, config: &PoolConfig) -> Result<BufferPool> {
    let mut config = config.clone();
    config.torn_page_protection = Some(config.effective_torn_page_protection());
    let target = WriteTarget {
        data: datafile.data_device()?,
        doublewrite: Some(DoublewriteArea {
            device: datafile.doublewrite_device()?,
            first_page: 0,
        }),
    };
    let pool = open_pool(&target, &config, Arc::new(crate::pool::NullLog::default()))?;
    pool.set_high_water(datafile.header().high_water_mark);
    Ok(pool)
}

/// A transactional key-value store as a bench target (record workloads): the B+-trees and
/// [`crate::txn::KvStore`] over the scheme's [`Database`]. Pages change only through
/// transactions, so the page-level `update_with` is refused; reads go through the pool.
#[derive(Debug)]
pub struct KvTarget {
    kv: crate::txn::KvStore,
    pages: u64,
    page_size: usize,
}

impl KvTarget {
    /// Wraps an open store.
    #[must_use]
    pub fn new(kv: crate::txn::KvStore) -> Self {
        let pool = kv.trees().database().pool();
        let (pages, page_size) = (pool.pages(), pool.page_size());
        KvTarget {
            kv,
            pages,
            page_size,
        }
    }

    fn db(&self) -> &Database {
        self.kv.trees().database()
    }
}

impl PageAccess for KvTarget {
    fn pages(&self) -> u64 {
        self.pages
    }

    fn page_size(&self) -> usize {
        self.page_size
    }

    fn read_with(&self, page: PageId, f: &mut dyn FnMut(&[u8])) -> Result<()> {
        let guard = self.db().pool().read(page)?;
        f(guard.data());
        Ok(())
    }

    fn update_with(&self, page: PageId, _f: &mut dyn FnMut(&mut [u8])) -> Result<()> {
        Err(Error::InvalidArgument(format!(
            "page {page}: a key-value target changes pages only through transactions"
        )))
    }
}

impl BenchTarget for KvTarget {
    fn stats(&self) -> PoolStats {
        self.db().pool().stats()
    }

    fn sample_tail(&self, scan_depth: usize) {
        self.db().pool().sample_tail(scan_depth);
    }

    fn log_stats(&self) -> Option<WalStats> {
        Some(self.db().wal().stats())
    }

    fn shutdown(&self) -> Result<()> {
        let db = self.db();
        db.pool().flush_all()?;
        db.checkpoint()
    }

    fn discard(&self) -> Result<()> {
        self.db().abandon_in_place();
        Ok(())
    }

    fn kv(&self) -> Option<&dyn crate::kv::KvEngine> {
        Some(&self.kv)
    }

    fn lock_stats(&self) -> Option<crate::txn::lock::LockStats> {
        Some(self.kv.lock_stats())
    }

    fn tree_check(&self) -> Option<Result<crate::btree::check::CheckReport>> {
        Some(self.kv.check())
    }
}
