//! Structure modifications (SMOs): leaf and inner splits, root growth, merges of underfull
//! leaves, removal of empty nodes, root collapse. Each is one system mini-transaction
//! (`txn` 0, never rolled back: a split caused by a transaction that aborts stays, and is
//! atomic across crashes because its batch is applied whole or not at all).
//!
//! Protocol (see `btree/mod.rs`): hold the tree's `smo` mutex; plan from a shared-latched
//! descent (inner nodes and sibling links cannot change meanwhile: only SMOs change them);
//! release; latch exclusive, in lock order, every page the SMO changes: the path from the
//! highest node that changes down to the leaf's parent, then the leaves left to right, then
//! the meta page, then pages being allocated; re-check the leaf (row operations may have changed
//! it in between) and give up when the SMO is no longer needed. Rebuilt and new nodes are logged
//! as compact images (they define their page); small changes (a separator insert, a link) as
//! slot operations. A split leaf that keeps its page keeps its first cells in place: a
//! truncation and new links, not an image (InnoDB's sequential-insert split leaves a full page
//! behind, which would otherwise cost a page of redo per split).
//!
//! Bounds: a split touches at most `levels + 2` existing pages and allocates at most
//! `levels + 1`; a removal cascades at most `levels` nodes up.

use super::mtr::{Mtr, Slot};
use super::node::{self, CHILD_SIZE, KIND_INNER, MAX_LEVELS, NodeRef, SLOTS_AT, cell_footprint};
use super::op::{self, PageOp};
use super::{Tree, TreeStore, empty_leaf};
use crate::error::{PageId, Result};

/// Cells (key and payload: a value, or a child id as 8 bytes) back to back in one buffer, so
/// that planning a split copies a node's cells with two allocations, not two per cell.
#[derive(Debug, Clone, Default)]
struct Cells {
    bytes: Vec<u8>,
    /// Per cell: where its key ends (and its payload starts) and where its payload ends.
    ends: Vec<(usize, usize)>,
}

impl Cells {
    fn push(&mut self, key: &[u8], payload: &[u8]) {
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        self.bytes.extend_from_slice(payload);
        self.ends.push((key_end, self.bytes.len()));
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn start(&self, index: usize) -> usize {
        if index == 0 {
            0
        } else {
            self.ends[index - 1].1
        }
    }

    /// Key and payload of cell `index`.
    fn get(&self, index: usize) -> (&[u8], &[u8]) {
        let (key_end, end) = self.ends[index];
        (
            &self.bytes[self.start(index)..key_end],
            &self.bytes[key_end..end],
        )
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        (0..self.len()).map(|index| self.get(index))
    }
}

/// A page a plan refers to: an existing one or the n-th page it allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PageRef {
    Old(PageId),
    New(usize),
}

impl PageRef {
    fn resolve(self, new_pages: &[PageId]) -> PageId {
        match self {
            PageRef::Old(page) => page,
            PageRef::New(index) => new_pages[index],
        }
    }
}

/// The logical content of a node a plan writes (as an image).
#[derive(Debug, Clone)]
struct Content {
    level: u8,
    left: PageRef,
    right: PageRef,
    leftmost: PageRef,
    /// Cells; inner cells whose child is a new page carry it in `new_children`.
    cells: Cells,
    /// (cell index, new page index) for inner cells pointing at new pages.
    new_children: Vec<(usize, usize)>,
}

/// Whether a leaf's live bytes are under a quarter of the node area (merge candidate).
#[must_use]
pub fn is_underfull(node: &NodeRef<'_>) -> bool {
    node.used_space() < (node.bytes().len() - SLOTS_AT) / 4
}

/// A copy of the node's cells in `range` (a split copies only the cells that move), in
/// `cells` (empty; a reused buffer).
fn cells_in(node: &NodeRef<'_>, range: std::ops::Range<usize>, mut cells: Cells) -> Result<Cells> {
    debug_assert!(cells.is_empty(), "cells_in fills an empty buffer");
    // The node's used space bounds the range's cells: one allocation per buffer at most.
    cells.bytes.reserve(node.used_space());
    cells.ends.reserve(range.len());
    for slot in range {
        let (key, payload) = node.cell(slot)?;
        cells.push(key, payload);
    }
    Ok(cells)
}

