//! Optimistic (version-validated) page reads: a cached page read without pin or latch, so a
//! read-only hit writes no shared cache line (the technique of vmcache and LeanStore;
//! `docs/performance.md`, "Optimistic reads").
//!
//! **Protocol** (a seqlock per frame; the version word and its invariants are in
//! `core::frame`):
//! 1. look the page up in the page table (a candidate frame, as on the hit path);
//! 2. load the frame's version with acquire ordering; an odd version means a writer holds the
//!    latch exclusive: spin a little, then give up (the caller falls back to a latched read);
//! 3. check that the frame holds the page;
//! 4. read the bytes through a [`PageView`] (the reader's values may be garbage from here on);
//! 5. validate: an acquire fence, then the version and the page id again. Only if both are
//!    unchanged were the bytes read a consistent image of the page, and only then may the
//!    caller use what it derived from them.
//!
//! Every change of a page's bytes happens under its exclusive latch, which keeps the version
//! odd for its whole duration (the writer stores odd, fences, writes, stores even with release
//! ordering); an eviction changes the page id and adds 2 to the version; a remap to another
//! page happens under the exclusive latch. So an unchanged even version and page id around the
//! reads exclude every concurrent change.
//!
//! **Lock coupling without latches** (the B+-tree descent): read the parent, derive the
//! child's page id, start the child's read ([`Core::optimistic`]), and only then validate the
//! parent: the child was the parent's child when its version was taken, and the child's own
//! validation covers everything after.
//!
//! **Why the bytes are read through atomics.** A writer may change the bytes while an optimistic
//! reader reads them. Handing the reader a `&[u8]` would let the compiler assume the bytes never
//! change while the reference lives: it may load a length twice (once for the bounds check, once
//! for the use) and so index out of bounds on a torn page, or keep a value in a register across
//! the validation. [`PageView`] therefore never forms a reference to racing memory: every read
//! is a relaxed atomic byte load through a raw pointer (`AtomicU8::from_ptr`), so each value is
//! loaded exactly once, is some byte the page held at some instant, and is bounds-checked
//! before it is used as an offset; decoders built on it return `None` instead of panicking, and
//! their results are discarded unless the read validates. On every target Rust supports a
//! relaxed byte load is an ordinary load, so the reader side costs what a plain read costs (no
//! fence, no locked instruction). The writers still write bytes non-atomically through the
//! exclusive latch; a non-atomic write racing an atomic read is formally still a data race in
//! the C++/Rust memory model, as in every seqlock over plain data (crossbeam's `AtomicCell`,
//! LeanStore, vmcache), and this is the residue the proposed per-byte atomic memcpy
//! (Rust RFC 3301) is meant to remove. Copying the whole page into a local buffer instead would
//! cost a 16 KiB copy per node, more than the latches it saves.
//!
//! A validated optimistic read counts as a hit and makes the page young like a latched hit
//! (`Core::touch`: list changes happen under the list mutexes, which re-check the frame's
//! region, so touching an unpinned frame is safe; at worst a frame that was just evicted is
//! touched, which only affects its next page's age). Both happen at the read's first successful
//! validation, never at its start: a start whose validation fails (a writer or an evictor came
//! in between) counts nothing and touches nothing, so under contention the hit count equals the
//! reads that succeeded (each [`Core::read_optimistic`] counts exactly one hit, or the hit or
//! miss of its latched fallback). A read validated several times (the B+-tree descent validates
//! a parent before and after latching the leaf) counts once.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{
    AtomicU8 as StdAtomicU8, AtomicU16 as StdAtomicU16, AtomicU64 as StdAtomicU64,
    Ordering as StdOrdering,
};

use super::frame::FrameId;
use super::pool::Core;
use crate::error::PageId;

/// Attempts of [`Core::read_optimistic`] before it falls back to a latched read.
pub const OPTIMISTIC_ATTEMPTS: usize = 4;
/// Spins on an odd version (a writer at work) before an optimistic start gives up.
const LOCKED_SPINS: usize = 64;

/// A run of equal-sized records inside a [`PageView`] (see [`PageView::records`]): loads of
/// 2 and 4 bytes at even offsets inside a record, each a relaxed 2-byte atomic load, bounds
/// checked by the record's index alone.
#[derive(Clone, Copy)]
pub struct Records<'a> {
    first: *const u8,
    stride: usize,
    count: usize,
    _bytes: PhantomData<&'a [u8]>,
}

