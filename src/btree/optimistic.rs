//! Optimistic descent through inner nodes: no pin, no latch and no shared cache-line write per
//! inner level (`core::optimistic` has the protocol; `docs/performance.md`, "Optimistic
//! reads").
//!
//! Each inner node is decoded through a [`PageView`] by [`inner_step`], which checks every
//! offset it follows (it returns `None` on any inconsistency instead of panicking: the bytes may
//! be torn), and the result is used only once the node's read validates. Levels are coupled as
//! latches couple them: the child's optimistic read starts (its version is taken) *before* the
//! parent is validated, so the child was the parent's child for the key at that instant, and
//! the child's own validation covers the time after. The leaf is latched (shared for reads,
//! exclusive for writes) by the caller's `latch_leaf`, and the parent is validated after the
//! latch is held: the leaf is then the one covering the key (a structure modification latches
//! the parent exclusive while it moves the leaf's keys, see `btree/smo.rs`).
//!
//! Any failure (a validation, a page not cached, a page latched exclusive for long, or bytes
//! that do not decode) makes [`TreeStore::descend_optimistic`] return `None`; the caller
//! retries a few times and then descends with latches, which also reports corrupt pages with
//! their proper error.

use super::node::{
    CELL_OVERHEAD, CELL_START_AT, CHILD_SIZE, COUNT_AT, HEAD_AT, HEAD_SIZE, KIND_AT, KIND_INNER,
    KIND_LEAF, LEFTMOST_AT, LEVEL_AT, MAX_LEVELS, MAX_PAGE_SIZE, MIN_PAGE_SIZE, PREFIX_AT,
    SLOT_SIZE, SLOTS_AT, TREE_AT, key_head,
};
use super::{Target, Tree, TreeStore};
use crate::core::optimistic::PageView;
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
    // Bytes `key` shares with every key of the node.
    let base = prefix.max(known);
    let wanted = key_head(key, prefix);
    let (mut low, mut high) = (0usize, count);
    // Common prefix of `key` with the key below `low` and the key at `high` (the node's
    // bounds, sharing `known`, until probes move them).
    let (mut low_common, mut high_common) = (known, known);
    // Bound: halves the range each round (count < 2^15).
    while low < high {
        let mid = low + (high - low) / 2;
        let slot_at = SLOTS_AT + SLOT_SIZE * mid;
        let head = u32::from_be_bytes(view.array::<HEAD_SIZE>(slot_at + HEAD_AT)?);
        let (order, common) = if head == wanted {
            let offset = usize::from(view.u16_le(slot_at)?);
            if offset < header.cell_start {
                return None;
            }
            let key_len = usize::from(view.u16_le(offset)?);
            let skip = low_common.min(high_common).max(base);
            view.compare_from(offset + CELL_OVERHEAD, key_len, key, skip)?
        } else {
            (head.cmp(&wanted), base)
        };
        match order {
            std::cmp::Ordering::Less => {
                low = mid + 1;
                low_common = common;
            }
            std::cmp::Ordering::Greater => {
                high = mid;
                high_common = common;
            }
            // The child right of an equal separator lies between it (all of `key` shared)
            // and the key at `high`: it shares `high_common`.
            std::cmp::Ordering::Equal => return Some((Ok(mid), high_common)),
        }
    }
    Some((Err(low), low_common.min(high_common)))
}

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

impl TreeStore {
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
        let core = self.db.pool().core();
        let Some(mut node) = core.optimistic(tree.root) else {
            return Ok(None);
        };
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
            );
            let (child, child_level, has_low, shared) = match step {
                None => return Ok(None),
                Some(Step::Leaf) => {
                    // Only the root decodes as a leaf (below it levels are checked), and the
                    // root page never moves: latch it and check under the latch that it is
                    // still a leaf (a split may have made it inner meanwhile).
                    let guard = latch_leaf(node.page())?;
                    let still_leaf = header(&PageView::of_stable(guard.bytes()), tree.id, Some(0));
                    return Ok(still_leaf.map(|_| (guard, low)));
                }
                Some(Step::Child {
                    child,
                    level,
                    low,
                    shared,
                }) => (child, level, low, shared),
            };
            if child_level == 0 {
                // Validate before latching too: until then `child` may be garbage read from a
                // page that changed, and latching it would fetch (and possibly read from the
                // device) an arbitrary page, or fail on a page number past the database. After
                // the latch, validate again: a split may have moved the leaf's keys meanwhile.
                if !node.validate() {
                    return Ok(None);
                }
                let guard = latch_leaf(child)?;
                if !node.validate() {
                    return Ok(None);
                }
                if has_low {
                    low = Some(low_buffer);
                }
                return Ok(Some((guard, low)));
            }
            // Coupling: the child's version is taken before the parent is validated.
            let next = core.optimistic(child);
            if !node.validate() {
                return Ok(None);
            }
            let Some(next) = next else {
                return Ok(None);
            };
            if has_low {
                low = Some(low_buffer.clone());
            }
            node = next;
            level = Some(child_level);
            known = shared;
        }
        Ok(None)
    }
}

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
            page[slot_at + HEAD_AT..slot_at + HEAD_AT + HEAD_SIZE]
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
}
