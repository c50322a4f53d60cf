//! Physiological page operations: the only way tree pages change. Each operation names one
//! page (the log record carries the page id) and says what to do inside it by slot, never by
//! byte offset, so redo works on any layout of the same logical node. [`apply`] is used both
//! forward (a mini-transaction applies an operation, then logs it) and during redo
//! ([`BTreeRedo`], the hook `Database::open_with_redo` calls), so the two cannot disagree.
//!
//! Encoding (little endian; `bytes` = `u16` length then the bytes), first byte the code:
//!
//! ```text
//!  1 InitNode  kind u8, level u8, tree u32, left u64, right u64, leftmost u64   (defines page)
//!  2 Image     head bytes (copied at 32), tail_at u16, tail bytes             (defines page)
//!  3 Insert    slot u16, key bytes, payload bytes
//!  4 Delete    slot u16
//!  5 Replace   slot u16, payload bytes
//!  6 Truncate  from u16          (drops slots from..count)
//!  7 SetLinks  left u64, right u64
//!  8 SetLeftmost child u64
//!  9 SetChild  slot u16, child u64
//! 10 InitFree  next u64                                                       (defines page)
//! 11 InitMeta  page_size u32                                                  (defines page)
//! 12 MetaAlloc high_water u64, free_head u64, free_count u64
//! 13 MetaAddTree name bytes, root u64
//! 14 Patch     slot u16, pieces bytes  (each piece: at u16, len u16, len bytes; btree/patch.rs)
//! ```
//!
//! Invariants: [`apply`] checks every precondition (slot in range, room for a cell, keys
//! staying ordered is the caller's) and returns [`Error::CorruptPage`] instead of panicking;
//! a successful apply leaves a node whose header verifies ([`NodeRef::new`]). Insert compacts
//! the cell area when the gap is too small but the garbage makes room; compaction is
//! deterministic, so forward and redo produce the same bytes.
//!
//! Node prefix and key heads (`btree/node.rs`) are derived data kept here, by the same code
//! forward and in redo: an insert into an empty node sets the prefix `p` to the key's length;
//! an insert into a non-empty one shrinks `p` to the key's common prefix with slot 0's key if
//! that is shorter (rewriting every head), then writes its slot's head; delete, replace and
//! patch keep `p` and the other heads; compaction and truncation recompute `p` as the common
//! prefix of the first and last key (keys ascend) and rewrite every head; an emptied node and
//! `InitNode` have `p = 0`; `Image` copies `p` and the heads with the slots. A split builds its
//! new nodes with `fill_sorted`, which leaves the same bytes as inserts in key order, `p` and
//! each head written once.

use super::meta::{
    FORMAT_VERSION, FREE_COUNT_AT, FREE_HEAD_AT, HIGH_WATER_AT, MAGIC_AT, MAX_NAME, META_MAGIC,
    NEXT_FREE_AT, PAGE_SIZE_AT, TREE_COUNT_AT, VERSION_AT,
};
use super::node::{
    CELL_OVERHEAD, CELL_START_AT, COUNT_AT, GARBAGE_AT, HEAD_AT, HEAD_SIZE, KIND_AT, KIND_FREE,
    KIND_INNER, KIND_LEAF, KIND_META, LEFT_AT, LEFTMOST_AT, LEVEL_AT, NodeRef, PREFIX_AT, RIGHT_AT,
    SLOT_SIZE, SLOTS_AT, TREE_AT, cell_footprint, common_prefix, corrupt, get_u16, get_u32,
    key_head,
};
use crate::db::PageOpRedo;
use crate::error::{Error, PageId, Result};
use crate::page::PAGE_HEADER_SIZE;

const INIT_NODE: u8 = 1;
const IMAGE: u8 = 2;
const INSERT: u8 = 3;
const DELETE: u8 = 4;
const REPLACE: u8 = 5;
const TRUNCATE: u8 = 6;
const SET_LINKS: u8 = 7;
const SET_LEFTMOST: u8 = 8;
const SET_CHILD: u8 = 9;
const INIT_FREE: u8 = 10;
const INIT_META: u8 = 11;
const META_ALLOC: u8 = 12;
const META_ADD_TREE: u8 = 13;
const PATCH: u8 = 14;

/// One operation on one page. The byte operands are `B`: owned (`Vec<u8>`, the default, what
/// [`PageOp::decode`] gives) or borrowed (`&[u8]`, what a row change on the hot path builds
/// from the caller's key and value without copying them); both encode and apply alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageOp<B = Vec<u8>> {
    /// Formats an empty node.
    InitNode {
        /// Leaf or inner.
        leaf: bool,
        /// Level (0 for a leaf).
        level: u8,
        /// Tree id.
        tree: u32,
        /// Left sibling.
        left: PageId,
        /// Right sibling.
        right: PageId,
        /// Leftmost child (inner).
        leftmost: PageId,
    },
    /// A compact image: `head` is copied at offset 32, `tail` at `tail_at`, zeros elsewhere.
    Image {
        /// Bytes from offset 32 (node header and slots, or the meta page's used part).
        head: B,
        /// Where the tail goes (the node's `cell_start`).
        tail_at: u16,
        /// The bytes from `tail_at` to the page end.
        tail: B,
    },
    /// Inserts a cell at `slot` (later slots shift right).
    Insert {
        /// Slot.
        slot: u16,
        /// Key.
        key: B,
        /// Payload (leaf value, or an inner child as 8 bytes).
        payload: B,
    },
    /// Deletes the cell at `slot`.
    Delete {
        /// Slot.
        slot: u16,
    },
    /// Replaces the payload of `slot`.
    Replace {
        /// Slot.
        slot: u16,
        /// New payload.
        payload: B,
    },
    /// Overwrites bytes of the payload of `slot` in place (its length does not change): the
    /// pieces of a patch (`btree/patch.rs`), what an update logs instead of the whole row.
    Patch {
        /// Slot.
        slot: u16,
        /// The encoded pieces.
        pieces: B,
    },
    /// Drops the cells from `from` to the end.
    Truncate {
        /// First slot dropped.
        from: u16,
    },
    /// Sets the sibling links.
    SetLinks {
        /// Left sibling.
        left: PageId,
        /// Right sibling.
        right: PageId,
    },
    /// Sets the leftmost child.
    SetLeftmost {
        /// Child.
        child: PageId,
    },
    /// Sets the child of inner cell `slot`.
    SetChild {
        /// Slot.
        slot: u16,
        /// Child.
        child: PageId,
    },
    /// Formats a free page.
    InitFree {
        /// Next free page (0 = none).
        next: PageId,
    },
    /// Formats the meta page of a new database.
    InitMeta {
        /// The page size.
        page_size: u32,
    },
    /// Sets the allocator state in the meta page.
    MetaAlloc {
        /// First never-allocated page.
        high_water: PageId,
        /// Free-list head.
        free_head: PageId,
        /// Free pages.
        free_count: u64,
    },
    /// Appends a catalog entry.
    MetaAddTree {
        /// Name.
        name: B,
        /// Root page.
        root: PageId,
    },
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    assert!(
        u16::try_from(bytes.len()).is_ok(),
        "operand fits a u16 length"
    );
    out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    out.extend_from_slice(bytes);
}

