//! Optimistic descent through inner nodes: no pin, no latch and no shared cache-line write per
//! inner level (`core::optimistic` has the protocol; `docs/performance.md`, "Optimistic
//! reads").
//!
//! Each inner node is decoded through a [`PageView`] by [`inner_step`], which checks every
//! offset it follows (it returns `None` on any inconsistency instead of panicking: the bytes may
//! be torn), and the result is used only once the node's read validates. Levels are coupled as
//! latches couple them: the child's optimistic read starts (its version is taken) *before* the
//! parent is validated, so the child was the parent's child for the key at that instant, and
//! the child's own validation covers the time after. For a write (and a scan) the leaf is
//! latched by the caller's `latch_leaf`, and the parent is validated after the latch is held:
//! the leaf is then the one covering the key (a structure modification latches the parent
//! exclusive while it moves the leaf's keys, see `btree/smo.rs`). A row read
//! ([`TreeStore::read_row_optimistic`]) latches nothing: the leaf's read is coupled to its
//! parent's as the inner levels are, the value is copied through the view, and the leaf's
//! validation decides whether the copy counts.
//!
//! Any failure (a validation, a page not cached, a page latched exclusive for long, or bytes
//! that do not decode) makes [`TreeStore::descend_optimistic`] return `None`; the caller
//! retries a few times and then descends with latches, which also reports corrupt pages with
//! their proper error.

use super::node::{
    CELL_OVERHEAD, CELL_START_AT, CHILD_SIZE, COUNT_AT, HEAD_AT, KIND_AT, KIND_INNER, KIND_LEAF,
    LEFTMOST_AT, LEVEL_AT, MAX_LEVELS, MAX_PAGE_SIZE, MIN_PAGE_SIZE, PREFIX_AT, SLOT_SIZE,
    SLOTS_AT, TREE_AT, bound_common, key_head,
};
use super::{Target, Tree, TreeStore};
use crate::core::optimistic::{OptimisticRead, PageView};
use crate::error::{PageId, Result};
use crate::pool::{PageReadGuard, PageWriteGuard};

/// What one inner level of a descent found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The node is a leaf (only at the root: below it the parent's level says so first).
    Leaf,
    /// The child covering the target, at `level`; `low`: the child has a lower fence inside
    /// this node (copied into the caller's buffer when it asked for it); `shared`: bytes the
    /// target key shares with every key the child may hold (0 but for `Target::Key`), the
    /// child's `known` for its own step.
    Child {
        child: PageId,
        level: u8,
        low: bool,
        shared: usize,
    },
}

/// A node header decoded from a view (the checks of `NodeRef::new` and `TreeStore::node`).
struct Header {
    count: usize,
    cell_start: usize,
    level: u8,
    leaf: bool,
}

fn header(view: &PageView<'_>, tree: u32, level: Option<u8>) -> Option<Header> {
    let size = view.len();
    if !(MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&size) {
        return None;
    }
    let kind = view.byte(KIND_AT)?;
    let node_level = view.byte(LEVEL_AT)?;
    let count = usize::from(view.u16_le(COUNT_AT)?);
    let cell_start = usize::from(view.u16_le(CELL_START_AT)?);
    let consistent =
        (kind == KIND_LEAF && node_level == 0) || (kind == KIND_INNER && node_level > 0);
    if !consistent
        || SLOTS_AT + SLOT_SIZE * count > cell_start
        || cell_start > size
        || view.u32_le(TREE_AT)? != tree
        || level.is_some_and(|expected| expected != node_level)
    {
        return None;
    }
    Some(Header {
        count,
        cell_start,
        level: node_level,
        leaf: kind == KIND_LEAF,
    })
}

/// The cell of `slot`: (offset of its key, key length, payload length), inside the page.
fn cell(view: &PageView<'_>, header: &Header, slot: usize) -> Option<(usize, usize, usize)> {
    if slot >= header.count {
        return None;
    }
    let offset = usize::from(view.u16_le(SLOTS_AT + SLOT_SIZE * slot)?);
    if offset < header.cell_start {
        return None;
    }
    let key_len = usize::from(view.u16_le(offset)?);
    let payload_len = usize::from(view.u16_le(offset + 2)?);
    let key_at = offset + CELL_OVERHEAD;
    (key_at + key_len + payload_len <= view.len()).then_some((key_at, key_len, payload_len))
}

