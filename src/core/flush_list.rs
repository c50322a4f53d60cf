//! The flush list: dirty frames ordered by `oldest_modification`, newest at the head, oldest at
//! the tail (InnoDB's `buf_pool->flush_list`). Checkpoint flushing writes from the tail.
//!
//! Links live in the frames (`flush_prev`/`flush_next`) and are touched only under the
//! flush-list mutex. Insertion walks from the head past frames with a larger LSN, so the order
//! holds even when concurrent writers dirty pages slightly out of LSN order; the walk is bounded
//! by the number of such races, in practice a few frames.

use crate::sync::Ordering;

use super::frame::{Frame, FrameId, NIL};
use crate::page::Lsn;

/// The flush list.
#[derive(Debug, Default)]
pub struct FlushList {
    head: FrameId,
    tail: FrameId,
    len: usize,
}

impl FlushList {
    /// An empty list.
    pub fn new() -> Self {
        FlushList {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }

    /// Number of dirty frames.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no frame is dirty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The frame with the oldest modification.
    pub fn tail(&self) -> FrameId {
        self.tail
    }

    /// The frame after `id` toward the head (next newer).
    pub fn newer(frames: &[Frame], id: FrameId) -> FrameId {
        frames[id as usize].flush_prev.load(Ordering::Relaxed)
    }

    fn lsn(frames: &[Frame], id: FrameId) -> Lsn {
        frames[id as usize]
            .oldest_modification
            .load(Ordering::Relaxed)
    }

    /// Marks `id` dirty at `lsn` and inserts it in order.
    pub fn insert(&mut self, frames: &[Frame], id: FrameId, lsn: Lsn) {
        let frame = &frames[id as usize];
        assert!(
            !frame.on_flush_list.load(Ordering::Relaxed),
            "frame {id} already dirty"
        );
        assert!(lsn > 0);
        frame.oldest_modification.store(lsn, Ordering::Release);
        // Find the first frame (from the head) whose LSN is <= ours; insert before it.
        let mut after = NIL; // the frame that will precede us (newer)
        let mut cursor = self.head;
        let mut steps = 0usize;
        while cursor != NIL && Self::lsn(frames, cursor) > lsn {
            after = cursor;
            cursor = frames[cursor as usize].flush_next.load(Ordering::Relaxed);
            steps += 1;
            assert!(steps <= self.len, "flush list cycle");
        }
        frame.flush_prev.store(after, Ordering::Relaxed);
        frame.flush_next.store(cursor, Ordering::Relaxed);
        if after == NIL {
            self.head = id;
        } else {
            frames[after as usize]
                .flush_next
                .store(id, Ordering::Relaxed);
        }
        if cursor == NIL {
            self.tail = id;
        } else {
            frames[cursor as usize]
                .flush_prev
                .store(id, Ordering::Relaxed);
        }
        frame.on_flush_list.store(true, Ordering::Relaxed);
        self.len += 1;
    }

    /// Removes `id` and marks it clean.
    pub fn remove(&mut self, frames: &[Frame], id: FrameId) {
        let frame = &frames[id as usize];
        assert!(
            frame.on_flush_list.load(Ordering::Relaxed),
            "frame {id} not on the flush list"
        );
        let prev = frame.flush_prev.load(Ordering::Relaxed);
        let next = frame.flush_next.load(Ordering::Relaxed);
        if prev == NIL {
            self.head = next;
        } else {
            frames[prev as usize]
                .flush_next
                .store(next, Ordering::Relaxed);
        }
        if next == NIL {
            self.tail = prev;
        } else {
            frames[next as usize]
                .flush_prev
                .store(prev, Ordering::Relaxed);
        }
        frame.flush_prev.store(NIL, Ordering::Relaxed);
        frame.flush_next.store(NIL, Ordering::Relaxed);
        frame.on_flush_list.store(false, Ordering::Relaxed);
        frame.oldest_modification.store(0, Ordering::Release);
        self.len -= 1;
    }

    /// The oldest modification LSN in the list (0 when empty).
    pub fn oldest_lsn(&self, frames: &[Frame]) -> Lsn {
        if self.tail == NIL {
            0
        } else {
            Self::lsn(frames, self.tail)
        }
    }

    /// Up to `limit` frames from the tail (oldest first) whose oldest modification is below
    /// `lsn_limit`.
    pub fn oldest(&self, frames: &[Frame], limit: usize, lsn_limit: Lsn) -> Vec<FrameId> {
        let mut out = Vec::with_capacity(limit.min(self.len));
        let mut cursor = self.tail;
        while cursor != NIL && out.len() < limit && Self::lsn(frames, cursor) < lsn_limit {
            out.push(cursor);
            cursor = Self::newer(frames, cursor);
        }
        out
    }

    /// Checks links, order and length.
    ///
    /// # Errors
    /// A description of the first broken invariant.
    pub fn check(&self, frames: &[Frame]) -> Result<(), String> {
        let mut count = 0;
        let mut cursor = self.head;
        let mut prev = NIL;
        let mut last_lsn = Lsn::MAX;
        while cursor != NIL {
            let frame = &frames[cursor as usize];
            let lsn = Self::lsn(frames, cursor);
            if lsn == 0 || lsn > last_lsn {
                return Err(format!(
                    "flush list out of order at frame {cursor} (lsn {lsn})"
                ));
            }
            if frame.flush_prev.load(Ordering::Relaxed) != prev {
                return Err(format!("flush list: broken prev link at {cursor}"));
            }
            last_lsn = lsn;
            count += 1;
            if count > self.len {
                return Err("flush list cycle".into());
            }
            prev = cursor;
            cursor = frame.flush_next.load(Ordering::Relaxed);
        }
        if count != self.len || prev != self.tail {
            return Err(format!("flush list length {count} vs {}", self.len));
        }
        Ok(())
    }
}
