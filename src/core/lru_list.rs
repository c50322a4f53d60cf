//! An intrusive doubly-linked list over frames, with InnoDB's midpoint insertion as an option
//! (docs/algorithms.md section 1): the old sublist targets `old_pct` % of the list within a
//! tolerance of 20 pages, and exists only when the list has at least 512 pages.
//!
//! The list owns no memory: links live in the frames (`lru_prev`/`lru_next`) and are touched only
//! by the holder of the mutex that guards this list. Head = most recently used.
//! The LRU-family replacement orders (`policy::order`) are built on it, and so is the
//! instance's side list (LRU-C's dirty region, with midpoint insertion off).

use crate::core::frame::{Frame, FrameId, NIL, Region};
use crate::sync::Ordering;

/// InnoDB's `BUF_LRU_OLD_MIN_LEN`.
pub const OLD_MIN_LEN: usize = 512;
/// InnoDB's `BUF_LRU_OLD_TOLERANCE`.
pub const OLD_TOLERANCE: usize = 20;

/// An LRU list of frames.
#[derive(Debug)]
pub struct LruList {
    head: FrameId,
    tail: FrameId,
    len: usize,
    /// First (most recent) frame of the old sublist, or NIL.
    old: FrameId,
    old_len: usize,
    /// Target share of the old sublist in percent; 0 disables midpoint insertion.
    old_pct: usize,
    region: Region,
}

