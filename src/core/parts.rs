//! The interfaces of the design-space decisions the core calls (docs/architecture.md's table),
//! other than the replacement order (`order.rs`) and the write path (`write_path.rs`):
//!
//! - [`MissPath`]: how a miss gets a frame (RAW, the LRU-C pointer, WAR's TWB, the fused RW
//!   command, PostgreSQL's backend write, ACE's concurrent write-back). Implementations in
//!   `policy::miss`.
//! - [`Writeback`]: what the background cleaner does each round (InnoDB's page cleaner with a
//!   flush-rate controller, LRU-C's dirty-region flusher, PostgreSQL's bgwriter). In
//!   `policy::writeback`.
//! - [`Prefetcher`]: which pages to read along with a missed one (sequential, history-based). In
//!   `policy::prefetch`.
//!
//! A scheme is one value of each, chosen once when the pool opens (`engine::compose`). The core
//! depends on these traits only, never on an implementation.

use std::fmt::Debug;

use crate::core::frame::FrameId;
use crate::core::instance::Instance;
use crate::core::pool::Core;
use crate::core::stats::ExtraStats;
use crate::error::{PageId, Result};
use crate::page::Lsn;

/// What a miss path got for a miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acquired {
    /// A free frame of the instance: on no list, unmapped, clean, unpinned, unlatched. The core
    /// maps the page to it and reads it in.
    Free(FrameId),
    /// The miss path mapped and filled the page itself (the fused command): the frame holds the
    /// page, is pinned, latched exclusive, on the order, with its I/O state released.
    Ready(FrameId),
    /// Another thread mapped the page meanwhile: look it up again.
    Retry,
}

impl Acquired {
    /// This outcome of an acquisition that began a read stall at device time `stall_began_us`
    /// (`None`: it did not stall).
    #[must_use]
    pub fn after_stall(self, stall_began_us: Option<u64>) -> Acquisition {
        Acquisition {
            acquired: self,
            stall_began_us,
        }
    }
}

/// What [`MissPath::acquire`] returns: the outcome and, if the path had to wait for a write
/// before it had a frame (a read stall), when that wait began. The core counts the stall (and
/// records its wait) together with the miss, and only when the miss goes on to read the page:
/// a stall whose page another thread mapped meanwhile ([`Acquired::Retry`], or a failed
/// mapping) is not counted, because that request is then served as a hit. So read stalls never
/// outnumber misses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Acquisition {
    /// What the miss path got.
    pub acquired: Acquired,
    /// Device time (`Core::now_us`) the read stall began, if there was one.
    pub stall_began_us: Option<u64>,
}

impl From<Acquired> for Acquisition {
    fn from(acquired: Acquired) -> Self {
        acquired.after_stall(None)
    }
}

/// A dirty copy of a page held outside the frames (WAR's TWB) that served a miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldCopy {
    /// Where the miss path keeps it.
    pub slot: usize,
    /// Oldest modification of the copy (the frame takes it over).
    pub oldest: Lsn,
    /// Newest modification of the copy.
    pub newest: Lsn,
}

/// How a foreground miss gets a frame (docs/architecture.md's second decision).
pub trait MissPath: Send + Sync + Debug {
    /// The part's name in compositions (`raw`, `lru-c`, `war`, `rw`, `pg`, `ace`).
    fn name(&self) -> &'static str;

    /// Gets a frame of `instance` for a miss on `page` (which maps to that instance); `read`
    /// says whether the page will be read from the device (false: a new page, created zeroed,
    /// so a path that reads the page itself must not).
    ///
    /// # Errors
    /// No frame within the miss loop's bound, a poisoned pool, device errors.
    fn acquire(
        &self,
        core: &Core,
        instance: &Instance,
        page: PageId,
        read: bool,
    ) -> Result<Acquisition>;

    /// Up to `max` free frames for prefetched pages, without ever waiting for a write (a
    /// prefetch must not stall a miss). The default takes free frames and evicts clean pages
    /// in eviction order.
    fn acquire_for_prefetch(&self, core: &Core, instance: &Instance, max: usize) -> Vec<FrameId> {
        core.acquire_clean(instance, max)
    }

