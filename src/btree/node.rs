//! The B+-tree node page format (byte by byte in `docs/btree-format.md`) and read access to it.
//!
//! A node is a slotted page after the pool's 32-byte page header:
//!
//! ```text
//! offset size field
//!     32    1 kind          1 leaf, 2 inner (3 free page, 4 meta page: see meta.rs)
//!     33    1 level         0 for leaves; a parent is one above its children
//!     34    2 count         number of cells (slots)
//!     36    2 cell_start    lowest byte of the cell area; cells fill [cell_start, page_size)
//!     38    2 garbage       bytes of dead cells inside the cell area (reclaimed by compaction)
//!     40    4 tree          the tree's catalog id (checked by `flashbuf check`)
//!     44    2 prefix        p: every key of the node starts with the same p bytes
//!     46    2 reserved      zero
//!     48    8 left          leaves: left sibling page (0 = none); inner: 0
//!     56    8 right         leaves: right sibling page (0 = none); inner: 0
//!     64    8 leftmost      inner: child for keys below the first separator; leaves: 0
//!     72  6*n slots         in key order: [cell offset u16][key head: key bytes [p, p+4)]
//!     ..      free gap
//!     cell_start .. page_size: cells [key_len u16][payload_len u16][key][payload]
//! ```
//!
//! A leaf's payload is the value. An inner node's cell `i` holds separator `key_i` and (as an
//! 8-byte payload) the child for keys in `[key_i, key_{i+1})`; `leftmost` covers keys below
//! `key_0`. Page 0 is the meta page, so 0 means "no page" in links.
//!
//! Key heads (format version 2): a slot's head is its key's bytes `[p, p + 4)`, zero-padded
//! ([`key_head`]), so heads compared as big-endian `u32`s order the keys of the node and a
//! search ([`NodeRef::search`]) decodes a cell only when the heads are equal. The prefix length
//! `p` need not be the longest common prefix; `op.rs` keeps `p` and the heads (derived data)
//! with every operation, the same code forward and in redo.
//!
//! Invariants (checked by [`NodeRef::new`] for the header and by every cell access, a search
//! probe checking the key it compares; nothing here panics on a malformed page, it returns
//! [`Error::CorruptPage`]): keys strictly ascend
//! across slots; every key starts with slot 0's first `p` bytes and every slot's head is
//! [`key_head`] of its key (`flashbuf check` verifies both; a search trusts them);
//! `72 + 6 * count <= cell_start <= page_size`; every cell lies inside
//! `[cell_start, page_size)`; the bytes of live cells plus `garbage` equal
//! `page_size - cell_start`. Pages are at most 32 KiB so every offset fits in a `u16`.
//!
//! Nodes change only through [`super::op::PageOp`] (the same function applies an operation
//! forward and during redo), so this module only reads.

use crate::error::{Error, PageId, Result};

/// Offset of the node kind byte.
pub const KIND_AT: usize = 32;
/// Offset of the level byte.
pub const LEVEL_AT: usize = 33;
/// Offset of the cell count (`u16`).
pub const COUNT_AT: usize = 34;
/// Offset of `cell_start` (`u16`).
pub const CELL_START_AT: usize = 36;
/// Offset of the garbage byte count (`u16`).
pub const GARBAGE_AT: usize = 38;
/// Offset of the tree id (`u32`).
pub const TREE_AT: usize = 40;
/// Offset of the node prefix length `p` (`u16`; bytes 46..48 stay zero): every key of the
/// node shares its first `p` bytes, and slot heads are taken from byte `p` on.
pub const PREFIX_AT: usize = 44;
/// Offset of the left sibling (`u64`).
pub const LEFT_AT: usize = 48;
/// Offset of the right sibling (`u64`).
pub const RIGHT_AT: usize = 56;
/// Offset of the leftmost child (`u64`).
pub const LEFTMOST_AT: usize = 64;
/// Offset of the slot array; also the size of the node header including the page header.
pub const SLOTS_AT: usize = 72;
/// Bytes per slot: the cell offset (`u16` LE), then the key head ([`HEAD_SIZE`] bytes).
pub const SLOT_SIZE: usize = 6;
/// Bytes of a slot's key head: the key's bytes `[p, p + 4)`, zero-padded ([`key_head`]).
pub const HEAD_SIZE: usize = 4;
/// Offset of the head inside a slot.
pub const HEAD_AT: usize = 2;
/// Bytes of a cell's fixed part (key length, payload length).
pub const CELL_OVERHEAD: usize = 4;
/// Size of an inner cell's payload (the child page id).
pub const CHILD_SIZE: usize = 8;