/// Binary search as `NodeRef::search`: `Ok(slot)` of `key` or `Err(insertion slot)`, with the
/// prefix `key` shares with every key of the child the result leads to (`Target::Key`'s child:
/// `slot + 1` or the insertion slot).
///
/// `known`: bytes `key` shares with every key of this node (0 if unknown; the parent's step
/// says, as the keys of a child lie between the parent's separators around it). Unless `known`
/// covers the node prefix `p`, the key is first compared with it (slot 0's first `p` bytes): a
/// key that does not start with it lies below or above every key. Then each probe compares
/// heads as `u32`s and decodes the probed key only on equal heads, skipping the prefix `key`
/// shares with both keys bounding the range (`btree::node`'s `compare_from` gives the
/// argument).
///
/// The shared prefix returned is the smaller of what `key` shares with the two bounds of the
/// child: a separator bound shares at least `max(p, known)` (once the key starts with the
/// prefix) or what a full comparison found; the node's own bounds (of the leftmost and the
/// last child) only `known`. On torn bytes the answer may be wrong, which the read's
/// validation discards, but every load stays checked.
fn search(
    view: &PageView<'_>,
    header: &Header,
    key: &[u8],
    known: usize,
) -> Option<(std::result::Result<usize, usize>, usize)> {
    let count = header.count;
    if count == 0 {
        return Some((Err(0), known));
    }
    let prefix = usize::from(view.u16_le(PREFIX_AT)?);
    if prefix > known {
        let (first_at, first_len, _) = cell(view, header, 0)?;
        if first_len < prefix {
            return None;
        }
        let head = &key[..key.len().min(prefix)];
        match view.compare_from(first_at, prefix, head, known)?.0 {
            // The node prefix is above the key (or the key is a proper prefix of it).
            std::cmp::Ordering::Greater => return Some((Err(0), known)),
            std::cmp::Ordering::Less => return Some((Err(count), known)),
            std::cmp::Ordering::Equal => {}
        }
    }
    prefetch_probe_slots(view, count);
    let slots = view.records(SLOTS_AT, SLOT_SIZE, count)?;
    // Bytes `key` shares with every key of the node.
    let base = prefix.max(known);
    let wanted = key_head(key, prefix);
    let (mut low, mut high) = (0usize, count);
    // Common prefix of `key` with the key below `low` and the key at `high` (the node's
    // bounds, sharing `known`, until probes move them; `bound_common` of a bound's common and
    // head: a head-decided bound's is derived from the heads when needed).
    let (mut low_common, mut high_common) = (known, known);
    let (mut low_head, mut high_head) = (wanted, wanted);
    let resolve = |common: usize, head: u32| bound_common(prefix, common, head, wanted).max(known);
    // Bound: halves the range each round (count < 2^15).
    while low < high {
        let mid = low + (high - low) / 2;
        let head = slots.u32_be(mid, HEAD_AT)?;
        // Heads decide most probes (two comparisons, no cell decoded).
        if head < wanted {
            low = mid + 1;
            low_head = head;
            continue;
        }
        if head > wanted {
            high = mid;
            high_head = head;
            continue;
        }
        let offset = usize::from(slots.u16_le(mid, 0)?);
        if offset < header.cell_start {
            return None;
        }
        let key_len = usize::from(view.u16_le(offset)?);
        let skip = resolve(low_common, low_head)
            .min(resolve(high_common, high_head))
            .max(base);
        match view.compare_from(offset + CELL_OVERHEAD, key_len, key, skip)? {
            (std::cmp::Ordering::Less, common) => {
                low = mid + 1;
                (low_common, low_head) = (common, wanted);
            }
            (std::cmp::Ordering::Greater, common) => {
                high = mid;
                (high_common, high_head) = (common, wanted);
            }
            // The child right of an equal separator lies between it (all of `key` shared)
            // and the key at `high`: it shares `high_common`.
            (std::cmp::Ordering::Equal, _) => {
                return Some((Ok(mid), resolve(high_common, high_head)));
            }
        }
    }
    Some((
        Err(low),
        resolve(low_common, low_head).min(resolve(high_common, high_head)),
    ))
}

