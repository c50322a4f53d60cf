//! Physiological undo of page operations inside a mini-transaction: before a [`PageOp`]
//! applies, [`touched`] names the byte ranges of the page it may write, and a
//! [`RollbackLog`] saves those bytes. Putting the saved ranges back newest first restores the
//! page byte for byte, so a mini-transaction whose append failed (or that is dropped
//! uncommitted) leaves nothing behind, without copying whole pages on the way.
//!
//! This is not the transaction's undo (that is logical, `txn/undo.rs`, and in the log); these
//! ranges never leave memory and live only while the mini-transaction holds its latches.
//!
//! What an operation writes (node layout in `node.rs`): the node header `[32, 72)` (with the
//! node prefix at 44); the slot array from the first slot that moves to the new end of the
//! array, or the whole slot array when the heads are rewritten (an insert that shrinks the node
//! prefix, decided here as `op.rs` decides it; a truncation); for a new cell, the bytes just
//! below `cell_start`; for an in-place payload or child change, those bytes. Operations that
//! rewrite most of the page (a compaction inside an insert, a node left empty, a format, an
//! image, a catalog append) save everything after the page header: rare (splits, merges,
//! the meta page), and still exact.
//!
//! Invariant (tested against whole-page before-images in this file's tests): the ranges of
//! [`touched`] cover every byte [`super::op::apply`] may change, for every operation and page,
//! valid or not (an operation on a page it does not fit fails before writing anything; even
//! then the covered ranges are a superset).

use std::ops::Range;

use super::meta::{FREE_COUNT_AT, HIGH_WATER_AT};
use super::node::{
    CELL_OVERHEAD, CELL_START_AT, CHILD_SIZE, COUNT_AT, KIND_AT, KIND_INNER, KIND_LEAF, PREFIX_AT,
    SLOT_SIZE, SLOTS_AT, common_prefix, get_u16,
};
use super::op::PageOp;
use crate::error::PageId;
use crate::page::PAGE_HEADER_SIZE;

/// A position in a [`RollbackLog`] (see [`RollbackLog::save`]).
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    saved: usize,
    arena: usize,
}

/// Up to three byte ranges of one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    ranges: [Range<usize>; 3],
    len: usize,
}

impl Touched {
    fn new() -> Self {
        Touched {
            ranges: [0..0, 0..0, 0..0],
            len: 0,
        }
    }

    fn whole(size: usize) -> Self {
        let mut touched = Touched::new();
        touched.push(PAGE_HEADER_SIZE..size);
        touched
    }

    fn push(&mut self, range: Range<usize>) {
        if !range.is_empty() {
            self.ranges[self.len] = range;
            self.len += 1;
        }
    }

    /// The ranges.
    #[must_use]
    pub fn ranges(&self) -> &[Range<usize>] {
        &self.ranges[..self.len]
    }
}

/// The node header fields an operation may set (count, cell_start, garbage, links).
const NODE_HEADER: Range<usize> = PAGE_HEADER_SIZE..SLOTS_AT;

/// Count and cell_start of a node whose header is consistent, or `None`.
fn node_shape(page: &[u8]) -> Option<(usize, usize)> {
    let kind = page[KIND_AT];
    if kind != KIND_LEAF && kind != KIND_INNER {
        return None;
    }
    let count = usize::from(get_u16(page, COUNT_AT));
    let cell_start = usize::from(get_u16(page, CELL_START_AT));
    (SLOTS_AT + SLOT_SIZE * count <= cell_start && cell_start <= page.len())
        .then_some((count, cell_start))
}

/// The cell at `slot`: (offset, key length, payload length), if it lies inside the page.
fn cell_at(page: &[u8], count: usize, slot: usize) -> Option<(usize, usize, usize)> {
    if slot >= count {
        return None;
    }
    let offset = usize::from(get_u16(page, SLOTS_AT + SLOT_SIZE * slot));
    if offset + CELL_OVERHEAD > page.len() {
        return None;
    }
    let key_len = usize::from(get_u16(page, offset));
    let payload_len = usize::from(get_u16(page, offset + 2));
    (offset + CELL_OVERHEAD + key_len + payload_len <= page.len()).then_some((
        offset,
        key_len,
        payload_len,
    ))
}

/// Whether inserting `key` into a node of `count` cells whose slot 0 will hold the key of old
/// slot `first` rewrites every head: the node prefix shrinks (`op.rs`, `prefix_after_insert`).
/// `None` when that key cannot be read (then anything may be written).
fn insert_shrinks_prefix(page: &[u8], count: usize, first: usize, key: &[u8]) -> Option<bool> {
    let (offset, key_len, _) = cell_at(page, count, first)?;
    let at = offset + CELL_OVERHEAD;
    let prefix = usize::from(get_u16(page, PREFIX_AT));
    Some(common_prefix(key, &page[at..at + key_len]) < prefix)
}