impl<B: AsRef<[u8]>> PageOp<B> {
    /// Encodes the operation.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32);
        self.encode_into(&mut out);
        out
    }

    /// Appends the encoding ([`PageOp::encode`]) to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            PageOp::InitNode {
                leaf,
                level,
                tree,
                left,
                right,
                leftmost,
            } => {
                out.push(INIT_NODE);
                out.push(if *leaf { KIND_LEAF } else { KIND_INNER });
                out.push(*level);
                out.extend_from_slice(&tree.to_le_bytes());
                for link in [left, right, leftmost] {
                    out.extend_from_slice(&link.to_le_bytes());
                }
            }
            PageOp::Image {
                head,
                tail_at,
                tail,
            } => {
                out.push(IMAGE);
                put_bytes(out, head.as_ref());
                out.extend_from_slice(&tail_at.to_le_bytes());
                put_bytes(out, tail.as_ref());
            }
            PageOp::Insert { slot, key, payload } => {
                out.push(INSERT);
                out.extend_from_slice(&slot.to_le_bytes());
                put_bytes(out, key.as_ref());
                put_bytes(out, payload.as_ref());
            }
            PageOp::Delete { slot } => {
                out.push(DELETE);
                out.extend_from_slice(&slot.to_le_bytes());
            }
            PageOp::Replace { slot, payload } => {
                out.push(REPLACE);
                out.extend_from_slice(&slot.to_le_bytes());
                put_bytes(out, payload.as_ref());
            }
            PageOp::Patch { slot, pieces } => {
                out.push(PATCH);
                out.extend_from_slice(&slot.to_le_bytes());
                put_bytes(out, pieces.as_ref());
            }
            PageOp::Truncate { from } => {
                out.push(TRUNCATE);
                out.extend_from_slice(&from.to_le_bytes());
            }
            PageOp::SetLinks { left, right } => {
                out.push(SET_LINKS);
                out.extend_from_slice(&left.to_le_bytes());
                out.extend_from_slice(&right.to_le_bytes());
            }
            PageOp::SetLeftmost { child } => {
                out.push(SET_LEFTMOST);
                out.extend_from_slice(&child.to_le_bytes());
            }
            PageOp::SetChild { slot, child } => {
                out.push(SET_CHILD);
                out.extend_from_slice(&slot.to_le_bytes());
                out.extend_from_slice(&child.to_le_bytes());
            }
            PageOp::InitFree { next } => {
                out.push(INIT_FREE);
                out.extend_from_slice(&next.to_le_bytes());
            }
            PageOp::InitMeta { page_size } => {
                out.push(INIT_META);
                out.extend_from_slice(&page_size.to_le_bytes());
            }
            PageOp::MetaAlloc {
                high_water,
                free_head,
                free_count,
            } => {
                out.push(META_ALLOC);
                for value in [high_water, free_head, free_count] {
                    out.extend_from_slice(&value.to_le_bytes());
                }
            }
            PageOp::MetaAddTree { name, root } => {
                out.push(META_ADD_TREE);
                put_bytes(out, name.as_ref());
                out.extend_from_slice(&root.to_le_bytes());
            }
        }
    }

    /// Whether the operation sets the whole page (no need to read the old page).
    #[must_use]
    pub fn defines_page(&self) -> bool {
        matches!(
            self,
            PageOp::InitNode { .. }
                | PageOp::Image { .. }
                | PageOp::InitFree { .. }
                | PageOp::InitMeta { .. }
        )
    }
}

impl PageOp {
    /// Decodes an operation; the whole input must be consumed.
    ///
    /// # Errors
    /// [`Error::CorruptLog`] for malformed bytes (never panics).
    pub fn decode(bytes: &[u8]) -> Result<PageOp> {
        let mut reader = Reader { bytes, at: 0 };
        let op = reader.op()?;
        if reader.at != bytes.len() {
            return Err(bad_op("trailing bytes"));
        }
        Ok(op)
    }
}