/// The first of `count` cells where the cells before it hold at least half the bytes, within
/// `low..=high`; `footprint(i)` is cell `i`'s size on a page.
fn middle(
    count: usize,
    low: usize,
    high: usize,
    footprint: impl Fn(usize) -> Result<usize>,
) -> Result<usize> {
    let mut total = 0;
    for index in 0..count {
        total += footprint(index)?;
    }
    let half = total / 2;
    let mut sum = 0;
    for index in 0..count {
        if sum >= half {
            return Ok(index.clamp(low, high));
        }
        sum += footprint(index)?;
    }
    Ok(high)
}

/// [`middle`] over a node's cells.
fn middle_of_node(node: &NodeRef<'_>, low: usize, high: usize) -> Result<usize> {
    middle(node.count(), low, high, |slot| {
        node.cell(slot)
            .map(|(key, payload)| cell_footprint(key.len(), payload.len()))
    })
}

/// Builds the compact image of a node with this content in `page` (a reused buffer, resized
/// to `page_size`); the image borrows it.
fn build_image<'p>(
    page_size: usize,
    tree: u32,
    content: &Content,
    new_pages: &[PageId],
    page: &'p mut Vec<u8>,
) -> Result<PageOp<&'p [u8]>> {
    page.clear();
    page.resize(page_size, 0);
    op::apply(
        0,
        page,
        &PageOp::InitNode {
            leaf: content.level == 0,
            level: content.level,
            tree,
            left: content.left.resolve(new_pages),
            right: content.right.resolve(new_pages),
            leftmost: content.leftmost.resolve(new_pages),
        },
    )?;
    op::fill_sorted(0, page, content.cells.iter())?;
    // The child pointers of new pages, resolved now that their ids are known.
    for &(cell, index) in &content.new_children {
        let slot = u16::try_from(cell).map_err(|_| node::corrupt(0, "slot beyond u16"))?;
        op::apply(
            0,
            page,
            &PageOp::SetChild {
                slot,
                child: new_pages[index],
            },
        )?;
    }
    op::image_view(0, page)
}

/// One inner node on a planned path: its page and the child index taken.
#[derive(Debug, Clone, Copy)]
struct Step {
    page: PageId,
    index: usize,
}

/// Shared-latch descent recording the path to the leaf covering `key` in `path` (cleared
/// first); returns the leaf.
fn plan_path(store: &TreeStore, tree: &Tree, key: &[u8], path: &mut Vec<Step>) -> Result<PageId> {
    let pool = store.database().pool();
    let mut page = tree.root;
    path.clear();
    for _ in 0..MAX_LEVELS {
        let guard = pool.read(page)?;
        let node = TreeStore::node(tree, page, guard.data(), None)?;
        if node.is_leaf() {
            return Ok(page);
        }
        let (index, child) = node.child_for(key)?;
        path.push(Step { page, index });
        page = child;
    }
    Err(node::corrupt(tree.root, "tree deeper than the level bound"))
}

/// The buffers of a structure modification, kept from one to the next on a thread: an
/// insert-heavy load splits as part of its steady state (TPC-C splits a leaf every five
/// transactions or so), and a split then allocates nothing of its own.
#[derive(Debug, Default)]
struct SmoScratch {
    path: Vec<Step>,
    path_slots: Vec<Slot>,
    new_pages: Vec<PageId>,
    /// The page-sized buffer images are built in.
    page: Vec<u8>,
    /// Cell buffers not in use, for the next plan's contents.
    cells: Vec<Cells>,
    plan: SplitPlan,
}

/// Cell buffers a thread keeps between SMOs (a split uses at most `2 * levels + 2`).
const SPARE_CELLS: usize = 2 * MAX_LEVELS + 2;

