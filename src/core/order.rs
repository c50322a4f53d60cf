//! The replacement-order interface (docs/architecture.md's first design decision): where a page
//! goes when it is read in, what a hit does, and in which order pages are offered for eviction.
//!
//! The core holds one [`OrderState`] per pool instance under the instance's list mutex (LRU-M)
//! and one shared [`ReplacementOrder`] that makes the lock-free part of each decision. The
//! implementations live in `policy::order` (InnoDB's midpoint LRU, LRU, Clock Sweep, CFLRU,
//! LRU-WSR); the core knows none of them.
//!
//! **Hits.** [`ReplacementOrder::on_hit`] runs on every hit without any mutex (it may update the
//! frame's own order words, e.g. clock's usage count) and says whether the list must change;
//! only then does the core take LRU-M and call [`OrderState::hit`]. So a hot page that need not
//! move costs no mutex.
//!
//! **Eviction order.** [`OrderState::walk`] offers frames in the order this policy would evict
//! them, applying its own bookkeeping on the way (clock decrements usage counts it passes,
//! LRU-WSR gives a dirty page without the cold flag a second chance at the head, CFLRU offers the
//! clean pages of its window first). The visitor (a miss path or a write-back) decides what to
//! do with each frame with a [`Verdict`]. Every walk is bounded by a small multiple of the list
//! length, stated by each implementation.

use std::fmt::Debug;

use crate::core::frame::{Frame, FrameId};
use crate::sync::{AtomicU64, Ordering};

/// Where a frame goes when it joins the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// A page just read in on a demand miss (InnoDB: the midpoint; LRU: the head; clock: count 1).
    Missed,
    /// A prefetched page, cheap to drop if the guess was wrong (the eviction end; count 0).
    Prefetched,
    /// The most recently used end (RW puts the fused frame here; LRU-C a dirty-region hit).
    Head,
    /// The least recently used end (a victim given back unused).
    Tail,
}

/// What a walk's visitor wants done with the frame it was offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Leave it where it is; offer the next one.
    Skip,
    /// Unlink it from the order (the visitor now owns its place: the free list, the side list)
    /// and offer the next one.
    Detach,
    /// Unlink it and stop the walk.
    Take,
    /// Stop the walk; leave this frame where it is.
    Stop,
}

/// What the lock-free hit decision may look at.
#[derive(Debug, Clone, Copy)]
pub struct HitContext {
    /// Frames in the instance.
    pub instance_frames: usize,
    /// The instance's eviction counter (InnoDB's `freed_page_clock`).
    pub evictions: u64,
    /// Device-time milliseconds since the pool opened, as of the pool's latest precise clock
    /// reading ([`CoarseClock`]): never ahead of the precise clock, behind it by at most the
    /// time since the last miss or page-cleaner round.
    pub now_ms: u64,
}

/// Device-time milliseconds as a hit may read them without a clock call.
///
/// InnoDB's `buf_page_peek_if_too_old` reads the clock on every hit on an old page
/// (`ut_time_ms`); on this host that call costs about 30 ns, more than the rest of a cached
/// page access. The pool reads the precise clock anyway on every miss (the page's first
/// access time), in every page-cleaner round and for every I/O it times, and each such reading
/// advances this value; a hit reads it with one relaxed load. The value is never ahead of the
/// precise clock, so a hit can only judge an old page younger than InnoDB would, by at most
/// the time since the last precise reading: microseconds while the pool misses (the only time
/// the order decides anything), at most a cleaner period while it is idle in the background.
/// The line is written at most once per device millisecond, so hits on other cores re-read it
/// at most that often. Invariant: it never decreases.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct CoarseClock {
    ms: AtomicU64,
}

impl CoarseClock {
    /// The latest value.
    #[inline]
    #[must_use]
    pub fn load(&self) -> u64 {
        self.ms.load(Ordering::Relaxed)
    }

    /// Records a precise reading of `ms` (a no-op unless it is newer than the value).
    #[inline]
    pub fn advance(&self, ms: u64) {
        if ms > self.ms.load(Ordering::Relaxed) {
            self.ms.fetch_max(ms, Ordering::Relaxed);
        }
    }
}

/// The shared, stateless part of a replacement order.
pub trait ReplacementOrder: Send + Sync + Debug {
    /// The order's name in compositions (`lru-midpoint`, `lru`, `clock`, `cflru`, `lru-wsr`).
    fn name(&self) -> &'static str;