fn bad_op(why: &str) -> Error {
    Error::CorruptLog {
        offset: 0,
        reason: format!("malformed page operation: {why}"),
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(len).ok_or_else(|| bad_op("length"))?;
        let slice = self
            .bytes
            .get(self.at..end)
            .ok_or_else(|| bad_op("truncated"))?;
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(get_u16(self.take(2)?, 0))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(get_u32(self.take(4)?, 0))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(super::node::get_u64(self.take(8)?, 0))
    }
    fn bytes(&mut self) -> Result<Vec<u8>> {
        let len = usize::from(self.u16()?);
        Ok(self.take(len)?.to_vec())
    }

    fn op(&mut self) -> Result<PageOp> {
        Ok(match self.u8()? {
            INIT_NODE => {
                let kind = self.u8()?;
                if kind != KIND_LEAF && kind != KIND_INNER {
                    return Err(bad_op("node kind"));
                }
                PageOp::InitNode {
                    leaf: kind == KIND_LEAF,
                    level: self.u8()?,
                    tree: self.u32()?,
                    left: self.u64()?,
                    right: self.u64()?,
                    leftmost: self.u64()?,
                }
            }
            IMAGE => PageOp::Image {
                head: self.bytes()?,
                tail_at: self.u16()?,
                tail: self.bytes()?,
            },
            INSERT => PageOp::Insert {
                slot: self.u16()?,
                key: self.bytes()?,
                payload: self.bytes()?,
            },
            DELETE => PageOp::Delete { slot: self.u16()? },
            REPLACE => PageOp::Replace {
                slot: self.u16()?,
                payload: self.bytes()?,
            },
            TRUNCATE => PageOp::Truncate { from: self.u16()? },
            PATCH => PageOp::Patch {
                slot: self.u16()?,
                pieces: self.bytes()?,
            },
            SET_LINKS => PageOp::SetLinks {
                left: self.u64()?,
                right: self.u64()?,
            },
            SET_LEFTMOST => PageOp::SetLeftmost { child: self.u64()? },
            SET_CHILD => PageOp::SetChild {
                slot: self.u16()?,
                child: self.u64()?,
            },
            INIT_FREE => PageOp::InitFree { next: self.u64()? },
            INIT_META => PageOp::InitMeta {
                page_size: self.u32()?,
            },
            META_ALLOC => PageOp::MetaAlloc {
                high_water: self.u64()?,
                free_head: self.u64()?,
                free_count: self.u64()?,
            },
            META_ADD_TREE => PageOp::MetaAddTree {
                name: self.bytes()?,
                root: self.u64()?,
            },
            other => return Err(bad_op(&format!("unknown code {other}"))),
        })
    }
}

fn set_u16(page: &mut [u8], at: usize, value: usize) {
    assert!(u16::try_from(value).is_ok(), "node field fits a u16");
    page[at..at + 2].copy_from_slice(&(value as u16).to_le_bytes());
}

