//! The meta page (page 0 of the data device as the pool sees it: the catalog of named trees and
//! the page allocator's state) and free pages. Byte layout in `docs/btree-format.md`:
//!
//! ```text
//! meta page                                  free page
//! offset size field                          offset size field
//!     32    1 kind = 4                           32    1 kind = 3
//!     33    3 zero                               56    8 next free page (0 = end of list)
//!     36    4 magic "FBBT"                       (everything else zero)
//!     40    4 format version (2; 1 had 2-byte slots and no key heads)
//!     44    4 page size
//!     48    8 high water: pages at or above it were never allocated
//!     56    8 free list head (0 = empty)
//!     64    8 free page count
//!     72    4 tree count
//!     76   .. catalog entries: [name_len u8][name][root page u64]; tree id = entry index
//! ```
//!
//! Invariants: `1 <= high_water <= device pages`; the free list holds exactly `free_count`
//! pages, each below `high_water`, formatted as free pages; tree roots never move (a root
//! split keeps the root page), so a catalog entry never changes once written. The meta page
//! changes only through [`super::op::PageOp`]s of mini-transactions holding it latched
//! exclusive; it is the last page latched in any mini-transaction (lock order, see mod.rs).

use super::node::{KIND_AT, KIND_FREE, KIND_META, RIGHT_AT, corrupt, get_u32, get_u64};
use crate::error::{PageId, Result};

/// The page holding the meta data.
pub const META_PAGE: PageId = 0;
/// Magic of the meta page.
pub const META_MAGIC: [u8; 4] = *b"FBBT";
/// Format version of the tree pages.
/// Version 2 (issue 20): 6-byte slots with key heads and the node prefix at offset 44.
pub const FORMAT_VERSION: u32 = 2;
/// Offset of the magic.
pub const MAGIC_AT: usize = 36;
/// Offset of the version.
pub const VERSION_AT: usize = 40;
/// Offset of the page size.
pub const PAGE_SIZE_AT: usize = 44;
/// Offset of the high-water mark.
pub const HIGH_WATER_AT: usize = 48;
/// Offset of the free-list head.
pub const FREE_HEAD_AT: usize = 56;
/// Offset of the free page count.
pub const FREE_COUNT_AT: usize = 64;
/// Offset of the tree count.
pub const TREE_COUNT_AT: usize = 72;
/// Offset of the first catalog entry.
pub const CATALOG_AT: usize = 76;
/// Longest tree name in bytes.
pub const MAX_NAME: usize = 64;
/// Offset of a free page's next pointer (the node's right-sibling field).
pub const NEXT_FREE_AT: usize = RIGHT_AT;

/// One catalog entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// The tree's name.
    pub name: String,
    /// Its root page (fixed for the tree's life).
    pub root: PageId,
}

/// The decoded meta page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// Page size the database was created with.
    pub page_size: u32,
    /// First page never allocated.
    pub high_water: PageId,
    /// Head of the free list (0 = empty).
    pub free_head: PageId,
    /// Pages on the free list.
    pub free_count: u64,
    /// The catalog; tree id = index.
    pub trees: Vec<TreeEntry>,
    /// Offset just past the last catalog entry.
    pub catalog_end: usize,
}

/// The error of a meta page that does not verify: `why`, on the meta page.
fn bad_meta(why: impl std::fmt::Display) -> crate::error::Error {
    corrupt(META_PAGE, format!("meta page: {why}"))
}

/// The meta page's page allocation state, read by [`decode_allocation`] without the catalog
/// (a page allocation needs no tree names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    /// First page never allocated.
    pub high_water: PageId,
    /// Head of the free list (0 = empty).
    pub free_head: PageId,
    /// Pages on the free list.
    pub free_count: u64,
}

/// Whether the page was never formatted (all zero payload): a new database.
#[must_use]
pub fn is_blank(page: &[u8]) -> bool {
    page[KIND_AT..].iter().all(|&b| b == 0)
}

/// Refuses a meta page (kind and magic already checked) written in another tree format
/// version, naming the version.
///
/// # Errors
/// [`crate::Error::CorruptPage`] naming both versions.
fn check_version(page: &[u8]) -> Result<()> {
    let version = get_u32(page, VERSION_AT);
    if version == FORMAT_VERSION {
        return Ok(());
    }
    Err(corrupt(
        META_PAGE,
        format!(
            "meta page: tree format version {version}, this build reads only version \
             {FORMAT_VERSION} (version 2 changed the node slots; reload the data into a new \
             database)"
        ),
    ))
}

/// Checks the meta page as stored, before the log is replayed over it: a page that holds the
/// meta data (kind and magic) of another format version is refused by name, so that a
/// database of an older format is never redone with this build's page operations. Anything
/// else (blank, torn, not yet meta) passes: redo and [`decode`] judge it afterwards.
///
/// # Errors
/// [`crate::Error::CorruptPage`] naming both versions.
pub fn check_stored_version(page: &[u8]) -> Result<()> {
    if page.len() < CATALOG_AT
        || page[KIND_AT] != KIND_META
        || page[MAGIC_AT..MAGIC_AT + 4] != META_MAGIC
    {
        return Ok(());
    }
    check_version(page)
}

