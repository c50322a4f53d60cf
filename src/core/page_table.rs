//! The page table: page id to frame by direct translation (one table for all pool instances).
//!
//! A lookup is two dependent loads and no hashing: page ids are dense (`0..pages` of the
//! device), so the table is a two-level array, a directory of leaves of `2^leaf_bits` entries,
//! each entry the frame holding the page or [`NIL`]. A leaf is allocated the first time one of
//! its pages is mapped and lives as long as the table, so its memory is 4 bytes per page of the
//! device's touched ranges (vmcache's translation array costs 8 bytes per page of the whole
//! device).
//!
//! **Readers take no lock and write nothing.** [`PageTable::lookup`] gives a *candidate*
//! frame: the mapping may change right after the load. A reader that wants the page pins the
//! candidate and then validates it (the frame still holds the page and no evictor has claimed
//! it, see `core::frame`); the pin/claim protocol, not the table, keeps a pinned page in place.
//!
//! **Writers** (a miss mapping a page, an eviction unmapping one) serialize per shard of pages
//! through [`PageTable::write`], so check-then-insert is atomic with respect to other writers.
//!
//! Lock order: a shard lock is taken after any list mutex and released before I/O; never two
//! shard locks at once.

use std::sync::OnceLock;

use crate::sync::{AtomicU32, Mutex, MutexGuard, Ordering};

use super::frame::{FrameId, NIL};
use crate::error::PageId;

/// Writer shards (a power of two).
const SHARDS: usize = 64;
/// Entries per leaf for small devices (16 KiB of entries).
const MIN_LEAF_BITS: u32 = 12;
/// The directory never has more than `2^MAX_DIRECTORY_BITS` leaves (24 bytes each).
const MAX_DIRECTORY_BITS: u32 = 20;

/// One leaf: the frames of `2^leaf_bits` consecutive pages.
type Leaf = Box<[AtomicU32]>;

/// Page id to frame, by direct translation.
#[derive(Debug)]
pub struct PageTable {
    leaf_bits: u32,
    directory: Box<[OnceLock<Leaf>]>,
    writers: Box<[Mutex<()>]>,
}

/// A writer's hold on the shard of one page: [`PageTable::write`].
pub struct ShardWriter<'a> {
    table: &'a PageTable,
    shard: usize,
    _lock: MutexGuard<'a, ()>,
}

impl PageTable {
    /// A table for the pages `0..pages`.
    #[must_use]
    pub fn new(pages: u64) -> Self {
        let page_bits = 64 - pages.saturating_sub(1).leading_zeros();
        let leaf_bits = page_bits
            .saturating_sub(MAX_DIRECTORY_BITS)
            .max(MIN_LEAF_BITS);
        let leaves = pages.div_ceil(1 << leaf_bits).max(1) as usize;
        PageTable {
            leaf_bits,
            directory: (0..leaves).map(|_| OnceLock::new()).collect(),
            writers: (0..SHARDS).map(|_| Mutex::new(())).collect(),
        }
    }

    fn shard_of(page: PageId) -> usize {
        // Fibonacci hashing spreads sequential page ids over shards.
        (page.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % SHARDS
    }

    fn split(&self, page: PageId) -> (usize, usize) {
        (
            (page >> self.leaf_bits) as usize,
            (page & ((1 << self.leaf_bits) - 1)) as usize,
        )
    }

    /// The entry of `page`, if its leaf exists.
    fn entry(&self, page: PageId) -> Option<&AtomicU32> {
        let (leaf, slot) = self.split(page);
        self.directory.get(leaf)?.get().map(|leaf| &leaf[slot])
    }

    /// The frame `page` maps to now, without any lock: a candidate the caller must validate
    /// (see the module docs). `None` for pages past the table.
    #[inline]
    pub fn lookup(&self, page: PageId) -> Option<FrameId> {
        let id = self.entry(page)?.load(Ordering::Acquire);
        (id != NIL).then_some(id)
    }

    /// The shard holding `page`, for changing its mapping.
    pub fn write(&self, page: PageId) -> ShardWriter<'_> {
        let shard = Self::shard_of(page);
        ShardWriter {
            table: self,
            shard,
            _lock: self.writers[shard].lock(),
        }
    }