impl Records<'_> {
    /// The 2-byte-aligned address of `len` bytes at `offset` of record `index`, if they lie
    /// inside the record and `offset` is even.
    #[inline]
    fn at(&self, index: usize, offset: usize, len: usize) -> Option<*const u8> {
        let inside = offset < self.stride && len <= self.stride - offset;
        if index >= self.count || !inside || !offset.is_multiple_of(2) {
            return None;
        }
        // SAFETY: `index < count` and `offset + len <= stride`, so the bytes lie inside the run
        // that `PageView::records` checked to lie inside the view.
        Some(unsafe { self.first.add(index * self.stride + offset) })
    }

    /// Little-endian `u16` at `offset` of record `index`.
    #[inline]
    #[must_use]
    pub fn u16_le(&self, index: usize, offset: usize) -> Option<u16> {
        let at = self.at(index, offset, 2)?;
        // SAFETY: the two bytes lie inside the view and `at` is 2-aligned (`Records::at`,
        // `PageView::records`: an even start, stride and offset).
        Some(u16::from_le(unsafe { load_u16(at) }))
    }

    /// Big-endian `u32` at `offset` of record `index`.
    #[inline]
    #[must_use]
    pub fn u32_be(&self, index: usize, offset: usize) -> Option<u32> {
        let at = self.at(index, offset, 4)?;
        // SAFETY: as in `u16_le`, for four bytes.
        Some(unsafe { load_be_u32(at) })
    }
}

/// The relaxed atomic load of the `u16` at `at`, as `PageView::load`'s of a byte.
///
/// # Safety
/// `at..at + 2` lies inside a view's bytes and `at` is 2-aligned.
#[inline]
unsafe fn load_u16(at: *const u8) -> u16 {
    // SAFETY: the caller's contract.
    unsafe { StdAtomicU16::from_ptr(at.cast_mut().cast()) }.load(StdOrdering::Relaxed)
}

/// The big-endian `u32` at `first`, as two 2-byte loads, a shift, an or and a byte swap
/// (assembling the four bytes one by one costs twice that). Each half is some value the page
/// held at some instant; torn halves are possible, as with any two loads, and the read's
/// validation discards what they lead to.
///
/// # Safety
/// `first..first + 4` lies inside a view's bytes and `first` is 2-aligned.
#[inline]
unsafe fn load_be_u32(first: *const u8) -> u32 {
    // SAFETY: the caller's contract covers both halves.
    let (high, low) = unsafe { (load_u16(first), load_u16(first.add(2))) };
    let (high, low) = (u32::from(high), u32::from(low));
    if cfg!(target_endian = "little") {
        (high | low << 16).swap_bytes()
    } else {
        high << 16 | low
    }
}

/// Read-only access to page bytes that may be changing (see the module docs): every read is
/// bounds-checked and a single atomic load per byte; nothing here panics on any content.
#[derive(Clone, Copy)]
pub struct PageView<'a> {
    ptr: *const u8,
    len: usize,
    _bytes: PhantomData<&'a [u8]>,
}

impl std::fmt::Debug for PageView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageView").field("len", &self.len).finish()
    }
}

impl<'a> PageView<'a> {
    /// A view of bytes that do not change while it lives (a latched page, a test's buffer).
    #[must_use]
    pub fn of_stable(bytes: &'a [u8]) -> Self {
        PageView {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
            _bytes: PhantomData,
        }
    }

    /// A view of a frame's bytes that writers may change meanwhile.
    ///
    /// # Safety
    /// `ptr..ptr + len` stays allocated for `'a` and is only ever written by the page's
    /// exclusive-latch holder (the frame arena).
    unsafe fn of_racing(ptr: *const u8, len: usize) -> Self {
        PageView {
            ptr,
            len,
            _bytes: PhantomData,
        }
    }

