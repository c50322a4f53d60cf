//! The structure checker behind `flashbuf check`: page checksums, every tree's structure (key
//! order inside nodes, keys inside the separator bounds of their parents, levels, leaf sibling
//! links in key order, no page reachable twice or from two trees), node prefixes and key heads
//! (every key starts with its node's prefix, every slot's head is its key's), the free list,
//! free-space accounting inside every node (live cells plus garbage fill the cell area exactly, no two
//! cells overlap), and that every page below the high-water mark is in exactly one tree or on
//! the free list.
//!
//! It reads pages through a [`PageSource`]: the buffer pool of an open database (current
//! contents, dirty pages included) or a data device directly (a closed database; checksums are
//! verified on every page). Problems are collected (at most [`MAX_PROBLEMS`]) with the page they
//! concern; the caller decides (the CLI exits non-zero when there is any).
//!
//! Bounds: each page is visited at most once per role; traversal depth is bounded by
//! `MAX_LEVELS`; the free-list walk by the free count plus one.

use std::collections::HashMap;

use super::meta::{self, META_PAGE};
use super::node::{
    CELL_OVERHEAD, KIND_AT, MAX_LEVELS, NodeRef, PREFIX_AT, SLOT_SIZE, SLOTS_AT, key_head,
};
use crate::device::{AlignedBuf, SharedDevice};
use crate::error::{Error, PageId, Result};
use crate::pool::BufferPool;

/// Problems recorded before the checker stops collecting.
pub const MAX_PROBLEMS: usize = 100;

/// Where the checker reads pages.
pub trait PageSource {
    /// Page size in bytes.
    fn page_size(&self) -> usize;
    /// Pages on the device.
    fn pages(&self) -> u64;
    /// Reads (and verifies) page `page` into `out`.
    ///
    /// # Errors
    /// Corrupt page (checksum), device errors.
    fn read(&self, page: PageId, out: &mut [u8]) -> Result<()>;
}

impl PageSource for BufferPool {
    fn page_size(&self) -> usize {
        BufferPool::page_size(self)
    }
    fn pages(&self) -> u64 {
        BufferPool::pages(self)
    }
    fn read(&self, page: PageId, out: &mut [u8]) -> Result<()> {
        out.copy_from_slice(BufferPool::read(self, page)?.data());
        Ok(())
    }
}

/// A data device read directly (for a closed database).
#[derive(Debug, Clone)]
pub struct DeviceSource(pub SharedDevice);

impl PageSource for DeviceSource {
    fn page_size(&self) -> usize {
        self.0.info().page_size
    }
    fn pages(&self) -> u64 {
        self.0.info().pages
    }
    fn read(&self, page: PageId, out: &mut [u8]) -> Result<()> {
        let mut buf = AlignedBuf::new(out.len());
        self.0.read_page(page, &mut buf)?;
        crate::page::verify(buf.as_slice(), page)?;
        out.copy_from_slice(buf.as_slice());
        Ok(())
    }
}

/// Per-tree figures.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TreeSummary {
    /// Name.
    pub name: String,
    /// Root page.
    pub root: PageId,
    /// Levels (1 for a root leaf).
    pub height: usize,
    /// Leaves.
    pub leaves: u64,
    /// Inner nodes.
    pub inner: u64,
    /// Key-value pairs.
    pub keys: u64,
    /// Bytes of keys and values.
    pub payload_bytes: u64,
    /// Average leaf fill (live bytes over node area), percent.
    pub leaf_fill_pct: f64,
}

/// What the checker found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CheckReport {
    /// Pages on the device.
    pub pages: u64,
    /// Page size.
    pub page_size: usize,
    /// The allocator's high-water mark.
    pub high_water: u64,
    /// Pages on the free list.
    pub free_pages: u64,
    /// Pages whose checksum (or read) failed.
    pub bad_checksums: u64,
    /// Every tree.
    pub trees: Vec<TreeSummary>,
    /// Problems, each naming its page.
    pub problems: Vec<String>,
}

impl CheckReport {
    /// Whether nothing is wrong.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// The report as an error naming the first problems (for tests and the CLI).
    ///
    /// # Errors
    /// [`Error::CorruptPage`]-style text when there is a problem.
    pub fn into_result(self) -> Result<CheckReport> {
        if self.is_ok() {
            return Ok(self);
        }
        Err(Error::InvalidArgument(format!(
            "check found {} problem(s): {}",
            self.problems.len(),
            self.problems
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        )))
    }

