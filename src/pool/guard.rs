//! Page guards: a pinned, latched page. Dropping the guard releases latch and pin; a write guard
//! that was modified marks the page dirty at its LSN first.

use super::frame::FrameId;
use super::{LatchMode, PoolInner};
use crate::error::PageId;
use crate::page::Lsn;

/// Shared access to a cached page.
#[derive(Debug)]
pub struct PageReadGuard<'a> {
    pool: &'a PoolInner,
    frame: FrameId,
}

impl<'a> PageReadGuard<'a> {
    pub(crate) fn new(pool: &'a PoolInner, frame: FrameId) -> Self {
        PageReadGuard { pool, frame }
    }

    /// The page's bytes (header included).
    pub fn data(&self) -> &[u8] {
        self.pool.frame_bytes(self.frame)
    }

    /// The page id.
    pub fn page_id(&self) -> PageId {
        self.pool.frame(self.frame).page_id()
    }
}

impl Drop for PageReadGuard<'_> {
    fn drop(&mut self) {
        self.pool.release(self.frame, LatchMode::Shared);
    }
}

/// Exclusive access to a cached page.
#[derive(Debug)]
pub struct PageWriteGuard<'a> {
    pool: &'a PoolInner,
    frame: FrameId,
    modified: bool,
    lsn: Option<Lsn>,
}

impl<'a> PageWriteGuard<'a> {
    pub(crate) fn new(pool: &'a PoolInner, frame: FrameId) -> Self {
        PageWriteGuard {
            pool,
            frame,
            modified: false,
            lsn: None,
        }
    }

    /// The page's bytes.
    pub fn data(&self) -> &[u8] {
        self.pool.frame_bytes(self.frame)
    }

    /// The page's bytes, mutably; the page will be marked dirty when the guard drops.
    pub fn data_mut(&mut self) -> &mut [u8] {
        self.modified = true;
        // SAFETY: we hold the latch exclusive.
        unsafe { self.pool.frame_bytes_mut(self.frame) }
    }

    /// The page id.
    pub fn page_id(&self) -> PageId {
        self.pool.frame(self.frame).page_id()
    }

    /// Records that the change was logged at `lsn` (the end LSN of its log record); without a
    /// WAL the pool picks an LSN itself.
    pub fn set_lsn(&mut self, lsn: Lsn) {
        assert!(lsn > 0, "LSN 0 means clean");
        self.modified = true;
        self.lsn = Some(self.lsn.map_or(lsn, |old| old.max(lsn)));
    }

    /// The oldest modification of the page (0 if clean): a WAL layer uses it to decide
    /// whether the first change after a checkpoint must log a full page image.
    pub fn oldest_modification(&self) -> Lsn {
        self.pool
            .frame(self.frame)
            .oldest_modification
            .load(std::sync::atomic::Ordering::Acquire)
    }
}

impl Drop for PageWriteGuard<'_> {
    fn drop(&mut self) {
        if self.modified {
            let lsn = self
                .lsn
                .unwrap_or_else(|| self.pool.log.lsn_for_unlogged_change());
            self.pool.mark_dirty(self.frame, lsn);
        }
        self.pool.release(self.frame, LatchMode::Exclusive);
    }
}
