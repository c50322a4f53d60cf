//! The bulk loader: builds a tree bottom-up from pairs in strictly ascending key order, with
//! sequential page allocation, writing node pages straight to the device in large batches
//! (outside the pool and the log), then switching the root in one logged mini-transaction.
//!
//! Steps: hold the tree's `smo` mutex for the whole load; check that the tree is empty;
//! reserve page ranges of [`CHUNK_PAGES`] at the high-water mark (a logged mini-transaction
//! each, so concurrent allocations elsewhere never collide with them); fill leaves to 15/16 of
//! the node area, left to right, with sibling links; then each inner level from the first keys
//! of the level below, until one node remains; that node's content becomes the root page (the
//! root never moves). Pages go to the device with `Device::bulk_load` (which syncs), so every
//! node is durable before the logged root switch refers to it. Unused reserved pages are
//! returned (the high-water mark moves back when nothing was allocated after them, else they go
//! on the free list).
//!
//! Crash behaviour: a crash before the root switch is durable leaves the tree empty and the
//! reserved pages leaked (`flashbuf check` reports them): reload into a fresh database. A
//! crash after it needs nothing. Nothing else may use the tree during its load (operations on
//! it would land in the old root and be overwritten; the switch checks the root is still
//! empty and fails otherwise).
//!
//! Bounds: memory holds one node per level plus the separators of one level (one key per
//! node of the level below) and one write batch of [`BATCH_PAGES`] pages.

use std::sync::Arc;

use super::meta::{self, META_PAGE};
use super::mtr::Mtr;
use super::node::{Limits, MAX_LEVELS, NodeRef, SLOTS_AT, cell_footprint};
use super::op::{self, PageOp};
use super::{Tree, TreeStore};
use crate::device::AlignedBuf;
use crate::error::{Error, PageId, Result};
use crate::kv::TreeId;

/// Pages reserved per allocation round.
pub const CHUNK_PAGES: u64 = 1024;
/// Pages per device write batch.
pub const BATCH_PAGES: usize = 256;

/// Sequential page ids from reserved chunks.
struct Allocator<'s> {
    store: &'s TreeStore,
    /// Reserved ranges `[start, end)` in reservation order.
    chunks: Vec<(PageId, PageId)>,
    next: PageId,
    end: PageId,
}

impl Allocator<'_> {
    /// The id the next `take` returns (reserving a chunk if needed).
    fn peek(&mut self) -> Result<PageId> {
        if self.next == self.end {
            let (start, end) = reserve(self.store)?;
            self.chunks.push((start, end));
            self.next = start;
            self.end = end;
        }
        Ok(self.next)
    }

    fn take(&mut self) -> Result<PageId> {
        let page = self.peek()?;
        self.next += 1;
        Ok(page)
    }
}

/// Reserves up to [`CHUNK_PAGES`] pages at the high-water mark.
fn reserve(store: &TreeStore) -> Result<(PageId, PageId)> {
    let db = store.database();
    db.log_free_check()?;
    let mut mtr = Mtr::new(db, 0);
    let slot = mtr.latch(META_PAGE)?;
    let meta = meta::decode(mtr.data(slot))?;
    let end = (meta.high_water + CHUNK_PAGES).min(db.pool().pages());
    if end == meta.high_water {
        return Err(Error::InvalidArgument(format!(
            "bulk load: the database is full ({} pages)",
            db.pool().pages()
        )));
    }
    mtr.apply(
        slot,
        &PageOp::MetaAlloc {
            high_water: end,
            free_head: meta.free_head,
            free_count: meta.free_count,
        },
    )?;
    mtr.commit()?;
    Ok((meta.high_water, end))
}

/// Consecutive pages waiting to be written.
struct Writer {
    device: crate::device::SharedDevice,
    page_size: usize,
    lsn: u64,
    buf: AlignedBuf,
    first: PageId,
    len: usize,
    written: u64,
}

