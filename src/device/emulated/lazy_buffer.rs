//! The write buffer of a firmware that writes back lazily (`writeback=lazy`,
//! docs/devices.md, "Lazy write-back"): the Cosmos+ OpenSSD's GreedyFTL keeps its DRAM data
//! buffer as LRU entries, each holding one logical page, and programs a dirty entry only when a
//! request needs the entry for another page (`AllocateDataBuf`, then `EvictDataBufEntry`, in
//! `request_transform.c` of the firmware; the new request's data waits for that program). So
//! under sustained writes the buffer stays full of dirty pages, and every request that misses
//! it pays a program: the RW paper's S-Buf read stall, and its note that "the write buffer ...
//! is full of dirty frames and thus, for every write request, a dirty victim has to be
//! flushed" (section 5.2.2).
//!
//! This file holds the bookkeeping only (which page each slot holds, whether it is dirty, when
//! its data is in place, the LRU order); the timing model (`flash.rs`) decides what an eviction
//! costs. Invariants: a page is in at most one slot and the map names exactly the slots that
//! hold a page; the LRU list links every slot once.

use std::collections::HashMap;

use super::flash::DeviceNs;

const NONE: u32 = u32::MAX;

/// One buffer entry.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The logical page held, if any.
    lpn: Option<u64>,
    /// Written by the host and not yet programmed.
    dirty: bool,
    /// When the slot's data is in place (a write's data in, a read's page sensed, a drain's
    /// program done); before that the slot cannot serve or give up its page.
    ready: DeviceNs,
}

/// What taking the least recently used slot for a new page evicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// The page the slot held.
    pub lpn: u64,
    /// Whether it still had to be programmed.
    pub dirty: bool,
    /// When its data was in place.
    pub ready: DeviceNs,
}

/// The slots, their pages and their LRU order (an intrusive doubly linked list over slot
/// indices: O(1) to touch, take or refill).
#[derive(Debug)]
pub struct LazyBuffer {
    slots: Vec<Slot>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Least recently used.
    head: u32,
    /// Most recently used.
    tail: u32,
    pages: HashMap<u64, u32>,
}

impl LazyBuffer {
    /// A buffer of `slots` empty entries.
    #[must_use]
    pub fn new(slots: u32) -> Self {
        assert!(slots > 0 && slots < NONE, "a buffer needs slots");
        let n = slots as usize;
        let prev = (0..slots)
            .map(|i| i.checked_sub(1).unwrap_or(NONE))
            .collect();
        let next = (0..slots)
            .map(|i| if i + 1 < slots { i + 1 } else { NONE })
            .collect();
        LazyBuffer {
            slots: vec![
                Slot {
                    lpn: None,
                    dirty: false,
                    ready: 0,
                };
                n
            ],
            prev,
            next,
            head: 0,
            tail: slots - 1,
            pages: HashMap::with_capacity(n),
        }
    }

    /// The slot holding `lpn` and when its data is in place, if buffered.
    #[must_use]
    pub fn find(&self, lpn: u64) -> Option<(u32, DeviceNs)> {
        self.pages
            .get(&lpn)
            .map(|&slot| (slot, self.slots[slot as usize].ready))
    }

    /// Takes the least recently used slot for `lpn` (which must not be buffered) and returns
    /// it with the page it held, if any. The slot keeps its old `ready` until [`Self::fill`].
    pub fn take_lru(&mut self, lpn: u64) -> (u32, Option<Evicted>) {
        assert!(
            !self.pages.contains_key(&lpn),
            "page {lpn} already buffered"
        );
        let slot = self.head;
        let old = self.slots[slot as usize];
        let evicted = old.lpn.map(|page| {
            let removed = self.pages.remove(&page);
            assert_eq!(removed, Some(slot), "the map names the slot of page {page}");
            Evicted {
                lpn: page,
                dirty: old.dirty,
                ready: old.ready,
            }
        });
        self.pages.insert(lpn, slot);
        self.slots[slot as usize] = Slot {
            lpn: Some(lpn),
            dirty: false,
            ready: old.ready,
        };
        self.touch(slot);
        (slot, evicted)
    }