/// Slots the binary search's first [`PREFETCHED_LEVELS`] probes may read: those probes depend
/// on one another, so their cache misses would come one after another; hinted together at the
/// start, they overlap (a node of hundreds of slots spans tens of lines, of which a search reads
/// about one per probe).
fn prefetch_probe_slots(view: &PageView<'_>, count: usize) {
    let fractions = 1usize << PREFETCHED_LEVELS;
    if count < 2 * fractions {
        return; // a small slot array lies on a few lines that the first probes load anyway
    }
    for step in 1..fractions {
        view.prefetch(SLOTS_AT + SLOT_SIZE * (count * step / fractions) + HEAD_AT);
    }
}

/// Levels of the binary search whose slots [`prefetch_probe_slots`] hints (2^3 - 1 = 7 lines).
const PREFETCHED_LEVELS: u32 = 3;

/// Decodes one level of a descent towards `target` in the node seen through `view` (of tree
/// `tree`, at `level` if known). `low`: where to copy the child's lower fence, if wanted;
/// `known`: bytes a `Target::Key` shares with every key of the node (the parent step's
/// `shared`, 0 at the root). `None` when the bytes do not form such a node (torn, changed, or
/// corrupt).
pub(crate) fn inner_step(
    view: &PageView<'_>,
    tree: u32,
    level: Option<u8>,
    target: Target<'_>,
    low: Option<&mut Vec<u8>>,
    known: usize,
) -> Option<Step> {
    let header = header(view, tree, level)?;
    if header.leaf {
        return Some(Step::Leaf);
    }
    let (index, shared) = match target {
        Target::Key(key) => match search(view, &header, key, known)? {
            (Ok(slot), shared) => (slot + 1, shared),
            (Err(slot), shared) => (slot, shared),
        },
        Target::Below(key) => (
            search(view, &header, key, 0)?.0.unwrap_or_else(|slot| slot),
            0,
        ),
        Target::Last => (header.count, 0),
    };
    let child = if index == 0 {
        view.u64_le(LEFTMOST_AT)?
    } else {
        let (key_at, key_len, payload_len) = cell(view, &header, index - 1)?;
        if payload_len != CHILD_SIZE {
            return None;
        }
        if let Some(low) = low {
            low.resize(key_len, 0);
            if !view.copy_to(key_at, low) {
                return None;
            }
        }
        view.u64_le(key_at + key_len)?
    };
    Some(Step::Child {
        child,
        level: header.level - 1,
        low: index > 0,
        shared,
    })
}

/// A latched page's bytes (the leaf guards a descent returns).
pub(crate) trait LatchedBytes {
    /// The page's bytes, stable while the latch is held.
    fn bytes(&self) -> &[u8];
}

impl LatchedBytes for PageReadGuard<'_> {
    fn bytes(&self) -> &[u8] {
        self.data()
    }
}

impl LatchedBytes for PageWriteGuard<'_> {
    fn bytes(&self) -> &[u8] {
        self.data()
    }
}

/// Where an optimistic descent reached the leaf level (no read in it validated yet past the
/// decoding of `child`).
enum LeafEdge<'a> {
    /// The root decoded as a leaf: its read.
    Root(OptimisticRead<'a>),
    /// The leaf `child` under `parent`; `low`: its low fence if asked for and there is one;
    /// `known`: bytes a `Target::Key` shares with every key of the leaf.
    Child {
        parent: OptimisticRead<'a>,
        child: PageId,
        low: Option<Vec<u8>>,
        known: usize,
    },
}

/// What one optimistic row read ([`TreeStore::read_row_optimistic`]) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowRead {
    /// A validated read: whether the key was there (its value copied).
    Found(bool),
    /// A validated read, but `blocked` said the row may not be used.
    Blocked,
    /// A validation failed or the bytes did not decode: try again.
    Retry,
    /// The leaf is not cached (or stays latched exclusive): read it latched.
    Latch,
}

