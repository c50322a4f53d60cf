//! PostgreSQL's Clock Sweep (docs/algorithms.md section 5b; `StrategyGetBuffer` in PostgreSQL's
//! freelist.c): every buffer has a usage count, raised by one on each access up to 5
//! (`BM_MAX_USAGE_COUNT`) without any lock; the hand goes round the instance's frames, skips
//! pinned buffers, decrements the count of unpinned ones and offers the first whose count is
//! zero. A page read in on a demand miss starts at 1 (PostgreSQL's `PinBuffer` on a new
//! buffer), a prefetched one at 0.
//!
//! The state is the hand and the set of frames on the order (the frames of the instance whose
//! region is `Order`); the usage count is the frame's `order_word`. A walk is bounded by
//! `(BM_MAX_USAGE_COUNT + 2)` sweeps of the instance: after five sweeps every unpinned count has
//! reached zero.

use crate::core::frame::{Frame, FrameId, Region};
use crate::core::order::{HitContext, OrderState, Placement, ReplacementOrder, Verdict};
use crate::sync::Ordering;

/// PostgreSQL's `BM_MAX_USAGE_COUNT`.
pub const MAX_USAGE: u8 = 5;

/// Clock Sweep (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct ClockSweep;

#[derive(Debug)]
struct ClockState {
    first: FrameId,
    frames: usize,
    /// Offset of the next frame the hand looks at.
    hand: usize,
    members: usize,
}

impl ReplacementOrder for ClockSweep {
    fn name(&self) -> &'static str {
        "clock"
    }

    fn new_state(&self, first_frame: FrameId, frames: usize) -> Box<dyn OrderState> {
        Box::new(ClockState {
            first: first_frame,
            frames,
            hand: 0,
            members: 0,
        })
    }

    fn on_hit(&self, frame: &Frame, _context: &HitContext) -> bool {
        let _ = frame
            .order_word
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |count| {
                (count < MAX_USAGE).then_some(count + 1)
            });
        false
    }
}

impl ClockState {
    fn id_at(&self, offset: usize) -> FrameId {
        self.first + offset as FrameId
    }
}

impl OrderState for ClockState {
    fn len(&self) -> usize {
        self.members
    }

    fn insert(&mut self, frames: &[Frame], id: FrameId, placement: Placement, _: &HitContext) {
        let frame = &frames[id as usize];
        assert_eq!(
            frame.region(),
            Region::None,
            "frame {id} inserted while on a list"
        );
        let count = match placement {
            Placement::Missed => 1,
            Placement::Head => MAX_USAGE,
            Placement::Prefetched | Placement::Tail => 0,
        };
        frame.order_word.store(count, Ordering::Relaxed);
        frame.set_region(Region::Order);
        self.members += 1;
    }

    fn remove(&mut self, frames: &[Frame], id: FrameId) {
        let frame = &frames[id as usize];
        assert_eq!(
            frame.region(),
            Region::Order,
            "frame {id} is not on the clock"
        );
        frame.set_region(Region::None);
        frame.order_word.store(0, Ordering::Relaxed);
        self.members -= 1;
    }

    fn hit(&mut self, _frames: &[Frame], _id: FrameId, _context: &HitContext) {}

    fn walk(&mut self, frames: &[Frame], visit: &mut dyn FnMut(FrameId) -> Verdict) {
        if self.members == 0 {
            return;
        }
        let steps = (usize::from(MAX_USAGE) + 2) * self.frames;
        for _ in 0..steps {
            let id = self.id_at(self.hand);
            self.hand = (self.hand + 1) % self.frames;
            let frame = &frames[id as usize];
            if frame.region() != Region::Order || frame.is_pinned() {
                continue;
            }
            let count = frame.order_word.load(Ordering::Relaxed);
            if count > 0 {
                frame.order_word.store(count - 1, Ordering::Relaxed);
                continue;
            }
            match visit(id) {
                Verdict::Skip => {}
                Verdict::Detach => self.remove(frames, id),
                Verdict::Take => {
                    self.remove(frames, id);
                    return;
                }
                Verdict::Stop => return,
            }
            if self.members == 0 {
                return;
            }
        }
    }

    fn peek(&self, frames: &[Frame], visit: &mut dyn FnMut(FrameId) -> bool) {
        for step in 0..self.frames {
            let id = self.id_at((self.hand + step) % self.frames);
            let frame = &frames[id as usize];
            if frame.region() == Region::Order
                && !frame.is_pinned()
                && frame.order_word.load(Ordering::Relaxed) == 0
                && !visit(id)
            {
                return;
            }
        }
    }

    fn lookahead(&mut self, frames: &[Frame], visit: &mut dyn FnMut(FrameId) -> bool) {
        // Only the pages the hand would evict in its current sweep: a walk would decrement
        // every usage count for up to seven sweeps to find the pages asked for.
        self.peek(frames, visit);
    }

    fn members(&self, frames: &[Frame]) -> Vec<FrameId> {
        (0..self.frames)
            .map(|offset| self.id_at(offset))
            .filter(|&id| frames[id as usize].region() == Region::Order)
            .collect()
    }

    fn check(&self, frames: &[Frame]) -> Result<(), String> {
        let count = self.members(frames).len();
        if count != self.members {
            return Err(format!(
                "clock: {count} frames say they are on it, it counts {}",
                self.members
            ));
        }
        Ok(())
    }
}
