//! A B+-tree over buffer-pool pages (issue 10): many named trees in one database, variable-length
//! keys and values, point operations, range scans both ways, splits, merges of underfull leaves,
//! removal of empty nodes, a bulk loader and a structure checker. Page formats are in
//! `docs/btree-format.md`; recovery in `docs/recovery.md`.
//!
//! **Layers.** [`node`], [`meta`] and [`op`] are pure page formats and operations (no pool);
//! [`mtr`] groups latched pages and their logged operations into mini-transactions; this file
//! holds the tree operations; [`smo`] the structure modifications; [`bulk`] the loader;
//! [`check`] the verifier. The module depends on `db` (mini-transaction append, redo hook), never
//! the other way: `db` recovers `PageOp` records through the [`op::BTreeRedo`] hook.
//!
//! **Latch protocol: latch coupling, plus InnoDB's index lock for structure changes.** A
//! descent latches the root shared, then each child before releasing its parent (lookups and
//! scans: shared all the way; writers: shared on inner nodes, exclusive on the leaf). Forward
//! scans latch the right sibling before releasing the current leaf; backward scans release the
//! leaf and descend again to the predecessor of its low fence (never latching right to left).
//! Row changes that fit their leaf are one mini-transaction on that leaf. A change that does not
//! fit (split) or a delete that leaves a leaf underfull (merge, removal) runs a structure
//! modification (SMO) as a separate system mini-transaction, holding the tree's `smo` mutex
//! (InnoDB's `index->lock` in SX mode): only SMOs change inner nodes and sibling links, so while
//! it holds the mutex the SMO can plan from a shared-latched descent, release, and then latch
//! every page it changes exclusive in the global order below and re-check the leaf. Pages stay
//! latched until the SMO's batch is appended.
//!
//! **Leaf hints.** A put first tries the leaf the thread's last row read or write reached
//! (a thread-local hint), latched exclusive with no other latch held, as a descent latches its
//! leaf; it keeps that leaf only if the latched page itself proves it is the leaf for the key
//! (a leaf of this tree holding the key, or keys on both sides of it), else it descends. A
//! read-modify-write of one row (most of TPC-C's updates) thus descends once, not twice. The
//! proof needs nothing from the hint, so a stale one (split, merged, freed, reused) costs a
//! latch, never a wrong leaf ([`TreeStore::set_leaf_hints`] turns them off).
//!
//! **Optimistic descents.** Latch coupling is the fallback: descents first read inner nodes
//! optimistically, validating each page's version instead of latching it, and latch only the
//! leaf (`optimistic.rs`; [`TreeStore::set_optimistic_descents`] turns them off). A descent
//! falls back to coupling after a few failed validations.
//!
//! **Lock order** (deadlock freedom): a tree's `smo` mutex → that tree's page latches by level,
//! top down, and within the leaf level left to right → the meta page latch → latches of pages
//! being allocated or freed (unreachable pages). Lookups, writers and scans take a subset in the
//! same order and hold at most two page latches (parent and child, or a leaf and its right
//! sibling). The lock manager's shard mutexes (`txn`) may be taken under a leaf latch (try-lock
//! only) and never wait for a latch.
//!
//! **Deletion policy.** A leaf whose live bytes fall under a quarter of the node after a delete
//! is merged with a sibling under the same parent when they fit in one page; an empty leaf is
//! removed; an inner node left without children is removed; a root left with one child
//! absorbs it (the tree shrinks). Underfull inner nodes are not merged (lazy, as in
//! PostgreSQL's B-tree).
//!
//! **Size limits.** Keys up to `page_size / 16` bytes (at most 1024), values up to
//! [`node::Limits::max_value`] (e.g. 740 bytes at 4 KiB pages, 3044 at 16 KiB); tree names up to
//! 64 bytes; the catalog holds as many trees as fit in the meta page (at least 40 at 4 KiB).

pub mod bulk;
pub mod check;
pub mod meta;
pub mod mtr;
pub mod node;
pub mod op;
mod optimistic;
pub mod patch;
mod registry;
pub mod rollback;
pub mod smo;

use std::ops::Bound;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::db::{Database, DatabaseConfig, RecoveryReport};
use crate::device::SharedDevice;
use crate::error::{Error, PageId, Result};
use crate::kv::{Direction, TreeId};
use crate::pool::PageReadGuard;
use crate::wal::TxnId;
use meta::META_PAGE;
use mtr::Mtr;
use node::{Limits, MAX_LEVELS, NodeRef};
use op::PageOp;
use optimistic::RowRead;
use registry::TreeRegistry;

/// Retries of a row operation that had to wait for a structure change (each retry follows a
/// split another operation may have filled again).
const ROW_RETRIES: usize = 64;
/// Optimistic descents a lookup tries before it descends with latches (`btree/optimistic.rs`).
const OPTIMISTIC_DESCENTS: usize = 4;