fn set_u64(page: &mut [u8], at: usize, value: u64) {
    page[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

/// Applies `op` to page `id` (the whole page, header included).
///
/// # Errors
/// [`Error::CorruptPage`] when the page is not what the operation needs or the operation
/// does not fit it.
pub fn apply(id: PageId, page: &mut [u8], op: &PageOp) -> Result<()> {
    apply_op(id, page, op)
}

/// [`apply`] for an operation with operands of any byte type (e.g. borrowed).
///
/// # Errors
/// As [`apply`].
pub fn apply_op<B: AsRef<[u8]>>(id: PageId, page: &mut [u8], op: &PageOp<B>) -> Result<()> {
    match op {
        PageOp::InitNode {
            leaf,
            level,
            tree,
            left,
            right,
            leftmost,
        } => {
            if *leaf != (*level == 0) {
                return Err(corrupt(id, format!("init of a node at level {level}")));
            }
            page[PAGE_HEADER_SIZE..].fill(0);
            page[KIND_AT] = if *leaf { KIND_LEAF } else { KIND_INNER };
            page[LEVEL_AT] = *level;
            let size = page.len();
            set_u16(page, CELL_START_AT, size);
            page[TREE_AT..TREE_AT + 4].copy_from_slice(&tree.to_le_bytes());
            set_u64(page, LEFT_AT, *left);
            set_u64(page, RIGHT_AT, *right);
            set_u64(page, LEFTMOST_AT, *leftmost);
            Ok(())
        }
        PageOp::Image {
            head,
            tail_at,
            tail,
        } => apply_image(
            id,
            page,
            head.as_ref(),
            usize::from(*tail_at),
            tail.as_ref(),
        ),
        PageOp::Insert { slot, key, payload } => {
            insert_cell(id, page, usize::from(*slot), key.as_ref(), payload.as_ref())
        }
        PageOp::Delete { slot } => delete_cell(id, page, usize::from(*slot)),
        PageOp::Replace { slot, payload } => {
            replace_payload(id, page, usize::from(*slot), payload.as_ref())
        }
        PageOp::Patch { slot, pieces } => {
            patch_payload(id, page, usize::from(*slot), pieces.as_ref())
        }
        PageOp::Truncate { from } => truncate(id, page, usize::from(*from)),
        PageOp::SetLinks { left, right } => {
            NodeRef::new(id, page)?;
            set_u64(page, LEFT_AT, *left);
            set_u64(page, RIGHT_AT, *right);
            Ok(())
        }
        PageOp::SetLeftmost { child } => {
            inner_node(id, page)?;
            set_u64(page, LEFTMOST_AT, *child);
            Ok(())
        }
        PageOp::SetChild { slot, child } => set_child(id, page, usize::from(*slot), *child),
        PageOp::InitFree { next } => {
            page[PAGE_HEADER_SIZE..].fill(0);
            page[KIND_AT] = KIND_FREE;
            set_u64(page, NEXT_FREE_AT, *next);
            Ok(())
        }
        PageOp::InitMeta { page_size } => {
            if *page_size as usize != page.len() {
                return Err(corrupt(id, format!("meta init for {page_size}-byte pages")));
            }
            page[PAGE_HEADER_SIZE..].fill(0);
            page[KIND_AT] = KIND_META;
            page[MAGIC_AT..MAGIC_AT + 4].copy_from_slice(&META_MAGIC);
            page[VERSION_AT..VERSION_AT + 4].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
            page[PAGE_SIZE_AT..PAGE_SIZE_AT + 4].copy_from_slice(&page_size.to_le_bytes());
            set_u64(page, HIGH_WATER_AT, 1);
            Ok(())
        }
        PageOp::MetaAlloc {
            high_water,
            free_head,
            free_count,
        } => {
            super::meta::decode_allocation(page)?;
            set_u64(page, HIGH_WATER_AT, *high_water);
            set_u64(page, FREE_HEAD_AT, *free_head);
            set_u64(page, FREE_COUNT_AT, *free_count);
            Ok(())
        }
        PageOp::MetaAddTree { name, root } => add_tree(id, page, name.as_ref(), *root),
    }
}

fn apply_image(
    id: PageId,
    page: &mut [u8],
    head: &[u8],
    tail_at: usize,
    tail: &[u8],
) -> Result<()> {
    let size = page.len();
    if PAGE_HEADER_SIZE + head.len() > tail_at || tail_at + tail.len() != size {
        return Err(corrupt(
            id,
            format!(
                "image of {} + {} bytes at {tail_at} does not fit a {size}-byte page",
                head.len(),
                tail.len()
            ),
        ));
    }
    page[PAGE_HEADER_SIZE..].fill(0);
    page[PAGE_HEADER_SIZE..PAGE_HEADER_SIZE + head.len()].copy_from_slice(head);
    page[tail_at..].copy_from_slice(tail);
    Ok(())
}

/// The compact image of a node (or of the meta page: its used bytes).
///
/// # Errors
/// [`Error::CorruptPage`] when the page is neither a node nor the meta page.
pub fn image_of(id: PageId, page: &[u8]) -> Result<PageOp> {
    Ok(match image_view(id, page)? {
        PageOp::Image {
            head,
            tail_at,
            tail,
        } => PageOp::Image {
            head: head.to_vec(),
            tail_at,
            tail: tail.to_vec(),
        },
        PageOp::InitFree { next } => PageOp::InitFree { next },
        _ => unreachable!("image_view gives an image or a free page"),
    })
}

/// [`image_of`] borrowing the page's bytes instead of copying them (a split builds its images
/// in a reused buffer and logs them from there).
///
/// # Errors
/// As [`image_of`].
pub fn image_view(id: PageId, page: &[u8]) -> Result<PageOp<&[u8]>> {
    let size = page.len();
    if page[KIND_AT] == KIND_META {
        let meta = super::meta::decode(page)?;
        return Ok(PageOp::Image {
            head: &page[PAGE_HEADER_SIZE..meta.catalog_end],
            tail_at: size as u16,
            tail: &[],
        });
    }
    if page[KIND_AT] == KIND_FREE || super::meta::is_blank(page) {
        let next = super::node::get_u64(page, NEXT_FREE_AT);
        return Ok(if page[KIND_AT] == KIND_FREE {
            PageOp::InitFree { next }
        } else {
            PageOp::Image {
                head: &[],
                tail_at: size as u16,
                tail: &[],
            }
        });
    }
    let node = NodeRef::new(id, page)?;
    let slots_end = SLOTS_AT + SLOT_SIZE * node.count();
    let cell_start = node.cell_start();
    Ok(PageOp::Image {
        head: &page[PAGE_HEADER_SIZE..slots_end],
        tail_at: cell_start as u16,
        tail: &page[cell_start..],
    })
}

fn inner_node(id: PageId, page: &[u8]) -> Result<NodeRef<'_>> {
    let node = NodeRef::new(id, page)?;
    if node.is_leaf() {
        return Err(corrupt(id, "an inner-node operation on a leaf"));
    }
    Ok(node)
}

/// Rewrites the cells contiguously at the page end, in slot order; garbage becomes 0.
fn compact(id: PageId, page: &mut [u8]) -> Result<()> {
    let mut cells = crate::spare::take(&COMPACT_BUFFER);
    let result = compact_with(id, page, &mut cells);
    crate::spare::keep(&COMPACT_BUFFER, cells);
    result
}

std::thread_local! {
    /// The cell copy [`compact`] makes, kept for the thread's next compaction (at most a page).
    static COMPACT_BUFFER: std::cell::Cell<Option<Vec<u8>>> = const { std::cell::Cell::new(None) };
}

/// [`compact`] with `cells` as its copy of the cells (cleared first).
fn compact_with(id: PageId, page: &mut [u8], cells: &mut Vec<u8>) -> Result<()> {
    let node = NodeRef::new(id, page)?;
    let count = node.count();
    cells.clear();
    cells.reserve(page.len() - node.cell_start());
    for slot in 0..count {
        let (key, payload) = node.cell(slot)?;
        cells.extend_from_slice(&(key.len() as u16).to_le_bytes());
        cells.extend_from_slice(&(payload.len() as u16).to_le_bytes());
        cells.extend_from_slice(key);
        cells.extend_from_slice(payload);
    }
    let size = page.len();
    let mut at = size;
    let mut read = 0;
    // Cells go downward from the page end in slot order (slot 0 highest); each cell's length
    // comes from its own header in the copy.
    for slot in 0..count {
        let key_len = usize::from(get_u16(cells, read));
        let payload_len = usize::from(get_u16(cells, read + 2));
        let len = CELL_OVERHEAD + key_len + payload_len;
        at -= len;
        page[at..at + len].copy_from_slice(&cells[read..read + len]);
        read += len;
        set_u16(page, SLOTS_AT + SLOT_SIZE * slot, at);
    }
    debug_assert_eq!(read, cells.len(), "every copied cell is written back");
    let slots_end = SLOTS_AT + SLOT_SIZE * count;
    page[slots_end..at].fill(0);
    set_u16(page, CELL_START_AT, at);
    set_u16(page, GARBAGE_AT, 0);
    reset_prefix(id, page)
}

/// Reserves `len` bytes in the cell area (compacting if needed); returns their offset.
fn allocate_cell(id: PageId, page: &mut [u8], len: usize, new_slots: usize) -> Result<usize> {
    let node = NodeRef::new(id, page)?;
    let slots_end = SLOTS_AT + SLOT_SIZE * (node.count() + new_slots);
    let mut cell_start = node.cell_start();
    if cell_start < slots_end + len {
        if node.free_space() < len + SLOT_SIZE * new_slots {
            return Err(corrupt(
                id,
                format!(
                    "a {len}-byte cell does not fit ({} bytes free)",
                    node.free_space()
                ),
            ));
        }
        compact(id, page)?;
        cell_start = usize::from(get_u16(page, CELL_START_AT));
    }
    assert!(cell_start >= slots_end + len, "room after compaction");
    let at = cell_start - len;
    set_u16(page, CELL_START_AT, at);
    Ok(at)
}

fn write_cell(page: &mut [u8], at: usize, key: &[u8], payload: &[u8]) {
    set_u16(page, at, key.len());
    set_u16(page, at + 2, payload.len());
    let key_at = at + CELL_OVERHEAD;
    page[key_at..key_at + key.len()].copy_from_slice(key);
    page[key_at + key.len()..key_at + key.len() + payload.len()].copy_from_slice(payload);
}

fn insert_cell(id: PageId, page: &mut [u8], slot: usize, key: &[u8], payload: &[u8]) -> Result<()> {
    let node = NodeRef::new(id, page)?;
    let count = node.count();
    if slot > count {
        return Err(corrupt(id, format!("insert at slot {slot} of {count}")));
    }
    if key.len() > usize::from(u16::MAX) || payload.len() > usize::from(u16::MAX) {
        return Err(corrupt(id, "cell operand too large"));
    }
    let len = cell_footprint(key.len(), payload.len()) - SLOT_SIZE;
    let at = allocate_cell(id, page, len, 1)?;
    write_cell(page, at, key, payload);
    let prefix = prefix_after_insert(&NodeRef::new(id, page)?, key)?;
    if prefix != usize::from(get_u16(page, PREFIX_AT)) {
        rewrite_heads(id, page, prefix)?;
    }
    let slot_at = SLOTS_AT + SLOT_SIZE * slot;
    let slots_end = SLOTS_AT + SLOT_SIZE * count;
    page.copy_within(slot_at..slots_end, slot_at + SLOT_SIZE);
    write_slot(page, slot, at, key_head(key, prefix));
    set_u16(page, COUNT_AT, count + 1);
    Ok(())
}

/// Fills the empty node `page` (as `InitNode` leaves it) with `cells`, whose keys ascend
/// strictly: the page that an `Insert` of each cell at the end, in order, would leave, byte for
/// byte, built without what each insert repeats (decoding the node, shifting slots, checking
/// and rewriting the prefix). The node prefix is set once, to the common prefix of the first
/// and last key (the keys ascend, so every key shares it), and each head written once. A split
/// builds its new nodes this way (`smo.rs`).
///
/// # Errors
/// [`Error::CorruptPage`] when the node is not empty, the keys do not ascend, or the cells do
/// not fit.
pub(crate) fn fill_sorted<'c>(
    id: PageId,
    page: &mut [u8],
    cells: impl IntoIterator<Item = (&'c [u8], &'c [u8])>,
) -> Result<()> {
    let node = NodeRef::new(id, page)?;
    if node.count() != 0 {
        return Err(corrupt(id, "sorted fill of a node that is not empty"));
    }
    let mut cell_start = node.cell_start();
    let mut count = 0;
    let mut previous: Option<&[u8]> = None;
    for (key, payload) in cells {
        if previous.is_some_and(|previous| key <= previous) {
            return Err(corrupt(
                id,
                format!("sorted fill: key {count} does not ascend"),
            ));
        }
        if key.len() > usize::from(u16::MAX) || payload.len() > usize::from(u16::MAX) {
            return Err(corrupt(id, "cell operand too large"));
        }
        let len = cell_footprint(key.len(), payload.len()) - SLOT_SIZE;
        if cell_start < SLOTS_AT + SLOT_SIZE * (count + 1) + len {
            return Err(corrupt(
                id,
                format!("sorted fill: cell {count} ({len} bytes) does not fit"),
            ));
        }
        cell_start -= len;
        write_cell(page, cell_start, key, payload);
        set_u16(page, SLOTS_AT + SLOT_SIZE * count, cell_start);
        count += 1;
        previous = Some(key);
    }
    set_u16(page, CELL_START_AT, cell_start);
    set_u16(page, COUNT_AT, count);
    let key_at = |page: &[u8], slot: usize| {
        let offset = usize::from(get_u16(page, SLOTS_AT + SLOT_SIZE * slot));
        let len = usize::from(get_u16(page, offset));
        offset + CELL_OVERHEAD..offset + CELL_OVERHEAD + len
    };
    let prefix = match count {
        0 => return Ok(()),
        1 => key_at(page, 0).len(),
        _ => common_prefix(&page[key_at(page, 0)], &page[key_at(page, count - 1)]),
    };
    for slot in 0..count {
        let head = key_head(&page[key_at(page, slot)], prefix);
        let at = SLOTS_AT + SLOT_SIZE * slot + HEAD_AT;
        page[at..at + HEAD_SIZE].copy_from_slice(&head.to_be_bytes());
    }
    set_u16(page, PREFIX_AT, prefix);
    Ok(())
}

