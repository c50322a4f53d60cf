//! The LRU-family replacement orders, all on the core's intrusive [`LruList`]:
//!
//! - [`MidpointLru`] (`lru-midpoint`): InnoDB's LRU with midpoint insertion (docs/algorithms.md
//!   section 1). A page read from disk enters the head of the old sublist; a hit on an old page
//!   moves it to the head only after `old_blocks_time`; a hit on a young page moves it only when
//!   it has drifted into the older quarter of the young part (InnoDB compares the instance's
//!   eviction counter with the page's `freed_page_clock`), so hot pages take no mutex. Before
//!   the instance's first eviction no hit moves a page at all (InnoDB's warm-up and in-memory
//!   rule, `freed_page_clock == 0`).
//! - [`Lru`] (`lru`): textbook LRU: insert at the head, every hit moves the page to the head.
//! - [`Cflru`] (`cflru`): clean-first LRU (Park et al., ACE section II): LRU order, but eviction
//!   first offers the clean pages of the window of `window` pages at the LRU end, and only then
//!   the pages from the LRU end, dirty ones included.
//! - [`LruWsr`] (`lru-wsr`): LRU with write sequence reordering (Jung et al.): a hit clears the
//!   page's cold flag; at eviction a dirty page without the cold flag is moved to the head with
//!   the flag set (a second chance), and a clean page or a cold dirty page is offered.
//!
//! Walks go from the LRU end toward the head and are bounded by twice the list length (each
//! frame is offered at most twice: CFLRU's two passes, LRU-WSR's second chance).

use crate::core::frame::{Frame, FrameId, NIL, Region};
use crate::core::lru_list::LruList;
use crate::core::order::{HitContext, OrderState, Placement, ReplacementOrder, Verdict};
use crate::sync::Ordering;

/// LRU-WSR's cold flag in the frame's order word.
const COLD: u8 = 1;

/// Which LRU-family order a [`ListState`] implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Midpoint,
    Plain,
    Cflru { window: usize },
    Wsr,
}

/// The per-instance state of every LRU-family order: the list and the flavor.
#[derive(Debug)]
struct ListState {
    list: LruList,
    flavor: Flavor,
}

/// Records the instance's eviction clock when a page reaches the head (InnoDB sets
/// `freed_page_clock` in `buf_LRU_add_block_low` for head insertions).
fn note_made_young(frame: &Frame, context: &HitContext) {
    frame
        .order_clock
        .store(context.evictions, Ordering::Relaxed);
}

impl ListState {
    fn offer(
        &mut self,
        frames: &[Frame],
        id: FrameId,
        visit: &mut dyn FnMut(FrameId) -> Verdict,
    ) -> bool {
        match visit(id) {
            Verdict::Skip => true,
            Verdict::Detach => {
                self.list.remove(frames, id);
                true
            }
            Verdict::Take => {
                self.list.remove(frames, id);
                false
            }
            Verdict::Stop => false,
        }
    }

    /// Walks from the LRU end, offering frames `filter` accepts; `false` when the visitor
    /// stopped the walk.
    fn pass(
        &mut self,
        frames: &[Frame],
        limit: usize,
        filter: &dyn Fn(&Frame) -> bool,
        visit: &mut dyn FnMut(FrameId) -> Verdict,
    ) -> bool {
        let mut cursor = self.list.tail();
        let mut left = limit.min(self.list.len());
        while cursor != NIL && left > 0 {
            left -= 1;
            let prev = LruList::prev(frames, cursor);
            if filter(&frames[cursor as usize]) && !self.offer(frames, cursor, visit) {
                return false;
            }
            cursor = prev;
        }
        true
    }

    fn walk_wsr(&mut self, frames: &[Frame], visit: &mut dyn FnMut(FrameId) -> Verdict) {
        let mut cursor = self.list.tail();
        let mut left = 2 * self.list.len();
        while cursor != NIL && left > 0 {
            left -= 1;
            let prev = LruList::prev(frames, cursor);
            let frame = &frames[cursor as usize];
            let cold = frame.order_word.load(Ordering::Relaxed) & COLD != 0;
            if frame.is_dirty() && !cold {
                // Second chance: to the head, marked cold; it is offered when it comes round.
                frame.order_word.store(COLD, Ordering::Relaxed);
                self.list.remove(frames, cursor);
                self.list.push_head(frames, cursor);
            } else if !self.offer(frames, cursor, visit) {
                return;
            }
            cursor = if prev == NIL { self.list.tail() } else { prev };
        }
    }
}

impl OrderState for ListState {
    fn len(&self) -> usize {
        self.list.len()
    }

    fn insert(
        &mut self,
        frames: &[Frame],
        id: FrameId,
        placement: Placement,
        context: &HitContext,
    ) {
        let frame = &frames[id as usize];
        frame.order_word.store(0, Ordering::Relaxed);
        match (placement, self.flavor) {
            (Placement::Missed | Placement::Prefetched, Flavor::Midpoint) => {
                self.list.push_midpoint(frames, id);
                if !frame.old.load(Ordering::Relaxed) {
                    note_made_young(frame, context);
                }
            }
            (Placement::Prefetched | Placement::Tail, _) => self.list.push_tail(frames, id),
            (Placement::Missed | Placement::Head, _) => {
                self.list.push_head(frames, id);
                note_made_young(frame, context);
            }
        }
    }

