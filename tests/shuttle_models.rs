//! Shuttle models of the pool's small concurrency protocols, explored over thousands of random
//! schedules:
//!
//! 1. **Page latch and pin** (pool/mod.rs `try_hit`, `unmap_if_evictable`, fused RW reuse):
//!    pins are taken under the page-table shard's read lock, eviction checks them under the
//!    write lock, and a thread that waited for a latch re-checks the frame's page id. Property:
//!    a reader that gets through always sees the page it asked for, fully loaded.
//! 2. **LRU-C pointer with the LRU-M / LRU-D split** (miss/lru_c.rs, writeback/cleaner.rs):
//!    misses under LRU-M pass dirty pages into the dirty region (taking LRU-D second) and evict
//!    the LRU clean page; the flusher works under LRU-D alone; a hit in the dirty region takes
//!    LRU-M then LRU-D; other threads dirty pages in the mixed region. This model drives the
//!    crate's real `LruList` and `Frame` under shuttle mutexes. Properties: the evicted page is
//!    clean and unpinned when used, every page in the dirty region was dirty when the pointer
//!    passed it, no frame is on two lists, no frame is lost, lists stay well linked.

use std::collections::HashMap;
use std::sync::Arc;

use flashbuf::core::lru_list::LruList;
use flashbuf::pool::frame::{Frame, FrameId, NIL, Region};
use shuttle::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use shuttle::sync::{Mutex, RwLock};
use shuttle::thread;

const NO_PAGE: u64 = u64::MAX;

/// Model 1: one frame, reused for another page while a reader may be waiting on it.
struct LatchModel {
    table: RwLock<HashMap<u64, usize>>,
    page: Vec<AtomicU64>,
    pin: Vec<AtomicU32>,
    latch: Vec<RwLock<u64>>, // the frame's contents: the page it holds (written under X latch)
}

impl LatchModel {
    fn hit(&self, page: u64) -> Option<u64> {
        let frame = {
            let table = self.table.read().unwrap();
            let frame = *table.get(&page)?;
            self.pin[frame].fetch_add(1, Ordering::SeqCst);
            frame
        };
        let contents = self.latch[frame].read().unwrap();
        let result = (self.page[frame].load(Ordering::SeqCst) == page).then_some(*contents);
        drop(contents);
        self.pin[frame].fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// Clean eviction of `old` then a read of `new` into the same frame.
    fn evict_and_reuse(&self, frame: usize, old: u64, new: u64) -> bool {
        {
            let mut table = self.table.write().unwrap();
            if self.pin[frame].load(Ordering::SeqCst) != 0 || table.get(&old) != Some(&frame) {
                return false;
            }
            table.remove(&old);
            self.page[frame].store(NO_PAGE, Ordering::SeqCst);
        }
        let mut contents = self.latch[frame].write().unwrap();
        {
            let mut table = self.table.write().unwrap();
            self.page[frame].store(new, Ordering::SeqCst);
            table.insert(new, frame);
        }
        thread::yield_now();
        *contents = new; // the read completes under the exclusive latch
        true
    }

    /// Fused RW: the frame is latched exclusive while still mapped to `old`; `new` is mapped to
    /// it before the command; afterwards `old` is unmapped and the page id changes.
    fn fused_reuse(&self, frame: usize, old: u64, new: u64) {
        let mut contents = self.latch[frame].write().unwrap();
        self.table.write().unwrap().insert(new, frame);
        thread::yield_now();
        *contents = new;
        let mut table = self.table.write().unwrap();
        table.remove(&old);
        self.page[frame].store(new, Ordering::SeqCst);
    }
}

fn latch_model(fused: bool) {
    let model = Arc::new(LatchModel {
        table: RwLock::new(HashMap::from([(10, 0), (11, 1)])),
        page: vec![AtomicU64::new(10), AtomicU64::new(11)],
        pin: vec![AtomicU32::new(0), AtomicU32::new(0)],
        latch: vec![RwLock::new(10), RwLock::new(11)],
    });
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let model = Arc::clone(&model);
            thread::spawn(move || {
                for page in [10, 20, 10, 11] {
                    if let Some(contents) = model.hit(page) {
                        assert_eq!(contents, page, "a reader saw another page's contents");
                    }
                }
            })
        })
        .collect();
    let evictor = {
        let model = Arc::clone(&model);
        thread::spawn(move || {
            if fused {
                model.fused_reuse(0, 10, 20);
            } else {
                model.evict_and_reuse(0, 10, 20);
            }
        })
    };
    for reader in readers {
        reader.join().unwrap();
    }
    evictor.join().unwrap();
    let table = model.table.read().unwrap();
    for (page, frame) in table.iter() {
        assert_eq!(
            model.page[*frame].load(Ordering::SeqCst),
            *page,
            "stale mapping"
        );
    }
    assert!(
        model.pin.iter().all(|pin| pin.load(Ordering::SeqCst) == 0),
        "leaked pin"
    );
}