    /// Page size in bytes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the view is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Hints the CPU to start loading the cache line holding byte `at` (a no-op past the end
    /// and off x86-64). A hint only: it never faults and reads nothing the caller sees, so a
    /// racing writer makes it at worst useless.
    #[inline]
    pub fn prefetch(&self, at: usize) {
        #[cfg(target_arch = "x86_64")]
        if at < self.len {
            // SAFETY: `at < len`, so the address lies inside the view's bytes; a prefetch does
            // not fault and writes nothing.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    self.ptr.add(at).cast::<i8>(),
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }

    /// The byte at `at`, `None` past the end.
    #[inline]
    #[must_use]
    pub fn byte(&self, at: usize) -> Option<u8> {
        (at < self.len).then(|| self.load(at))
    }

    #[inline]
    fn load(&self, at: usize) -> u8 {
        debug_assert!(at < self.len);
        // SAFETY: `at < len`, and the bytes stay allocated for 'a (constructors); the load is
        // atomic, so a racing writer makes it return some byte, never undefined behaviour on
        // the reader's side (the module docs discuss the writer's side).
        unsafe { StdAtomicU8::from_ptr(self.ptr.add(at).cast_mut()) }.load(StdOrdering::Relaxed)
    }

    /// `N` bytes at `at`, `None` if they do not fit.
    // Left to `#[inline]` the compiler kept it a call (callgrind: about 160,000 calls of 33
    // instructions in 2,000 TPC-C transactions, for reads of 4 or 8 bytes).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    #[must_use]
    pub fn array<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        if at.checked_add(N)? > self.len {
            return None;
        }
        Some(std::array::from_fn(|index| self.load(at + index)))
    }

    /// Little-endian `u16` at `at`.
    #[inline]
    #[must_use]
    pub fn u16_le(&self, at: usize) -> Option<u16> {
        // Two loads after one check (the search's hot path reads slots and key lengths so).
        (at < self.len.saturating_sub(1))
            .then(|| u16::from_le_bytes([self.load(at), self.load(at + 1)]))
    }

    /// Big-endian `u32` at `at` (a B+-tree slot's key head), `None` if it does not fit: two
    /// relaxed 2-byte atomic loads when the address is even (slot heads are: frames are
    /// page-aligned), else four byte loads. Each 2-byte value is some value the page held at
    /// some instant; torn halves are possible, as with any two loads, and the validation
    /// discards what they lead to.
    #[inline]
    #[must_use]
    pub fn u32_be(&self, at: usize) -> Option<u32> {
        if at.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: `at + 4 <= len`, so the four bytes lie inside the view.
        let first = unsafe { self.ptr.add(at) };
        if first.addr() % 2 != 0 {
            return self.array(at).map(u32::from_be_bytes);
        }
        // SAFETY: the four bytes lie inside the view (checked above) and `first` is 2-aligned.
        Some(unsafe { load_be_u32(first) })
    }

    /// The `count` records of `stride` bytes each starting at `at` (a B+-tree node's slot
    /// array), checked once to lie inside the view and to start 2-aligned with an even
    /// stride, so that [`Records`]' loads need only an index check each; `None` otherwise.
    #[inline]
    #[must_use]
    pub fn records(&self, at: usize, stride: usize, count: usize) -> Option<Records<'a>> {
        let end = stride.checked_mul(count)?.checked_add(at)?;
        if end > self.len || !stride.is_multiple_of(2) || !(self.ptr.addr() + at).is_multiple_of(2)
        {
            return None;
        }
        Some(Records {
            // SAFETY: `at <= end <= len`, so the pointer stays inside the view (or one past it
            // for an empty run).
            first: unsafe { self.ptr.add(at) },
            stride,
            count,
            _bytes: PhantomData,
        })
    }

    /// Little-endian `u32` at `at`.
    #[inline]
    #[must_use]
    pub fn u32_le(&self, at: usize) -> Option<u32> {
        self.array(at).map(u32::from_le_bytes)
    }

    /// Little-endian `u64` at `at`.
    #[inline]
    #[must_use]
    pub fn u64_le(&self, at: usize) -> Option<u64> {
        self.array(at).map(u64::from_le_bytes)
    }

    /// Copies `out.len()` bytes from `at`; false (and `out` unspecified) if they do not fit.
    /// Bytes up to the first 8-aligned address are loaded one by one, then 8 at a time with
    /// relaxed `u64` loads (each some value the 8 bytes held at some instant, as `u32_be`'s
    /// halves), then the tail byte by byte.
    #[must_use]
    pub fn copy_to(&self, at: usize, out: &mut [u8]) -> bool {
        let fits = at.checked_add(out.len()).is_some_and(|end| end <= self.len);
        if !fits {
            return false;
        }
        // SAFETY: `at + out.len() <= len` (checked), so every address below lies in the view.
        let first = unsafe { self.ptr.add(at) };
        let lead = first.align_offset(8).min(out.len());
        let (head, rest) = out.split_at_mut(lead);
        for (index, byte) in head.iter_mut().enumerate() {
            *byte = self.load(at + index);
        }
        let tail_at = at + lead + rest.len() / 8 * 8;
        for (index, chunk) in rest.chunks_exact_mut(8).enumerate() {
            // SAFETY: 8-aligned (after the lead) and inside the checked range; the load is
            // atomic, as `load`'s (module docs).
            let word = unsafe {
                StdAtomicU64::from_ptr(first.add(lead + 8 * index).cast_mut().cast())
                    .load(StdOrdering::Relaxed)
            };
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        for (index, byte) in out[tail_at - at..].iter_mut().enumerate() {
            *byte = self.load(tail_at + index);
        }
        true
    }

    /// Compares the `len` bytes at `at` with `key` (as slices compare); `None` if they do not
    /// fit in the page.
    #[inline]
    #[must_use]
    pub fn compare(&self, at: usize, len: usize, key: &[u8]) -> Option<std::cmp::Ordering> {
        self.compare_from(at, len, key, 0)
            .map(|(ordering, _)| ordering)
    }

    /// As [`PageView::compare`], taking the first `skip` bytes as equal (a binary search's
    /// prefix known to be shared, see `btree::node::compare_from`), and returning the length of
    /// the common prefix too (at least `skip`, clamped to both lengths). Only the bytes from
    /// `skip` on are loaded; one bounds check covers them all.
    #[inline]
    #[must_use]
    pub fn compare_from(
        &self,
        at: usize,
        len: usize,
        key: &[u8],
        skip: usize,
    ) -> Option<(std::cmp::Ordering, usize)> {
        if at.checked_add(len)? > self.len {
            return None;
        }
        let common = len.min(key.len());
        let mut index = skip.min(common);
        // Bound: `common - skip` bytes; every load is inside the checked range.
        while index < common {
            let ours = self.load(at + index);
            let theirs = key[index];
            if ours != theirs {
                return Some((ours.cmp(&theirs), index));
            }
            index += 1;
        }
        Some((len.cmp(&key.len()), common))
    }
}