std::thread_local! {
    static SMO_SCRATCH: std::cell::Cell<Option<SmoScratch>> = const { std::cell::Cell::new(None) };
}

impl SmoScratch {
    /// Runs `smo` with the thread's scratch, which is reset and kept afterwards.
    fn with<R>(smo: impl FnOnce(&mut SmoScratch) -> Result<R>) -> Result<R> {
        let mut scratch = crate::spare::take(&SMO_SCRATCH);
        let result = smo(&mut scratch);
        scratch.reset();
        crate::spare::keep(&SMO_SCRATCH, scratch);
        result
    }

    /// Takes back the plan's cell buffers; forgets the plan.
    fn reset(&mut self) {
        for (_, content) in self.plan.images.drain(..) {
            keep_cells(&mut self.cells, content.cells);
        }
        self.plan.clear();
    }
}

/// An empty cell buffer, reused from `spare` when it has one.
fn take_cells(spare: &mut Vec<Cells>) -> Cells {
    let mut cells = spare.pop().unwrap_or_default();
    cells.bytes.clear();
    cells.ends.clear();
    cells
}

/// Puts `cells` back among the spares (up to [`SPARE_CELLS`] of them).
fn keep_cells(spare: &mut Vec<Cells>, cells: Cells) {
    if spare.len() < SPARE_CELLS {
        spare.push(cells);
    }
}

/// Splits the leaf covering `key` (and its ancestors as needed) so that a cell for `key` fits.
/// A no-op when the leaf has room again by the time it is latched.
///
/// # Errors
/// A full device, log and I/O errors, corrupt pages.
pub fn split_for(store: &TreeStore, tree: &Tree, key: &[u8]) -> Result<()> {
    SmoScratch::with(|scratch| split_with(store, tree, key, scratch))
}

fn split_with(store: &TreeStore, tree: &Tree, key: &[u8], scratch: &mut SmoScratch) -> Result<()> {
    let db = store.database();
    db.log_free_check()?;
    let _smo = tree.smo.lock();
    let page_size = store.page_size();
    let limits = store.limits();
    let SmoScratch {
        path,
        path_slots,
        new_pages,
        page: image_page,
        cells,
        plan,
    } = scratch;
    let leaf = plan_path(store, tree, key, path)?;
    // The highest node that may change: the first ancestor (from the leaf's parent up) with room
    // for any separator; none: the root splits too.
    let mut top = 0;
    for (depth, step) in path.iter().enumerate().rev() {
        let guard = db.pool().read(step.page)?;
        let node = TreeStore::node(tree, step.page, guard.data(), None)?;
        if node.fits(limits.max_key, CHILD_SIZE) {
            top = depth;
            break;
        }
    }
    let mut mtr = Mtr::new(db, 0);
    path_slots.clear();
    for step in &path[top..] {
        path_slots.push(mtr.latch(step.page)?);
    }
    let leaf_slot = mtr.latch(leaf)?;
    let leaf_node = TreeStore::node(tree, leaf, mtr.data(leaf_slot), Some(0))?;
    // Re-check: room for a maximal cell means another split already made room.
    if leaf_node.fits(limits.max_key, limits.max_value) || leaf_node.count() < 2 {
        return Ok(());
    }
    let right = leaf_node.right();
    let right_slot = if right == 0 {
        None
    } else {
        Some(mtr.latch(right)?)
    };
    let span = PlanSpan {
        path: &path[top..],
        path_slots,
        leaf_slot,
    };
    plan_split(tree, &mtr, &span, key, plan, cells)?;
    let meta_slot = mtr.latch(super::meta::META_PAGE)?;
    store.allocate_into(&mut mtr, meta_slot, plan.new_pages, new_pages)?;
    for (target, content) in &plan.images {
        let image = build_image(page_size, tree.id, content, new_pages, image_page)?;
        let page = target.resolve(new_pages);
        let slot = mtr.slot_of(page).unwrap_or(usize::MAX);
        mtr.apply_op(slot, &image)?;
    }
    if let Some((slot, cell_slot, child)) = plan.parent_insert {
        let child = child.resolve(new_pages).to_le_bytes();
        mtr.apply_op(
            slot,
            &PageOp::Insert {
                slot: cell_slot as u16,
                key: plan.separator.as_slice(),
                payload: &child[..],
            },
        )?;
    }
    if let Some(kept) = &plan.kept_left {
        let slot = mtr.slot_of(leaf).unwrap_or(usize::MAX);
        mtr.apply(slot, &PageOp::Truncate { from: kept.from })?;
        let links = PageOp::SetLinks {
            left: kept.left,
            right: kept.right.resolve(new_pages),
        };
        mtr.apply(slot, &links)?;
    }
    if let (Some(slot), Some(new_left)) = (right_slot, plan.right_sibling_left) {
        let right_node = TreeStore::node(tree, right, mtr.data(slot), Some(0))?;
        let links = PageOp::SetLinks {
            left: new_left.resolve(new_pages),
            right: right_node.right(),
        };
        mtr.apply(slot, &links)?;
    }
    mtr.commit()?;
    Ok(())
}