#[test]
fn latch_and_pin_protocol_with_clean_eviction() {
    shuttle::check_random(|| latch_model(false), 10000);
}

#[test]
fn latch_and_pin_protocol_with_fused_reuse() {
    shuttle::check_random(|| latch_model(true), 10000);
}

/// Model 2: the LRU-C pointer and the two-mutex split, on the crate's real list code.
struct LruCModel {
    frames: Vec<Frame>,
    mixed: Mutex<LruList>,
    dirty_region: Mutex<LruList>,
    free: Mutex<Vec<FrameId>>,
    dirty: Vec<AtomicBool>,
    writing: Vec<AtomicBool>,
    pinned: Vec<AtomicBool>,
    passed_dirty: Vec<AtomicBool>,
    /// The page-table shard lock: pins are taken under it, evictions check pins under it.
    table: Mutex<()>,
}

const FRAMES: usize = 8;

impl LruCModel {
    fn new() -> Self {
        let frames: Vec<Frame> = (0..FRAMES).map(|_| Frame::default()).collect();
        let mut mixed = LruList::new(Region::Order, 0);
        for id in 0..FRAMES as FrameId {
            mixed.push_head(&frames, id);
        }
        let flag = |init: bool| (0..FRAMES).map(|_| AtomicBool::new(init)).collect();
        LruCModel {
            frames,
            mixed: Mutex::new(mixed),
            dirty_region: Mutex::new(LruList::new(Region::Side, 0)),
            free: Mutex::new(Vec::new()),
            dirty: flag(false),
            writing: flag(false),
            pinned: flag(false),
            passed_dirty: flag(false),
            table: Mutex::new(()),
        }
    }

    /// `evict_at_pointer`: LRU-M, pass dirty pages, evict the LRU clean page; LRU-D second.
    fn miss(&self) -> Option<FrameId> {
        let mut mixed = self.mixed.lock().unwrap();
        let mut passed = Vec::new();
        let mut victim = None;
        let mut cursor = mixed.tail();
        while cursor != NIL {
            let prev = LruList::prev(&self.frames, cursor);
            let i = cursor as usize;
            if self.dirty[i].load(Ordering::SeqCst) || self.writing[i].load(Ordering::SeqCst) {
                mixed.remove(&self.frames, cursor);
                self.passed_dirty[i].store(true, Ordering::SeqCst);
                passed.push(cursor);
            } else {
                // Re-validation at the pointer under the shard lock: clean, unpinned, idle.
                let _table = self.table.lock().unwrap();
                if !self.pinned[i].load(Ordering::SeqCst) && !self.dirty[i].load(Ordering::SeqCst) {
                    mixed.remove(&self.frames, cursor);
                    victim = Some(cursor);
                    break;
                }
            }
            cursor = prev;
        }
        if !passed.is_empty() {
            let mut region = self.dirty_region.lock().unwrap();
            for id in passed {
                region.push_head(&self.frames, id);
            }
        }
        victim
    }