/// Receives what a row change replaced (under the leaf latch) and appends to the buffer it is
/// given the body of the `Undo` record to log with the change (a forward undo entry, or a
/// compensation during a rollback), returning `true`; `false`: no `Undo` record. The buffer
/// is the mini-transaction's encoded batch, so the body is written once, in place.
pub type UndoMaker<'a> = dyn FnMut(Prior<'_>, &mut Vec<u8>) -> bool + 'a;

/// What a row change replaced, as its undo entry needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prior<'a> {
    /// The key had no value (an insert).
    Absent,
    /// The whole previous value (a delete, or an update that changed the value's length or
    /// most of its bytes).
    Value(&'a [u8]),
    /// An update in place of a value of `len` bytes, logged as a patch: `restore` is the patch
    /// (`btree/patch.rs`) that turns the new value back into the previous one.
    Patched {
        /// The value's length (before and after).
        len: usize,
        /// The previous bytes where the value changed.
        restore: &'a [u8],
    },
}

std::thread_local! {
    /// A thread's buffers for the redo and undo patches of an update (kept between calls, so
    /// that an update allocates nothing in the steady state).
    static PATCH_BUFFERS: std::cell::Cell<Option<(Vec<u8>, Vec<u8>)>> =
        const { std::cell::Cell::new(None) };
    /// The leaf this thread's last row read or write reached: (store, tree, page). Only a
    /// hint, never trusted as such: [`TreeStore::hinted_leaf`] decides on the latched page's
    /// contents whether it is the leaf for a key.
    static LAST_LEAF: std::cell::Cell<LeafHint> = const {
        std::cell::Cell::new(LeafHint { store: 0, tree: 0, page: 0 })
    };
}

/// Where a thread's last row access ended (see `LAST_LEAF`).
#[derive(Debug, Clone, Copy)]
struct LeafHint {
    /// The store's [`TreeStore::id`] (0: none yet).
    store: u64,
    tree: TreeId,
    page: PageId,
}

/// Patch buffers larger than this are not kept for the thread's next update.
const SPARE_PATCH_LIMIT: usize = 64 * 1024;

/// What [`TreeStore::delete_row`] removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowDeletion {
    /// The removed value.
    pub before: Vec<u8>,
    /// The leaf was left underfull: [`TreeStore::shrink_after_delete`] merges or removes it.
    pub underfull: bool,
}

/// One tree of the catalog.
#[derive(Debug)]
pub struct Tree {
    /// Catalog id.
    pub id: TreeId,
    /// Name.
    pub name: String,
    /// Root page (never moves).
    pub root: PageId,
    /// Serializes structure modifications of this tree (InnoDB's index lock, SX mode).
    smo: Mutex<()>,
}

/// What a scan callback wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// Go on to the next pair.
    Continue,
    /// Stop the scan.
    Stop,
    /// Stop and report this key back: the caller must wait for something (a lock) without
    /// holding the latch, then resume the scan at it.
    Pause,
}

/// A database of named B+-trees: the pool, the log, the catalog.
#[derive(Debug)]
pub struct TreeStore {
    db: Database,
    limits: Limits,
    page_size: usize,
    trees: TreeRegistry,
    /// Serializes catalog growth (tree creation).
    catalog: Mutex<()>,
    /// Whether descents read inner nodes optimistically (on by default; off: latch coupling
    /// only, for before/after measurements).
    optimistic: std::sync::atomic::AtomicBool,
    /// Whether a put first tries the leaf of the thread's last row access (on by default; off:
    /// every put descends, for before/after measurements).
    leaf_hints: std::sync::atomic::AtomicBool,
    /// Puts that took the hinted leaf instead of descending.
    hinted_puts: crate::core::stats::StripedCounter,
    /// This store's number, unique in the process (so that a thread's hint is never tried on
    /// another store, not even one opened later at the same address).
    id: u64,
}