impl TreeStore {
    /// Descends without latches to the leaf level for `target` (see the module docs); `None`
    /// when the descent must be retried or done with latches.
    fn optimistic_to_leaf(
        &self,
        tree: &Tree,
        target: Target<'_>,
        want_low: bool,
    ) -> Option<LeafEdge<'_>> {
        let core = self.db.pool().core();
        let mut node = core.optimistic(tree.root)?;
        let mut level = None;
        let mut low: Option<Vec<u8>> = None;
        let mut low_buffer = Vec::new();
        // Bytes the target key shares with every key of `node` (from its parent's step).
        let mut known = 0;
        for _ in 0..MAX_LEVELS {
            let step = inner_step(
                &node.view(),
                tree.id,
                level,
                target,
                want_low.then_some(&mut low_buffer),
                known,
            )?;
            let (child, child_level, has_low, shared) = match step {
                Step::Leaf => return Some(LeafEdge::Root(node)),
                Step::Child {
                    child,
                    level,
                    low,
                    shared,
                } => (child, level, low, shared),
            };
            if child_level == 0 {
                return Some(LeafEdge::Child {
                    parent: node,
                    child,
                    low: if has_low { Some(low_buffer) } else { low },
                    known: shared,
                });
            }
            // Coupling: the child's version is taken before the parent is validated.
            let next = core.optimistic(child);
            if !node.validate() {
                return None;
            }
            let next = next?;
            if has_low {
                low = Some(low_buffer.clone());
            }
            node = next;
            level = Some(child_level);
            known = shared;
        }
        None
    }

    /// One optimistic descent to the leaf for `target`, latched by `latch_leaf`; returns the
    /// latched leaf and (if `want_low`) its low fence, or `None` when the descent must be
    /// retried or done with latches (see the module docs).
    ///
    /// # Errors
    /// Those of `latch_leaf` (a leaf read from the device).
    pub(crate) fn descend_optimistic<G>(
        &self,
        tree: &Tree,
        target: Target<'_>,
        want_low: bool,
        latch_leaf: impl Fn(PageId) -> Result<G>,
    ) -> Result<Option<(G, Option<Vec<u8>>)>>
    where
        G: LatchedBytes,
    {
        match self.optimistic_to_leaf(tree, target, want_low) {
            None => Ok(None),
            Some(LeafEdge::Root(root)) => {
                // Only the root decodes as a leaf (below it levels are checked), and the root
                // page never moves: latch it and check under the latch that it is still a leaf
                // (a split may have made it inner meanwhile).
                let guard = latch_leaf(root.page())?;
                let still_leaf = header(&PageView::of_stable(guard.bytes()), tree.id, Some(0));
                Ok(still_leaf.map(|_| (guard, None)))
            }
            Some(LeafEdge::Child {
                parent, child, low, ..
            }) => {
                // Validate before latching too: until then `child` may be garbage read from a
                // page that changed, and latching it would fetch (and possibly read from the
                // device) an arbitrary page, or fail on a page number past the database. After
                // the latch, validate again: a split may have moved the leaf's keys meanwhile.
                if !parent.validate() {
                    return Ok(None);
                }
                let guard = latch_leaf(child)?;
                if !parent.validate() {
                    return Ok(None);
                }
                Ok(Some((guard, low)))
            }
        }
    }

    /// Reads the row `key` without any latch, the leaf included: the leaf's optimistic read
    /// starts before its parent is validated (coupling, as between inner levels), the value is
    /// copied into `value` (cleared when absent), then `blocked` is asked, then the leaf is
    /// validated. So when the answer is [`RowRead::Found`], the copy is the row as it was at
    /// one instant and `blocked` returned false at a later one, before the validation showed
    /// that the leaf had not changed since: no change to the leaf lies between the copy and
    /// the question (the auto-commit read's lock probe relies on this).
    pub(crate) fn read_row_optimistic(
        &self,
        tree: &Tree,
        key: &[u8],
        value: &mut Vec<u8>,
        blocked: impl FnOnce() -> bool,
    ) -> RowRead {
        let (leaf, known) = match self.optimistic_to_leaf(tree, Target::Key(key), false) {
            None => return RowRead::Retry,
            Some(LeafEdge::Root(root)) => (root, 0),
            Some(LeafEdge::Child {
                parent,
                child,
                known,
                ..
            }) => {
                // `child` may be garbage until the parent validates; an optimistic start only
                // looks the page up in the table (never reads the device), so it may come first.
                let leaf = self.db.pool().core().optimistic(child);
                if !parent.validate() {
                    return RowRead::Retry;
                }
                let Some(leaf) = leaf else {
                    return RowRead::Latch;
                };
                (leaf, known)
            }
        };
        let view = leaf.view();
        let Some(found) = copy_row(&view, tree.id, key, known, value) else {
            return RowRead::Retry;
        };
        let blocked = blocked();
        if !leaf.validate() {
            return RowRead::Retry;
        }
        self.remember_leaf(tree, leaf.page());
        if blocked {
            RowRead::Blocked
        } else {
            RowRead::Found(found)
        }
    }
}