/// An optimistic read in progress: a frame and the (even) version it had when the read began.
/// Not `Clone`: it counts its hit once, at its first successful validation.
#[derive(Debug)]
pub struct OptimisticRead<'a> {
    core: &'a Core,
    frame: FrameId,
    page: PageId,
    version: u64,
    /// Whether a validation succeeded already (and counted the hit and touched the page).
    counted: Cell<bool>,
}

impl<'a> OptimisticRead<'a> {
    /// The page being read.
    #[must_use]
    pub fn page(&self) -> PageId {
        self.page
    }

    /// The page's bytes; what is derived from them is garbage until [`Self::validate`].
    #[must_use]
    pub fn view(&self) -> PageView<'a> {
        let buffer = self.core.frame_buffer(self.frame);
        // SAFETY: the frame arena lives as long as the core and is written only under the
        // exclusive latch.
        unsafe { PageView::of_racing(buffer.as_ptr(), buffer.len()) }
    }

    /// Whether the frame still holds the page, unchanged since the read began: everything
    /// read through [`Self::view`] before this call came from one consistent image. The first
    /// successful validation counts the read as a hit and makes the page young; a failed one
    /// counts an optimistic failure.
    #[must_use]
    pub fn validate(&self) -> bool {
        let frame = self.core.frame(self.frame);
        let valid = frame.version_after_read() == self.version && frame.page_id() == self.page;
        if !valid {
            self.core
                .counters
                .optimistic_failures
                .fetch_add(1, crate::sync::Ordering::Relaxed);
        } else if !self.counted.replace(true) {
            self.core.hits.add(1);
            self.core
                .touch(self.core.instance_of_frame(self.frame), self.frame);
        }
        valid
    }
}