    fn problem(&mut self, text: String) {
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(text);
        }
    }
}

/// Who owns a page (for "reachable exactly once").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    Tree(usize),
    FreeList,
}

/// Checks the whole database readable through `source`.
///
/// # Errors
/// Only when the meta page cannot be read at all; everything else is a problem in the report.
pub fn check(source: &dyn PageSource) -> Result<CheckReport> {
    let page_size = source.page_size();
    let mut report = CheckReport {
        pages: source.pages(),
        page_size,
        ..CheckReport::default()
    };
    let mut buf = vec![0u8; page_size];
    source.read(META_PAGE, &mut buf)?;
    let meta = meta::decode(&buf)?;
    report.high_water = meta.high_water;
    report.free_pages = meta.free_count;
    if meta.high_water == 0 || meta.high_water > source.pages() {
        report.problem(format!(
            "page 0 (meta): high-water mark {} outside 1..={}",
            meta.high_water,
            source.pages()
        ));
        return Ok(report);
    }
    let mut owners: HashMap<PageId, Owner> = HashMap::new();
    for (index, entry) in meta.trees.iter().enumerate() {
        let summary = check_tree(source, &mut report, &mut owners, index, entry);
        report.trees.push(summary);
    }
    check_free_list(source, &mut report, &mut owners, &meta);
    for page in 1..meta.high_water {
        if !owners.contains_key(&page) {
            report.problem(format!(
                "page {page}: leaked (below the high-water mark, in no tree and not free)"
            ));
        }
    }
    for page in meta.high_water..source.pages() {
        match source.read(page, &mut buf) {
            Ok(()) if meta::is_blank(&buf) => {}
            Ok(()) => report.problem(format!(
                "page {page}: formatted but above the high-water mark {}",
                meta.high_water
            )),
            Err(err) => {
                report.bad_checksums += 1;
                report.problem(format!("page {page}: {err}"));
            }
        }
    }
    Ok(report)
}

/// The value stored under `key` in the tree named `tree`, read straight from `source` (a closed
/// database file: no pool, no log); `None` when the tree or the key is absent. Reads the meta
/// page and one page per level, so a caller learns what a large file holds without reading it.
///
/// # Errors
/// A page that does not verify or is not the node the descent expects.
pub fn lookup(source: &dyn PageSource, tree: &str, key: &[u8]) -> Result<Option<Vec<u8>>> {
    let mut buf = vec![0u8; source.page_size()];
    source.read(META_PAGE, &mut buf)?;
    let meta = meta::decode(&buf)?;
    let Some(entry) = meta.trees.iter().find(|entry| entry.name == tree) else {
        return Ok(None);
    };
    let mut page = entry.root;
    // Bound: one page per level.
    for _ in 0..MAX_LEVELS {
        if page == META_PAGE || page >= meta.high_water {
            return Err(Error::CorruptPage {
                page,
                reason: format!("tree `{tree}` leads to it, outside 1..{}", meta.high_water),
            });
        }
        source.read(page, &mut buf)?;
        let node = NodeRef::new(page, &buf)?;
        if node.is_leaf() {
            return Ok(match node.search(key)? {
                Ok(slot) => Some(node.cell(slot)?.1.to_vec()),
                Err(_) => None,
            });
        }
        page = node.child_for(key)?.1;
    }
    Err(Error::CorruptPage {
        page,
        reason: format!("tree `{tree}` is deeper than {MAX_LEVELS} levels"),
    })
}

fn claim(
    report: &mut CheckReport,
    owners: &mut HashMap<PageId, Owner>,
    page: PageId,
    who: Owner,
) -> bool {
    match owners.insert(page, who) {
        None => true,
        Some(previous) => {
            report.problem(format!(
                "page {page}: reachable twice ({previous:?} and {who:?})"
            ));
            false
        }
    }
}

/// A node to visit: page, expected level, key bounds `[low, high)` from its ancestors.
struct Pending {
    page: PageId,
    level: Option<u8>,
    low: Option<Vec<u8>>,
    high: Option<Vec<u8>>,
}