/// The node prefix once `key` is inserted into `node` (before its slot is added): the key's
/// length in an empty node, else the old prefix capped at the key's common prefix with slot 0's
/// key (every key shares the old prefix with slot 0's, so all then share the new one).
///
/// # Errors
/// As [`NodeRef::key`].
pub(crate) fn prefix_after_insert(node: &NodeRef<'_>, key: &[u8]) -> Result<usize> {
    if node.count() == 0 {
        return Ok(key.len());
    }
    Ok(node.prefix().min(common_prefix(key, node.key(0)?)))
}

/// Writes slot `slot`: the cell offset and the key head.
fn write_slot(page: &mut [u8], slot: usize, offset: usize, head: u32) {
    let slot_at = SLOTS_AT + SLOT_SIZE * slot;
    set_u16(page, slot_at, offset);
    page[slot_at + HEAD_AT..slot_at + HEAD_AT + HEAD_SIZE].copy_from_slice(&head.to_be_bytes());
}

/// Slots whose heads [`rewrite_heads`] computes before writing them (a stack buffer).
const HEADS_PER_ROUND: usize = 64;

/// Sets the node prefix to `prefix` and rewrites every slot's head from its key, in rounds of
/// [`HEADS_PER_ROUND`] slots (read the keys, then write the heads: no allocation).
fn rewrite_heads(id: PageId, page: &mut [u8], prefix: usize) -> Result<()> {
    let count = NodeRef::new(id, page)?.count();
    let mut heads = [0u32; HEADS_PER_ROUND];
    for first in (0..count).step_by(HEADS_PER_ROUND) {
        let slots = first..count.min(first + HEADS_PER_ROUND);
        let node = NodeRef::new(id, page)?;
        for (head, slot) in heads.iter_mut().zip(slots.clone()) {
            *head = key_head(node.key(slot)?, prefix);
        }
        for (head, slot) in heads.iter().zip(slots) {
            let at = SLOTS_AT + SLOT_SIZE * slot + HEAD_AT;
            page[at..at + HEAD_SIZE].copy_from_slice(&head.to_be_bytes());
        }
    }
    set_u16(page, PREFIX_AT, prefix);
    Ok(())
}

/// Recomputes the node prefix of a node whose keys ascend (the common prefix of its first and
/// last key, 0 when empty) and rewrites every head.
fn reset_prefix(id: PageId, page: &mut [u8]) -> Result<()> {
    let node = NodeRef::new(id, page)?;
    let prefix = match node.count() {
        0 => 0,
        count => common_prefix(node.key(0)?, node.key(count - 1)?),
    };
    rewrite_heads(id, page, prefix)
}