impl Core {
    /// Starts an optimistic read of `page` if it is cached and no writer holds it; `None`
    /// when it is not cached (or past the table) or stays latched exclusive for a few spins.
    /// A start counts nothing: the hit is counted (and the page touched) by the read's first
    /// successful [`OptimisticRead::validate`].
    pub fn optimistic(&self, page: PageId) -> Option<OptimisticRead<'_>> {
        let id = self.table.lookup(page)?;
        // The page's first line (its header and first slots) is read next, after the frame's
        // version: ask for both lines at once so that their cache misses overlap.
        self.prefetch_page(id);
        let frame = self.frame(id);
        let mut spins = 0;
        let version = loop {
            let version = frame.version_for_read();
            if version.is_multiple_of(2) {
                break version;
            }
            spins += 1;
            if spins >= LOCKED_SPINS {
                self.counters
                    .optimistic_failures
                    .fetch_add(1, crate::sync::Ordering::Relaxed);
                return None;
            }
            std::hint::spin_loop();
            if cfg!(feature = "shuttle") {
                crate::sync::yield_now();
            }
        };
        if frame.page_id() != page {
            return None;
        }
        Some(OptimisticRead {
            core: self,
            frame: id,
            page,
            version,
            counted: Cell::new(false),
        })
    }

    /// Runs `read` on the bytes of `page` without pin or latch and returns its result once a
    /// validation shows the bytes were consistent; after [`OPTIMISTIC_ATTEMPTS`] failed
    /// attempts, or when the page is not cached, runs it once on the page read and latched
    /// shared as `BufferPool::read` does. `read` must tolerate any bytes (see [`PageView`]): it
    /// may run several times, and its results are discarded unless validated.
    ///
    /// # Errors
    /// As `BufferPool::read` on the fallback path.
    pub fn read_optimistic<R>(
        &self,
        page: PageId,
        mut read: impl FnMut(PageView<'_>) -> R,
    ) -> crate::error::Result<R> {
        for _ in 0..OPTIMISTIC_ATTEMPTS {
            let Some(attempt) = self.optimistic(page) else {
                break;
            };
            let result = read(attempt.view());
            if attempt.validate() {
                return Ok(result);
            }
        }
        let id = self.fetch(page, super::pool::LatchMode::Shared, true)?;
        let result = read(PageView::of_stable(self.frame_bytes(id)));
        self.release(id, super::pool::LatchMode::Shared);
        Ok(result)
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::PageView;
    use std::cmp::Ordering;

    /// The word-wise copy gives the bytes a byte-wise one gives, for every start and length
    /// around the 8-byte alignment, and refuses ranges past the end.
    #[test]
    fn copies_agree_with_the_bytes_at_every_alignment() {
        let bytes: Vec<u64> = (0..16u64)
            .map(|n| n.wrapping_mul(0x0123_4567_89ab_cdef))
            .collect();
        // SAFETY: a u64 buffer seen as its bytes (8-aligned, so alignments below are known).
        let raw: &[u8] = unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast(), 128) };
        let view = PageView::of_stable(raw);
        for at in 0..40 {
            for len in 0..=(128 - at).min(70) {
                let mut out = vec![0xee; len];
                assert!(view.copy_to(at, &mut out), "at {at} len {len}");
                assert_eq!(out, raw[at..at + len], "at {at} len {len}");
            }
        }
        let mut out = [0u8; 9];
        assert!(!view.copy_to(120, &mut out));
        assert!(!view.copy_to(usize::MAX - 3, &mut out), "no overflow");
    }

    #[test]
    fn views_check_every_bound() {
        let bytes: Vec<u8> = (0u8..16).collect();
        let view = PageView::of_stable(&bytes);
        assert_eq!(view.len(), 16);
        assert_eq!(view.byte(15), Some(15));
        assert_eq!(view.byte(16), None);
        assert_eq!(view.u16_le(14), Some(u16::from_le_bytes([14, 15])));
        assert_eq!(view.u16_le(15), None);
        assert_eq!(view.u64_le(usize::MAX - 2), None, "no overflow");
        assert_eq!(view.u32_le(0), Some(u32::from_le_bytes([0, 1, 2, 3])));
        let mut out = [0u8; 3];
        assert!(view.copy_to(13, &mut out));
        assert_eq!(out, [13, 14, 15]);
        assert!(!view.copy_to(14, &mut out));
        assert_eq!(view.compare(2, 3, &[2, 3, 4]), Some(Ordering::Equal));
        assert_eq!(view.compare(2, 3, &[2, 3]), Some(Ordering::Greater));
        assert_eq!(view.compare(2, 2, &[2, 3, 0]), Some(Ordering::Less));
        assert_eq!(view.compare(2, 3, &[2, 9]), Some(Ordering::Less));
        assert_eq!(view.compare(14, 3, &[]), None);
        assert_eq!(view.compare(usize::MAX, 2, &[]), None);
        assert_eq!(
            view.compare_from(2, 4, &[2, 3, 4, 9], 2),
            Some((Ordering::Less, 3))
        );
        assert_eq!(
            view.compare_from(2, 3, &[2, 3, 4, 5], 9),
            Some((Ordering::Less, 3)),
            "a skip past either length is clamped"
        );
        assert_eq!(
            view.compare_from(2, 2, &[7, 3], 1),
            Some((Ordering::Equal, 2)),
            "skipped bytes are taken as equal"
        );
    }

    /// `u32_be` reads the big-endian value of the four bytes at every offset, even and odd, and
    /// refuses one that runs past the view.
    #[test]
    fn u32_be_agrees_with_the_bytes_at_every_offset() {
        let page: Vec<u8> = (0..64u8).map(|index| index.wrapping_mul(37)).collect();
        let view = PageView::of_stable(&page);
        for at in 0..=60 {
            let expected = u32::from_be_bytes([page[at], page[at + 1], page[at + 2], page[at + 3]]);
            assert_eq!(view.u32_be(at), Some(expected), "{at}");
        }
        assert_eq!(view.u32_be(61), None);
        assert_eq!(view.u32_be(usize::MAX), None);
    }

    /// `records` accepts only runs inside the view that start 2-aligned with an even stride,
    /// and its loads agree with the bytes, refusing an index past the run, an odd offset and
    /// bytes past the record.
    #[test]
    fn records_load_what_the_bytes_say_and_refuse_what_lies_outside() {
        #[repr(align(8))]
        struct Page([u8; 64]);
        let mut page = Page([0; 64]);
        for (index, byte) in page.0.iter_mut().enumerate() {
            *byte = (index as u8).wrapping_mul(37).wrapping_add(11);
        }
        let bytes = &page.0;
        let view = PageView::of_stable(bytes);
        assert!(view.records(9, 6, 2).is_none(), "odd start");
        assert!(view.records(8, 5, 2).is_none(), "odd stride");
        assert!(view.records(8, 6, 10).is_none(), "past the view");
        assert!(view.records(usize::MAX, 6, 2).is_none());
        assert!(view.records(8, usize::MAX, 2).is_none());
        let records = view.records(8, 6, 9).expect("8 + 6 x 9 = 62 <= 64");
        for index in 0..9 {
            let at = 8 + 6 * index;
            let u16_le = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
            let u32_be =
                u32::from_be_bytes([bytes[at + 2], bytes[at + 3], bytes[at + 4], bytes[at + 5]]);
            assert_eq!(records.u16_le(index, 0), Some(u16_le), "{index}");
            assert_eq!(records.u32_be(index, 2), Some(u32_be), "{index}");
            assert_eq!(records.u32_be(index, 2), view.u32_be(at + 2));
        }
        assert_eq!(records.u16_le(9, 0), None, "index past the run");
        assert_eq!(records.u16_le(0, 1), None, "odd offset");
        assert_eq!(records.u32_be(0, 4), None, "past the record");
        assert_eq!(
            records.u32_be(0, usize::MAX - 1),
            None,
            "an offset that would wrap"
        );
        assert_eq!(
            view.records(8, 6, 0).map(|empty| empty.u16_le(0, 0)),
            Some(None)
        );
    }

    /// `compare_from` agrees with slice order and the common prefix for every start offset,
    /// lengths up to the view's end, probes that differ at every position or end early, and
    /// every skip up to the shared prefix.
    #[test]
    fn compare_from_agrees_with_slices_everywhere() {
        let page: Vec<u8> = (0..64u8).map(|index| (index / 3) % 5).collect();
        let view = PageView::of_stable(&page);
        for at in 0..page.len() {
            for len in 0..=(page.len() - at).min(20) {
                let ours = &page[at..at + len];
                let mut probes = vec![ours.to_vec(), [ours, &[0]].concat(), [ours, &[9]].concat()];
                for flip in 0..len {
                    let mut probe = ours.to_vec();
                    probe[flip] = probe[flip].wrapping_add(1);
                    probes.push(probe.clone());
                    probe[flip] = probe[flip].wrapping_sub(2);
                    probes.push(probe.clone());
                    probes.push(probe[..flip].to_vec());
                }
                for probe in &probes {
                    let shared = ours.iter().zip(probe).take_while(|(a, b)| a == b).count();
                    for skip in [0, shared / 2, shared] {
                        assert_eq!(
                            view.compare_from(at, len, probe, skip),
                            Some((ours.cmp(probe.as_slice()), shared)),
                            "at {at} len {len} probe {probe:?} skip {skip}"
                        );
                    }
                }
            }
        }
        assert_eq!(view.compare_from(60, 5, &[0; 5], 0), None, "past the end");
    }
}