impl Writer {
    fn push(&mut self, page: PageId, bytes: &mut [u8]) -> Result<()> {
        if self.len == BATCH_PAGES || (self.len > 0 && page != self.first + self.len as u64) {
            self.flush()?;
        }
        if self.len == 0 {
            self.first = page;
        }
        crate::page::stamp(bytes, page, self.lsn);
        let at = self.len * self.page_size;
        self.buf.as_mut_slice()[at..at + self.page_size].copy_from_slice(bytes);
        self.len += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.len > 0 {
            let bytes = &self.buf.as_slice()[..self.len * self.page_size];
            self.device.bulk_load(self.first, bytes)?;
            self.written += self.len as u64;
            self.len = 0;
        }
        Ok(())
    }
}

/// One level being built: the node in progress and what was written.
#[allow(clippy::struct_field_names)]
struct Level {
    level: u8,
    tree: TreeId,
    node: Vec<u8>,
    /// First key of the node in progress (its separator in the parent).
    first_key: Option<Vec<u8>>,
    /// Separators of the written nodes: (first key, page).
    written: Vec<(Vec<u8>, PageId)>,
    fill_limit: usize,
}

impl Level {
    fn new(level: u8, tree: TreeId, page_size: usize) -> Result<Self> {
        let mut node = vec![0u8; page_size];
        op::apply(0, &mut node, &init(level, tree, 0))?;
        Ok(Level {
            level,
            tree,
            node,
            first_key: None,
            written: Vec::new(),
            fill_limit: (page_size - SLOTS_AT) * 15 / 16,
        })
    }

    fn view(&self) -> Result<NodeRef<'_>> {
        NodeRef::new(0, &self.node)
    }

    /// Adds an entry: a leaf pair, or (separator, child) for an inner level.
    fn add(
        &mut self,
        key: &[u8],
        payload: &[u8],
        alloc: &mut Allocator<'_>,
        out: &mut Writer,
    ) -> Result<()> {
        let leaf = self.level == 0;
        if self.first_key.is_some() {
            let node = self.view()?;
            let footprint = cell_footprint(key.len(), payload.len());
            let over = node.used_space() + footprint > self.fill_limit;
            if !node.fits(key.len(), payload.len()) || (over && node.count() > 0) {
                self.finish_node(true, alloc, out)?;
            }
        }
        if self.first_key.is_none() {
            self.first_key = Some(key.to_vec());
            if !leaf {
                // The first child of an inner node is its leftmost: no cell.
                let child = super::node::get_u64(payload, 0);
                let left_over = init(self.level, self.tree, child);
                op::apply(0, &mut self.node, &left_over)?;
                return Ok(());
            }
        }
        let slot = self.view()?.count() as u16;
        op::apply(
            0,
            &mut self.node,
            &PageOp::Insert {
                slot,
                key: key.to_vec(),
                payload: payload.to_vec(),
            },
        )
    }

    /// Writes the node in progress (linked to the next leaf when `has_next`) and starts a new
    /// one.
    fn finish_node(
        &mut self,
        has_next: bool,
        alloc: &mut Allocator<'_>,
        out: &mut Writer,
    ) -> Result<()> {
        let page = alloc.take()?;
        if self.level == 0 {
            // The next leaf gets the next id `take` hands out.
            let right = if has_next { alloc.peek()? } else { 0 };
            let left = self.written.last().map_or(0, |(_, page)| *page);
            op::apply(0, &mut self.node, &PageOp::SetLinks { left, right })?;
        }
        out.push(page, &mut self.node)?;
        let key = self.first_key.take().unwrap_or_default();
        self.written.push((key, page));
        op::apply(0, &mut self.node, &init(self.level, self.tree, 0))?;
        Ok(())
    }
}

fn init(level: u8, tree: TreeId, leftmost: PageId) -> PageOp {
    PageOp::InitNode {
        leaf: level == 0,
        level,
        tree,
        left: 0,
        right: 0,
        leftmost,
    }
}