    /// Whether this path keeps a side list (LRU-C's dirty region).
    fn uses_side_list(&self) -> bool {
        false
    }

    /// Whether the side list has its own mutex (LRU-C's LRU-M / LRU-D split).
    fn split_mutex(&self) -> bool {
        false
    }

    /// A hit on a frame on the side list.
    fn side_hit(&self, core: &Core, instance: &Instance, id: FrameId) {
        let _ = (core, instance, id);
    }

    /// Whether this miss path keeps dirty copies outside the frames (WAR's TWB): moves between
    /// them and the flush lists must then be guarded (`Core::begin_held_move`).
    fn holds_copies(&self) -> bool {
        false
    }

    /// Serves a miss from a dirty copy held outside the frames, copying it into `bytes`.
    fn fill_from_held(
        &self,
        core: &Core,
        instance: &Instance,
        page: PageId,
        bytes: &mut [u8],
    ) -> Option<HeldCopy> {
        let _ = (core, instance, page, bytes);
        None
    }

    /// The frame that `fill_from_held` filled is now dirty with the copy's LSNs: drop the copy
    /// unless it is being written.
    fn release_held(&self, core: &Core, instance: &Instance, page: PageId, copy: HeldCopy) {
        let _ = (core, instance, page, copy);
    }

    /// Whether a held copy of `page` is being written now (the pool must not write its own copy
    /// until that write completes, or the older version could land last).
    fn held_write_in_flight(&self, core: &Core, instance: &Instance, page: PageId) -> bool {
        let _ = (core, instance, page);
        false
    }

    /// The oldest modification among held copies (0: none): part of the checkpoint's limit.
    fn held_oldest_lsn(&self, core: &Core) -> Lsn {
        let _ = core;
        0
    }

    /// Pages held outside the frames.
    fn held_pages(&self, core: &Core) -> usize {
        let _ = core;
        0
    }

    /// Writes every held copy of `instance` (cleaner rounds, `flush_all`, recoverability
    /// writes). Returns pages written.
    ///
    /// # Errors
    /// A write failure (the pool is poisoned).
    fn write_held(&self, core: &Core, instance: &Instance) -> Result<usize> {
        let _ = (core, instance);
        Ok(0)
    }

    /// Adds the path's own counters to `out`.
    fn extra_stats(&self, core: &Core, out: &mut ExtraStats) {
        let _ = (core, out);
    }
}

/// What the background cleaner does (docs/architecture.md's third and fourth decisions: write-back
/// and flush-rate control).
pub trait Writeback: Send + Sync + Debug {
    /// The part's name in compositions.
    fn name(&self) -> &'static str;

    /// One round of background work over every instance. Returns how long to sleep before the
    /// next round, in device-time milliseconds (a wake-up from a miss cuts it short).
    ///
    /// # Errors
    /// A write failure (the pool is poisoned).
    fn round(&self, core: &Core) -> Result<u64>;

    /// Adds the part's own counters to `out`.
    fn extra_stats(&self, core: &Core, out: &mut ExtraStats) {
        let _ = (core, out);
    }
}

/// Read-ahead (docs/architecture.md's fifth decision): pages worth reading with a miss.
pub trait Prefetcher: Send + Sync + Debug {
    /// The part's name in compositions (`seq`, `history`).
    fn name(&self) -> &'static str;

    /// Observes an access to `page` (`hit` or miss); on a miss, pushes the pages to read along
    /// with it into `out` (at most `max`).
    fn on_access(&self, page: PageId, hit: bool, max: usize, out: &mut Vec<PageId>);

    /// Bytes of memory the predictor uses now (bounded by its configuration).
    fn memory_bytes(&self) -> usize;

    /// Adds the part's own counters to `out`.
    fn extra_stats(&self, out: &mut ExtraStats) {
        let _ = out;
    }
}