/// Ranges an insert of a `cell_len`-byte cell at `slot` writes into a node of `count` cells
/// (after any removal of the same operation): the header, the slots from `slot` to the new
/// end, and the cell's bytes below `cell_start` (everything when it has to compact first).
fn insert_ranges(
    size: usize,
    count: usize,
    cell_start: usize,
    slot: usize,
    cell_len: usize,
) -> Touched {
    let new_slots_end = SLOTS_AT + SLOT_SIZE * (count + 1);
    if cell_start < new_slots_end + cell_len {
        return Touched::whole(size);
    }
    let mut touched = Touched::new();
    touched.push(NODE_HEADER);
    touched.push(SLOTS_AT + SLOT_SIZE * slot.min(count)..new_slots_end);
    touched.push(cell_start - cell_len..cell_start);
    touched
}

/// The byte ranges of `page` that `op` may write (a superset; see the module docs).
#[must_use]
pub fn touched<B: AsRef<[u8]>>(page: &[u8], op: &PageOp<B>) -> Touched {
    let size = page.len();
    if size <= SLOTS_AT {
        return Touched::whole(size);
    }
    match op {
        PageOp::MetaAlloc { .. } => {
            let mut touched = Touched::new();
            touched.push(HIGH_WATER_AT..FREE_COUNT_AT + 8);
            return touched;
        }
        PageOp::SetLinks { .. } | PageOp::SetLeftmost { .. } => {
            let mut touched = Touched::new();
            touched.push(NODE_HEADER);
            return touched;
        }
        _ => {}
    }
    let Some((count, cell_start)) = node_shape(page) else {
        return Touched::whole(size);
    };
    let slots_end = SLOTS_AT + SLOT_SIZE * count;
    let shifted_from = |slot: usize| SLOTS_AT + SLOT_SIZE * slot.min(count)..slots_end;
    let mut touched = Touched::new();
    match op {
        PageOp::Insert { slot, key, payload } => {
            let (key, slot) = (key.as_ref(), usize::from(*slot));
            let cell_len = CELL_OVERHEAD + key.len() + payload.as_ref().len();
            let shrinks = count > 0 && insert_shrinks_prefix(page, count, 0, key) != Some(false);
            let first = if shrinks { 0 } else { slot };
            return insert_ranges(size, count, cell_start, first, cell_len);
        }
        PageOp::Delete { slot } => {
            if count <= 1 {
                return Touched::whole(size);
            }
            touched.push(NODE_HEADER);
            touched.push(shifted_from(usize::from(*slot)));
        }
        PageOp::Truncate { from } => {
            if *from == 0 {
                return Touched::whole(size);
            }
            // The kept slots' heads are rewritten (the node prefix is recomputed).
            touched.push(NODE_HEADER);
            touched.push(shifted_from(0));
        }
        PageOp::Replace { slot, payload } => {
            let slot = usize::from(*slot);
            let Some((offset, key_len, old_len)) = cell_at(page, count, slot) else {
                return Touched::whole(size);
            };
            let payload = payload.as_ref();
            if old_len == payload.len() {
                let at = offset + CELL_OVERHEAD + key_len;
                touched.push(at..at + old_len);
                return touched;
            }
            // The old cell's slot goes, then the new cell is inserted at the same slot (and the
            // node's slot 0 is then old slot 1 if `slot` is 0).
            let cell_len = CELL_OVERHEAD + key_len + payload.len();
            let key = &page[offset + CELL_OVERHEAD..offset + CELL_OVERHEAD + key_len];
            let first = usize::from(slot == 0);
            let shrinks =
                count > 1 && insert_shrinks_prefix(page, count, first, key) != Some(false);
            let first_written = if shrinks { 0 } else { slot };
            return insert_ranges(size, count - 1, cell_start, first_written, cell_len);
        }
        PageOp::Patch { slot, pieces } => {
            let Some((offset, key_len, _)) = cell_at(page, count, usize::from(*slot)) else {
                return Touched::whole(size);
            };
            // Only the patched span of the payload (a patch that does not fit writes nothing).
            let span = super::patch::span(pieces.as_ref());
            let at = offset + CELL_OVERHEAD + key_len;
            touched.push((at + span.start).min(size)..(at + span.end).min(size));
        }
        PageOp::SetChild { slot, .. } => {
            let Some((offset, key_len, _)) = cell_at(page, count, usize::from(*slot)) else {
                return Touched::whole(size);
            };
            let at = offset + CELL_OVERHEAD + key_len;
            touched.push(at..(at + CHILD_SIZE).min(size));
        }
        _ => return Touched::whole(size),
    }
    touched
}