/// The next [`TreeStore`]'s number (from 1: 0 means no hint).
static NEXT_STORE_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl TreeStore {
    /// Opens (recovering from the log) or creates the database on `data` with its log on `log`.
    /// Recovery redoes every complete mini-transaction; the caller (the transaction layer)
    /// rolls back the losers listed in the report.
    ///
    /// # Errors
    /// Configuration (page size outside 4..=32 KiB), device, log and corrupt-page errors.
    pub fn open(
        data: SharedDevice,
        log: SharedDevice,
        config: &DatabaseConfig,
    ) -> Result<(Self, RecoveryReport)> {
        let page_size = data.info().page_size;
        let limits = Limits::for_page(page_size)?;
        if data.info().pages < 2 {
            return Err(Error::Config(
                "the B+-tree needs a data device of at least 2 pages".into(),
            ));
        }
        let (db, report) = Database::open_with_redo(data, log, config, &op::BTreeRedo)?;
        let store = TreeStore {
            db,
            limits,
            page_size,
            trees: TreeRegistry::for_page(page_size),
            catalog: Mutex::new(()),
            optimistic: std::sync::atomic::AtomicBool::new(true),
            leaf_hints: std::sync::atomic::AtomicBool::new(true),
            hinted_puts: crate::core::stats::StripedCounter::default(),
            id: NEXT_STORE_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        store.format_if_blank()?;
        store.load_catalog()?;
        Ok((store, report))
    }

    fn format_if_blank(&self) -> Result<()> {
        let blank = meta::is_blank(self.db.pool().read(META_PAGE)?.data());
        if !blank {
            return Ok(());
        }
        let mut mtr = Mtr::new(&self.db, 0);
        let slot = mtr.latch(META_PAGE)?;
        mtr.apply(
            slot,
            &PageOp::InitMeta {
                page_size: self.page_size as u32,
            },
        )?;
        mtr.commit()?;
        Ok(())
    }

    fn load_catalog(&self) -> Result<()> {
        let meta = meta::decode(self.db.pool().read(META_PAGE)?.data())?;
        for (index, entry) in meta.trees.into_iter().enumerate() {
            self.trees.add(Tree {
                id: index as TreeId,
                name: entry.name,
                root: entry.root,
                smo: Mutex::new(()),
            })?;
        }
        Ok(())
    }

    /// The database (pool and log).
    pub fn database(&self) -> &Database {
        &self.db
    }

    /// Key and value limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The page size.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Every tree of the catalog.
    pub fn trees(&self) -> Vec<Arc<Tree>> {
        self.trees.all()
    }

    /// The tree with id `tree`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown id.
    pub fn tree(&self, tree: TreeId) -> Result<Arc<Tree>> {
        self.trees.get(tree).cloned()
    }

    /// The tree with id `tree`, borrowed: no reference count is taken (the hot paths' lookup,
    /// see `registry.rs`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown id.
    pub(crate) fn tree_ref(&self, tree: TreeId) -> Result<&Tree> {
        self.trees.get(tree).map(Arc::as_ref)
    }

    /// The tree called `name`, created empty if missing.
    ///
    /// # Errors
    /// An empty or too long name, a full catalog, a full device, I/O errors.
    pub fn open_tree(&self, name: &str) -> Result<TreeId> {
        if let Some(id) = self.trees.find(name) {
            return Ok(id);
        }
        if name.is_empty() || name.len() > meta::MAX_NAME {
            return Err(Error::InvalidArgument(format!(
                "tree name `{name}` must have 1..={} bytes",
                meta::MAX_NAME
            )));
        }
        let _catalog = self.catalog.lock();
        if let Some(id) = self.trees.find(name) {
            return Ok(id);
        }
        self.db.log_free_check()?;
        let mut mtr = Mtr::new(&self.db, 0);
        let meta_slot = mtr.latch(META_PAGE)?;
        let meta = meta::decode(mtr.data(meta_slot))?;
        if !op::catalog_has_room(&meta, self.page_size, name) {
            return Err(Error::InvalidArgument(format!(
                "the catalog is full ({} trees); cannot add `{name}`",
                meta.trees.len()
            )));
        }
        let id = meta.trees.len() as TreeId;
        let root = self.allocate(&mut mtr, meta_slot, 1)?[0];
        let root_slot = mtr.slot_of(root).unwrap_or(usize::MAX);
        mtr.apply(root_slot, &empty_leaf(id))?;
        mtr.apply(
            meta_slot,
            &PageOp::MetaAddTree {
                name: name.as_bytes().to_vec(),
                root,
            },
        )?;
        mtr.commit()?;
        self.trees.add(Tree {
            id,
            name: name.to_string(),
            root,
            smo: Mutex::new(()),
        })?;
        Ok(id)
    }

    /// Allocates `count` pages inside `mtr` (whose `meta_slot` holds the meta page latched):
    /// from the free list first, then at the high-water mark. The pages are latched in `mtr`
    /// (the caller formats each with an operation that defines the page).
    ///
    /// # Errors
    /// The device is full; a corrupt free list.
    pub(crate) fn allocate(
        &self,
        mtr: &mut Mtr<'_>,
        meta_slot: mtr::Slot,
        count: usize,
    ) -> Result<Vec<PageId>> {
        let mut pages = Vec::with_capacity(count);
        self.allocate_into(mtr, meta_slot, count, &mut pages)?;
        Ok(pages)
    }

    /// [`TreeStore::allocate`] into `pages` (cleared first; a split's reused buffer).
    ///
    /// # Errors
    /// As [`TreeStore::allocate`].
    pub(crate) fn allocate_into(
        &self,
        mtr: &mut Mtr<'_>,
        meta_slot: mtr::Slot,
        count: usize,
        pages: &mut Vec<PageId>,
    ) -> Result<()> {
        let meta = meta::decode_allocation(mtr.data(meta_slot))?;
        let (mut high_water, mut free_head, mut free_count) =
            (meta.high_water, meta.free_head, meta.free_count);
        pages.clear();
        for _ in 0..count {
            if free_head != 0 {
                let page = free_head;
                let slot = mtr.latch(page)?;
                free_head = meta::next_free(page, mtr.data(slot))?;
                free_count = free_count.saturating_sub(1);
                pages.push(page);
            } else {
                let page = high_water;
                if page >= self.db.pool().pages() {
                    return Err(Error::InvalidArgument(format!(
                        "the database is full: all {} pages are in use",
                        self.db.pool().pages()
                    )));
                }
                mtr.latch_new(page)?;
                high_water += 1;
                pages.push(page);
            }
        }
        mtr.apply(
            meta_slot,
            &PageOp::MetaAlloc {
                high_water,
                free_head,
                free_count,
            },
        )?;
        Ok(())
    }

    /// Puts the pages in `slots` (latched in `mtr`, unreachable now) on the free list.
    pub(crate) fn free_pages(
        mtr: &mut Mtr<'_>,
        meta_slot: mtr::Slot,
        slots: &[mtr::Slot],
    ) -> Result<()> {
        if slots.is_empty() {
            return Ok(());
        }
        let meta = meta::decode_allocation(mtr.data(meta_slot))?;
        let (mut free_head, mut free_count) = (meta.free_head, meta.free_count);
        for &slot in slots {
            mtr.apply(slot, &PageOp::InitFree { next: free_head })?;
            free_head = mtr.page_id(slot);
            free_count += 1;
        }
        mtr.apply(
            meta_slot,
            &PageOp::MetaAlloc {
                high_water: meta.high_water,
                free_head,
                free_count,
            },
        )
    }

    /// A node view of a latched page of `tree`, checking that it belongs to the tree at the
    /// expected level (`None`: any level).
    pub(crate) fn node<'g>(
        tree: &Tree,
        page: PageId,
        bytes: &'g [u8],
        level: Option<u8>,
    ) -> Result<NodeRef<'g>> {
        let node = NodeRef::new(page, bytes)?;
        if node.tree() != tree.id {
            return Err(node::corrupt(
                page,
                format!(
                    "reached from tree {} ({}) but belongs to tree {}",
                    tree.id,
                    tree.name,
                    node.tree()
                ),
            ));
        }
        if let Some(level) = level
            && node.level() != level
        {
            return Err(node::corrupt(
                page,
                format!("at level {} where level {level} was expected", node.level()),
            ));
        }
        Ok(node)
    }

    /// Descent to the leaf for `target`; returns the leaf latched shared and (if `want_low`)
    /// its low fence (the separator bounding its keys from below, `None` for the leftmost
    /// leaf). Inner nodes are read optimistically (`btree/optimistic.rs`), a few times at
    /// most, then with shared latches.
    fn descend_shared(
        &self,
        tree: &Tree,
        target: Target<'_>,
        want_low: bool,
    ) -> Result<(PageReadGuard<'_>, Option<Vec<u8>>)> {
        let pool = self.db.pool();
        for _ in 0..self.optimistic_descents() {
            if let Some(found) =
                self.descend_optimistic(tree, target, want_low, |page| pool.read(page))?
            {
                return Ok(found);
            }
        }
        self.descend_latched(tree, target)
    }

    /// Shared-latch descent (latch coupling) to the leaf for `target`, with its low fence.
    fn descend_latched(
        &self,
        tree: &Tree,
        target: Target<'_>,
    ) -> Result<(PageReadGuard<'_>, Option<Vec<u8>>)> {
        let pool = self.db.pool();
        let mut page = tree.root;
        let mut guard = pool.read(page)?;
        let mut level = None;
        let mut low: Option<Vec<u8>> = None;
        for _ in 0..MAX_LEVELS {
            let node = Self::node(tree, page, guard.data(), level)?;
            if node.is_leaf() {
                return Ok((guard, low));
            }
            let index = target.child_index(&node)?;
            if let Some(key) = node.child_low(index)? {
                low = Some(key.to_vec());
            }
            let child = node.child(index)?;
            level = Some(node.level() - 1);
            let child_guard = pool.read(child)?;
            page = child;
            guard = child_guard;
        }
        Err(node::corrupt(tree.root, "tree deeper than the level bound"))
    }

    /// Descent with shared latches on inner nodes and an exclusive latch on the leaf covering
    /// `key`, inside a new mini-transaction for `txn` (slot 0 is the leaf).
    fn descend_for_write(&self, tree: &Tree, key: &[u8], txn: TxnId) -> Result<Mtr<'_>> {
        let pool = self.db.pool();
        for _ in 0..self.optimistic_descents() {
            if let Some((leaf, _)) =
                self.descend_optimistic(tree, Target::Key(key), false, |page| pool.write(page))?
            {
                Self::node(tree, leaf.page_id(), leaf.data(), Some(0))?;
                let mut mtr = Mtr::new(&self.db, txn);
                mtr.add(leaf);
                return Ok(mtr);
            }
        }
        // Bound: the root changes from leaf to inner at most once per split; retried a few
        // times at most.
        for _ in 0..ROW_RETRIES {
            let root = pool.read(tree.root)?;
            let root_node = Self::node(tree, tree.root, root.data(), None)?;
            if root_node.is_leaf() {
                drop(root);
                let guard = pool.write(tree.root)?;
                if Self::node(tree, tree.root, guard.data(), None)?.is_leaf() {
                    let mut mtr = Mtr::new(&self.db, txn);
                    mtr.add(guard);
                    return Ok(mtr);
                }
                continue;
            }
            let mut page = tree.root;
            let mut guard = root;
            let mut level = None;
            for _ in 0..MAX_LEVELS {
                let node = Self::node(tree, page, guard.data(), level)?;
                let (_, child) = node.child_for(key)?;
                if node.level() == 1 {
                    let leaf = pool.write(child)?;
                    drop(guard);
                    Self::node(tree, child, leaf.data(), Some(0))?;
                    let mut mtr = Mtr::new(&self.db, txn);
                    mtr.add(leaf);
                    return Ok(mtr);
                }
                level = Some(node.level() - 1);
                let child_guard = pool.read(child)?;
                page = child;
                guard = child_guard;
            }
            return Err(node::corrupt(tree.root, "tree deeper than the level bound"));
        }
        Err(Error::Conflict(format!(
            "tree {}: the root kept changing under a descent",
            tree.name
        )))
    }

    /// Records `page`, a leaf of `tree` this thread just reached, as its hint.
    fn remember_leaf(&self, tree: &Tree, page: PageId) {
        let store = self.id;
        LAST_LEAF.with(|hint| {
            hint.set(LeafHint {
                store,
                tree: tree.id,
                page,
            });
        });
    }

    /// The leaf of this thread's last row access, latched exclusive in a new mini-transaction
    /// of `txn`, with where `key` is in it ([`NodeRef::search`]'s answer), when its contents
    /// show that it is the leaf for `key`: a put right after a read of the same row (TPC-C's
    /// read-modify-write of a stock, district, warehouse or customer row) then skips the
    /// descent, as InnoDB restores a persistent cursor instead of searching again. `None`
    /// (nothing latched) when there is no hint for this store and tree, the page cannot be
    /// latched, or it does not prove it.
    ///
    /// The proof is the latched page alone, so a stale hint (the page split, merged, freed,
    /// reused by another tree or level) can cost a latch but never a wrong leaf: a leaf of
    /// `tree` that holds `key`, or holds keys below and above it, is the leaf for `key`, since
    /// the tree's leaves hold disjoint key ranges and a structure change rewrites every page
    /// it touches (a removed leaf becomes a free page) in one mini-transaction, under the
    /// latches this one waits for. The caller holds no latch (a leaf is latched first, as in
    /// every descent).
    fn hinted_leaf(
        &self,
        tree: &Tree,
        key: &[u8],
        txn: TxnId,
    ) -> Option<(Mtr<'_>, std::result::Result<usize, usize>)> {
        if !self.leaf_hints.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let hint = LAST_LEAF.with(std::cell::Cell::get);
        if hint.store != self.id || hint.tree != tree.id || hint.page == 0 {
            return None;
        }
        // A failure to latch the page is left to the descent to meet (or not) on its own path.
        let Ok(guard) = self.db.pool().write(hint.page) else {
            return None;
        };
        let node = NodeRef::new(hint.page, guard.data())
            .ok()
            .filter(|node| node.is_leaf() && node.tree() == tree.id)?;
        let found = node.search(key).ok()?;
        if found.is_err_and(|slot| slot == 0 || slot == node.count()) {
            // Past either end of the leaf: the page alone cannot prove the key is its.
            return None;
        }
        let mut mtr = Mtr::new(&self.db, txn);
        mtr.add(guard);
        self.hinted_puts.add(1);
        Some((mtr, found))
    }

    /// Turns leaf hints on (the default) or off: with them, a put first tries the leaf of the
    /// thread's last row access ([`TreeStore::hinted_puts`] counts those that took it); without
    /// them every put descends from the root. For side-by-side measurements and tests.
    pub fn set_leaf_hints(&self, on: bool) {
        self.leaf_hints
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Puts that went to the leaf of the thread's last row access without a descent.
    #[must_use]
    pub fn hinted_puts(&self) -> u64 {
        self.hinted_puts.sum()
    }

    /// Turns optimistic descents through inner nodes on (the default) or off (every descent
    /// then latch-couples, as before `btree/optimistic.rs`): for side-by-side measurements.
    pub fn set_optimistic_descents(&self, on: bool) {
        self.optimistic
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    fn optimistic_descents(&self) -> usize {
        if self.optimistic.load(std::sync::atomic::Ordering::Relaxed) {
            OPTIMISTIC_DESCENTS
        } else {
            0
        }
    }

    /// The value under `key`.
    ///
    /// # Errors
    /// Unknown tree, corrupt pages, I/O errors.
    pub fn get(&self, tree: TreeId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.read_value(tree, key, |value| value.map(<[u8]>::to_vec))
    }

    /// As [`TreeStore::get`], copying the value into `value` (cleared first, left empty when
    /// the key is absent) instead of allocating one. Returns whether the key was present.
    ///
    /// # Errors
    /// As [`TreeStore::get`].
    pub fn get_into(&self, tree: TreeId, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        Ok(self.read_row(tree, key, value, || false)? == Some(true))
    }

    /// Reads the row `key` into `value` (cleared when absent): whether it was found, or `None`
    /// (and `value` cleared) when `blocked` returned true. `blocked` is asked after the copy, and no change to the
    /// leaf lies between the copy and the question: on the optimistic path (no latch at all,
    /// tried first) the leaf's validation after the question shows it unchanged since before
    /// the copy; on the latched path (a leaf not cached, or reads that keep failing their
    /// validation) the question is asked under the leaf's shared latch.
    ///
    /// # Errors
    /// Unknown tree, corrupt pages, I/O errors.
    pub(crate) fn read_row(
        &self,
        tree: TreeId,
        key: &[u8],
        value: &mut Vec<u8>,
        blocked: impl Fn() -> bool,
    ) -> Result<Option<bool>> {
        let tree_ref = self.tree_ref(tree)?;
        for _ in 0..self.optimistic_descents() {
            match self.read_row_optimistic(tree_ref, key, value, &blocked) {
                RowRead::Found(found) => return Ok(Some(found)),
                RowRead::Blocked => {
                    // What was copied may be uncommitted: leave none of it to the caller.
                    value.clear();
                    return Ok(None);
                }
                RowRead::Retry => {}
                RowRead::Latch => break,
            }
        }
        let read = self.read_value(tree, key, |found| {
            (!blocked()).then(|| crate::kv::copy_found(found, value))
        })?;
        if read.is_none() {
            value.clear();
        }
        Ok(read)
    }

    /// Passes the value under `key` (borrowed from the leaf, under its latch) to `read`.
    fn read_value<R>(
        &self,
        tree: TreeId,
        key: &[u8],
        read: impl FnOnce(Option<&[u8]>) -> R,
    ) -> Result<R> {
        let tree = self.tree_ref(tree)?;
        let (leaf, _) = self.descend_shared(tree, Target::Key(key), false)?;
        let node = Self::node(tree, leaf.page_id(), leaf.data(), Some(0))?;
        self.remember_leaf(tree, leaf.page_id());
        Ok(match node.search(key)? {
            Ok(slot) => read(Some(node.cell(slot)?.1)),
            Err(_) => read(None),
        })
    }

    /// Stores `value` under `key` as one mini-transaction of `txn`; `undo` receives the
    /// previous value (under the leaf latch) and writes the `Undo` body to log with the change
    /// (see [`UndoMaker`]). Returns the previous value.
    ///
    /// # Errors
    /// Size limits, unknown tree, a full device, log and I/O errors.
    pub fn put(
        &self,
        tree: TreeId,
        key: &[u8],
        value: &[u8],
        txn: TxnId,
        undo: &mut UndoMaker<'_>,
    ) -> Result<Option<Vec<u8>>> {
        let mut before = Vec::new();
        let replaced = self.put_row(tree, key, value, txn, undo, &mut before)?;
        Ok(replaced.then_some(before))
    }

    /// As [`TreeStore::put`], but copies the previous value into `before` (cleared first; a
    /// caller's reused buffer, left empty on an insert) instead of returning a new `Vec`.
    /// Returns whether a value was replaced.
    ///
    /// # Errors
    /// As [`TreeStore::put`].
    pub fn put_row(
        &self,
        tree: TreeId,
        key: &[u8],
        value: &[u8],
        txn: TxnId,
        undo: &mut UndoMaker<'_>,
        before: &mut Vec<u8>,
    ) -> Result<bool> {
        self.limits.check(key, Some(value))?;
        let tree = self.tree_ref(tree)?;
        self.db.log_free_check()?;
        let (mut redo, mut restore) = crate::spare::take(&PATCH_BUFFERS);
        let result = self.put_row_in(tree, key, value, txn, undo, before, &mut redo, &mut restore);
        if redo.capacity().max(restore.capacity()) <= SPARE_PATCH_LIMIT {
            crate::spare::keep(&PATCH_BUFFERS, (redo, restore));
        }
        result
    }

    /// [`TreeStore::put_row`] with the thread's patch buffers. An update that keeps the
    /// value's length is logged as a patch of the bytes it changes (redo: the new bytes, undo:
    /// the old ones) when that is smaller than the value, as InnoDB logs an update in place by
    /// its changed fields; otherwise as the whole value.
    #[allow(clippy::too_many_arguments)]
    fn put_row_in(
        &self,
        tree: &Tree,
        key: &[u8],
        value: &[u8],
        txn: TxnId,
        undo: &mut UndoMaker<'_>,
        before: &mut Vec<u8>,
        redo: &mut Vec<u8>,
        restore: &mut Vec<u8>,
    ) -> Result<bool> {
        for attempt in 0..ROW_RETRIES {
            let hinted = if attempt == 0 {
                self.hinted_leaf(tree, key, txn)
            } else {
                None
            };
            let (mut mtr, found) = if let Some((mtr, found)) = hinted {
                (mtr, Some(found))
            } else {
                let mtr = self.descend_for_write(tree, key, txn)?;
                self.remember_leaf(tree, mtr.page_id(0));
                (mtr, None)
            };
            let node = Self::node(tree, mtr.page_id(0), mtr.data(0), Some(0))?;
            before.clear();
            let found = match found {
                Some(found) => found,
                None => node.search(key)?,
            };
            let (op, patched, replaced, fits) = match found {
                Ok(slot) => {
                    let old = node.cell(slot)?.1;
                    let fits = node.free_space() + old.len() >= value.len();
                    before.extend_from_slice(old);
                    let patched =
                        old.len() == value.len() && patch::diff_into(old, value, redo, restore);
                    let op = if patched {
                        PageOp::Patch {
                            slot: slot as u16,
                            pieces: redo.as_slice(),
                        }
                    } else {
                        PageOp::Replace {
                            slot: slot as u16,
                            payload: value,
                        }
                    };
                    (op, patched, true, fits)
                }
                Err(slot) => {
                    let fits = node.fits(key.len(), value.len());
                    let op = PageOp::Insert {
                        slot: slot as u16,
                        key,
                        payload: value,
                    };
                    (op, false, false, fits)
                }
            };
            if !fits {
                drop(mtr);
                smo::split_for(self, tree, key)?;
                continue;
            }
            mtr.apply_op(0, &op)?;
            let prior = if patched {
                Prior::Patched {
                    len: value.len(),
                    restore: restore.as_slice(),
                }
            } else if replaced {
                Prior::Value(before.as_slice())
            } else {
                Prior::Absent
            };
            mtr.undo_with(|out| undo(prior, out))?;
            mtr.commit()?;
            return Ok(replaced);
        }
        Err(Error::Conflict(format!(
            "tree {}: the leaf for a {}-byte key kept filling up during {ROW_RETRIES} splits",
            tree.name,
            key.len()
        )))
    }

    /// Removes `key` as one mini-transaction of `txn` (see [`TreeStore::put`] for `undo`);
    /// returns the removed value. An underfull leaf is then merged or removed (a separate
    /// system mini-transaction).
    ///
    /// An error from that structure change comes after the removal was logged: a caller that
    /// must know whether the row change (and its undo entry) reached the log uses
    /// [`TreeStore::delete_row`] and [`TreeStore::shrink_after_delete`] instead.
    ///
    /// # Errors
    /// As [`TreeStore::put`].
    pub fn delete(
        &self,
        tree: TreeId,
        key: &[u8],
        txn: TxnId,
        undo: &mut UndoMaker<'_>,
    ) -> Result<Option<Vec<u8>>> {
        let Some(removed) = self.delete_row(tree, key, txn, undo)? else {
            return Ok(None);
        };
        if removed.underfull {
            self.shrink_after_delete(tree, key)?;
        }
        Ok(Some(removed.before))
    }

    /// The row half of [`TreeStore::delete`]: removes `key` as one mini-transaction of `txn`
    /// (with the undo entry `undo` returns). `Ok(Some(_))` means the removal is logged;
    /// `Ok(None)` that the key was absent (nothing logged, `undo` not called); an error that
    /// nothing was logged. The leaf is left as it is even when underfull: call
    /// [`TreeStore::shrink_after_delete`] when [`RowDeletion::underfull`] says so.
    ///
    /// # Errors
    /// As [`TreeStore::put`]; nothing was logged then.
    pub fn delete_row(
        &self,
        tree: TreeId,
        key: &[u8],
        txn: TxnId,
        undo: &mut UndoMaker<'_>,
    ) -> Result<Option<RowDeletion>> {
        self.limits.check(key, None)?;
        let tree = self.tree_ref(tree)?;
        self.db.log_free_check()?;
        let mut mtr = self.descend_for_write(tree, key, txn)?;
        let node = Self::node(tree, mtr.page_id(0), mtr.data(0), Some(0))?;
        let Ok(slot) = node.search(key)? else {
            return Ok(None);
        };
        let before = node.cell(slot)?.1.to_vec();
        mtr.apply(0, &PageOp::Delete { slot: slot as u16 })?;
        mtr.undo_with(|out| undo(Prior::Value(&before), out))?;
        let underfull = {
            let node = Self::node(tree, mtr.page_id(0), mtr.data(0), Some(0))?;
            smo::is_underfull(&node) && mtr.page_id(0) != tree.root
        };
        mtr.commit()?;
        Ok(Some(RowDeletion { before, underfull }))
    }

    /// The structure half of [`TreeStore::delete`]: merges or removes the leaf covering `key`
    /// if it is (still) underfull, as a system mini-transaction. Best effort: a leaf that no
    /// longer qualifies is left alone; a failure leaves the tree valid (an underfull leaf).
    ///
    /// # Errors
    /// Unknown tree, log and I/O errors, corrupt pages.
    pub fn shrink_after_delete(&self, tree: TreeId, key: &[u8]) -> Result<()> {
        let tree = self.tree_ref(tree)?;
        smo::shrink_at(self, tree, key)
    }

    /// Visits pairs from `start` in `direction` under shared leaf latches, calling `visit`
    /// for each (under the latch: it must not block) until it returns [`Visit::Stop`] or
    /// [`Visit::Pause`]; returns the key it paused at.
    ///
    /// # Errors
    /// Unknown tree, corrupt pages, I/O errors.
    pub fn scan(
        &self,
        tree: TreeId,
        start: Bound<&[u8]>,
        direction: Direction,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> Visit,
    ) -> Result<Option<Vec<u8>>> {
        let tree = self.tree_ref(tree)?;
        match direction {
            Direction::Forward => self.scan_forward(tree, start, visit),
            Direction::Backward => self.scan_backward(tree, start, visit),
        }
    }

    fn scan_forward(
        &self,
        tree: &Tree,
        start: Bound<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> Visit,
    ) -> Result<Option<Vec<u8>>> {
        let target = match start {
            Bound::Included(key) | Bound::Excluded(key) => Target::Key(key),
            Bound::Unbounded => Target::Key(&[]),
        };
        let (mut leaf, _) = self.descend_shared(tree, target, false)?;
        let mut first = true;
        // Bound: one round per leaf, and the device has finitely many pages.
        for _ in 0..=self.db.pool().pages() {
            let node = Self::node(tree, leaf.page_id(), leaf.data(), Some(0))?;
            let from = if first {
                match start {
                    Bound::Included(key) => node.search(key)?.unwrap_or_else(|slot| slot),
                    Bound::Excluded(key) => match node.search(key)? {
                        Ok(slot) => slot + 1,
                        Err(slot) => slot,
                    },
                    Bound::Unbounded => 0,
                }
            } else {
                0
            };
            first = false;
            for slot in from..node.count() {
                let (key, value) = node.cell(slot)?;
                match visit(key, value) {
                    Visit::Continue => {}
                    Visit::Stop => return Ok(None),
                    Visit::Pause => return Ok(Some(key.to_vec())),
                }
            }
            let right = node.right();
            if right == 0 {
                return Ok(None);
            }
            // Coupling: the right sibling is latched before the current leaf is released.
            let next = self.db.pool().read(right)?;
            leaf = next;
        }
        Err(node::corrupt(
            tree.root,
            "leaf chain longer than the device",
        ))
    }

    fn scan_backward(
        &self,
        tree: &Tree,
        start: Bound<&[u8]>,
        visit: &mut dyn FnMut(&[u8], &[u8]) -> Visit,
    ) -> Result<Option<Vec<u8>>> {
        // `bound`: visit keys below it (`inclusive`: or equal); `None`: from the very end.
        let mut bound: Option<Vec<u8>> = match start {
            Bound::Included(key) | Bound::Excluded(key) => Some(key.to_vec()),
            Bound::Unbounded => None,
        };
        let mut inclusive = matches!(start, Bound::Included(_));
        for _ in 0..=self.db.pool().pages() {
            let target = match &bound {
                Some(key) if inclusive => Target::Key(key),
                Some(key) => Target::Below(key),
                None => Target::Last,
            };
            let (leaf, low) = self.descend_shared(tree, target, true)?;
            let node = Self::node(tree, leaf.page_id(), leaf.data(), Some(0))?;
            let end = match &bound {
                None => node.count(),
                Some(key) => match node.search(key)? {
                    Ok(slot) if inclusive => slot + 1,
                    Ok(slot) | Err(slot) => slot,
                },
            };
            for slot in (0..end).rev() {
                let (key, value) = node.cell(slot)?;
                match visit(key, value) {
                    Visit::Continue => {}
                    Visit::Stop => return Ok(None),
                    Visit::Pause => return Ok(Some(key.to_vec())),
                }
            }
            // Everything below the leaf's low fence lies to the left: descend again for it
            // (never latch a left sibling while holding a leaf).
            let Some(low) = low else {
                return Ok(None);
            };
            drop(leaf);
            bound = Some(low);
            inclusive = false;
        }
        Err(node::corrupt(
            tree.root,
            "leaf chain longer than the device",
        ))
    }

    /// Stops background work, flushes every page and writes a final checkpoint.
    ///
    /// # Errors
    /// Write or log errors.
    #[must_use = "close() returns the errors of the final write-back; dropping can only print them"]
    pub fn close(self) -> Result<()> {
        self.db.close()
    }

    /// Stops without writing anything back: what a crash leaves (tests, crash campaigns).
    pub fn abandon(self) {
        self.db.abandon();
    }
}

/// Where a descent goes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'k> {
    /// The leaf covering this key.
    Key(&'k [u8]),
    /// The leaf covering the greatest keys below this one.
    Below(&'k [u8]),
    /// The rightmost leaf.
    Last,
}

impl Target<'_> {
    fn child_index(&self, node: &NodeRef<'_>) -> Result<usize> {
        match self {
            Target::Key(key) => node.child_index_for(key),
            Target::Below(key) => Ok(node.search(key)?.unwrap_or_else(|slot| slot)),
            Target::Last => Ok(node.count()),
        }
    }
}

/// The operation formatting an empty leaf root of tree `tree`.
pub(crate) fn empty_leaf(tree: TreeId) -> PageOp {
    PageOp::InitNode {
        leaf: true,
        level: 0,
        tree,
        left: 0,
        right: 0,
        leftmost: 0,
    }
}