/// What a split writes.
#[derive(Debug, Default)]
struct SplitPlan {
    /// Pages to allocate.
    new_pages: usize,
    /// Nodes written whole.
    images: Vec<(PageRef, Content)>,
    /// The separator carried up: the key of `parent_insert` once planned.
    separator: Vec<u8>,
    /// A separator insert into the highest changed node that does not split:
    /// (its mtr slot, cell slot, child); the key is `separator`.
    parent_insert: Option<(Slot, usize, PageRef)>,
    /// The new left link of the leaf's old right sibling.
    right_sibling_left: Option<PageRef>,
    /// A non-root leaf keeps its first cells in place: logged as a truncation and new links
    /// (a few bytes) instead of an image of the cells it keeps (most of a page when sequential
    /// inserts split off a single cell).
    kept_left: Option<KeptLeft>,
}

impl SplitPlan {
    /// Empty, keeping its buffers (the images must have been drained).
    fn clear(&mut self) {
        debug_assert!(self.images.is_empty(), "the images' cells go back first");
        self.new_pages = 0;
        self.separator.clear();
        self.parent_insert = None;
        self.right_sibling_left = None;
        self.kept_left = None;
    }
}

/// The left half of a split leaf that stays in its page.
#[derive(Debug, Clone, Copy)]
struct KeptLeft {
    /// The first cell that moves right (at least 1: the page keeps a cell).
    from: u16,
    /// The page's left sibling (unchanged).
    left: PageId,
    /// Its new right sibling: the new page.
    right: PageRef,
}

/// The latched part of a split's path: the steps from the highest node that may change down
/// to the leaf's parent, their mtr slots, and the leaf's.
struct PlanSpan<'s> {
    path: &'s [Step],
    path_slots: &'s [Slot],
    leaf_slot: Slot,
}