fn cell_len(id: PageId, page: &[u8], slot: usize) -> Result<usize> {
    let node = NodeRef::new(id, page)?;
    let (key, payload) = node.cell(slot)?;
    Ok(CELL_OVERHEAD + key.len() + payload.len())
}

fn add_garbage(page: &mut [u8], bytes: usize) {
    let garbage = usize::from(get_u16(page, GARBAGE_AT)) + bytes;
    set_u16(page, GARBAGE_AT, garbage);
}

fn reset_if_empty(page: &mut [u8]) {
    if get_u16(page, COUNT_AT) == 0 {
        let size = page.len();
        page[SLOTS_AT..].fill(0);
        set_u16(page, CELL_START_AT, size);
        set_u16(page, GARBAGE_AT, 0);
        set_u16(page, PREFIX_AT, 0);
    }
}

fn delete_cell(id: PageId, page: &mut [u8], slot: usize) -> Result<()> {
    let len = cell_len(id, page, slot)?;
    let count = usize::from(get_u16(page, COUNT_AT));
    let slot_at = SLOTS_AT + SLOT_SIZE * slot;
    let slots_end = SLOTS_AT + SLOT_SIZE * count;
    page.copy_within(slot_at + SLOT_SIZE..slots_end, slot_at);
    page[slots_end - SLOT_SIZE..slots_end].fill(0);
    set_u16(page, COUNT_AT, count - 1);
    add_garbage(page, len);
    reset_if_empty(page);
    Ok(())
}

fn replace_payload(id: PageId, page: &mut [u8], slot: usize, payload: &[u8]) -> Result<()> {
    let node = NodeRef::new(id, page)?;
    let (key, old) = node.cell(slot)?;
    if old.len() == payload.len() {
        let offset = usize::from(get_u16(page, SLOTS_AT + SLOT_SIZE * slot));
        let at = offset + CELL_OVERHEAD + key.len();
        page[at..at + payload.len()].copy_from_slice(payload);
        return Ok(());
    }
    let key = key.to_vec();
    let old_len = CELL_OVERHEAD + key.len() + old.len();
    if node.free_space() + old_len < CELL_OVERHEAD + key.len() + payload.len() {
        return Err(corrupt(
            id,
            format!("replacing a {}-byte payload does not fit", payload.len()),
        ));
    }
    // The old cell becomes garbage first, so compaction can reclaim it.
    let count = node.count();
    let slot_at = SLOTS_AT + SLOT_SIZE * slot;
    let slots_end = SLOTS_AT + SLOT_SIZE * count;
    page.copy_within(slot_at + SLOT_SIZE..slots_end, slot_at);
    set_u16(page, COUNT_AT, count - 1);
    add_garbage(page, old_len);
    insert_cell(id, page, slot, &key, payload)
}

fn patch_payload(id: PageId, page: &mut [u8], slot: usize, pieces: &[u8]) -> Result<()> {
    let node = NodeRef::new(id, page)?;
    let (key, payload) = node.cell(slot)?;
    let offset = usize::from(get_u16(page, SLOTS_AT + SLOT_SIZE * slot));
    let at = offset + CELL_OVERHEAD + key.len();
    let end = at + payload.len();
    super::patch::apply(&mut page[at..end], pieces)
        .map_err(|why| corrupt(id, format!("patch of slot {slot}: {why}")))
}

fn truncate(id: PageId, page: &mut [u8], from: usize) -> Result<()> {
    let node = NodeRef::new(id, page)?;
    let count = node.count();
    if from > count {
        return Err(corrupt(id, format!("truncate from {from} of {count}")));
    }
    let mut dropped = 0;
    for slot in from..count {
        let (key, payload) = node.cell(slot)?;
        dropped += CELL_OVERHEAD + key.len() + payload.len();
    }
    page[SLOTS_AT + SLOT_SIZE * from..SLOTS_AT + SLOT_SIZE * count].fill(0);
    set_u16(page, COUNT_AT, from);
    add_garbage(page, dropped);
    reset_if_empty(page);
    reset_prefix(id, page)
}

fn set_child(id: PageId, page: &mut [u8], slot: usize, child: PageId) -> Result<()> {
    let node = inner_node(id, page)?;
    node.cell_child(slot)?;
    let (key, _) = node.cell(slot)?;
    let offset = usize::from(get_u16(page, SLOTS_AT + SLOT_SIZE * slot));
    let at = offset + CELL_OVERHEAD + key.len();
    set_u64(page, at, child);
    Ok(())
}

fn add_tree(id: PageId, page: &mut [u8], name: &[u8], root: PageId) -> Result<()> {
    let meta = super::meta::decode(page)?;
    if name.is_empty() || name.len() > MAX_NAME || std::str::from_utf8(name).is_err() {
        return Err(corrupt(id, "catalog name is empty, too long or not UTF-8"));
    }
    let at = meta.catalog_end;
    if at + 1 + name.len() + 8 > page.len() {
        return Err(corrupt(id, "the catalog is full"));
    }
    page[at] = name.len() as u8;
    page[at + 1..at + 1 + name.len()].copy_from_slice(name);
    set_u64(page, at + 1 + name.len(), root);
    let count = get_u32(page, TREE_COUNT_AT) + 1;
    page[TREE_COUNT_AT..TREE_COUNT_AT + 4].copy_from_slice(&count.to_le_bytes());
    Ok(())
}

/// Whether the catalog has room for `name`.
#[must_use]
pub fn catalog_has_room(meta: &super::meta::Meta, page_size: usize, name: &str) -> bool {
    meta.catalog_end + 1 + name.len() + 8 <= page_size
}

/// The redo hook of the B+-tree (passed to `Database::open_with_redo`).
#[derive(Debug, Clone, Copy, Default)]
pub struct BTreeRedo;

impl PageOpRedo for BTreeRedo {
    fn apply(&self, page: PageId, image: &mut [u8], op: &[u8]) -> Result<()> {
        apply(page, image, &PageOp::decode(op)?)
    }

    fn defines_page(&self, op: &[u8]) -> bool {
        PageOp::decode(op).is_ok_and(|op| op.defines_page())
    }