/// Kind byte of a leaf.
pub const KIND_LEAF: u8 = 1;
/// Kind byte of an inner node.
pub const KIND_INNER: u8 = 2;
/// Kind byte of a free page (see meta.rs).
pub const KIND_FREE: u8 = 3;
/// Kind byte of the meta page (see meta.rs).
pub const KIND_META: u8 = 4;

/// Smallest page size the tree accepts.
pub const MIN_PAGE_SIZE: usize = 4096;
/// Largest page size the tree accepts (offsets are `u16`).
pub const MAX_PAGE_SIZE: usize = 32_768;
/// Upper bound on the levels of a tree (a bound for every descent loop): with at least four
/// cells per node, 2^64 keys need fewer than 33 levels.
pub const MAX_LEVELS: usize = 40;

/// Key and value size limits for a page size (see `docs/btree-format.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest key in bytes.
    pub max_key: usize,
    /// Largest value in bytes.
    pub max_value: usize,
    /// Largest cell (overhead, key, payload) plus its slot: a quarter of the node area, so a
    /// node split in two by bytes always leaves room for one more cell in either half.
    pub max_cell: usize,
}

impl Limits {
    /// The limits for `page_size`.
    ///
    /// # Errors
    /// [`Error::Config`] for a page size outside 4..=32 KiB.
    pub fn for_page(page_size: usize) -> Result<Limits> {
        if !(MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&page_size) {
            return Err(Error::Config(format!(
                "the B+-tree needs pages of {MIN_PAGE_SIZE}..={MAX_PAGE_SIZE} bytes, not {page_size}"
            )));
        }
        let max_cell = (page_size - SLOTS_AT) / 4;
        let max_key = (page_size / 16).min(1024);
        Ok(Limits {
            max_key,
            max_value: max_cell - SLOT_SIZE - CELL_OVERHEAD - max_key,
            max_cell,
        })
    }

    /// Checks a key and a value against the limits.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the size and the limit.
    pub fn check(&self, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        if key.len() > self.max_key {
            return Err(Error::InvalidArgument(format!(
                "key of {} bytes is over the limit of {} bytes",
                key.len(),
                self.max_key
            )));
        }
        if let Some(value) = value
            && value.len() > self.max_value
        {
            return Err(Error::InvalidArgument(format!(
                "value of {} bytes is over the limit of {} bytes",
                value.len(),
                self.max_value
            )));
        }
        Ok(())
    }
}

/// Bytes a cell with this key and payload takes, slot included.
#[must_use]
pub fn cell_footprint(key_len: usize, payload_len: usize) -> usize {
    SLOT_SIZE + CELL_OVERHEAD + key_len + payload_len
}

/// The head of `key` in a node of prefix length `prefix`: its bytes `[prefix, prefix + 4)`,
/// zero-padded past the key's end, as a big-endian `u32`.
///
/// Heads order keys that share their first `prefix` bytes: `key_head(a) < key_head(b)`
/// implies `a < b` (at the first differing head byte either both are key bytes, or `a` ended
/// there and `b` goes on: `a` is a proper prefix of `b`). Equal heads decide nothing ("ab" and
/// "ab\0" have the same head): the keys are then compared from byte `prefix`.
#[inline]
#[must_use]
pub fn key_head(key: &[u8], prefix: usize) -> u32 {
    let rest = key.get(prefix..).unwrap_or_default();
    if let Some(head) = rest.first_chunk::<HEAD_SIZE>() {
        return u32::from_be_bytes(*head);
    }
    // Shorter than a head: byte by byte (a variable-length copy would call `memcpy`).
    let mut raw = [0u8; HEAD_SIZE];
    for (to, from) in raw.iter_mut().zip(rest) {
        *to = *from;
    }
    u32::from_be_bytes(raw)
}

/// A lower bound on the common prefix of two keys sharing `prefix` bytes whose heads `a` and
/// `b` differ: `prefix` plus their equal leading head bytes, less trailing zero bytes among
/// those (a zero may be one key's padding, not a byte of it; a non-zero byte is real in both).
#[inline]
#[must_use]
pub fn head_common(prefix: usize, a: u32, b: u32) -> usize {
    let equal = ((a ^ b).leading_zeros() / 8).min(3);
    if equal == 0 {
        return prefix;
    }
    let shared = a >> (32 - 8 * equal);
    if shared == 0 {
        return prefix;
    }
    prefix + (equal - shared.trailing_zeros() / 8) as usize
}

