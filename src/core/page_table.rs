//! The page table: page id to frame, in shards each behind a reader-writer lock (one table for
//! all pool instances).
//!
//! Lock order: a shard lock is taken after any list mutex and released before I/O; never two
//! shard locks at once.

use std::collections::HashMap;

use crate::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::frame::FrameId;
use crate::error::PageId;

const SHARDS: usize = 64;

/// Sharded page id to frame map.
#[derive(Debug)]
pub struct PageTable {
    shards: Vec<RwLock<HashMap<PageId, FrameId>>>,
}

impl PageTable {
    /// A table sized for `frames` entries.
    pub fn new(frames: usize) -> Self {
        let per_shard = frames / SHARDS + 1;
        PageTable {
            shards: (0..SHARDS)
                .map(|_| RwLock::new(HashMap::with_capacity(per_shard * 2)))
                .collect(),
        }
    }

    fn shard_of(page: PageId) -> usize {
        // Fibonacci hashing spreads sequential page ids over shards.
        (page.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % SHARDS
    }

    /// The shard holding `page`, for reading.
    pub fn read(&self, page: PageId) -> RwLockReadGuard<'_, HashMap<PageId, FrameId>> {
        self.shards[Self::shard_of(page)].read()
    }

    /// The shard holding `page`, for writing.
    pub fn write(&self, page: PageId) -> RwLockWriteGuard<'_, HashMap<PageId, FrameId>> {
        self.shards[Self::shard_of(page)].write()
    }

    /// Number of mapped pages (takes every shard lock in turn; for stats and checks).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|shard| shard.read().len()).sum()
    }

    /// Whether no page is mapped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every mapping (for invariant checks).
    pub fn entries(&self) -> Vec<(PageId, FrameId)> {
        self.shards
            .iter()
            .flat_map(|shard| {
                shard
                    .read()
                    .iter()
                    .map(|(page, frame)| (*page, *frame))
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}
