//! A buffer pool instance (InnoDB's `buf_pool_t`, `innodb_buffer_pool_instances`): a fixed
//! share of the frames with its own free list, replacement order (LRU-M), side list (LRU-D:
//! LRU-C's dirty region), flush list, mutexes and eviction counter. Pages map to instances by
//! page id, 64 consecutive pages to the same instance as InnoDB does (`buf_pool_get`), so a miss,
//! its victim and the cleaner's work on that page stay inside one instance.
//!
//! Lock order inside an instance (never take an earlier one while holding a later one):
//! `order` (LRU-M) → `side` (LRU-D) → `flush` → `free` → a page-table shard. Two instances'
//! mutexes are never held at once. Under a list mutex only `try_latch_*` is used on pages and no
//! I/O is issued (rules of the house).

use crate::core::flush_list::FlushList;
use crate::core::frame::{FrameId, Region};
use crate::core::lru_batch::LruBatch;
use crate::core::lru_list::LruList;
use crate::core::order::OrderState;
use crate::core::stats::MutexCounters;
use crate::error::PageId;
use crate::sync::{AtomicU64, AtomicUsize, Mutex, MutexGuard, Ordering};

/// Pages mapped to one instance together (InnoDB ignores the low 6 bits of the page number).
pub const INSTANCE_EXTENT_PAGES: u64 = 64;

/// The instance `page` belongs to among `instances`.
#[must_use]
pub fn instance_of(page: PageId, instances: usize) -> usize {
    debug_assert!(instances > 0);
    let extent = page / INSTANCE_EXTENT_PAGES;
    // Fibonacci hashing: consecutive extents spread over instances.
    (extent.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize % instances
}

/// An instance's list mutexes: order, side list, flush list, free list.
pub(crate) type RawLists<'a> = (
    &'a Mutex<Box<dyn OrderState>>,
    &'a Mutex<LruList>,
    &'a Mutex<FlushList>,
    &'a Mutex<Vec<FrameId>>,
);

/// The counters of one instance's mutexes.
#[derive(Debug, Default)]
pub struct InstanceMutexes {
    /// LRU-M: the replacement order (for LRU-C, the mixed region).
    pub order: MutexCounters,
    /// LRU-D: the side list.
    pub side: MutexCounters,
    /// The flush list.
    pub flush: MutexCounters,
    /// The free list.
    pub free: MutexCounters,
}

/// One instance.
#[derive(Debug)]
pub struct Instance {
    /// Its index among the pool's instances.
    pub index: usize,
    /// Its first frame.
    pub first_frame: FrameId,
    /// Number of frames it owns (`first_frame .. first_frame + frame_count`).
    pub frame_count: usize,
    free: Mutex<Vec<FrameId>>,
    free_len: AtomicUsize,
    order: Mutex<Box<dyn OrderState>>,
    side: Mutex<LruList>,
    side_len: AtomicUsize,
    flush: Mutex<FlushList>,
    /// Mutex counters.
    pub mutexes: InstanceMutexes,
    /// Evictions so far (InnoDB's per-instance `freed_page_clock`).
    pub evictions: AtomicU64,
    /// The page cleaner's LRU batch as MySQL 5.6's miss loop sees it (`init_flush`,
    /// `try_LRU_scan`); its mutex is a leaf, outside the lock order above.
    pub lru_batch: LruBatch,
    /// The order's young-page window for this instance
    /// ([`crate::core::order::ReplacementOrder::young_window`]), if it has one.
    pub young_window: Option<u64>,
}

impl Instance {
    /// An instance owning `frame_count` frames from `first_frame`, all free.
    #[must_use]
    pub fn new(
        index: usize,
        first_frame: FrameId,
        frame_count: usize,
        order: Box<dyn OrderState>,
    ) -> Self {
        assert!(frame_count > 0, "an instance owns frames");
        Instance {
            index,
            first_frame,
            frame_count,
            free: Mutex::new(Vec::with_capacity(frame_count)),
            free_len: AtomicUsize::new(0),
            order: Mutex::new(order),
            side: Mutex::new(LruList::new(Region::Side, 0)),
            side_len: AtomicUsize::new(0),
            flush: Mutex::new(FlushList::new()),
            mutexes: InstanceMutexes::default(),
            evictions: AtomicU64::new(0),
            lru_batch: LruBatch::default(),
            young_window: None,
        }
    }

    /// Whether frame `id` belongs to this instance.
    #[must_use]
    pub fn owns(&self, id: FrameId) -> bool {
        id >= self.first_frame && ((id - self.first_frame) as usize) < self.frame_count
    }

    /// Locks the replacement order (LRU-M), counting waits.
    pub fn lock_order(&self) -> MutexGuard<'_, Box<dyn OrderState>> {
        self.mutexes.order.lock(&self.order)
    }

    /// Locks the side list (LRU-D), counting waits. Callers that must hold LRU-M too (no mutex
    /// split) take it first.
    pub fn lock_side(&self) -> MutexGuard<'_, LruList> {
        self.mutexes.side.lock(&self.side)
    }

    /// Locks the flush list, counting waits.
    pub fn lock_flush(&self) -> MutexGuard<'_, FlushList> {
        self.mutexes.flush.lock(&self.flush)
    }

    /// Locks the free list, counting waits.
    pub fn lock_free(&self) -> MutexGuard<'_, Vec<FrameId>> {
        self.mutexes.free.lock(&self.free)
    }

    /// Free frames now (lock-free; may be stale).
    pub fn free_len(&self) -> usize {
        self.free_len.load(Ordering::Acquire)
    }

    /// Publishes the free list's length (call under the free-list mutex).
    pub fn set_free_len(&self, len: usize) {
        self.free_len.store(len, Ordering::Release);
    }

    /// Pages on the side list now (lock-free; may be stale).
    pub fn side_len(&self) -> usize {
        self.side_len.load(Ordering::Acquire)
    }

    /// Publishes the side list's length (call under its mutex).
    pub fn set_side_len(&self, len: usize) {
        self.side_len.store(len, Ordering::Release);
    }

    /// The raw mutexes, for the invariant checker (which takes them without counting).
    pub(crate) fn raw_lists(&self) -> RawLists<'_> {
        (&self.order, &self.side, &self.flush, &self.free)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_stay_together_and_spread() {
        for page in 0..64 {
            assert_eq!(instance_of(page, 8), instance_of(0, 8));
        }
        let mut counts = [0usize; 8];
        for extent in 0..8000u64 {
            counts[instance_of(extent * 64, 8)] += 1;
        }
        for count in counts {
            assert!((800..1200).contains(&count), "{counts:?}");
        }
        assert_eq!(instance_of(12345, 1), 0);
    }
}