impl LruList {
    /// An empty list whose frames are marked `region`. `old_pct` of 0 disables the midpoint.
    pub fn new(region: Region, old_pct: usize) -> Self {
        assert!(old_pct <= 95, "old_blocks_pct is at most 95");
        LruList {
            head: NIL,
            tail: NIL,
            len: 0,
            old: NIL,
            old_len: 0,
            old_pct,
            region,
        }
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Most recently used frame.
    pub fn head(&self) -> FrameId {
        self.head
    }

    /// Least recently used frame.
    pub fn tail(&self) -> FrameId {
        self.tail
    }

    /// Length of the old sublist.
    pub fn old_len(&self) -> usize {
        self.old_len
    }

    /// The frame after `id` toward the tail.
    pub fn next(frames: &[Frame], id: FrameId) -> FrameId {
        frames[id as usize].lru_next.load(Ordering::Relaxed)
    }

    /// The frame before `id` toward the head.
    pub fn prev(frames: &[Frame], id: FrameId) -> FrameId {
        frames[id as usize].lru_prev.load(Ordering::Relaxed)
    }

    fn midpoint_active(&self) -> bool {
        self.old_pct > 0 && self.len >= OLD_MIN_LEN
    }

    /// Inserts at the head (young).
    pub fn push_head(&mut self, frames: &[Frame], id: FrameId) {
        self.link_between(frames, id, NIL, self.head);
        frames[id as usize].old.store(false, Ordering::Relaxed);
        self.after_insert(frames);
    }

    /// Inserts at the tail (the least recently used end).
    pub fn push_tail(&mut self, frames: &[Frame], id: FrameId) {
        self.link_between(frames, id, self.tail, NIL);
        let frame = &frames[id as usize];
        if self.old == NIL {
            frame.old.store(false, Ordering::Relaxed);
        } else {
            frame.old.store(true, Ordering::Relaxed);
            self.old_len += 1;
        }
        self.after_insert(frames);
    }

    /// Inserts at the head of the old sublist (midpoint insertion of a page read from disk), or
    /// at the head when the list is too short to have an old sublist.
    pub fn push_midpoint(&mut self, frames: &[Frame], id: FrameId) {
        if self.old == NIL {
            self.push_head(frames, id);
            return;
        }
        let before = Self::prev(frames, self.old);
        self.link_between(frames, id, before, self.old);
        frames[id as usize].old.store(true, Ordering::Relaxed);
        self.old = id;
        self.old_len += 1;
        self.after_insert(frames);
    }

    /// Unlinks `id`, which must be on this list.
    pub fn remove(&mut self, frames: &[Frame], id: FrameId) {
        self.unlink(frames, id, "removed from");
        let frame = &frames[id as usize];
        frame.lru_prev.store(NIL, Ordering::Relaxed);
        frame.lru_next.store(NIL, Ordering::Relaxed);
        frame.old.store(false, Ordering::Relaxed);
        frame.set_region(Region::None);
        self.len -= 1;
        if self.len < OLD_MIN_LEN && self.old != NIL {
            self.clear_old(frames);
        } else {
            self.adjust_old_len(frames);
        }
    }

    /// Takes `id` (on this list) out of the links and the old sublist's count, leaving the
    /// frame's own links, flag, region and the list's length to the caller; `action` names the
    /// caller's operation in the assertion's message.
    fn unlink(&mut self, frames: &[Frame], id: FrameId, action: &str) {
        let frame = &frames[id as usize];
        assert_eq!(
            frame.region(),
            self.region,
            "frame {id} {action} a list it is not on"
        );
        let prev = frame.lru_prev.load(Ordering::Relaxed);
        let next = frame.lru_next.load(Ordering::Relaxed);
        if self.old == id {
            // The boundary moves one step toward the tail (NIL if `id` was the only old page);
            // adjust_old_len rebalances.
            self.old = next;
        }
        if frame.old.load(Ordering::Relaxed) {
            self.old_len -= 1;
        }
        if prev == NIL {
            self.head = next;
        } else {
            frames[prev as usize]
                .lru_next
                .store(next, Ordering::Relaxed);
        }
        if next == NIL {
            self.tail = prev;
        } else {
            frames[next as usize]
                .lru_prev
                .store(prev, Ordering::Relaxed);
        }
    }

    /// Moves `id` (on this list) to the head, relinking it in place: the list's length does
    /// not change, so the old sublist is kept and its boundary adjusted (at most a few steps).
    ///
    /// InnoDB's `buf_LRU_make_block_young` is a remove followed by an add. On a list of
    /// exactly [`OLD_MIN_LEN`] pages the remove drops below the minimum and clears the old flag
    /// of every old page, and the add marks them again from the tail: two walks of about 190
    /// frames under the LRU mutex on every young-making hit. InnoDB's instances are far too
    /// large to sit there, but a scaled-down pool can (an instance whose resident pages settle
    /// at 512; `cargo bench --bench hit_path` with 4,096 pages in 8 instances spent 70% of
    /// its time in those walks, 330 ns per hit). The result differs from InnoDB's only in
    /// where inside the tolerance the boundary lands.
    pub fn make_young(&mut self, frames: &[Frame], id: FrameId) {
        self.unlink(frames, id, "made young on");
        let frame = &frames[id as usize];
        // Linked again at the head, young; the length is unchanged.
        let first = self.head;
        frame.lru_prev.store(NIL, Ordering::Relaxed);
        frame.lru_next.store(first, Ordering::Relaxed);
        if first == NIL {
            self.tail = id;
        } else {
            frames[first as usize].lru_prev.store(id, Ordering::Relaxed);
        }
        self.head = id;
        frame.old.store(false, Ordering::Relaxed);
        self.adjust_old_len(frames);
    }

    fn link_between(&mut self, frames: &[Frame], id: FrameId, prev: FrameId, next: FrameId) {
        let frame = &frames[id as usize];
        assert_eq!(
            frame.region(),
            Region::None,
            "frame {id} inserted while on a list"
        );
        frame.lru_prev.store(prev, Ordering::Relaxed);
        frame.lru_next.store(next, Ordering::Relaxed);
        if prev == NIL {
            self.head = id;
        } else {
            frames[prev as usize].lru_next.store(id, Ordering::Relaxed);
        }
        if next == NIL {
            self.tail = id;
        } else {
            frames[next as usize].lru_prev.store(id, Ordering::Relaxed);
        }
        frame.set_region(self.region);
        self.len += 1;
    }

    fn after_insert(&mut self, frames: &[Frame]) {
        if self.old == NIL && self.midpoint_active() {
            self.init_old(frames);
        } else {
            self.adjust_old_len(frames);
        }
    }

    fn target_old_len(&self) -> usize {
        self.len * self.old_pct / 100
    }

    /// InnoDB's `buf_LRU_old_init`: mark from the tail up to the target.
    fn init_old(&mut self, frames: &[Frame]) {
        if self.tail == NIL {
            return;
        }
        self.old = self.tail;
        frames[self.tail as usize]
            .old
            .store(true, Ordering::Relaxed);
        self.old_len = 1;
        self.adjust_old_len(frames);
    }

    fn clear_old(&mut self, frames: &[Frame]) {
        let mut cursor = self.old;
        // Bound: at most `len` frames.
        while cursor != NIL {
            frames[cursor as usize].old.store(false, Ordering::Relaxed);
            cursor = Self::next(frames, cursor);
        }
        self.old = NIL;
        self.old_len = 0;
    }

    /// InnoDB's `buf_LRU_old_adjust_len`: keep the old sublist within the tolerance.
    fn adjust_old_len(&mut self, frames: &[Frame]) {
        if self.old == NIL {
            if self.midpoint_active() && self.len > 0 {
                self.init_old(frames);
            }
            return;
        }
        let target = self.target_old_len();
        // Bound: each step moves the boundary by one frame; at most `len` steps.
        for _ in 0..=self.len {
            if self.old_len + OLD_TOLERANCE < target {
                let prev = Self::prev(frames, self.old);
                if prev == NIL {
                    break;
                }
                frames[prev as usize].old.store(true, Ordering::Relaxed);
                self.old = prev;
                self.old_len += 1;
            } else if self.old_len > target + OLD_TOLERANCE {
                let next = Self::next(frames, self.old);
                frames[self.old as usize]
                    .old
                    .store(false, Ordering::Relaxed);
                self.old_len -= 1;
                if next == NIL {
                    self.old = NIL;
                    break;
                }
                self.old = next;
            } else {
                break;
            }
        }
    }

    /// Walks from the tail toward the head (for checks and scans).
    pub fn iter_from_tail<'a>(&self, frames: &'a [Frame]) -> impl Iterator<Item = FrameId> + 'a {
        let mut cursor = self.tail;
        let mut left = self.len;
        std::iter::from_fn(move || {
            if cursor == NIL || left == 0 {
                return None;
            }
            let id = cursor;
            cursor = Self::prev(frames, id);
            left -= 1;
            Some(id)
        })
    }

    /// Checks the links, length and old sublist.
    ///
    /// # Errors
    /// A description of the first problem.
    pub fn check(&self, frames: &[Frame]) -> Result<(), String> {
        let mut count = 0;
        let mut old_count = 0;
        let mut seen_old = false;
        let mut prev = NIL;
        let mut cursor = self.head;
        while cursor != NIL {
            let frame = &frames[cursor as usize];
            if frame.region() != self.region {
                return Err(format!(
                    "frame {cursor} on {:?} list says {:?}",
                    self.region,
                    frame.region()
                ));
            }
            if Self::prev(frames, cursor) != prev {
                return Err(format!("frame {cursor}: broken prev link"));
            }
            let is_old = frame.old.load(Ordering::Relaxed);
            if cursor == self.old {
                seen_old = true;
            }
            if is_old != seen_old {
                return Err(format!("frame {cursor}: old flag {is_old} out of place"));
            }
            old_count += usize::from(is_old);
            count += 1;
            if count > self.len {
                return Err("list longer than its length (cycle?)".into());
            }
            prev = cursor;
            cursor = Self::next(frames, cursor);
        }
        if prev != self.tail || count != self.len || old_count != self.old_len {
            return Err(format!(
                "list length {count}/{} old {old_count}/{} tail {prev}/{}",
                self.len, self.old_len, self.tail
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(n: usize) -> Vec<Frame> {
        (0..n).map(|_| Frame::default()).collect()
    }

    #[test]
    fn midpoint_keeps_old_share_within_tolerance() {
        let frames = frames(2000);
        let mut list = LruList::new(Region::Order, 37);
        for id in 0..2000u32 {
            if id % 3 == 0 {
                list.push_head(&frames, id);
            } else {
                list.push_midpoint(&frames, id);
            }
            list.check(&frames).unwrap();
        }
        let target = 2000 * 37 / 100;
        assert!(
            list.old_len().abs_diff(target) <= OLD_TOLERANCE,
            "{}",
            list.old_len()
        );
        for id in (0..2000u32).step_by(2) {
            list.remove(&frames, id);
            list.check(&frames).unwrap();
        }
        assert_eq!(list.len(), 1000);
        let target = 1000 * 37 / 100;
        assert!(list.old_len().abs_diff(target) <= OLD_TOLERANCE);
        for id in (1..2000u32).step_by(2).take(600) {
            list.make_young(&frames, id);
        }
        list.check(&frames).unwrap();
        // Dropping below 512 clears the old sublist.
        for id in (1..2000u32).step_by(2).take(600) {
            list.remove(&frames, id);
        }
        list.check(&frames).unwrap();
        assert_eq!(list.old_len(), 0);
    }

    /// A young-making hit on a list of exactly `OLD_MIN_LEN` pages keeps the old sublist as it
    /// is (one page fewer, the boundary inside the tolerance) instead of clearing and marking
    /// it again from the tail, which would leave it at the tolerance's lower edge.
    #[test]
    fn hits_at_the_minimum_length_keep_the_old_sublist() {
        const EXTRA: u32 = 18;
        let frames = frames(OLD_MIN_LEN + EXTRA as usize);
        let mut list = LruList::new(Region::Order, 37);
        // The sublist is marked when the list reaches the minimum (at the tolerance's lower
        // edge); pages read in at the midpoint then grow it, and young pages leave.
        for id in 0..OLD_MIN_LEN as u32 + EXTRA {
            list.push_midpoint(&frames, id);
        }
        for _ in 0..EXTRA {
            list.remove(&frames, list.head());
        }
        let target = OLD_MIN_LEN * 37 / 100;
        assert_eq!(list.len(), OLD_MIN_LEN);
        let before = list.old_len();
        assert!(
            before > target - OLD_TOLERANCE && before.abs_diff(target) <= OLD_TOLERANCE,
            "{before}"
        );
        // A young page and an old page (the tail) made young, on the full list.
        let young = list.head();
        list.make_young(&frames, young);
        list.check(&frames).unwrap();
        assert_eq!(
            list.old_len(),
            before,
            "a young page's hit leaves the old sublist alone"
        );
        let old = list.tail();
        assert!(frames[old as usize].old.load(Ordering::Relaxed));
        list.make_young(&frames, old);
        list.check(&frames).unwrap();
        assert_eq!(list.head(), old);
        assert!(!frames[old as usize].old.load(Ordering::Relaxed));
        assert!(
            list.old_len() + 1 == before || list.old_len().abs_diff(target) <= OLD_TOLERANCE,
            "one old page fewer, or adjusted back inside the tolerance: {} from {before}",
            list.old_len()
        );
        assert_eq!(list.len(), OLD_MIN_LEN);
        // Every page once, from the tail: the list stays whole and the sublist in tolerance.
        let members: Vec<FrameId> = list.iter_from_tail(&frames).collect();
        for &id in &members {
            list.make_young(&frames, id);
            list.check(&frames).unwrap();
            assert!(list.old_len().abs_diff(target) <= OLD_TOLERANCE);
        }
        assert_eq!(list.iter_from_tail(&frames).collect::<Vec<_>>(), members);
    }

    /// Making young the head, the tail and the only page.
    #[test]
    fn young_moves_at_the_ends() {
        let frames = frames(3);
        let mut list = LruList::new(Region::Order, 37);
        list.push_head(&frames, 0);
        list.make_young(&frames, 0);
        list.check(&frames).unwrap();
        assert_eq!((list.head(), list.tail(), list.len()), (0, 0, 1));
        list.push_head(&frames, 1);
        list.push_head(&frames, 2);
        list.make_young(&frames, 2);
        list.check(&frames).unwrap();
        list.make_young(&frames, 0);
        list.check(&frames).unwrap();
        assert_eq!(
            list.iter_from_tail(&frames).collect::<Vec<_>>(),
            vec![1, 2, 0]
        );
    }

    #[test]
    fn short_lists_insert_at_head() {
        let frames = frames(10);
        let mut list = LruList::new(Region::Order, 37);
        list.push_midpoint(&frames, 1);
        list.push_midpoint(&frames, 2);
        assert_eq!(list.head(), 2);
        assert_eq!(list.tail(), 1);
        assert_eq!(list.iter_from_tail(&frames).collect::<Vec<_>>(), vec![1, 2]);
    }
}