/// What a search over heads knows of the common prefix of its key (head `wanted`) and one
/// bound of its range: `common`, if the bound's `head` is `wanted` (an initial bound, or one a
/// full comparison set), else [`head_common`] of the heads, derived only when a full
/// comparison needs it (most probes never do).
#[inline]
#[must_use]
pub fn bound_common(prefix: usize, common: usize, head: u32, wanted: u32) -> usize {
    if head == wanted {
        common
    } else {
        head_common(prefix, head, wanted)
    }
}

/// Length of the longest common prefix of `a` and `b`.
#[must_use]
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    compare_from(a, b, 0).1
}

/// Where `key` lies relative to a node whose keys all start with `prefix`: `Less` below every
/// key (it differs from the prefix by a lower byte, or is a proper prefix of it), `Greater`
/// above every key, `Equal` when it starts with `prefix` itself. `skip`: leading bytes known
/// to be equal.
#[inline]
#[must_use]
pub fn order_to_prefix(prefix: &[u8], key: &[u8], skip: usize) -> std::cmp::Ordering {
    let head = &key[..key.len().min(prefix.len())];
    compare_from(prefix, head, skip).0.reverse()
}

pub(crate) fn get_u16(page: &[u8], at: usize) -> u16 {
    let mut raw = [0u8; 2];
    raw.copy_from_slice(&page[at..at + 2]);
    u16::from_le_bytes(raw)
}

pub(crate) fn get_u32(page: &[u8], at: usize) -> u32 {
    let mut raw = [0u8; 4];
    raw.copy_from_slice(&page[at..at + 4]);
    u32::from_le_bytes(raw)
}

pub(crate) fn get_u64(page: &[u8], at: usize) -> u64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&page[at..at + 8]);
    u64::from_le_bytes(raw)
}

/// Compares `ours` with `key` as slices compare, taking their first `skip` bytes as equal, and
/// returns the length of their common prefix too (at least `skip`, clamped to both lengths).
///
/// A binary search over sorted keys uses it to skip the prefix the searched key shares with
/// both keys bounding the range: if `a <= k <= b` and the key shares its first `p` bytes with
/// both `a` and `b`, then so does `k` (a `k` that differed earlier, or ended earlier, would sort
/// outside `[a, b]`). On keys out of order (a corrupt node) the answer may be wrong but never
/// panics. Compares 8 bytes at a time while both have them.
#[inline]
#[must_use]
pub fn compare_from(ours: &[u8], key: &[u8], skip: usize) -> (std::cmp::Ordering, usize) {
    let common = ours.len().min(key.len());
    let mut index = skip.min(common);
    // Bound: 8 bytes a round, then one byte a round, up to `common`.
    while index + 8 <= common {
        let (Ok(a), Ok(b)) = (
            <[u8; 8]>::try_from(&ours[index..index + 8]),
            <[u8; 8]>::try_from(&key[index..index + 8]),
        ) else {
            break;
        };
        let (a, b) = (u64::from_be_bytes(a), u64::from_be_bytes(b));
        if a != b {
            let same = ((a ^ b).leading_zeros() / 8) as usize;
            return (a.cmp(&b), index + same);
        }
        index += 8;
    }
    while index < common {
        if ours[index] != key[index] {
            return (ours[index].cmp(&key[index]), index);
        }
        index += 1;
    }
    (ours.len().cmp(&key.len()), common)
}

/// The cell offset stored in a slot.
#[inline]
#[must_use]
pub fn slot_offset(slot: &[u8; SLOT_SIZE]) -> usize {
    usize::from(u16::from_le_bytes([slot[0], slot[1]]))
}

/// The key head stored in a slot.
#[inline]
#[must_use]
pub fn slot_head(slot: &[u8; SLOT_SIZE]) -> u32 {
    u32::from_be_bytes([slot[2], slot[3], slot[4], slot[5]])
}

/// A corrupt-page error for page `id`.
pub fn corrupt(id: PageId, reason: impl Into<String>) -> Error {
    Error::CorruptPage {
        page: id,
        reason: reason.into(),
    }
}

