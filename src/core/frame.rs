//! Frames: the fixed set of page slots, their latches, pins, I/O state and list links
//! (docs/architecture.md: the core). A frame belongs to one pool instance for its whole life.
//!
//! Invariants (checked by `pool::invariants` in tests):
//! - `page` is `NO_PAGE` exactly when the frame is on the free list or being prepared.
//! - `pin` counts live guards and threads waiting for the latch; a frame with `pin > 0` is never
//!   evicted. The page table is read without a lock, so a pin and an eviction are ordered by a
//!   store-then-load handshake on both sides (all four accesses sequentially consistent):
//!   a pinner increments `pin`, *then* checks that the frame still holds its page and that `io`
//!   is not `IO_EVICT`; an evictor claims `IO_EVICT` (or upgrades its `IO_WRITE` claim to it),
//!   *then* checks that `pin` is zero. Whichever comes second sees the other: the evictor backs
//!   off, or the pinner unpins and looks again. A stale pinner may hold a pin for a few
//!   instructions on a frame that no longer holds its page (or is free); it never latches it.
//! - `io` is claimed by compare-and-swap from `IO_IDLE` (one owner at a time): `IO_READ` while a
//!   miss fills the frame, `IO_WRITE` while a flush writes it, `IO_EVICT` while an evictor owns it.
//!   A frame whose `io` is `IO_EVICT` may change the page it holds while still mapped (the fused
//!   RW command): a thread that pinned it must not wait for its latch (it would wait for a page
//!   it did not ask for); the hit path backs off instead.
//! - `oldest_modification != 0` exactly when the page is dirty, and then the frame is on the
//!   flush list. It changes only under the page latch in exclusive mode (dirtying) or held in
//!   shared mode by the flusher that wrote it (cleaning), and always under the flush-list mutex.
//! - `region` says which list the frame is on; its list links are touched only under that list's
//!   mutex.
//! - `version` is even while no thread holds the latch exclusive and odd while one does: every
//!   exclusive acquisition makes it odd, every exclusive release (or downgrade) makes it even
//!   again, and an eviction that unmaps the frame adds 2. The bytes of a page therefore change
//!   only while `version` is odd, and a frame's `(version, page)` pair is the same before and
//!   after a stretch of time only if its bytes and its page did not change in between: the
//!   seqlock that optimistic reads validate against (`core::optimistic`).
//! - `order_word`, `order_clock`, `first_access_ms` and `old` belong to the replacement order
//!   (clock's usage count, LRU-WSR's cold flag, InnoDB's midpoint bookkeeping); the core only
//!   resets them when a frame is freed.

use crate::error::PageId;
use crate::page::Lsn;
use crate::sync::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Latch, Ordering, fence};

/// Index of a frame.
pub type FrameId = u32;
/// "No frame" in list links.
pub const NIL: FrameId = u32::MAX;
/// "No page" in `Frame::page`.
pub const NO_PAGE: PageId = u64::MAX;

/// Nobody is doing I/O on the frame.
pub const IO_IDLE: u8 = 0;
/// A miss is reading the page into the frame.
pub const IO_READ: u8 = 1;
/// A flush is writing the page.
pub const IO_WRITE: u8 = 2;
/// An evictor owns the frame (clean eviction, TWB copy, fused command).
pub const IO_EVICT: u8 = 3;

/// Which list a frame is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Region {
    /// On no list (being read in or moved).
    None = 0,
    /// On the instance's free list.
    Free = 1,
    /// On the instance's replacement order (for LRU-C: the mixed region).
    Order = 2,
    /// On the instance's side list (LRU-C's dirty region, behind the pointer).
    Side = 3,
}

impl Region {
    fn from_u8(value: u8) -> Region {
        match value {
            1 => Region::Free,
            2 => Region::Order,
            3 => Region::Side,
            _ => Region::None,
        }
    }
}