/// Loads `pairs` (strictly ascending keys) into the empty tree `tree`; returns the pairs loaded.
///
/// # Errors
/// A non-empty tree, keys out of order or over the size limits, a full device, I/O and log
/// errors. On an error the tree stays empty and the pages written so far stay reserved
/// (leaked; see the module docs).
pub fn bulk_load(
    store: &TreeStore,
    tree: TreeId,
    pairs: &mut dyn Iterator<Item = (Vec<u8>, Vec<u8>)>,
) -> Result<u64> {
    let tree = store.tree_ref(tree)?;
    let _smo = tree.smo.lock();
    ensure_empty(store, tree)?;
    let db = store.database();
    let page_size = store.page_size();
    let mut alloc = Allocator {
        store,
        chunks: Vec::new(),
        next: 0,
        end: 0,
    };
    let mut out = Writer {
        device: Arc::clone(db.pool().device()),
        page_size,
        lsn: db.wal().current_lsn(),
        buf: AlignedBuf::new(page_size * BATCH_PAGES),
        first: 0,
        len: 0,
        written: 0,
    };
    let limits: Limits = store.limits();
    let mut level = Level::new(0, tree.id, page_size)?;
    let mut count = 0u64;
    let mut last: Option<Vec<u8>> = None;
    for (key, value) in pairs {
        limits.check(&key, Some(&value))?;
        if last.as_ref().is_some_and(|previous| *previous >= key) {
            return Err(Error::InvalidArgument(format!(
                "bulk load into tree {}: keys are not strictly ascending at pair {count}",
                tree.name
            )));
        }
        level.add(&key, &value, &mut alloc, &mut out)?;
        last = Some(key);
        count += 1;
    }
    // Build inner levels until one node remains; it becomes the root.
    for depth in 1..=MAX_LEVELS {
        if level.written.is_empty() {
            break;
        }
        level.finish_node(false, &mut alloc, &mut out)?;
        let below = std::mem::take(&mut level.written);
        level = Level::new(depth as u8, tree.id, page_size)?;
        for (key, page) in below {
            level.add(&key, &page.to_le_bytes(), &mut alloc, &mut out)?;
        }
    }
    out.flush()?;
    switch_root(store, tree, &level.node, &alloc)?;
    Ok(count)
}

fn ensure_empty(store: &TreeStore, tree: &Tree) -> Result<()> {
    let guard = store.database().pool().read(tree.root)?;
    let node = TreeStore::node(tree, tree.root, guard.data(), None)?;
    if !node.is_leaf() || node.count() > 0 {
        return Err(Error::InvalidArgument(format!(
            "bulk load into tree {}, which is not empty",
            tree.name
        )));
    }
    Ok(())
}

/// The logged switch: the root page takes the top node's content; unused reserved pages go
/// back.
fn switch_root(store: &TreeStore, tree: &Tree, top: &[u8], alloc: &Allocator<'_>) -> Result<()> {
    let db = store.database();
    db.log_free_check()?;
    let mut mtr = Mtr::new(db, 0);
    let root_slot = mtr.latch(tree.root)?;
    let root = TreeStore::node(tree, tree.root, mtr.data(root_slot), None)?;
    if !root.is_leaf() || root.count() > 0 {
        return Err(Error::InvalidArgument(format!(
            "tree {} changed during its bulk load",
            tree.name
        )));
    }
    mtr.apply(root_slot, &op::image_of(tree.root, top)?)?;
    let meta_slot = mtr.latch(META_PAGE)?;
    let unused = (alloc.next, alloc.end);
    if unused.0 < unused.1 {
        let meta = meta::decode(mtr.data(meta_slot))?;
        if meta.high_water == unused.1 {
            mtr.apply(
                meta_slot,
                &PageOp::MetaAlloc {
                    high_water: unused.0,
                    free_head: meta.free_head,
                    free_count: meta.free_count,
                },
            )?;
        } else {
            let slots = (unused.0..unused.1)
                .map(|page| mtr.latch_new(page))
                .collect::<Result<Vec<_>>>()?;
            TreeStore::free_pages(&mut mtr, meta_slot, &slots)?;
        }
    }
    mtr.commit()?;
    Ok(())
}