/// A read-only view of a node whose header verified.
#[derive(Debug, Clone, Copy)]
pub struct NodeRef<'a> {
    id: PageId,
    bytes: &'a [u8],
    count: usize,
    /// `cell_start` as the header verified it.
    cell_start: usize,
    /// The node prefix length `p` (checked against slot 0's key where it is used).
    prefix: usize,
}

impl<'a> NodeRef<'a> {
    /// Checks the header of page `id` and returns a view of it.
    ///
    /// # Errors
    /// [`Error::CorruptPage`] when the page is not a leaf or inner node or its header is
    /// inconsistent.
    pub fn new(id: PageId, bytes: &'a [u8]) -> Result<Self> {
        let size = bytes.len();
        if !(MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&size) {
            return Err(corrupt(id, format!("page of {size} bytes")));
        }
        let kind = bytes[KIND_AT];
        if kind != KIND_LEAF && kind != KIND_INNER {
            return Err(corrupt(id, format!("kind {kind} is not a tree node")));
        }
        let count = usize::from(get_u16(bytes, COUNT_AT));
        let cell_start = usize::from(get_u16(bytes, CELL_START_AT));
        if SLOTS_AT + SLOT_SIZE * count > cell_start || cell_start > size {
            return Err(corrupt(
                id,
                format!("{count} slots and cell area at {cell_start} do not fit"),
            ));
        }
        if (kind == KIND_LEAF) != (bytes[LEVEL_AT] == 0) {
            return Err(corrupt(
                id,
                format!("kind {kind} at level {}", bytes[LEVEL_AT]),
            ));
        }
        Ok(NodeRef {
            id,
            bytes,
            count,
            cell_start,
            prefix: usize::from(get_u16(bytes, PREFIX_AT)),
        })
    }

    /// The page id.
    #[must_use]
    pub fn id(&self) -> PageId {
        self.id
    }

    /// The page bytes.
    #[must_use]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Whether this is a leaf.
    #[must_use]
    pub fn is_leaf(&self) -> bool {
        self.bytes[KIND_AT] == KIND_LEAF
    }

    /// The level (0 for leaves).
    #[must_use]
    pub fn level(&self) -> u8 {
        self.bytes[LEVEL_AT]
    }

    /// Number of cells.
    #[must_use]
    pub fn count(&self) -> usize {
        self.count
    }

    /// The tree id.
    #[must_use]
    pub fn tree(&self) -> u32 {
        get_u32(self.bytes, TREE_AT)
    }

    /// Left sibling (0 = none).
    #[must_use]
    pub fn left(&self) -> PageId {
        get_u64(self.bytes, LEFT_AT)
    }

    /// Right sibling (0 = none).
    #[must_use]
    pub fn right(&self) -> PageId {
        get_u64(self.bytes, RIGHT_AT)
    }

    /// Leftmost child (inner nodes).
    #[must_use]
    pub fn leftmost(&self) -> PageId {
        get_u64(self.bytes, LEFTMOST_AT)
    }

    /// The node prefix length `p`: every key shares its first `p` bytes (with slot 0's key).
    #[must_use]
    pub fn prefix(&self) -> usize {
        self.prefix
    }

    /// The key head stored in slot `slot` ([`key_head`] of its key, if the node is sound).
    ///
    /// # Errors
    /// [`Error::CorruptPage`] for a slot out of range.
    pub fn head(&self, slot: usize) -> Result<u32> {
        match self.slots().get(slot) {
            Some(slot_bytes) => Ok(slot_head(slot_bytes)),
            None => Err(corrupt(
                self.id,
                format!("slot {slot} of a node with {} cells", self.count),
            )),
        }
    }

    /// Start of the cell area.
    #[must_use]
    pub fn cell_start(&self) -> usize {
        self.cell_start
    }

    /// Bytes of dead cells.
    #[must_use]
    pub fn garbage(&self) -> usize {
        usize::from(get_u16(self.bytes, GARBAGE_AT))
    }

    /// Free bytes once compacted (gap plus garbage).
    #[must_use]
    pub fn free_space(&self) -> usize {
        self.cell_start() - (SLOTS_AT + SLOT_SIZE * self.count) + self.garbage()
    }

    /// Bytes used by live cells and their slots.
    #[must_use]
    pub fn used_space(&self) -> usize {
        self.bytes.len() - SLOTS_AT - self.free_space()
    }

    /// Whether a cell with this key and payload fits (after compaction if needed).
    #[must_use]
    pub fn fits(&self, key_len: usize, payload_len: usize) -> bool {
        cell_footprint(key_len, payload_len) <= self.free_space()
    }