/// Plans the split into `plan` (cleared, its images drained), taking cell buffers from
/// `spare`.
fn plan_split(
    tree: &Tree,
    mtr: &Mtr<'_>,
    span: &PlanSpan<'_>,
    key: &[u8],
    plan: &mut SplitPlan,
    spare: &mut Vec<Cells>,
) -> Result<()> {
    let leaf = mtr.page_id(span.leaf_slot);
    let node = TreeStore::node(tree, leaf, mtr.data(span.leaf_slot), Some(0))?;
    let count = node.count();
    // Appending past the last key (or before the first) splits off one cell: sequential
    // inserts then leave full pages behind (InnoDB's insert-position heuristic).
    let at = if count > 0 && key > node.key(count - 1)? {
        count - 1
    } else if count > 0 && key < node.key(0)? {
        1
    } else {
        middle_of_node(&node, 1, count - 1)?
    };
    plan.separator.clear();
    plan.separator.extend_from_slice(node.key(at)?);
    let is_root = leaf == tree.root;
    let (left_ref, right_ref) = if is_root {
        plan.new_pages = 2;
        (PageRef::New(0), PageRef::New(1))
    } else {
        plan.new_pages = 1;
        (PageRef::Old(leaf), PageRef::New(0))
    };
    let old_right = node.right();
    if is_root {
        plan.images.push((
            left_ref,
            Content {
                level: 0,
                left: PageRef::Old(0),
                right: right_ref,
                leftmost: PageRef::Old(0),
                cells: cells_in(&node, 0..at, take_cells(spare))?,
                new_children: Vec::new(),
            },
        ));
    } else {
        assert!(at >= 1, "a split leaf keeps a cell");
        plan.kept_left = Some(KeptLeft {
            from: u16::try_from(at).map_err(|_| node::corrupt(leaf, "slot beyond u16"))?,
            left: node.left(),
            right: right_ref,
        });
    }
    plan.images.push((
        right_ref,
        Content {
            level: 0,
            left: left_ref,
            right: PageRef::Old(old_right),
            leftmost: PageRef::Old(0),
            cells: cells_in(&node, at..count, take_cells(spare))?,
            new_children: Vec::new(),
        },
    ));
    if old_right != 0 {
        plan.right_sibling_left = Some(right_ref);
    }
    if is_root {
        let root = root_content(1, left_ref, 1, &plan.separator, take_cells(spare));
        plan.images.push((PageRef::Old(leaf), root));
        return Ok(());
    }
    // Carry (separator, new child) up the path.
    let mut carried = right_ref;
    for (depth, step) in span.path.iter().enumerate().rev() {
        let slot = span.path_slots[depth];
        let node = TreeStore::node(tree, step.page, mtr.data(slot), None)?;
        if node.fits(plan.separator.len(), CHILD_SIZE) {
            plan.parent_insert = Some((slot, step.index, carried));
            return Ok(());
        }
        carried = split_inner(plan, spare, tree, &node, step, carried)?;
        if depth == 0 && step.page == tree.root {
            return Ok(());
        }
    }
    Err(node::corrupt(
        leaf,
        format!(
            "split of tree {} ran out of latched ancestors ({} of them)",
            tree.name,
            span.path.len()
        ),
    ))
}

/// The root after growing: an inner node with two children, `left` and the plan's new page
/// `right_new`, its one cell (`separator`) in `cells` (cleared).
fn root_content(
    level: u8,
    left: PageRef,
    right_new: usize,
    separator: &[u8],
    mut cells: Cells,
) -> Content {
    cells.push(separator, &[0; CHILD_SIZE]);
    Content {
        level,
        left: PageRef::Old(0),
        right: PageRef::Old(0),
        leftmost: left,
        cells,
        new_children: vec![(0, right_new)],
    }
}