    fn format_page(&self) -> Option<PageId> {
        Some(super::meta::META_PAGE)
    }

    fn check_format(&self, image: &[u8]) -> Result<()> {
        super::meta::check_stored_version(image)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(size: usize) -> Vec<u8> {
        let mut page = vec![0u8; size];
        apply(
            5,
            &mut page,
            &PageOp::InitNode {
                leaf: true,
                level: 0,
                tree: 1,
                left: 0,
                right: 0,
                leftmost: 0,
            },
        )
        .unwrap();
        page
    }

    #[test]
    fn operations_round_trip_through_their_encoding() {
        let ops = [
            PageOp::InitNode {
                leaf: false,
                level: 2,
                tree: 3,
                left: 4,
                right: 5,
                leftmost: 6,
            },
            PageOp::Image {
                head: vec![1, 2],
                tail_at: 4000,
                tail: vec![3; 96],
            },
            PageOp::Insert {
                slot: 7,
                key: b"key".to_vec(),
                payload: b"value".to_vec(),
            },
            PageOp::Delete { slot: 8 },
            PageOp::Replace {
                slot: 9,
                payload: vec![],
            },
            PageOp::Truncate { from: 10 },
            PageOp::Patch {
                slot: 21,
                pieces: vec![2, 0, 1, 0, 9],
            },
            PageOp::SetLinks {
                left: 11,
                right: 12,
            },
            PageOp::SetLeftmost { child: 13 },
            PageOp::SetChild {
                slot: 14,
                child: 15,
            },
            PageOp::InitFree { next: 16 },
            PageOp::InitMeta { page_size: 4096 },
            PageOp::MetaAlloc {
                high_water: 17,
                free_head: 18,
                free_count: 19,
            },
            PageOp::MetaAddTree {
                name: b"t".to_vec(),
                root: 20,
            },
        ];
        for op in ops {
            let bytes = op.encode();
            assert_eq!(PageOp::decode(&bytes).unwrap(), op);
            assert!(PageOp::decode(&bytes[..bytes.len() - 1]).is_err());
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(PageOp::decode(&longer).is_err());
        }
        assert!(PageOp::decode(&[99]).is_err());
        assert!(PageOp::decode(&[]).is_err());
    }

    #[test]
    fn a_prefix_change_rewrites_every_head_past_one_round_of_slots() {
        let mut page = leaf(16384);
        let slots = 3 * HEADS_PER_ROUND + 5;
        for slot in 0..slots {
            let op = PageOp::Insert {
                slot: slot as u16,
                key: format!("customer-name-{slot:05}").into_bytes(),
                payload: vec![b'v'; 8],
            };
            apply(5, &mut page, &op).unwrap();
        }
        let prefix_of = |page: &[u8]| usize::from(get_u16(page, PREFIX_AT));
        assert_eq!(prefix_of(&page), "customer-name-00".len());
        crate::btree::check::check_heads(&NodeRef::new(5, &page).unwrap()).unwrap();
        // A key below the prefix shortens it to nothing: every head is rewritten.
        let op = PageOp::Insert {
            slot: 0,
            key: b"a".to_vec(),
            payload: Vec::new(),
        };
        apply(5, &mut page, &op).unwrap();
        assert_eq!(prefix_of(&page), 0);
        crate::btree::check::check_heads(&NodeRef::new(5, &page).unwrap()).unwrap();
        // Dropping the tail and then that key lets the prefix grow back (truncate resets it).
        apply(5, &mut page, &PageOp::Delete { slot: 0 }).unwrap();
        let from = (2 * HEADS_PER_ROUND + 1) as u16;
        apply(5, &mut page, &PageOp::Truncate { from }).unwrap();
        let node = NodeRef::new(5, &page).unwrap();
        assert_eq!(node.count(), usize::from(from));
        assert_eq!(prefix_of(&page), "customer-name-00".len());
        crate::btree::check::check_heads(&node).unwrap();
    }

    #[test]
    fn inserts_deletes_and_replaces_keep_order_and_space() {
        let mut page = leaf(4096);
        for (slot, key) in [(0u16, "b"), (0, "a"), (2, "d"), (2, "c")] {
            let op = PageOp::Insert {
                slot,
                key: key.as_bytes().to_vec(),
                payload: vec![b'v'; 100],
            };
            apply(5, &mut page, &op).unwrap();
        }
        let node = NodeRef::new(5, &page).unwrap();
        let keys: Vec<&[u8]> = (0..4).map(|s| node.key(s).unwrap()).collect();
        assert_eq!(keys, [b"a", b"b", b"c", b"d"]);
        let free_before = node.free_space();
        apply(5, &mut page, &PageOp::Delete { slot: 1 }).unwrap();
        apply(
            5,
            &mut page,
            &PageOp::Replace {
                slot: 0,
                payload: vec![b'w'; 300],
            },
        )
        .unwrap();
        let node = NodeRef::new(5, &page).unwrap();
        assert_eq!(node.count(), 3);
        assert_eq!(node.cell(0).unwrap().1, &[b'w'; 300][..]);
        // The deleted cell (4 + 1 + 100 bytes) and its slot (6) come back; the payload grew 200.
        assert_eq!(node.free_space(), free_before + 111 - 200);
        // A patch overwrites bytes of one payload in place; one reaching past it changes nothing.
        let (mut pieces, mut undo) = (Vec::new(), Vec::new());
        let mut patched = vec![b'w'; 300];
        patched[3] = b'x';
        patched[299] = b'y';
        assert!(super::super::patch::diff_into(
            &[b'w'; 300],
            &patched,
            &mut pieces,
            &mut undo
        ));
        let free = node.free_space();
        apply(5, &mut page, &PageOp::Patch { slot: 0, pieces }).unwrap();
        let node = NodeRef::new(5, &page).unwrap();
        assert_eq!(node.cell(0).unwrap().1, &patched[..]);
        assert_eq!(node.free_space(), free);
        let past_the_end = PageOp::Patch {
            slot: 1,
            pieces: vec![99, 0, 3, 0, 1, 2, 3],
        };
        let copy = page.clone();
        assert!(apply(5, &mut page, &past_the_end).is_err());
        assert_eq!(page, copy);
        apply(
            5,
            &mut page,
            &PageOp::Patch {
                slot: 0,
                pieces: undo,
            },
        )
        .unwrap();
        let node = NodeRef::new(5, &page).unwrap();
        assert_eq!(node.cell(0).unwrap().1, &[b'w'; 300][..]);
        // Fill until it no longer fits; compaction reclaims garbage along the way.
        let mut n = 0u32;
        loop {
            let key = format!("k{n:05}");
            let node = NodeRef::new(5, &page).unwrap();
            if !node.fits(key.len(), 100) {
                break;
            }
            let slot = node.search(key.as_bytes()).unwrap().unwrap_err() as u16;
            apply(
                5,
                &mut page,
                &PageOp::Insert {
                    slot,
                    key: key.into_bytes(),
                    payload: vec![1; 100],
                },
            )
            .unwrap();
            n += 1;
        }
        assert!(n > 20);
        let too_big = PageOp::Insert {
            slot: 0,
            key: b"0".to_vec(),
            payload: vec![0; 200],
        };
        assert!(apply(5, &mut page, &too_big).is_err());
        // An image reproduces the page exactly.
        let image = image_of(5, &page).unwrap();
        let mut copy = vec![0xAAu8; 4096];
        apply(5, &mut copy, &PageOp::decode(&image.encode()).unwrap()).unwrap();
        assert_eq!(copy[PAGE_HEADER_SIZE..], page[PAGE_HEADER_SIZE..]);
        apply(5, &mut page, &PageOp::Truncate { from: 0 }).unwrap();
        assert_eq!(
            NodeRef::new(5, &page).unwrap().free_space(),
            4096 - SLOTS_AT
        );
    }

    #[test]
    fn meta_operations_build_the_catalog() {
        let mut page = vec![0u8; 4096];
        apply(0, &mut page, &PageOp::InitMeta { page_size: 4096 }).unwrap();
        apply(
            0,
            &mut page,
            &PageOp::MetaAddTree {
                name: b"orders".to_vec(),
                root: 1,
            },
        )
        .unwrap();
        apply(
            0,
            &mut page,
            &PageOp::MetaAlloc {
                high_water: 2,
                free_head: 0,
                free_count: 0,
            },
        )
        .unwrap();
        let meta = super::super::meta::decode(&page).unwrap();
        assert_eq!(meta.trees.len(), 1);
        assert_eq!(meta.trees[0].name, "orders");
        assert_eq!(meta.high_water, 2);
        let image = image_of(0, &page).unwrap();
        let mut copy = vec![0u8; 4096];
        apply(0, &mut copy, &image).unwrap();
        assert_eq!(super::super::meta::decode(&copy).unwrap(), meta);
        assert!(apply(0, &mut page, &PageOp::Delete { slot: 0 }).is_err());
    }

    mod sorted_fill {
        use super::*;
        use proptest::prelude::*;

        fn empty(leaf: bool) -> Vec<u8> {
            let mut page = vec![0u8; 4096];
            let init = PageOp::InitNode {
                leaf,
                level: u8::from(!leaf),
                tree: 1,
                left: 2,
                right: 3,
                leftmost: 4,
            };
            apply(7, &mut page, &init).unwrap();
            page
        }

        /// Ascending keys with long shared prefixes, zero bytes and keys that prefix others.
        fn cells() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
            let byte = prop::sample::select(vec![0u8, 1, b'k', 0xff]);
            (
                prop::collection::vec(any::<u8>(), 0..12),
                prop::collection::vec((prop::collection::vec(byte, 0..6), 0..60usize), 0..70),
            )
                .prop_map(|(base, drawn)| {
                    let mut cells: Vec<(Vec<u8>, Vec<u8>)> = drawn
                        .into_iter()
                        .map(|(tail, len)| ([base.as_slice(), &tail].concat(), vec![b'v'; len]))
                        .collect();
                    cells.sort();
                    cells.dedup_by(|a, b| a.0 == b.0);
                    cells
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(300))]

            /// A sorted fill leaves the page, byte for byte, that inserts at the end leave (as
            /// many cells as fit), and refuses one more cell than fits.
            #[test]
            fn fill_equals_inserts_in_order(leaf in any::<bool>(), cells in cells()) {
                let mut inserted = empty(leaf);
                let mut fitting = 0;
                for (key, payload) in &cells {
                    let node = NodeRef::new(7, &inserted).unwrap();
                    if !node.fits(key.len(), payload.len()) {
                        break;
                    }
                    let op = PageOp::Insert {
                        slot: fitting as u16,
                        key: key.clone(),
                        payload: payload.clone(),
                    };
                    apply(7, &mut inserted, &op).unwrap();
                    fitting += 1;
                }
                let mut filled = empty(leaf);
                let pairs = cells[..fitting].iter().map(|(k, v)| (k.as_slice(), v.as_slice()));
                fill_sorted(7, &mut filled, pairs).unwrap();
                prop_assert!(filled == inserted);
                if fitting < cells.len() {
                    let mut over = empty(leaf);
                    let pairs = cells[..=fitting].iter().map(|(k, v)| (k.as_slice(), v.as_slice()));
                    prop_assert!(fill_sorted(7, &mut over, pairs).is_err());
                }
            }
        }

        #[test]
        fn fill_refuses_keys_out_of_order_and_a_node_in_use() {
            let mut page = empty(true);
            let pairs = [(&b"b"[..], &b"1"[..]), (&b"a"[..], &b"2"[..])];
            assert!(fill_sorted(7, &mut page, pairs).is_err());
            let mut page = empty(true);
            let twice = [(&b"a"[..], &b"1"[..]), (&b"a"[..], &b"2"[..])];
            assert!(fill_sorted(7, &mut page, twice).is_err());
            let mut page = empty(true);
            fill_sorted(7, &mut page, [(&b"a"[..], &b"1"[..])]).unwrap();
            assert_eq!(usize::from(get_u16(&page, PREFIX_AT)), 1);
            assert!(fill_sorted(7, &mut page, [(&b"b"[..], &b"1"[..])]).is_err());
            let mut empty_fill = empty(false);
            fill_sorted(7, &mut empty_fill, std::iter::empty()).unwrap();
            assert!(empty_fill == empty(false));
        }
    }
}