    /// A fresh, empty per-instance state for an instance owning the frames
    /// `first_frame .. first_frame + frames`.
    fn new_state(&self, first_frame: FrameId, frames: usize) -> Box<dyn OrderState>;

    /// The lock-free part of a hit on `frame` (which is on this order); returns whether the
    /// list must change, in which case the core calls [`OrderState::hit`] under the list mutex.
    fn on_hit(&self, frame: &Frame, context: &HitContext) -> bool;

    /// For an instance of `instance_frames` frames, the window of InnoDB's young-page rule:
    /// a hit on a page that is not old (`Frame::old` clear) while the instance's evictions are
    /// below the page's `order_clock` plus this changes nothing, and neither does any hit
    /// before the instance's first eviction, so the core skips [`ReplacementOrder::on_hit`]
    /// for them (the hit path's common case, without a call through the trait object). `None`
    /// (the default): every hit asks `on_hit`. An order that returns a window must answer
    /// `on_hit` with `false` for every such hit.
    fn young_window(&self, _instance_frames: usize) -> Option<u64> {
        None
    }
}

/// The per-instance list of a replacement order, always used under the instance's LRU-M mutex.
pub trait OrderState: Send + Debug {
    /// Frames on the order.
    fn len(&self) -> usize;

    /// Whether no frame is on the order.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `id` (on no list) at `placement`.
    fn insert(&mut self, frames: &[Frame], id: FrameId, placement: Placement, context: &HitContext);

    /// Unlinks `id`, which is on this order.
    fn remove(&mut self, frames: &[Frame], id: FrameId);

    /// The locked part of a hit on `id` (after [`ReplacementOrder::on_hit`] asked for it);
    /// re-checks that the move is still wanted.
    fn hit(&mut self, frames: &[Frame], id: FrameId, context: &HitContext);

    /// Offers frames in eviction order to `visit`, applying the policy's own bookkeeping, until
    /// the visitor says [`Verdict::Take`] or [`Verdict::Stop`] or the bound is reached.
    fn walk(&mut self, frames: &[Frame], visit: &mut dyn FnMut(FrameId) -> Verdict);

    /// Offers frames in eviction order *without* the policy's bookkeeping (no usage count is
    /// decremented, no second chance given) to a reader that only looks, such as PostgreSQL's
    /// bgwriter scanning ahead of the clock hand; only frames the policy would evict now are
    /// offered (clock: unpinned with usage count zero). Stops when `visit` returns false.
    /// Bounded by the order's length.
    fn peek(&self, frames: &[Frame], visit: &mut dyn FnMut(FrameId) -> bool);

    /// A writer's look-ahead (ACE): offers the frames the order will evict next, in that order,
    /// until `visit` returns false. By default a [`OrderState::walk`] that takes nothing, so
    /// the bookkeeping an eviction scan applies to the pages it passes happens (LRU-WSR's second
    /// chance). An order whose walk would change more than the coming evictions do overrides
    /// it (Clock Sweep: finding n dirty pages can take several sweeps, each decrementing every
    /// usage count, which ages the whole pool; it looks with [`OrderState::peek`] instead).
    fn lookahead(&mut self, frames: &[Frame], visit: &mut dyn FnMut(FrameId) -> bool) {
        self.walk(frames, &mut |id| {
            if visit(id) {
                Verdict::Skip
            } else {
                Verdict::Stop
            }
        });
    }

    /// Every frame on the order (for the invariant checker).
    fn members(&self, frames: &[Frame]) -> Vec<FrameId>;

    /// Checks the structure.
    ///
    /// # Errors
    /// A description of the first problem.
    fn check(&self, frames: &[Frame]) -> Result<(), String>;
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::CoarseClock;

    #[test]
    fn the_coarse_clock_only_moves_forward() {
        let clock = CoarseClock::default();
        assert_eq!(clock.load(), 0);
        clock.advance(7);
        assert_eq!(clock.load(), 7);
        clock.advance(3);
        assert_eq!(clock.load(), 7, "an older reading does not move it back");
        clock.advance(7);
        clock.advance(12);
        assert_eq!(clock.load(), 12);
        assert_eq!(
            std::mem::align_of::<CoarseClock>(),
            128,
            "its own cache lines"
        );
    }
}