    /// Number of mapped pages (scans the table; for stats and checks).
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether no page is mapped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every mapping (for invariant checks; a snapshot only when no writer is active).
    pub fn entries(&self) -> Vec<(PageId, FrameId)> {
        let mut out = Vec::new();
        for (index, leaf) in self.directory.iter().enumerate() {
            let Some(leaf) = leaf.get() else { continue };
            let first = (index as PageId) << self.leaf_bits;
            for (slot, entry) in leaf.iter().enumerate() {
                let id = entry.load(Ordering::Acquire);
                if id != NIL {
                    out.push((first + slot as PageId, id));
                }
            }
        }
        out
    }
}

impl ShardWriter<'_> {
    fn check_shard(&self, page: PageId) {
        assert_eq!(
            PageTable::shard_of(page),
            self.shard,
            "page {page} changed under another page's shard lock"
        );
    }

    /// The frame `page` maps to (stable while this writer holds the shard).
    pub fn get(&self, page: PageId) -> Option<FrameId> {
        self.check_shard(page);
        self.table.lookup(page)
    }

    /// Whether `page` is mapped.
    pub fn contains(&self, page: PageId) -> bool {
        self.get(page).is_some()
    }

    /// Maps `page` (unmapped, inside the table) to frame `id`.
    ///
    /// # Panics
    /// A page past the table or already mapped (a bug in the caller).
    pub fn insert(&mut self, page: PageId, id: FrameId) {
        self.check_shard(page);
        assert_ne!(id, NIL, "NIL is not a frame");
        let (leaf, slot) = self.table.split(page);
        let leaf = self.table.directory[leaf].get_or_init(|| {
            (0..1usize << self.table.leaf_bits)
                .map(|_| AtomicU32::new(NIL))
                .collect()
        });
        let previous = leaf[slot].swap(id, Ordering::AcqRel);
        assert_eq!(previous, NIL, "page {page} mapped twice");
    }

    /// Unmaps `page`; returns the frame it mapped to.
    pub fn remove(&mut self, page: PageId) -> Option<FrameId> {
        self.check_shard(page);
        let previous = self.table.entry(page)?.swap(NIL, Ordering::AcqRel);
        (previous != NIL).then_some(previous)
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;

    #[test]
    fn maps_looks_up_and_unmaps() {
        let table = PageTable::new(10_000);
        assert_eq!(table.lookup(5), None);
        assert_eq!(table.lookup(1_000_000), None, "past the table");
        table.write(5).insert(5, 3);
        table.write(9_999).insert(9_999, 4);
        assert_eq!(table.lookup(5), Some(3));
        assert_eq!(table.write(9_999).get(9_999), Some(4));
        assert!(table.write(9_999).contains(9_999));
        assert_eq!(table.entries(), vec![(5, 3), (9_999, 4)]);
        assert_eq!(table.write(5).remove(5), Some(3));
        assert_eq!(table.write(5).remove(5), None);
        assert_eq!(table.lookup(5), None);
        assert_eq!(table.len(), 1);
    }

    #[test]
    fn large_devices_keep_the_directory_small() {
        let table = PageTable::new(1 << 40);
        assert!(table.directory.len() <= 1 << MAX_DIRECTORY_BITS);
        let last = (1 << 40) - 1;
        table.write(last).insert(last, 7);
        assert_eq!(table.lookup(last), Some(7));
        let tiny = PageTable::new(1);
        tiny.write(0).insert(0, 0);
        assert_eq!(tiny.entries(), vec![(0, 0)]);
    }

    #[test]
    #[should_panic(expected = "mapped twice")]
    fn mapping_twice_is_a_bug() {
        let table = PageTable::new(100);
        table.write(1).insert(1, 1);
        table.write(1).insert(1, 2);
    }
}