/// One saved range: which page, where, and where its bytes are in the arena.
#[derive(Debug, Clone, Copy)]
struct Saved {
    page: PageId,
    at: usize,
    len: usize,
    arena_at: usize,
}

/// The saved bytes of a mini-transaction's changes, in the order they were saved.
#[derive(Debug, Default)]
pub struct RollbackLog {
    saved: Vec<Saved>,
    arena: Vec<u8>,
}

impl RollbackLog {
    /// An empty log (allocates nothing until the first save).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Saves the bytes `op` may write on `data`, the bytes of `page`; returns a mark for
    /// [`RollbackLog::rewind`].
    pub fn save<B: AsRef<[u8]>>(&mut self, page: PageId, data: &[u8], op: &PageOp<B>) -> Mark {
        let mark = Mark {
            saved: self.saved.len(),
            arena: self.arena.len(),
        };
        for range in touched(data, op).ranges() {
            self.saved.push(Saved {
                page,
                at: range.start,
                len: range.len(),
                arena_at: self.arena.len(),
            });
            self.arena.extend_from_slice(&data[range.clone()]);
        }
        mark
    }

    /// Undoes the saves after `mark` (all of them of `page`, whose bytes are `data`) and
    /// forgets them: an operation that failed.
    pub fn rewind(&mut self, mark: Mark, page: PageId, data: &mut [u8]) {
        for saved in self.saved[mark.saved..].iter().rev() {
            assert_eq!(saved.page, page, "a rewind covers one page's saves");
            Self::put_back(&self.arena, saved, data);
        }
        self.saved.truncate(mark.saved);
        self.arena.truncate(mark.arena);
    }

    fn put_back(arena: &[u8], saved: &Saved, data: &mut [u8]) {
        data[saved.at..saved.at + saved.len]
            .copy_from_slice(&arena[saved.arena_at..saved.arena_at + saved.len]);
    }