    fn remove(&mut self, frames: &[Frame], id: FrameId) {
        self.list.remove(frames, id);
    }

    fn hit(&mut self, frames: &[Frame], id: FrameId, context: &HitContext) {
        self.list.make_young(frames, id);
        note_made_young(&frames[id as usize], context);
    }

    fn walk(&mut self, frames: &[Frame], visit: &mut dyn FnMut(FrameId) -> Verdict) {
        match self.flavor {
            Flavor::Midpoint | Flavor::Plain => {
                self.pass(frames, usize::MAX, &|_| true, visit);
            }
            Flavor::Cflru { window } => {
                if self.pass(frames, window, &|frame| !frame.is_dirty(), visit) {
                    self.pass(frames, usize::MAX, &|_| true, visit);
                }
            }
            Flavor::Wsr => self.walk_wsr(frames, visit),
        }
    }

    fn peek(&self, frames: &[Frame], visit: &mut dyn FnMut(FrameId) -> bool) {
        for id in self.list.iter_from_tail(frames) {
            if !visit(id) {
                return;
            }
        }
    }

    fn members(&self, frames: &[Frame]) -> Vec<FrameId> {
        self.list.iter_from_tail(frames).collect()
    }

    fn check(&self, frames: &[Frame]) -> Result<(), String> {
        self.list.check(frames)
    }
}

/// InnoDB's LRU with midpoint insertion (see the module docs).
#[derive(Debug, Clone)]
pub struct MidpointLru {
    /// `innodb_old_blocks_pct` (5..=95).
    pub old_blocks_pct: usize,
    /// `innodb_old_blocks_time` in device-time milliseconds.
    pub old_blocks_time_ms: u64,
}

impl MidpointLru {
    /// InnoDB's `buf_page_peek_if_too_old` negated: true when the page should stay put.
    fn too_young_to_move(&self, frame: &Frame, context: &HitContext) -> bool {
        if context.evictions == 0 {
            // The instance has evicted nothing yet (InnoDB's `freed_page_clock == 0`): "either
            // the warm-up phase or an in-memory workload", where InnoDB moves no page on a hit.
            return true;
        }
        if frame.old.load(Ordering::Relaxed) {
            if self.old_blocks_time_ms == 0 {
                return false;
            }
            let first = frame.first_access_ms.load(Ordering::Relaxed);
            return first != 0 && context.now_ms.saturating_sub(first) < self.old_blocks_time_ms;
        }
        // Young page: move only if it has drifted into the older quarter of the young part.
        context.evictions
            < frame.order_clock.load(Ordering::Relaxed)
                + self.young_quarter(context.instance_frames)
    }

    /// The older quarter of the young part begins this many evictions after a page was made
    /// young (`buf_page_peek_if_too_old`'s `BUF_LRU_OLD_RATIO` arithmetic).
    fn young_quarter(&self, instance_frames: usize) -> u64 {
        instance_frames as u64 * (100 - self.old_blocks_pct as u64) / 400
    }
}

impl ReplacementOrder for MidpointLru {
    fn name(&self) -> &'static str {
        "lru-midpoint"
    }

    fn new_state(&self, _first_frame: FrameId, _frames: usize) -> Box<dyn OrderState> {
        Box::new(ListState {
            list: LruList::new(Region::Order, self.old_blocks_pct),
            flavor: Flavor::Midpoint,
        })
    }

    fn on_hit(&self, frame: &Frame, context: &HitContext) -> bool {
        !self.too_young_to_move(frame, context)
    }

    fn young_window(&self, instance_frames: usize) -> Option<u64> {
        Some(self.young_quarter(instance_frames))
    }
}

/// Textbook LRU (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct Lru;

impl ReplacementOrder for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }

    fn new_state(&self, _first_frame: FrameId, _frames: usize) -> Box<dyn OrderState> {
        Box::new(ListState {
            list: LruList::new(Region::Order, 0),
            flavor: Flavor::Plain,
        })
    }

    fn on_hit(&self, _frame: &Frame, _context: &HitContext) -> bool {
        true
    }
}

/// Clean-first LRU with a window of `window_pct` % of each instance's frames (CF-LRU's authors
/// suggest a third of the pool).
#[derive(Debug, Clone, Copy)]
pub struct Cflru {
    /// The clean-first window as a percentage of the instance's frames (1..=100).
    pub window_pct: usize,
}

impl ReplacementOrder for Cflru {
    fn name(&self) -> &'static str {
        "cflru"
    }

    fn new_state(&self, _first_frame: FrameId, frames: usize) -> Box<dyn OrderState> {
        Box::new(ListState {
            list: LruList::new(Region::Order, 0),
            flavor: Flavor::Cflru {
                window: (frames * self.window_pct / 100).max(1),
            },
        })
    }

    fn on_hit(&self, _frame: &Frame, _context: &HitContext) -> bool {
        true
    }
}

/// LRU with write sequence reordering (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct LruWsr;

impl ReplacementOrder for LruWsr {
    fn name(&self) -> &'static str {
        "lru-wsr"
    }

    fn new_state(&self, _first_frame: FrameId, _frames: usize) -> Box<dyn OrderState> {
        Box::new(ListState {
            list: LruList::new(Region::Order, 0),
            flavor: Flavor::Wsr,
        })
    }

    fn on_hit(&self, frame: &Frame, _context: &HitContext) -> bool {
        frame.order_word.store(0, Ordering::Relaxed);
        true
    }
}