/// Decodes and checks the meta page.
///
/// # Errors
/// [`crate::Error::CorruptPage`] naming what does not verify.
pub fn decode(page: &[u8]) -> Result<Meta> {
    let allocation = decode_allocation(page)?;
    let count = get_u32(page, TREE_COUNT_AT) as usize;
    let mut trees = Vec::with_capacity(count.min(page.len()));
    let mut at = CATALOG_AT;
    for index in 0..count {
        let Some(&len) = page.get(at) else {
            return Err(bad_meta(format!(
                "catalog entry {index} starts past the page end"
            )));
        };
        let len = usize::from(len);
        let end = at + 1 + len + 8;
        if len == 0 || len > MAX_NAME || end > page.len() {
            return Err(bad_meta(format!("catalog entry {index} is malformed")));
        }
        let name = std::str::from_utf8(&page[at + 1..at + 1 + len])
            .map_err(|_| bad_meta(format!("catalog entry {index}: name is not UTF-8")))?;
        trees.push(TreeEntry {
            name: name.to_string(),
            root: get_u64(page, at + 1 + len),
        });
        at = end;
    }
    Ok(Meta {
        page_size: get_u32(page, PAGE_SIZE_AT),
        high_water: allocation.high_water,
        free_head: allocation.free_head,
        free_count: allocation.free_count,
        trees,
        catalog_end: at,
    })
}

/// Checks the meta page's header (kind, magic, format version, page size) and reads its
/// allocation state, leaving the catalog alone: what a page allocation or free needs, with no
/// allocation of its own.
///
/// # Errors
/// [`crate::Error::CorruptPage`] naming what does not verify.
pub fn decode_allocation(page: &[u8]) -> Result<Allocation> {
    if page[KIND_AT] != KIND_META || page[MAGIC_AT..MAGIC_AT + 4] != META_MAGIC {
        return Err(bad_meta("no B+-tree meta data (kind or magic)"));
    }
    check_version(page)?;
    let page_size = get_u32(page, PAGE_SIZE_AT);
    if page_size as usize != page.len() {
        return Err(bad_meta(format!(
            "created with {page_size}-byte pages, opened with {}",
            page.len()
        )));
    }
    Ok(Allocation {
        high_water: get_u64(page, HIGH_WATER_AT),
        free_head: get_u64(page, FREE_HEAD_AT),
        free_count: get_u64(page, FREE_COUNT_AT),
    })
}

/// The next pointer of free page `id`.
///
/// # Errors
/// [`crate::Error::CorruptPage`] if the page is not a free page.
pub fn next_free(id: PageId, page: &[u8]) -> Result<PageId> {
    if page[KIND_AT] != KIND_FREE {
        return Err(corrupt(
            id,
            format!("on the free list but of kind {}", page[KIND_AT]),
        ));
    }
    Ok(get_u64(page, NEXT_FREE_AT))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btree::op::{PageOp, apply};

    fn meta_page(size: u32, trees: &[&str]) -> Vec<u8> {
        let mut page = vec![0u8; size as usize];
        apply(META_PAGE, &mut page, &PageOp::InitMeta { page_size: size }).unwrap();
        for (n, name) in trees.iter().enumerate() {
            let op = PageOp::MetaAddTree {
                name: name.as_bytes().to_vec(),
                root: 10 + n as PageId,
            };
            apply(META_PAGE, &mut page, &op).unwrap();
        }
        let op = PageOp::MetaAlloc {
            high_water: 77,
            free_head: 12,
            free_count: 3,
        };
        apply(META_PAGE, &mut page, &op).unwrap();
        page
    }

    #[test]
    fn the_allocation_state_reads_as_the_whole_decode_does_and_checks_the_header() {
        let page = meta_page(4096, &["warehouse", "district", "stock"]);
        let meta = decode(&page).unwrap();
        let allocation = decode_allocation(&page).unwrap();
        assert_eq!(
            (
                allocation.high_water,
                allocation.free_head,
                allocation.free_count
            ),
            (meta.high_water, meta.free_head, meta.free_count)
        );
        assert_eq!(
            (meta.high_water, meta.free_head, meta.free_count),
            (77, 12, 3)
        );
        assert_eq!(meta.trees.len(), 3);
        // A page of another size, another format version, or no meta data is refused.
        assert!(decode_allocation(&page[..2048]).is_err());
        let mut other_version = page.clone();
        other_version[VERSION_AT..VERSION_AT + 4]
            .copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        assert!(decode_allocation(&other_version).is_err());
        let mut not_meta = page;
        not_meta[MAGIC_AT] ^= 0xFF;
        assert!(decode_allocation(&not_meta).is_err());
    }
}