/// One page slot, alone on its cache lines: the fields a hit touches (latch, page, pin, I/O
/// state and the order's words) come first and share one 64-byte line, and no two frames share
/// a line, so hits on neighbouring frames by different threads do not contend.
#[repr(C, align(64))]
pub struct Frame {
    /// The page latch (shared for readers and flushers, exclusive for writers and reads in).
    latch: Latch,
    /// The page held, or `NO_PAGE`.
    pub page: AtomicU64,
    /// The seqlock word of optimistic reads (see the invariants above).
    version: AtomicU64,
    /// Guards plus latch waiters.
    pub pin: AtomicU32,
    /// I/O state (`IO_*`).
    pub io: AtomicU8,
    region: AtomicU8,
    /// In the old sublist of the LRU (midpoint insertion).
    pub old: AtomicBool,
    /// A small word of the replacement order's (clock: usage count; LRU-WSR: cold flag).
    pub order_word: AtomicU8,
    /// The index of the pool instance owning the frame (fixed when the pool is built).
    pub instance: u32,
    /// The instance's eviction counter when the page was last made young (InnoDB's
    /// `freed_page_clock`).
    pub order_clock: AtomicU64,
    /// Device-time milliseconds of the first access after the page was read in (0 = none yet).
    pub first_access_ms: AtomicU64,
    /// First-dirtying LSN, 0 when clean.
    pub oldest_modification: AtomicU64,
    /// Newest modification LSN (the WAL rule flushes the log to here before a write).
    pub newest_modification: AtomicU64,
    /// LRU / dirty-region links (under that list's mutex).
    pub lru_prev: AtomicU32,
    /// See `lru_prev`.
    pub lru_next: AtomicU32,
    /// Flush-list links (under the flush-list mutex).
    pub flush_prev: AtomicU32,
    /// See `flush_prev`.
    pub flush_next: AtomicU32,
    /// Whether the frame is on the flush list (under the flush-list mutex).
    pub on_flush_list: AtomicBool,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("page", &self.page.load(Ordering::Relaxed))
            .field("pin", &self.pin.load(Ordering::Relaxed))
            .field("io", &self.io.load(Ordering::Relaxed))
            .field("oldest", &self.oldest_modification.load(Ordering::Relaxed))
            .field("region", &self.region())
            .field("latched", &self.latch.is_locked())
            .finish_non_exhaustive()
    }
}

impl Default for Frame {
    fn default() -> Self {
        Frame {
            latch: Latch::new(),
            page: AtomicU64::new(NO_PAGE),
            version: AtomicU64::new(0),
            pin: AtomicU32::new(0),
            io: AtomicU8::new(IO_IDLE),
            oldest_modification: AtomicU64::new(0),
            newest_modification: AtomicU64::new(0),
            region: AtomicU8::new(Region::None as u8),
            old: AtomicBool::new(false),
            order_clock: AtomicU64::new(0),
            first_access_ms: AtomicU64::new(0),
            order_word: AtomicU8::new(0),
            instance: 0,
            lru_prev: AtomicU32::new(NIL),
            lru_next: AtomicU32::new(NIL),
            flush_prev: AtomicU32::new(NIL),
            flush_next: AtomicU32::new(NIL),
            on_flush_list: AtomicBool::new(false),
        }
    }
}

impl Frame {
    /// A free frame of pool instance `instance`.
    #[must_use]
    pub fn of_instance(instance: u32) -> Self {
        Frame {
            instance,
            ..Frame::default()
        }
    }

    /// The page held (`NO_PAGE` if none).
    pub fn page_id(&self) -> PageId {
        self.page.load(Ordering::SeqCst)
    }

    /// Which list the frame is on.
    pub fn region(&self) -> Region {
        Region::from_u8(self.region.load(Ordering::Acquire))
    }

    /// Records the frame's list (call under that list's mutex).
    pub fn set_region(&self, region: Region) {
        self.region.store(region as u8, Ordering::Release);
    }

    /// Whether the page has changes not yet written.
    pub fn is_dirty(&self) -> bool {
        self.oldest_modification.load(Ordering::Acquire) != 0
    }

    /// Pins the frame.
    pub fn pin(&self) {
        let before = self.pin.fetch_add(1, Ordering::SeqCst);
        assert!(before < u32::MAX / 2, "pin count overflow");
    }

    /// Unpins the frame.
    pub fn unpin(&self) {
        let before = self.pin.fetch_sub(1, Ordering::AcqRel);
        assert!(before > 0, "unpin of an unpinned frame");
    }

    /// Whether any guard or waiter holds the frame.
    pub fn is_pinned(&self) -> bool {
        self.pin.load(Ordering::SeqCst) > 0
    }

    /// Claims the I/O state from idle.
    pub fn try_claim_io(&self, state: u8) -> bool {
        self.io
            .compare_exchange(IO_IDLE, state, Ordering::SeqCst, Ordering::Acquire)
            .is_ok()
    }