    /// Sets when `slot`'s data is in place and marks it dirty if `dirty` (a clean fill keeps an
    /// earlier dirty mark: only [`Self::mark_clean`] clears it); makes it the most recently
    /// used.
    pub fn fill(&mut self, slot: u32, dirty: bool, ready: DeviceNs) {
        let entry = &mut self.slots[slot as usize];
        assert!(entry.lpn.is_some(), "slot {slot} holds a page");
        entry.dirty |= dirty;
        entry.ready = ready;
        self.touch(slot);
    }

    /// A hit on `slot`: it becomes the most recently used.
    pub fn hit(&mut self, slot: u32) {
        self.touch(slot);
    }

    /// `slot`'s page was programmed, done at `ready`.
    pub fn mark_clean(&mut self, slot: u32, ready: DeviceNs) {
        let entry = &mut self.slots[slot as usize];
        entry.dirty = false;
        entry.ready = ready;
    }

    /// The dirty slots, least recently used first: (slot, page, ready).
    #[must_use]
    pub fn dirty(&self) -> Vec<(u32, u64, DeviceNs)> {
        let mut out = Vec::new();
        let mut slot = self.head;
        while slot != NONE {
            let entry = self.slots[slot as usize];
            if let (true, Some(lpn)) = (entry.dirty, entry.lpn) {
                out.push((slot, lpn, entry.ready));
            }
            slot = self.next[slot as usize];
        }
        out
    }

    /// Moves `slot` to the most recently used end.
    fn touch(&mut self, slot: u32) {
        if self.tail == slot {
            return;
        }
        let (p, n) = (self.prev[slot as usize], self.next[slot as usize]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        // `slot` is not the tail, so it has a successor.
        self.prev[n as usize] = p;
        self.prev[slot as usize] = self.tail;
        self.next[slot as usize] = NONE;
        self.next[self.tail as usize] = slot;
        self.tail = slot;
    }

    /// Checks the invariants (module docs); for tests.
    #[must_use]
    pub fn is_consistent(&self) -> bool {
        let mut seen = vec![false; self.slots.len()];
        let mut slot = self.head;
        let mut last = NONE;
        while slot != NONE {
            if seen[slot as usize] || self.prev[slot as usize] != last {
                return false;
            }
            seen[slot as usize] = true;
            last = slot;
            slot = self.next[slot as usize];
        }
        let linked = seen.iter().all(|&s| s) && last == self.tail;
        let held = self.slots.iter().filter(|s| s.lpn.is_some()).count();
        let mapped = self
            .pages
            .iter()
            .all(|(&lpn, &slot)| self.slots.get(slot as usize).and_then(|s| s.lpn) == Some(lpn));
        linked && mapped && held == self.pages.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_leave_in_lru_order_and_hits_refresh_them() {
        let mut buffer = LazyBuffer::new(3);
        for (lpn, at) in [(10, 5), (11, 6), (12, 7)] {
            let (slot, evicted) = buffer.take_lru(lpn);
            assert_eq!(evicted, None);
            buffer.fill(slot, true, at);
        }
        // A hit makes page 10 the most recently used: 11 leaves first.
        let (slot, ready) = buffer.find(10).unwrap();
        assert_eq!(ready, 5);
        buffer.fill(slot, false, 9);
        let (_, evicted) = buffer.take_lru(13);
        assert_eq!(
            evicted,
            Some(Evicted {
                lpn: 11,
                dirty: true,
                ready: 6
            })
        );
        assert!(buffer.find(11).is_none());
        // A dirty page refilled clean stays dirty until programmed.
        assert_eq!(buffer.dirty().len(), 2);
        let (slot10, _) = buffer.find(10).unwrap();
        buffer.mark_clean(slot10, 20);
        let dirty: Vec<u64> = buffer.dirty().iter().map(|&(_, lpn, _)| lpn).collect();
        assert_eq!(dirty, vec![12]);
        assert!(buffer.is_consistent());
    }

    #[test]
    fn many_pages_through_a_small_buffer_keep_it_consistent() {
        let mut buffer = LazyBuffer::new(7);
        for i in 0..1000u64 {
            let lpn = (i * 31) % 23;
            if let Some((slot, _)) = buffer.find(lpn) {
                buffer.fill(slot, i % 3 == 0, i);
            } else {
                let (slot, _) = buffer.take_lru(lpn);
                buffer.fill(slot, i % 2 == 0, i);
            }
            assert!(buffer.is_consistent(), "after step {i}");
        }
    }
}