    /// The flusher (DBW): collect the dirty region under LRU-D, write outside it, free after.
    fn flush_round(&self) {
        let batch: Vec<FrameId> = {
            let region = self.dirty_region.lock().unwrap();
            let ids: Vec<FrameId> = region.iter_from_tail(&self.frames).collect();
            ids.into_iter()
                .filter(|&id| {
                    let i = id as usize;
                    assert!(
                        self.passed_dirty[i].load(Ordering::SeqCst),
                        "clean page in the dirty region"
                    );
                    self.dirty[i].load(Ordering::SeqCst)
                        && !self.writing[i].swap(true, Ordering::SeqCst)
                })
                .collect()
        };
        thread::yield_now(); // the writes are in flight
        for &id in &batch {
            self.dirty[id as usize].store(false, Ordering::SeqCst);
        }
        let mut freed = Vec::new();
        {
            let mut region = self.dirty_region.lock().unwrap();
            for &id in &batch {
                let i = id as usize;
                if self.frames[i].region() == Region::Side && !self.pinned[i].load(Ordering::SeqCst)
                {
                    region.remove(&self.frames, id);
                    freed.push(id);
                }
            }
        }
        for &id in &batch {
            self.writing[id as usize].store(false, Ordering::SeqCst);
        }
        let mut free = self.free.lock().unwrap();
        for id in freed {
            self.passed_dirty[id as usize].store(false, Ordering::SeqCst);
            free.push(id);
        }
    }

    /// A hit: pin; in the dirty region, LRU-M then LRU-D to move the page to the head.
    fn hit(&self, id: FrameId, dirty_it: bool) {
        let i = id as usize;
        {
            let _table = self.table.lock().unwrap();
            let mapped = matches!(self.frames[i].region(), Region::Order | Region::Side);
            if !mapped || self.pinned[i].swap(true, Ordering::SeqCst) {
                return; // evicted, or one pinner at a time in this model
            }
        }
        if self.frames[i].region() == Region::Side {
            let mut mixed = self.mixed.lock().unwrap();
            let mut region = self.dirty_region.lock().unwrap();
            if self.frames[i].region() == Region::Side {
                region.remove(&self.frames, id);
                self.passed_dirty[i].store(false, Ordering::SeqCst);
                mixed.push_head(&self.frames, id);
            }
        }
        if dirty_it {
            self.dirty[i].store(true, Ordering::SeqCst);
        }
        self.pinned[i].store(false, Ordering::SeqCst);
    }

    fn check(&self, in_hand: &[FrameId]) {
        let mixed = self.mixed.lock().unwrap();
        let region = self.dirty_region.lock().unwrap();
        let free = self.free.lock().unwrap();
        mixed.check(&self.frames).unwrap();
        region.check(&self.frames).unwrap();
        let mut seen = vec![0u32; FRAMES];
        for id in mixed
            .iter_from_tail(&self.frames)
            .chain(region.iter_from_tail(&self.frames))
            .chain(free.iter().copied())
            .chain(in_hand.iter().copied())
        {
            seen[id as usize] += 1;
        }
        assert!(
            seen.iter().all(|&n| n == 1),
            "frames lost or on two lists: {seen:?}"
        );
    }
}

fn lru_c_model() {
    let model = Arc::new(LruCModel::new());
    // Dirty a few pages first, so the pointer has something to pass.
    for id in [7, 5, 2] {
        model.dirty[id].store(true, Ordering::SeqCst);
    }
    let misser = {
        let model = Arc::clone(&model);
        thread::spawn(move || (0..3).filter_map(|_| model.miss()).collect::<Vec<_>>())
    };
    let flusher = {
        let model = Arc::clone(&model);
        thread::spawn(move || {
            model.flush_round();
            model.flush_round();
        })
    };
    let hitter = {
        let model = Arc::clone(&model);
        thread::spawn(move || {
            for (id, dirty_it) in [(7, false), (3, true), (5, true), (1, false)] {
                model.hit(id, dirty_it);
            }
        })
    };
    let victims = misser.join().unwrap();
    flusher.join().unwrap();
    hitter.join().unwrap();
    for &victim in &victims {
        assert!(
            !model.dirty[victim as usize].load(Ordering::SeqCst),
            "a victim was dirty when used"
        );
    }
    model.check(&victims);
}

#[test]
fn lru_c_pointer_with_split_mutexes() {
    shuttle::check_random(lru_c_model, 10000);
}