/// Splits inner node `node` while inserting `plan.separator` with child `carried` at the
/// step's cell slot; leaves the separator to push up in `plan.separator` and returns the new
/// right node.
fn split_inner(
    plan: &mut SplitPlan,
    spare: &mut Vec<Cells>,
    tree: &Tree,
    node: &NodeRef<'_>,
    step: &Step,
    carried: PageRef,
) -> Result<PageRef> {
    // The combined entries, the carried one at its cell slot: keys in `keys` (no payloads),
    // children in `children`.
    let count = node.count();
    let mut keys = take_cells(spare);
    let mut children = Vec::with_capacity(count + 1);
    for slot in 0..=count {
        if slot == step.index {
            keys.push(&plan.separator, &[]);
            children.push(carried);
        }
        if slot < count {
            keys.push(node.key(slot)?, &[]);
            children.push(PageRef::Old(node.cell_child(slot)?));
        }
    }
    let entries = keys.len();
    debug_assert_eq!(entries, count + 1, "the carried entry is inserted once");
    let mid = middle(entries, 1, entries - 2, |index| {
        Ok(cell_footprint(keys.get(index).0.len(), CHILD_SIZE))
    })?;
    let is_root = step.page == tree.root;
    let first_new = plan.new_pages;
    let (left_ref, right_ref) = if is_root {
        plan.new_pages += 2;
        (PageRef::New(first_new), PageRef::New(first_new + 1))
    } else {
        plan.new_pages += 1;
        (PageRef::Old(step.page), PageRef::New(first_new))
    };
    let level = node.level();
    let mut half = |leftmost: PageRef, part: std::ops::Range<usize>| -> Content {
        let mut content = Content {
            level,
            left: PageRef::Old(0),
            right: PageRef::Old(0),
            leftmost,
            cells: take_cells(spare),
            new_children: Vec::new(),
        };
        for (cell, index) in part.enumerate() {
            let payload = match children[index] {
                PageRef::Old(page) => page.to_le_bytes(),
                PageRef::New(new) => {
                    content.new_children.push((cell, new));
                    [0; CHILD_SIZE]
                }
            };
            content.cells.push(keys.get(index).0, &payload);
        }
        content
    };
    let leftmost = PageRef::Old(node.leftmost());
    let left_half = half(leftmost, 0..mid);
    let right_half = half(children[mid], mid + 1..entries);
    plan.images.push((left_ref, left_half));
    plan.images.push((right_ref, right_half));
    plan.separator.clear();
    plan.separator.extend_from_slice(keys.get(mid).0);
    keep_cells(spare, keys);
    if is_root {
        let root = root_content(
            level + 1,
            left_ref,
            first_new + 1,
            &plan.separator,
            take_cells(spare),
        );
        plan.images.push((PageRef::Old(step.page), root));
    }
    debug_assert_eq!(node.bytes()[node::KIND_AT], KIND_INNER);
    Ok(right_ref)
}

/// Merges or removes the leaf covering `key` if it is underfull (see the deletion policy in
/// `btree/mod.rs`), then collapses a root left with a single child. Best effort: does nothing
/// when the leaf no longer qualifies once latched.
///
/// # Errors
/// Log and I/O errors, corrupt pages.
pub fn shrink_at(store: &TreeStore, tree: &Tree, key: &[u8]) -> Result<()> {
    let db = store.database();
    db.log_free_check()?;
    let _smo = tree.smo.lock();
    SmoScratch::with(|scratch| shrink_leaf(store, tree, key, scratch))?;
    collapse_root(store, tree)
}

/// The planned removal: the leaf that goes away and the one absorbing its cells (if any).
#[derive(Debug, Clone, Copy)]
struct Removal {
    /// The leaf removed.
    victim: PageId,
    /// The leaf receiving the victim's cells (its left neighbour), for a merge.
    into: Option<PageId>,
    /// The victim's child index in its parent.
    index: usize,
}

fn plan_removal(
    store: &TreeStore,
    tree: &Tree,
    path: &[Step],
    leaf: PageId,
) -> Result<Option<Removal>> {
    let pool = store.database().pool();
    let Some(parent_step) = path.last() else {
        return Ok(None); // the root leaf stays
    };
    let guard = pool.read(leaf)?;
    let node = TreeStore::node(tree, leaf, guard.data(), Some(0))?;
    if node.count() == 0 {
        return Ok(Some(Removal {
            victim: leaf,
            into: None,
            index: parent_step.index,
        }));
    }
    if !is_underfull(&node) {
        return Ok(None);
    }
    let used = node.used_space();
    let free = node.free_space();
    drop(guard);
    let parent_guard = pool.read(parent_step.page)?;
    let parent = TreeStore::node(tree, parent_step.page, parent_guard.data(), Some(1))?;
    let index = parent_step.index;
    if index > 0 {
        let left = parent.child(index - 1)?;
        let left_guard = pool.read(left)?;
        let left_node = TreeStore::node(tree, left, left_guard.data(), Some(0))?;
        if left_node.free_space() >= used {
            return Ok(Some(Removal {
                victim: leaf,
                into: Some(left),
                index,
            }));
        }
    }
    if index + 1 < parent.children() {
        let right = parent.child(index + 1)?;
        let right_guard = pool.read(right)?;
        let right_node = TreeStore::node(tree, right, right_guard.data(), Some(0))?;
        if free >= right_node.used_space() {
            return Ok(Some(Removal {
                victim: right,
                into: Some(leaf),
                index: index + 1,
            }));
        }
    }
    Ok(None)
}