    /// The cell of slot `slot`: (key, payload).
    ///
    /// # Errors
    /// [`Error::CorruptPage`] for a slot out of range or a cell outside the cell area.
    pub fn cell(&self, slot: usize) -> Result<(&'a [u8], &'a [u8])> {
        let Some(&slot_bytes) = self.slots().get(slot) else {
            return Err(corrupt(
                self.id,
                format!("slot {slot} of a node with {} cells", self.count),
            ));
        };
        let offset = slot_offset(&slot_bytes);
        let size = self.bytes.len();
        if offset < self.cell_start || offset + CELL_OVERHEAD > size {
            return Err(corrupt(
                self.id,
                format!("slot {slot} points at {offset}, outside the cell area"),
            ));
        }
        let key_len = usize::from(get_u16(self.bytes, offset));
        let payload_len = usize::from(get_u16(self.bytes, offset + 2));
        let key_at = offset + CELL_OVERHEAD;
        let end = key_at + key_len + payload_len;
        if end > size {
            return Err(corrupt(
                self.id,
                format!("cell of slot {slot} at {offset} runs past the page end"),
            ));
        }
        Ok((
            &self.bytes[key_at..key_at + key_len],
            &self.bytes[key_at + key_len..end],
        ))
    }

    /// The key of slot `slot`.
    ///
    /// # Errors
    /// As [`NodeRef::cell`].
    pub fn key(&self, slot: usize) -> Result<&'a [u8]> {
        self.cell(slot).map(|(key, _)| key)
    }

    /// The child of inner cell `slot`.
    ///
    /// # Errors
    /// As [`NodeRef::cell`], or a payload that is not a page id.
    pub fn cell_child(&self, slot: usize) -> Result<PageId> {
        let (_, payload) = self.cell(slot)?;
        if payload.len() != CHILD_SIZE {
            return Err(corrupt(
                self.id,
                format!("inner cell {slot} has a {}-byte child", payload.len()),
            ));
        }
        Ok(get_u64(payload, 0))
    }

    /// Child number `index` of an inner node: 0 is `leftmost`, `i + 1` is cell `i`'s child.
    ///
    /// # Errors
    /// As [`NodeRef::cell_child`].
    pub fn child(&self, index: usize) -> Result<PageId> {
        if index == 0 {
            Ok(self.leftmost())
        } else {
            self.cell_child(index - 1)
        }
    }

    /// Number of children of an inner node (`count + 1`).
    #[must_use]
    pub fn children(&self) -> usize {
        self.count + 1
    }

    /// The slot array (`count` slots of a little-endian cell offset and a key head; `new`
    /// checked that it lies below the cell area).
    fn slots(&self) -> &'a [[u8; SLOT_SIZE]] {
        self.bytes[SLOTS_AT..SLOTS_AT + SLOT_SIZE * self.count]
            .as_chunks::<SLOT_SIZE>()
            .0
    }

    /// The key of slot `slot` (of `slots`, this node's [`NodeRef::slots`]) for a comparison:
    /// only the cell's header and key are decoded and checked, in one test; the payload is
    /// checked where it is used ([`NodeRef::cell`]).
    #[inline]
    fn search_key(&self, slots: &[[u8; SLOT_SIZE]], slot: usize) -> Result<&'a [u8]> {
        let offset = slot_offset(&slots[slot]);
        let key = (offset >= self.cell_start)
            .then(|| self.bytes.get(offset..))
            .flatten()
            .and_then(|cell| {
                let (head, rest) = cell.split_first_chunk::<CELL_OVERHEAD>()?;
                rest.get(..usize::from(u16::from_le_bytes([head[0], head[1]])))
            });
        match key {
            Some(key) => Ok(key),
            None => Err(self.bad_search_cell(slot, offset)),
        }
    }

    #[cold]
    fn bad_search_cell(&self, slot: usize, offset: usize) -> Error {
        corrupt(
            self.id,
            format!("slot {slot} points at {offset}: no key inside the cell area"),
        )
    }

    /// Binary search: `Ok(slot)` of `key`, or `Err(slot)` where it would be inserted.
    ///
    /// The key is first compared with the node prefix (slot 0's first `p` bytes): a key that
    /// does not start with it lies below or above every key. Otherwise each probe compares the
    /// key's head with the slot's head as `u32`s and decodes the probed cell's key only when
    /// the heads are equal (comparing from byte `p`, skipping what the key shares with both
    /// bounds of the range, see [`compare_from`]).
    ///
    /// # Errors
    /// [`Error::CorruptPage`] for a probed cell whose key lies outside the cell area, or a
    /// slot 0 key shorter than the node prefix.
    pub fn search(&self, key: &[u8]) -> Result<std::result::Result<usize, usize>> {
        let slots = self.slots();
        if slots.is_empty() {
            return Ok(Err(0));
        }
        let prefix = self.prefix;
        if prefix > 0 {
            let first = self.search_key(slots, 0)?;
            let Some(node_prefix) = first.get(..prefix) else {
                return Err(self.short_first_key(first.len()));
            };
            match order_to_prefix(node_prefix, key, 0) {
                std::cmp::Ordering::Less => return Ok(Err(0)),
                std::cmp::Ordering::Greater => return Ok(Err(slots.len())),
                std::cmp::Ordering::Equal => {}
            }
        }
        let wanted = key_head(key, prefix);
        let (mut low, mut high) = (0usize, slots.len());
        // Common prefix of `key` with the key below `low` and the key at `high`
        // ([`bound_common`]): at least `prefix` (every key starts with it, and so does `key`);
        // more once heads or a full comparison show it. Every key between them shares the
        // shorter one.
        let (mut low_common, mut high_common) = (prefix, prefix);
        let (mut low_head, mut high_head) = (wanted, wanted);
        // Bound: halves the range each round, at most 16 rounds for 32 KiB pages.
        while low < high {
            let mid = low + (high - low) / 2;
            let head = slot_head(&slots[mid]);
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
            let skip = bound_common(prefix, low_common, low_head, wanted).min(bound_common(
                prefix,
                high_common,
                high_head,
                wanted,
            ));
            let (order, common) = compare_from(self.search_key(slots, mid)?, key, skip);
            match order {
                std::cmp::Ordering::Less => {
                    low = mid + 1;
                    (low_common, low_head) = (common, wanted);
                }
                std::cmp::Ordering::Greater => {
                    high = mid;
                    (high_common, high_head) = (common, wanted);
                }
                std::cmp::Ordering::Equal => return Ok(Ok(mid)),
            }
        }
        Ok(Err(low))
    }

    #[cold]
    fn short_first_key(&self, len: usize) -> Error {
        corrupt(
            self.id,
            format!(
                "node prefix of {} bytes, but slot 0 holds a {len}-byte key",
                self.prefix
            ),
        )
    }

    /// The child index (see [`NodeRef::child`]) covering `key` in an inner node.
    ///
    /// # Errors
    /// As [`NodeRef::cell`].
    pub fn child_index_for(&self, key: &[u8]) -> Result<usize> {
        Ok(match self.search(key)? {
            Ok(slot) => slot + 1,
            Err(slot) => slot,
        })
    }

    /// The child page covering `key` in an inner node, and its index.
    ///
    /// # Errors
    /// As [`NodeRef::cell`].
    pub fn child_for(&self, key: &[u8]) -> Result<(usize, PageId)> {
        let index = self.child_index_for(key)?;
        Ok((index, self.child(index)?))
    }

    /// The lower bound of child `index`'s keys inside this node (`None` for the leftmost: the
    /// node's own lower bound applies).
    ///
    /// # Errors
    /// As [`NodeRef::cell`].
    pub fn child_low(&self, index: usize) -> Result<Option<&'a [u8]>> {
        if index == 0 {
            Ok(None)
        } else {
            self.key(index - 1).map(Some)
        }
    }

    /// The exclusive upper bound of child `index`'s keys inside this node (`None` for the
    /// last child: the node's own upper bound applies).
    ///
    /// # Errors
    /// As [`NodeRef::cell`].
    pub fn child_high(&self, index: usize) -> Result<Option<&'a [u8]>> {
        if index >= self.count {
            Ok(None)
        } else {
            self.key(index).map(Some)
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn limits_are_the_ones_kv_store_documents() {
        // The table on `crate::txn::KvStore`.
        for (page, key, value) in [
            (4096, 256, 740),
            (8192, 512, 1508),
            (16384, 1024, 3044),
            (32768, 1024, 7140),
        ] {
            let limits = Limits::for_page(page).unwrap();
            assert_eq!((limits.max_key, limits.max_value), (key, value), "{page}");
        }
    }

    #[test]
    fn limits_scale_with_the_page_and_reject_bad_sizes() {
        let small = Limits::for_page(4096).unwrap();
        assert_eq!(small.max_key, 256);
        assert!(small.max_value >= 700, "{small:?}");
        assert!(cell_footprint(small.max_key, small.max_value) <= small.max_cell);
        let large = Limits::for_page(16384).unwrap();
        assert_eq!(large.max_key, 1024);
        assert!(large.max_value > 3000);
        assert!(Limits::for_page(2048).is_err());
        assert!(Limits::for_page(65536).is_err());
        assert!(small.check(&[0; 257], None).is_err());
        assert!(
            small
                .check(&[0; 256], Some(&vec![0; small.max_value]))
                .is_ok()
        );
        assert!(
            small
                .check(b"k", Some(&vec![0; small.max_value + 1]))
                .is_err()
        );
    }

    #[test]
    fn malformed_headers_are_errors_not_panics() {
        let mut page = vec![0u8; 4096];
        assert!(NodeRef::new(1, &page).is_err(), "unformatted");
        page[KIND_AT] = KIND_LEAF;
        page[COUNT_AT..COUNT_AT + 2].copy_from_slice(&5000u16.to_le_bytes());
        assert!(NodeRef::new(1, &page).is_err(), "too many slots");
        page[COUNT_AT..COUNT_AT + 2].copy_from_slice(&1u16.to_le_bytes());
        page[CELL_START_AT..CELL_START_AT + 2].copy_from_slice(&4000u16.to_le_bytes());
        page[SLOTS_AT..SLOTS_AT + 2].copy_from_slice(&4094u16.to_le_bytes());
        let node = NodeRef::new(1, &page).unwrap();
        assert!(node.cell(0).is_err(), "cell runs past the end");
        assert!(node.cell(1).is_err(), "slot out of range");
        // The empty key's head (0) equals slot 0's (0), so the search decodes its cell.
        assert!(
            node.search(b"").is_err(),
            "the probed cell's header runs past the end"
        );
        assert!(node.search(b"k").is_ok(), "heads differ: no cell decoded");
        page[PREFIX_AT..PREFIX_AT + 2].copy_from_slice(&2u16.to_le_bytes());
        let prefixed = NodeRef::new(1, &page).unwrap();
        assert!(
            prefixed.search(b"k").is_err(),
            "slot 0's key is read for the prefix"
        );
    }

    /// A leaf of 4 KiB with `keys` (ascending) as cells with 1-byte values, packed at the end,
    /// its node prefix the common prefix of the first and last key.
    pub(crate) fn leaf(keys: &[&[u8]]) -> Vec<u8> {
        let mut page = vec![0u8; 4096];
        page[KIND_AT] = KIND_LEAF;
        page[COUNT_AT..COUNT_AT + 2].copy_from_slice(&(keys.len() as u16).to_le_bytes());
        let prefix = match keys {
            [] => 0,
            [first, .., last] => common_prefix(first, last),
            [only] => only.len(),
        };
        page[PREFIX_AT..PREFIX_AT + 2].copy_from_slice(&(prefix as u16).to_le_bytes());
        let mut at = page.len();
        for (slot, key) in keys.iter().enumerate() {
            at -= CELL_OVERHEAD + key.len() + 1;
            page[at..at + 2].copy_from_slice(&(key.len() as u16).to_le_bytes());
            page[at + 2..at + 4].copy_from_slice(&1u16.to_le_bytes());
            page[at + 4..at + 4 + key.len()].copy_from_slice(key);
            let slot_at = SLOTS_AT + SLOT_SIZE * slot;
            page[slot_at..slot_at + 2].copy_from_slice(&(at as u16).to_le_bytes());
            page[slot_at + HEAD_AT..slot_at + HEAD_AT + HEAD_SIZE]
                .copy_from_slice(&key_head(key, prefix).to_be_bytes());
        }
        page[CELL_START_AT..CELL_START_AT + 2].copy_from_slice(&(at as u16).to_le_bytes());
        page
    }

    #[test]
    fn head_common_never_overstates_the_common_prefix() {
        let (keys, probes) = prefix_keys();
        let zeros: Vec<Vec<u8>> = [&b"ab"[..], b"ab\0", b"ab\0c", b"ab\0\0\0", b"a\0b", b""]
            .iter()
            .map(|k| k.to_vec())
            .collect();
        for a in keys.iter().chain(&zeros) {
            for b in probes.iter().chain(&zeros) {
                let shared = common_prefix(a, b);
                for prefix in 0..=shared.min(3) {
                    let (x, y) = (key_head(a, prefix), key_head(b, prefix));
                    if x != y {
                        let bound = head_common(prefix, x, y);
                        assert!(bound <= shared && bound >= prefix, "{a:?} {b:?} {prefix}");
                    }
                }
            }
        }
    }

    #[test]
    fn search_finds_keys_and_insertion_points() {
        let keys: [&[u8]; 5] = [b"b", b"d", b"dd", b"f", b"zz"];
        let page = leaf(&keys);
        let node = NodeRef::new(1, &page).unwrap();
        for (slot, key) in keys.iter().enumerate() {
            assert_eq!(node.search(key).unwrap(), Ok(slot));
            assert_eq!(node.key(slot).unwrap(), *key);
        }
        assert_eq!(node.search(b"a").unwrap(), Err(0));
        assert_eq!(node.search(b"c").unwrap(), Err(1));
        assert_eq!(node.search(b"d\0").unwrap(), Err(2));
        assert_eq!(node.search(b"zzz").unwrap(), Err(5));
        let empty = leaf(&[]);
        assert_eq!(
            NodeRef::new(1, &empty).unwrap().search(b"a").unwrap(),
            Err(0)
        );
    }

    /// Distinct sorted keys over two letters, 0 to 9 bytes, most sharing long prefixes (the
    /// searches' prefix skipping), and as many probes from the same strings and others.
    pub(crate) fn prefix_keys() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            x >> 33
        };
        let mut draw = || -> Vec<u8> {
            let len = (next() % 10) as usize;
            (0..len).map(|_| b"ab"[(next() % 8 / 7) as usize]).collect()
        };
        let mut keys: Vec<Vec<u8>> = (0..180).map(|_| draw()).collect();
        keys.sort();
        keys.dedup();
        let probes = (0..400)
            .map(|_| draw())
            .chain(keys.iter().cloned())
            .collect();
        (keys, probes)
    }

    #[test]
    fn compare_from_agrees_with_slice_order_for_every_shared_skip() {
        let (keys, probes) = prefix_keys();
        let long: Vec<Vec<u8>> = (0..40u8)
            .map(|n| [&b"userkey:\0\0\0\0\0"[..], &[n / 7, n, 9][..]].concat())
            .collect();
        for a in keys.iter().chain(&long) {
            for b in probes.iter().chain(&long) {
                let shared = a.iter().zip(b).take_while(|(x, y)| x == y).count();
                for skip in [0, shared / 2, shared] {
                    assert_eq!(
                        compare_from(a, b, skip),
                        (a.as_slice().cmp(b.as_slice()), shared),
                        "{a:?} {b:?} skip {skip}"
                    );
                }
            }
        }
    }

    #[test]
    fn search_with_prefix_skipping_agrees_with_a_sorted_slice() {
        let (keys, probes) = prefix_keys();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let page = leaf(&refs);
        let node = NodeRef::new(1, &page).unwrap();
        for probe in &probes {
            assert_eq!(
                node.search(probe).unwrap(),
                refs.binary_search(&probe.as_slice()),
                "{probe:?}"
            );
        }
    }

    #[test]
    fn a_probed_cell_outside_the_cell_area_is_an_error_not_a_panic() {
        let keys: [&[u8]; 3] = [b"b", b"d", b"f"];
        // The middle slot (the first probe) points into the slot array, below the cell area.
        let mut below = leaf(&keys);
        let mid = SLOTS_AT + SLOT_SIZE;
        below[mid..mid + 2].copy_from_slice(&(SLOTS_AT as u16).to_le_bytes());
        let node = NodeRef::new(1, &below).unwrap();
        assert!(node.search(b"d").is_err());
        // Its key length runs past the page end.
        let mut long = leaf(&keys);
        let offset = usize::from(u16::from_le_bytes([long[mid], long[mid + 1]]));
        long[offset..offset + 2].copy_from_slice(&u16::MAX.to_le_bytes());
        assert!(NodeRef::new(1, &long).unwrap().search(b"d").is_err());
        // Its header starts at the last byte of the page.
        let mut edge = leaf(&keys);
        edge[mid..mid + 2].copy_from_slice(&4095u16.to_le_bytes());
        assert!(NodeRef::new(1, &edge).unwrap().search(b"d").is_err());
    }
}