    /// Changes a claimed I/O state `from` into `to` (an evictor's `IO_WRITE` into `IO_EVICT`
    /// before it checks the pins, and back).
    pub fn change_io(&self, from: u8, to: u8) {
        let previous = self.io.swap(to, Ordering::SeqCst);
        assert_eq!(previous, from, "changed an I/O state the frame was not in");
    }

    /// Releases a claimed I/O state.
    pub fn release_io(&self, state: u8) {
        let previous = self.io.swap(IO_IDLE, Ordering::SeqCst);
        assert_eq!(
            previous, state,
            "released an I/O state the frame was not in"
        );
    }

    /// Current I/O state.
    pub fn io_state(&self) -> u8 {
        self.io.load(Ordering::SeqCst)
    }

    /// Whether the latch is held by anyone (diagnostics only: racy by nature).
    pub fn is_latched(&self) -> bool {
        self.latch.is_locked()
    }

    /// Takes the latch shared.
    pub fn latch_shared(&self) {
        self.latch.lock_shared();
    }

    /// Tries to take the latch shared.
    pub fn try_latch_shared(&self) -> bool {
        self.latch.try_lock_shared()
    }

    /// Takes the latch exclusive (the version turns odd).
    pub fn latch_exclusive(&self) {
        self.latch.lock_exclusive();
        self.begin_change();
    }

    /// Tries to take the latch exclusive (on success the version turns odd).
    pub fn try_latch_exclusive(&self) -> bool {
        let taken = self.latch.try_lock_exclusive();
        if taken {
            self.begin_change();
        }
        taken
    }

    /// The seqlock writer's entry (the exclusive latch is held, so no other thread stores the
    /// version): odd, then a release fence so that no byte written afterwards can be seen by a
    /// reader whose acquire-fenced re-check still loads the old, even version.
    fn begin_change(&self) {
        let version = self.version.load(Ordering::Relaxed);
        debug_assert!(version.is_multiple_of(2), "exclusive latch taken twice");
        self.version
            .store(version.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
    }

    /// The seqlock writer's exit (before the exclusive latch is released): even again, with
    /// release ordering so that a reader that loads the new version sees every byte written.
    fn end_change(&self) {
        let version = self.version.load(Ordering::Relaxed);
        debug_assert!(
            version % 2 == 1,
            "exclusive release without a change in progress"
        );
        self.version
            .store(version.wrapping_add(1), Ordering::Release);
    }

    /// The version word, for an optimistic read's start (acquire: the bytes read afterwards
    /// are at least as new as the change that produced this version).
    pub fn version_for_read(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The version word, for an optimistic read's validation: an acquire fence orders the
    /// reader's byte loads before this load (the seqlock reader's exit).
    pub fn version_after_read(&self) -> u64 {
        fence(Ordering::Acquire);
        self.version.load(Ordering::Relaxed)
    }

    /// Records an eviction or remap of the frame (the caller just changed `page`): adds 2, so
    /// a reader that started before fails its validation even if the frame comes back to the
    /// same page without an exclusive latch in between.
    pub fn note_remap(&self) {
        self.version.fetch_add(2, Ordering::AcqRel);
    }

    /// Releases a shared latch.
    ///
    /// # Safety
    /// The caller holds the latch in shared mode.
    pub unsafe fn unlatch_shared(&self) {
        // SAFETY: forwarded.
        unsafe { self.latch.unlock_shared() }
    }

    /// Releases an exclusive latch.
    ///
    /// # Safety
    /// The caller holds the latch in exclusive mode.
    pub unsafe fn unlatch_exclusive(&self) {
        self.end_change();
        // SAFETY: forwarded.
        unsafe { self.latch.unlock_exclusive() }
    }

    /// Downgrades an exclusive latch to shared.
    ///
    /// # Safety
    /// The caller holds the latch in exclusive mode.
    pub unsafe fn downgrade(&self) {
        self.end_change();
        // SAFETY: forwarded.
        unsafe { self.latch.downgrade() }
    }

    /// Records a modification at `lsn` (caller holds the latch exclusive). Returns whether the
    /// page was clean before (the caller must then put it on the flush list).
    pub fn note_modification(&self, lsn: Lsn) -> bool {
        assert!(lsn > 0, "LSN 0 means clean");
        self.newest_modification.fetch_max(lsn, Ordering::AcqRel);
        self.oldest_modification.load(Ordering::Acquire) == 0
    }
}