fn shrink_leaf(store: &TreeStore, tree: &Tree, key: &[u8], scratch: &mut SmoScratch) -> Result<()> {
    let db = store.database();
    let SmoScratch {
        path,
        path_slots,
        new_pages: _,
        page: image_page,
        cells: spare,
        plan: _,
    } = scratch;
    let leaf = plan_path(store, tree, key, path)?;
    let Some(removal) = plan_removal(store, tree, path, leaf)? else {
        return Ok(());
    };
    if let Some(last) = path.last_mut() {
        last.index = removal.index;
    }
    // The highest node that changes: going up, a node with a single child disappears too.
    let mut top = path.len() - 1;
    let mut tree_empties = false;
    loop {
        let guard = db.pool().read(path[top].page)?;
        let node = TreeStore::node(tree, path[top].page, guard.data(), None)?;
        if node.count() >= 1 {
            break;
        }
        if top == 0 {
            tree_empties = true;
            break;
        }
        top -= 1;
    }
    let victim_links = {
        let guard = db.pool().read(removal.victim)?;
        let node = TreeStore::node(tree, removal.victim, guard.data(), Some(0))?;
        (node.left(), node.right())
    };
    let mut mtr = Mtr::new(db, 0);
    path_slots.clear();
    for step in &path[top..] {
        path_slots.push(mtr.latch(step.page)?);
    }
    let left_slot = if victim_links.0 == 0 {
        None
    } else {
        Some(mtr.latch(victim_links.0)?)
    };
    let victim_slot = mtr.latch(removal.victim)?;
    let right_slot = if victim_links.1 == 0 {
        None
    } else {
        Some(mtr.latch(victim_links.1)?)
    };
    // Re-check under the exclusive latches.
    let victim = TreeStore::node(tree, removal.victim, mtr.data(victim_slot), Some(0))?;
    let (victim_empty, victim_used) = (victim.count() == 0, victim.used_space());
    match removal.into {
        None if !victim_empty => return Ok(()),
        Some(into) => {
            let into_slot = mtr.slot_of(into).unwrap_or(usize::MAX);
            let into_node = TreeStore::node(tree, into, mtr.data(into_slot), Some(0))?;
            if into_node.free_space() < victim_used {
                return Ok(());
            }
        }
        None => {}
    }
    let meta_slot = mtr.latch(super::meta::META_PAGE)?;
    if let Some(slot) = left_slot {
        let left = LeftOfVictim {
            slot,
            page: victim_links.0,
            victim_slot,
            victim_right: victim_links.1,
            merge: removal.into.is_some(),
        };
        absorb_into_left(store, tree, &mut mtr, &left, image_page, spare)?;
    }
    if let Some(slot) = right_slot {
        let right = TreeStore::node(tree, victim_links.1, mtr.data(slot), Some(0))?;
        let links = PageOp::SetLinks {
            left: victim_links.0,
            right: right.right(),
        };
        mtr.apply(slot, &links)?;
    }
    let top_slot = path_slots[0];
    if tree_empties {
        // Every node from the root down is a single-child chain ending at the empty victim:
        // the root becomes an empty leaf.
        mtr.apply(top_slot, &empty_leaf(tree.id))?;
    } else {
        // Nodes below `top` lose their only child and go; `top` loses one child.
        remove_child(tree, &mut mtr, top_slot, path[top].index)?;
    }
    // Freed: the victim and the nodes below `top` (`top`'s slot is reused for the victim's).
    path_slots[0] = victim_slot;
    TreeStore::free_pages(&mut mtr, meta_slot, path_slots)?;
    mtr.commit()?;
    Ok(())
}