fn check_tree(
    source: &dyn PageSource,
    report: &mut CheckReport,
    owners: &mut HashMap<PageId, Owner>,
    index: usize,
    entry: &meta::TreeEntry,
) -> TreeSummary {
    let mut summary = TreeSummary {
        name: entry.name.clone(),
        root: entry.root,
        ..TreeSummary::default()
    };
    let mut buf = vec![0u8; source.page_size()];
    // Depth-first, children in key order, so leaves come out left to right.
    let mut stack = vec![Pending {
        page: entry.root,
        level: None,
        low: None,
        high: None,
    }];
    let mut leaves: Vec<(PageId, PageId, PageId)> = Vec::new();
    let mut leaf_bytes = 0u64;
    let bound = report.pages as usize + 1;
    for _ in 0..bound {
        let Some(item) = stack.pop() else { break };
        if item.page == 0 || item.page >= report.high_water {
            report.problem(format!(
                "page {}: tree `{}` points at it but it is outside 1..{}",
                item.page, entry.name, report.high_water
            ));
            continue;
        }
        if !claim(report, owners, item.page, Owner::Tree(index)) {
            continue;
        }
        if let Err(err) = source.read(item.page, &mut buf) {
            report.bad_checksums += 1;
            report.problem(format!("page {}: {err}", item.page));
            continue;
        }
        let node = match NodeRef::new(item.page, &buf) {
            Ok(node) => node,
            Err(err) => {
                report.problem(format!("page {}: {err}", item.page));
                continue;
            }
        };
        if let Err(text) = check_node(&node, index, &item) {
            report.problem(format!(
                "page {} (tree `{}`): {text}",
                item.page, entry.name
            ));
            continue;
        }
        if item.level.is_none() {
            summary.height = usize::from(node.level()) + 1;
            if summary.height > MAX_LEVELS {
                report.problem(format!("page {}: {} levels", item.page, summary.height));
                return summary;
            }
        }
        if node.is_leaf() {
            summary.leaves += 1;
            summary.keys += node.count() as u64;
            leaf_bytes += node.used_space() as u64;
            for slot in 0..node.count() {
                if let Ok((key, value)) = node.cell(slot) {
                    summary.payload_bytes += (key.len() + value.len()) as u64;
                }
            }
            leaves.push((item.page, node.left(), node.right()));
            continue;
        }
        summary.inner += 1;
        // Push children right to left so the leftmost is visited first.
        for child in (0..node.children()).rev() {
            let (Ok(page), Ok(low), Ok(high)) = (
                node.child(child),
                node.child_low(child),
                node.child_high(child),
            ) else {
                report.problem(format!("page {}: child {child} unreadable", item.page));
                continue;
            };
            stack.push(Pending {
                page,
                level: Some(node.level() - 1),
                low: low.map(<[u8]>::to_vec).or_else(|| item.low.clone()),
                high: high.map(<[u8]>::to_vec).or_else(|| item.high.clone()),
            });
        }
    }
    check_leaf_chain(report, &entry.name, &leaves);
    if summary.leaves > 0 {
        let area = (source.page_size() - SLOTS_AT) as f64 * summary.leaves as f64;
        summary.leaf_fill_pct = 100.0 * leaf_bytes as f64 / area;
    }
    summary
}

/// Checks one node against its position; returns what is wrong.
fn check_node(node: &NodeRef<'_>, tree: usize, item: &Pending) -> std::result::Result<(), String> {
    if node.tree() as usize != tree {
        return Err(format!("belongs to tree {}", node.tree()));
    }
    if let Some(level) = item.level
        && node.level() != level
    {
        return Err(format!(
            "at level {} where {level} was expected",
            node.level()
        ));
    }
    if !node.is_leaf() && (node.left() != 0 || node.right() != 0) {
        return Err("an inner node with sibling links".into());
    }
    if node.is_leaf() && node.leftmost() != 0 {
        return Err("a leaf with a leftmost child".into());
    }
    let mut previous: Option<&[u8]> = None;
    for slot in 0..node.count() {
        let (key, payload) = node.cell(slot).map_err(|err| err.to_string())?;
        if previous.is_some_and(|p| p >= key) {
            return Err(format!("key of slot {slot} is not above the key before it"));
        }
        if item.low.as_deref().is_some_and(|low| key < low) {
            return Err(format!(
                "key of slot {slot} is below the separator bounding the node"
            ));
        }
        if item.high.as_deref().is_some_and(|high| key >= high) {
            return Err(format!(
                "key of slot {slot} is at or above the separator bounding the node"
            ));
        }
        if !node.is_leaf() && payload.len() != super::node::CHILD_SIZE {
            return Err(format!(
                "inner cell {slot} has a {}-byte child",
                payload.len()
            ));
        }
        previous = Some(key);
    }
    check_heads(node)?;
    check_space(node)
}

