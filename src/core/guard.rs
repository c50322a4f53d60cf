//! Page guards: a pinned, latched page. Dropping the guard releases latch and pin; a write guard
//! that was modified marks the page dirty at its LSN first.

use super::frame::FrameId;
use super::pool::{Core, LatchMode};
use crate::error::PageId;
use crate::page::Lsn;

/// Shared access to a cached page.
#[derive(Debug)]
pub struct PageReadGuard<'a> {
    pool: &'a Core,
    frame: FrameId,
}

impl<'a> PageReadGuard<'a> {
    pub(crate) fn new(pool: &'a Core, frame: FrameId) -> Self {
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
    pool: &'a Core,
    frame: FrameId,
    modified: bool,
    /// (oldest, newest) LSNs of the logged change, if the caller logged it.
    lsn: Option<(Lsn, Lsn)>,
}

impl<'a> PageWriteGuard<'a> {
    pub(crate) fn new(pool: &'a Core, frame: FrameId) -> Self {
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
        self.set_lsn_range(lsn, lsn);
    }

    /// Records that the change was logged by records spanning `start..end`: if the page was
    /// clean, `start` becomes its oldest modification (so a checkpoint never passes the
    /// records), and `end` its newest (the WAL rule flushes the log to it before a write).
    pub fn set_lsn_range(&mut self, start: Lsn, end: Lsn) {
        assert!(start > 0 && start <= end, "LSN range {start}..{end}");
        self.modified = true;
        self.lsn = Some(match self.lsn {
            None => (start, end),
            Some((old_start, old_end)) => (old_start.min(start), old_end.max(end)),
        });
    }

    /// Puts back `image` (the page as it was when the guard was taken) and forgets the
    /// modification: a transaction's abort.
    pub fn restore(&mut self, image: &[u8]) {
        // SAFETY: we hold the latch exclusive.
        unsafe { self.pool.frame_bytes_mut(self.frame) }.copy_from_slice(image);
        self.modified = false;
        self.lsn = None;
    }

    /// The oldest modification of the page (0 if clean): a WAL layer uses it to decide
    /// whether the first change after a checkpoint must log a full page image.
    pub fn oldest_modification(&self) -> Lsn {
        self.pool
            .frame(self.frame)
            .oldest_modification
            .load(crate::sync::Ordering::Acquire)
    }
}

impl Drop for PageWriteGuard<'_> {
    fn drop(&mut self) {
        if self.modified {
            let (oldest, newest) = self.lsn.unwrap_or_else(|| {
                let lsn = self.pool.log.lsn_for_unlogged_change();
                (lsn, lsn)
            });
            self.pool.mark_dirty_range(self.frame, oldest, newest);
        }
        self.pool.release(self.frame, LatchMode::Exclusive);
    }
}