/// The victim's left neighbour in a removal, latched in the removal's mtr.
struct LeftOfVictim {
    slot: Slot,
    page: PageId,
    victim_slot: Slot,
    /// The victim's right sibling (the neighbour's new right link).
    victim_right: PageId,
    /// Whether the neighbour takes the victim's cells (a merge) or only its right link.
    merge: bool,
}

/// Leaf level of a removal: the left neighbour takes the victim's cells (merge) and its right
/// link, or only the link.
fn absorb_into_left(
    store: &TreeStore,
    tree: &Tree,
    mtr: &mut Mtr<'_>,
    left: &LeftOfVictim,
    image_page: &mut Vec<u8>,
    spare: &mut Vec<Cells>,
) -> Result<()> {
    let node = TreeStore::node(tree, left.page, mtr.data(left.slot), Some(0))?;
    if !left.merge {
        let links = PageOp::SetLinks {
            left: node.left(),
            right: left.victim_right,
        };
        return mtr.apply(left.slot, &links);
    }
    let mut cells = cells_in(&node, 0..node.count(), take_cells(spare))?;
    let victim_page = mtr.page_id(left.victim_slot);
    let victim = TreeStore::node(tree, victim_page, mtr.data(left.victim_slot), Some(0))?;
    for slot in 0..victim.count() {
        let (key, payload) = victim.cell(slot)?;
        cells.push(key, payload);
    }
    let content = Content {
        level: 0,
        left: PageRef::Old(node.left()),
        right: PageRef::Old(left.victim_right),
        leftmost: PageRef::Old(0),
        cells,
        new_children: Vec::new(),
    };
    let image = build_image(store.page_size(), tree.id, &content, &[], image_page)?;
    mtr.apply_op(left.slot, &image)?;
    keep_cells(spare, content.cells);
    Ok(())
}

/// Removes child `index` from the inner node in `slot`.
fn remove_child(tree: &Tree, mtr: &mut Mtr<'_>, slot: Slot, index: usize) -> Result<()> {
    let page = mtr.page_id(slot);
    let node = TreeStore::node(tree, page, mtr.data(slot), None)?;
    if node.count() == 0 {
        return Err(node::corrupt(
            page,
            "removing the only child of a kept node",
        ));
    }
    if index == 0 {
        let next = node.child(1)?;
        mtr.apply(slot, &PageOp::SetLeftmost { child: next })?;
        mtr.apply(slot, &PageOp::Delete { slot: 0 })
    } else {
        mtr.apply(
            slot,
            &PageOp::Delete {
                slot: (index - 1) as u16,
            },
        )
    }
}

/// While the root is an inner node with a single child, the child's content moves into the
/// root page (the tree loses a level) and the child is freed.
fn collapse_root(store: &TreeStore, tree: &Tree) -> Result<()> {
    let db = store.database();
    for _ in 0..MAX_LEVELS {
        let mut mtr = Mtr::new(db, 0);
        let root_slot = mtr.latch(tree.root)?;
        let root = TreeStore::node(tree, tree.root, mtr.data(root_slot), None)?;
        if root.is_leaf() || root.count() > 0 {
            return Ok(());
        }
        let child = root.leftmost();
        let level = root.level() - 1;
        let child_slot = mtr.latch(child)?;
        let child_node = TreeStore::node(tree, child, mtr.data(child_slot), Some(level))?;
        if child_node.is_leaf() && (child_node.left() != 0 || child_node.right() != 0) {
            return Err(node::corrupt(child, "the only leaf of a tree has siblings"));
        }
        let image = op::image_of(child, mtr.data(child_slot))?;
        let meta_slot = mtr.latch(super::meta::META_PAGE)?;
        mtr.apply(root_slot, &image)?;
        TreeStore::free_pages(&mut mtr, meta_slot, &[child_slot])?;
        mtr.commit()?;
    }
    Ok(())
}