/// The node prefix and key heads: every key starts with slot 0's first `p` bytes, every slot's
/// head is the head of its key, and the header's bytes after `p` are zero.
///
/// # Errors
/// What is wrong, naming the slot.
pub fn check_heads(node: &NodeRef<'_>) -> std::result::Result<(), String> {
    let bytes = node.bytes();
    if bytes[PREFIX_AT + 2..PREFIX_AT + 4] != [0, 0] {
        return Err("reserved header bytes after the node prefix are not zero".into());
    }
    let prefix = node.prefix();
    if node.count() == 0 {
        return if prefix == 0 {
            Ok(())
        } else {
            Err(format!(
                "an empty node with a node prefix of {prefix} bytes"
            ))
        };
    }
    let first = node.key(0).map_err(|err| err.to_string())?;
    let Some(shared) = first.get(..prefix) else {
        return Err(format!(
            "node prefix of {prefix} bytes is longer than the key of slot 0"
        ));
    };
    for slot in 0..node.count() {
        let key = node.key(slot).map_err(|err| err.to_string())?;
        if !key.starts_with(shared) {
            return Err(format!(
                "key of slot {slot} does not start with the node prefix of {prefix} bytes"
            ));
        }
        let (stored, expected) = (
            node.head(slot).map_err(|e| e.to_string())?,
            key_head(key, prefix),
        );
        if stored != expected {
            return Err(format!(
                "key head of slot {slot} is {stored:#010x}, its key says {expected:#010x}"
            ));
        }
    }
    Ok(())
}

/// Free-space accounting: live cells plus garbage fill `[cell_start, page_size)` exactly and no
/// two cells overlap.
fn check_space(node: &NodeRef<'_>) -> std::result::Result<(), String> {
    let bytes = node.bytes();
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(node.count());
    for slot in 0..node.count() {
        let at = SLOTS_AT + SLOT_SIZE * slot;
        let offset = usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
        let (key, payload) = node.cell(slot).map_err(|err| err.to_string())?;
        spans.push((offset, CELL_OVERHEAD + key.len() + payload.len()));
    }
    spans.sort_unstable();
    let mut live = 0;
    for pair in spans.windows(2) {
        if pair[0].0 + pair[0].1 > pair[1].0 {
            return Err(format!("cells at {} and {} overlap", pair[0].0, pair[1].0));
        }
    }
    for (_, len) in &spans {
        live += len;
    }
    let area = bytes.len() - node.cell_start();
    if live + node.garbage() != area {
        return Err(format!(
            "free-space accounting: {live} live + {} garbage bytes != cell area of {area}",
            node.garbage()
        ));
    }
    Ok(())
}

fn check_leaf_chain(report: &mut CheckReport, name: &str, leaves: &[(PageId, PageId, PageId)]) {
    for (index, &(page, left, right)) in leaves.iter().enumerate() {
        let expected_left = if index == 0 { 0 } else { leaves[index - 1].0 };
        let expected_right = leaves.get(index + 1).map_or(0, |next| next.0);
        if left != expected_left || right != expected_right {
            report.problem(format!(
                "page {page} (tree `{name}`): sibling links {left}/{right}, key order says \
                 {expected_left}/{expected_right}"
            ));
        }
    }
}

fn check_free_list(
    source: &dyn PageSource,
    report: &mut CheckReport,
    owners: &mut HashMap<PageId, Owner>,
    meta: &meta::Meta,
) {
    let mut buf = vec![0u8; source.page_size()];
    let mut page = meta.free_head;
    let mut seen = 0u64;
    while page != 0 {
        if seen > meta.free_count {
            report.problem(format!(
                "page 0 (meta): the free list is longer than its count {}",
                meta.free_count
            ));
            return;
        }
        if page >= meta.high_water {
            report.problem(format!(
                "page {page}: on the free list above the high-water mark"
            ));
            return;
        }
        if !claim(report, owners, page, Owner::FreeList) {
            return;
        }
        if let Err(err) = source.read(page, &mut buf) {
            report.bad_checksums += 1;
            report.problem(format!("page {page}: {err}"));
            return;
        }
        if buf[KIND_AT] != super::node::KIND_FREE {
            report.problem(format!(
                "page {page}: on the free list but of kind {}",
                buf[KIND_AT]
            ));
            return;
        }
        seen += 1;
        page = super::node::get_u64(&buf, meta::NEXT_FREE_AT);
    }
    if seen != meta.free_count {
        report.problem(format!(
            "page 0 (meta): the free list has {seen} pages, the count says {}",
            meta.free_count
        ));
    }
}