    /// Whether nothing is saved.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.saved.is_empty()
    }

    /// Writes the saved bytes of `page` back into `data`, newest first: `data` becomes the
    /// page as it was before the first saved change.
    pub fn undo_into(&self, page: PageId, data: &mut [u8]) {
        for saved in self.saved.iter().rev().filter(|saved| saved.page == page) {
            Self::put_back(&self.arena, saved, data);
        }
    }

    /// Forgets everything, keeping the buffers.
    pub fn clear(&mut self) {
        self.saved.clear();
        self.arena.clear();
    }

    /// Bytes saved so far.
    #[must_use]
    pub fn saved_bytes(&self) -> usize {
        self.arena.len()
    }

    /// Bytes the arena holds without growing (for deciding whether to keep it for reuse).
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::super::node::NodeRef;
    use super::super::op::{self, PageOp};
    use super::*;
    use proptest::prelude::*;

    const PAGE: usize = 4096;

    fn init(leaf: bool) -> PageOp {
        PageOp::InitNode {
            leaf,
            level: u8::from(!leaf),
            tree: 1,
            left: 0,
            right: 0,
            leftmost: if leaf { 0 } else { 9 },
        }
    }

    /// An operation drawn from `choice`, shaped to mostly apply to `page`.
    fn op_for(page: &[u8], choice: (u8, u16, u16, u16)) -> PageOp {
        let (kind, a, b, c) = choice;
        let count = NodeRef::new(1, page).map_or(0, |node| node.count()) as u16;
        let slot = if count == 0 { 0 } else { a % (count + 1) };
        let existing = if count == 0 { 0 } else { a % count };
        let leaf = page[KIND_AT] == KIND_LEAF;
        let payload_len = if leaf { usize::from(c % 300) } else { 8 };
        match kind % 13 {
            0..=3 => PageOp::Insert {
                slot,
                key: vec![b as u8; usize::from(b % 40)],
                payload: vec![c as u8; payload_len],
            },
            4 | 5 => PageOp::Delete { slot: existing },
            6 | 7 => PageOp::Replace {
                slot: existing,
                payload: vec![b as u8; if b % 3 == 0 { payload_len } else { 17 }],
            },
            8 => PageOp::Truncate { from: slot },
            9 => PageOp::SetLinks {
                left: u64::from(a),
                right: u64::from(b),
            },
            10 => PageOp::SetChild {
                slot: existing,
                child: u64::from(c),
            },
            11 => {
                // One or two pieces, sometimes reaching past the payload (then refused).
                let mut pieces = Vec::new();
                for (at, len) in [(b % 40, c % 8), (b % 40 + 50, a % 5)]
                    .iter()
                    .take(1 + usize::from(a % 2))
                {
                    pieces.extend_from_slice(&at.to_le_bytes());
                    pieces.extend_from_slice(&len.to_le_bytes());
                    pieces.extend(std::iter::repeat_n(c as u8, usize::from(*len)));
                }
                PageOp::Patch {
                    slot: existing,
                    pieces,
                }
            }
            _ => init(b % 2 == 0),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Saving the touched ranges before each operation and undoing them gives back the
        /// page exactly as a whole-page before-image would, after any sequence of operations
        /// (applied or refused).
        #[test]
        fn undo_restores_the_page_byte_for_byte(
            leaf in any::<bool>(),
            ops in proptest::collection::vec(any::<(u8, u16, u16, u16)>(), 1..120),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut page = vec![0u8; PAGE];
            op::apply(1, &mut page, &init(leaf)).unwrap();
            // A prefix builds the page the mini-transaction starts from.
            let start_at = cut.index(ops.len());
            for choice in &ops[..start_at] {
                let op = op_for(&page, *choice);
                let _ = op::apply(1, &mut page, &op);
            }
            let before = page.clone();
            let mut log = RollbackLog::new();
            for choice in &ops[start_at..] {
                let op = op_for(&page, *choice);
                let just_before = page.clone();
                log.save(0, &page, &op);
                let outcome = op::apply(1, &mut page, &op);
                // Every byte the operation changed is inside a touched range.
                let mut undone = page.clone();
                let mut single = RollbackLog::new();
                single.save(0, &just_before, &op);
                single.undo_into(0, &mut undone);
                prop_assert_eq!(&undone, &just_before, "op {:?} (applied: {})", op, outcome.is_ok());
            }
            let mut restored = page.clone();
            log.undo_into(0, &mut restored);
            prop_assert_eq!(restored, before);
        }
    }

    #[test]
    fn a_fitting_insert_saves_only_header_slots_and_the_new_cell() {
        let mut page = vec![0u8; 16 * 1024];
        op::apply(1, &mut page, &init(true)).unwrap();
        for n in 0..50u16 {
            let op = PageOp::Insert {
                slot: n,
                key: n.to_be_bytes().to_vec(),
                payload: vec![1; 100],
            };
            op::apply(1, &mut page, &op).unwrap();
        }
        // The keys share their first byte (the node prefix is 1).
        let op = PageOp::Insert {
            slot: 10,
            key: vec![0, 9, 5],
            payload: vec![2; 100],
        };
        let mut log = RollbackLog::new();
        log.save(0, &page, &op);
        // Header (40) + slots 10..51 (6 bytes each) + the cell (107).
        assert_eq!(log.saved_bytes(), 40 + 41 * 6 + 107);
        // A key without that byte shrinks the node prefix: every head is rewritten.
        let shrinking = PageOp::Insert {
            slot: 50,
            key: b"k".to_vec(),
            payload: vec![2; 100],
        };
        let mut log = RollbackLog::new();
        log.save(0, &page, &shrinking);
        assert_eq!(log.saved_bytes(), 40 + 51 * 6 + 105);
        let same_size = PageOp::Replace {
            slot: 3,
            payload: vec![3; 100],
        };
        let mut log = RollbackLog::new();
        log.save(0, &page, &same_size);
        assert_eq!(log.saved_bytes(), 100);
        let delete_last: PageOp = PageOp::Delete { slot: 49 };
        let mut log = RollbackLog::new();
        log.save(0, &page, &delete_last);
        assert_eq!(log.saved_bytes(), 40 + 6);
    }

    #[test]
    fn a_rewind_undoes_only_the_last_operation() {
        let mut page = vec![0u8; PAGE];
        op::apply(1, &mut page, &init(true)).unwrap();
        let first = PageOp::Insert {
            slot: 0,
            key: b"a".to_vec(),
            payload: b"b".to_vec(),
        };
        let mut log = RollbackLog::new();
        let empty = page.clone();
        log.save(1, &page, &first);
        op::apply(1, &mut page, &first).unwrap();
        let after_first = page.clone();
        let second: PageOp = PageOp::Delete { slot: 0 };
        let mark = log.save(1, &page, &second);
        op::apply(1, &mut page, &second).unwrap();
        log.rewind(mark, 1, &mut page);
        assert_eq!(page, after_first);
        // Other pages' entries are left alone.
        let mut other = empty.clone();
        log.undo_into(2, &mut other);
        assert_eq!(other, empty);
        log.undo_into(1, &mut page);
        assert_eq!(page, empty);
        log.clear();
        assert!(log.is_empty());
    }
}