/// Searches the leaf seen through `view` for `key` and copies its value into `value` (cleared
/// when absent); whether it was found, `None` when the bytes do not form a leaf of `tree`.
fn copy_row(
    view: &PageView<'_>,
    tree: u32,
    key: &[u8],
    known: usize,
    value: &mut Vec<u8>,
) -> Option<bool> {
    let header = header(view, tree, Some(0))?;
    let Ok(slot) = search(view, &header, key, known)?.0 else {
        value.clear();
        return Some(false);
    };
    let (key_at, key_len, value_len) = cell(view, &header, slot)?;
    value.resize(value_len, 0);
    view.copy_to(key_at + key_len, value).then_some(true)
}

// Clippy's test detection does not see through `cfg(all(test, ..))`.
#[allow(clippy::unwrap_used)]
#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;

    /// An inner node of tree 7 at level 1 with separators "b", "d" over children 10, 11, 12.
    fn inner() -> Vec<u8> {
        let mut page = vec![0u8; MIN_PAGE_SIZE];
        page[KIND_AT] = KIND_INNER;
        page[LEVEL_AT] = 1;
        page[TREE_AT..TREE_AT + 4].copy_from_slice(&7u32.to_le_bytes());
        page[LEFTMOST_AT..LEFTMOST_AT + 8].copy_from_slice(&10u64.to_le_bytes());
        let mut at = MIN_PAGE_SIZE;
        for (slot, (key, child)) in [(b"b", 11u64), (b"d", 12)].iter().enumerate() {
            at -= CELL_OVERHEAD + 1 + CHILD_SIZE;
            page[at..at + 2].copy_from_slice(&1u16.to_le_bytes());
            page[at + 2..at + 4].copy_from_slice(&(CHILD_SIZE as u16).to_le_bytes());
            page[at + 4] = key[0];
            page[at + 5..at + 13].copy_from_slice(&child.to_le_bytes());
            let slot_at = SLOTS_AT + SLOT_SIZE * slot;
            page[slot_at..slot_at + 2].copy_from_slice(&(at as u16).to_le_bytes());
            page[slot_at + HEAD_AT..slot_at + HEAD_AT + super::super::node::HEAD_SIZE]
                .copy_from_slice(&key_head(&key[..], 0).to_be_bytes());
        }
        page[COUNT_AT..COUNT_AT + 2].copy_from_slice(&2u16.to_le_bytes());
        page[CELL_START_AT..CELL_START_AT + 2].copy_from_slice(&(at as u16).to_le_bytes());
        page
    }

    fn step(page: &[u8], target: Target<'_>, low: Option<&mut Vec<u8>>) -> Option<Step> {
        inner_step(&PageView::of_stable(page), 7, Some(1), target, low, 0)
    }

    #[test]
    fn steps_agree_with_the_latched_search() {
        let page = inner();
        let node = super::super::node::NodeRef::new(5, &page).unwrap();
        for key in [&b""[..], b"a", b"b", b"c", b"d", b"e"] {
            let (_, expected) = node.child_for(key).unwrap();
            let Some(Step::Child { child, level, .. }) = step(&page, Target::Key(key), None) else {
                panic!("no step for {key:?}");
            };
            assert_eq!((child, level), (expected, 0), "key {key:?}");
        }
        let mut low = Vec::new();
        assert_eq!(
            step(&page, Target::Below(b"d"), Some(&mut low)),
            Some(Step::Child {
                child: 11,
                level: 0,
                low: true,
                shared: 0
            })
        );
        assert_eq!(low, b"b");
        assert!(matches!(
            step(&page, Target::Last, None),
            Some(Step::Child { child: 12, .. })
        ));
    }

    #[test]
    fn the_optimistic_search_agrees_with_the_latched_one_on_shared_prefixes() {
        use super::super::node::tests::{leaf, prefix_keys};
        let (keys, probes) = prefix_keys();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let page = leaf(&refs);
        let view = PageView::of_stable(&page);
        let header = header(&view, 0, Some(0)).unwrap();
        let node = super::super::node::NodeRef::new(1, &page).unwrap();
        let common = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        for probe in &probes {
            // What the parent's step may know: the prefix the probe shares with every key.
            let known = refs.iter().map(|key| common(probe, key)).min().unwrap();
            for known in [0, known] {
                let (found, shared) = search(&view, &header, probe, known).unwrap();
                assert_eq!(
                    found,
                    node.search(probe).unwrap(),
                    "{probe:?} knowing {known}"
                );
                // `shared` must hold for both separators around `Target::Key`'s child.
                let child = found.map_or_else(|slot| slot, |slot| slot + 1);
                for bound in [child.checked_sub(1), Some(child)] {
                    if let Some(key) = bound.and_then(|at| refs.get(at)) {
                        assert!(
                            shared <= common(probe, key),
                            "{probe:?}: shared {shared} with {key:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn garbage_is_none_never_a_panic() {
        let page = inner();
        assert_eq!(
            inner_step(&PageView::of_stable(&page), 8, None, Target::Last, None, 0),
            None
        );
        assert_eq!(step(&page[..100], Target::Last, None), None);
        // Every single-byte corruption of the header, slots and cells either decodes to some
        // step or to None; none panics.
        let mut low = Vec::new();
        for at in 0..page.len() {
            for value in [0u8, 1, 0x7f, 0xff] {
                let mut bad = page.clone();
                bad[at] = value;
                let _ = step(&bad, Target::Key(b"c"), Some(&mut low));
                let _ = step(&bad, Target::Below(b"zz"), None);
            }
        }
        // A slot pointing below the cell area, and a cell running past the page end.
        let mut bad = page.clone();
        // (Only a probe whose head equals the key's decodes the cell: "b" probes slot 0.)
        bad[SLOTS_AT..SLOTS_AT + 2].copy_from_slice(&10u16.to_le_bytes());
        assert_eq!(step(&bad, Target::Key(b"b"), None), None);
        let mut bad = page;
        let second = SLOTS_AT + SLOT_SIZE;
        let cell_at = usize::from(u16::from_le_bytes([bad[second], bad[second + 1]]));
        bad[cell_at..cell_at + 2].copy_from_slice(&u16::MAX.to_le_bytes());
        assert_eq!(step(&bad, Target::Key(b"e"), None), None);
    }

    /// The optimistic row copy finds what a latched read finds on a leaf, copies the value
    /// whole, clears the buffer for an absent key, and turns every single-byte corruption into
    /// some answer or `None`, never a panic.
    #[test]
    fn row_copies_match_the_leaf_and_survive_garbage() {
        let mut page = empty_leaf();
        let rows: Vec<(Vec<u8>, Vec<u8>)> = (0u8..20)
            .map(|n| (vec![b'k', n * 3], vec![n; usize::from(n) * 7 + 1]))
            .collect();
        for (slot, (key, value)) in rows.iter().enumerate() {
            let op = PageOp::Insert {
                slot: slot as u16,
                key: key.clone(),
                payload: value.clone(),
            };
            apply_all(&mut page, &[op]);
        }
        let view = PageView::of_stable(&page);
        let mut out = vec![9; 3];
        for (key, value) in &rows {
            assert_eq!(copy_row(&view, 1, key, 0, &mut out), Some(true));
            assert_eq!(&out, value);
            let mut absent = key.clone();
            absent.push(0);
            assert_eq!(copy_row(&view, 1, &absent, 0, &mut out), Some(false));
            assert!(out.is_empty());
        }
        assert_eq!(
            copy_row(&view, 2, b"k", 0, &mut out),
            None,
            "another tree's leaf"
        );
        for at in 0..page.len() {
            for byte in [0u8, 0x7f, 0xff] {
                let mut bad = page.clone();
                bad[at] = byte;
                let _ = copy_row(&PageView::of_stable(&bad), 1, &[b'k', 9], 0, &mut out);
            }
        }
    }

    /// Both searches and the checker on a node holding `keys` (ascending): every probe gets
    /// the slice's binary search answer, and the optimistic one's `shared` never exceeds what
    /// the probe shares with the keys it bounds.
    fn assert_searches_agree(page: &[u8], keys: &[Vec<u8>], probes: &[Vec<u8>]) {
        let node = super::super::node::NodeRef::new(1, page).unwrap();
        let stored: Vec<&[u8]> = (0..node.count()).map(|s| node.key(s).unwrap()).collect();
        assert_eq!(stored, keys.iter().map(Vec::as_slice).collect::<Vec<_>>());
        super::super::check::check_heads(&node).unwrap();
        let view = PageView::of_stable(page);
        let header = header(&view, 1, Some(0)).unwrap();
        let common = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        for probe in probes {
            let expected = keys.binary_search(probe);
            assert_eq!(
                node.search(probe).unwrap(),
                expected,
                "{probe:?} in {keys:?}"
            );
            let all = keys.iter().map(|key| common(probe, key)).min().unwrap_or(0);
            for known in [0, all / 2, all] {
                let (found, shared) = search(&view, &header, probe, known).unwrap();
                assert_eq!(found, expected, "{probe:?} knowing {known} in {keys:?}");
                let child = found.map_or_else(|slot| slot, |slot| slot + 1);
                for key in [child.checked_sub(1), Some(child)]
                    .into_iter()
                    .flatten()
                    .filter_map(|at| keys.get(at))
                {
                    assert!(shared <= common(probe, key), "{probe:?}: shared {shared}");
                }
                assert!(
                    shared >= known,
                    "{probe:?}: shared {shared} below known {known}"
                );
            }
        }
    }

    /// Probes around `keys`: the keys, their prefixes, neighbours and extensions.
    fn probes_for(keys: &[Vec<u8>], extra: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut probes = vec![Vec::new(), vec![0], vec![0xff; 3]];
        for key in keys {
            probes.push(key.clone());
            for cut in 0..key.len() {
                probes.push(key[..cut].to_vec());
            }
            probes.push([key.as_slice(), &[0]].concat());
            probes.push([key.as_slice(), &[0, 0, 0, 0, 7]].concat());
            probes.push([key.as_slice(), &[0xff]].concat());
            if let Some((last, rest)) = key.split_last() {
                probes.push([rest, &[last.wrapping_add(1)]].concat());
                probes.push([rest, &[last.wrapping_sub(1)]].concat());
            }
        }
        probes.extend(extra.iter().cloned());
        probes
    }

    fn apply_all(page: &mut [u8], ops: &[PageOp]) {
        for op in ops {
            super::super::op::apply(1, page, op).unwrap();
        }
    }

    fn empty_leaf() -> Vec<u8> {
        let mut page = vec![0u8; MIN_PAGE_SIZE];
        apply_all(
            &mut page,
            &[PageOp::InitNode {
                leaf: true,
                level: 0,
                tree: 1,
                left: 0,
                right: 0,
                leftmost: 0,
            }],
        );
        page
    }

    fn insert(slot: usize, key: &[u8], value_len: usize) -> PageOp {
        PageOp::Insert {
            slot: slot as u16,
            key: key.to_vec(),
            payload: vec![7; value_len],
        }
    }

    /// Keys of a few families sharing a drawn prefix (some sharing it entirely, some shorter
    /// than the prefix plus a head, some prefixes of others, some with zero bytes).
    fn key_sets() -> impl Strategy<Value = (Vec<Vec<u8>>, Vec<Vec<u8>>)> {
        let byte = prop::sample::select(vec![0u8, 1, b'a', b'b', 0xff]);
        let suffix = prop::collection::vec(byte, 0..7);
        (
            prop::collection::vec(any::<u8>(), 0..9),
            prop::collection::vec((0..4usize, suffix.clone()), 1..100),
            prop::collection::vec(suffix, 0..20),
        )
            .prop_map(|(base, drawn, extra)| {
                let families = [
                    base.clone(),
                    [base.as_slice(), b"ab\0"].concat(),
                    base[..base.len() / 2].to_vec(),
                    [base.as_slice(), &[0, 0, 0, 0]].concat(),
                ];
                let mut keys: Vec<Vec<u8>> = drawn
                    .iter()
                    .map(|(family, tail)| [families[*family].as_slice(), tail].concat())
                    .collect();
                keys.sort();
                keys.dedup();
                let extra = extra
                    .iter()
                    .map(|tail| [base.as_slice(), tail].concat())
                    .collect();
                (keys, extra)
            })
    }

    use super::super::op::PageOp;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Nodes built by ascending inserts (as bulk loading and splits build them) and by
        /// random inserts, deletes, replaces and truncations through `PageOp` (compactions
        /// included) keep a node prefix and heads the checker accepts, and both searches give a
        /// sorted slice's answers.
        #[test]
        fn searches_over_heads_agree_with_a_sorted_slice(
            (keys, extra) in key_sets(),
            choices in prop::collection::vec(any::<(u8, u16, u16)>(), 0..300),
        ) {
            let probes = probes_for(&keys, &extra);
            let mut bulk = empty_leaf();
            for (slot, key) in keys.iter().enumerate() {
                apply_all(&mut bulk, &[insert(slot, key, 1)]);
            }
            assert_searches_agree(&bulk, &keys, &probes);

            // Random changes through operations, against a sorted model.
            let mut page = empty_leaf();
            let mut model: Vec<Vec<u8>> = Vec::new();
            for (kind, a, b) in choices {
                let op = match kind % 8 {
                    0..=3 => {
                        let key = &keys[usize::from(a) % keys.len()];
                        let Err(slot) = model.binary_search(key) else { continue };
                        let node = super::super::node::NodeRef::new(1, &page).unwrap();
                        let value_len = usize::from(b % 40);
                        if !node.fits(key.len(), value_len) {
                            continue;
                        }
                        model.insert(slot, key.clone());
                        insert(slot, key, value_len)
                    }
                    4 | 5 if !model.is_empty() => {
                        let slot = usize::from(a) % model.len();
                        model.remove(slot);
                        PageOp::Delete { slot: slot as u16 }
                    }
                    6 if !model.is_empty() => PageOp::Replace {
                        slot: (usize::from(a) % model.len()) as u16,
                        payload: vec![3; usize::from(b % 20)],
                    },
                    7 if model.len() > 1 && b % 5 == 0 => {
                        let from = 1 + usize::from(a) % (model.len() - 1);
                        model.truncate(from);
                        PageOp::Truncate { from: from as u16 }
                    }
                    _ => continue,
                };
                apply_all(&mut page, &[op]);
                assert_searches_agree(&page, &model, &probes);
            }
        }
    }

    /// `shared` must hold for every key the chosen child may hold, the node's own bounds
    /// included: a node whose keys share a long prefix below a low fence that does not (the
    /// leftmost child then holds keys without the prefix).
    #[test]
    fn shared_is_never_more_than_the_child_range_shares() {
        let common = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        // The universe of keys a subtree may hold, sorted; the node holds every third key of a
        // window of it, its fences the keys just outside the window.
        let mut universe: Vec<Vec<u8>> = Vec::new();
        for family in [&b"aa"[..], b"user:0000", b"user:0001", b"user:00010", b"v"] {
            for tail in [&b""[..], b"\0", b"\0\0", b"a", b"ab", b"ab\0c", b"b", b"zz"] {
                universe.push([family, tail].concat());
            }
        }
        universe.sort();
        universe.dedup();
        for start in 0..universe.len() {
            for end in start + 2..=universe.len() {
                let low = universe[start].as_slice();
                let high = universe.get(end).map(Vec::as_slice);
                let mut page = empty_leaf();
                let mut keys = Vec::new();
                for key in universe[start..end].iter().skip(1).step_by(3) {
                    apply_all(&mut page, &[insert(keys.len(), key, 1)]);
                    keys.push(key.clone());
                }
                if keys.is_empty() {
                    continue;
                }
                let view = PageView::of_stable(&page);
                let header = header(&view, 1, Some(0)).unwrap();
                for probe in &universe[start..end] {
                    // What the parent's step knows: the probe lies in [low, high) (nothing
                    // when there is no high fence: the node reaches the end of the tree).
                    let known = high.map_or(0, |high| common(probe, low).min(common(probe, high)));
                    let (found, shared) = search(&view, &header, probe, known).unwrap();
                    let child = found.map_or_else(|slot| slot, |slot| slot + 1);
                    let child_low = child.checked_sub(1).map_or(low, |at| keys[at].as_slice());
                    let child_high = keys.get(child).map(Vec::as_slice).or(high);
                    for key in &universe {
                        let inside = key.as_slice() >= child_low
                            && child_high.is_none_or(|high| key.as_slice() < high);
                        if inside {
                            assert!(
                                shared <= common(probe, key),
                                "{probe:?} in {keys:?}: shared {shared} with {key:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}
