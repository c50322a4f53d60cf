//! The replacement orders' textbook behaviour on small traces, through the real per-instance
//! state (`OrderState`) and the real lock-free hit decision (`ReplacementOrder::on_hit`), over
//! plain frames (no pool): walk order, Clock Sweep's usage counts and hand, CFLRU's clean-first
//! window, LRU-WSR's cold flag and second chance, InnoDB's midpoint insertion.
//!
//! A page is "dirty" here when its frame's `oldest_modification` is non-zero, as in the pool.

use std::sync::atomic::Ordering;

use flashbuf::core::frame::{Frame, FrameId};
use flashbuf::core::order::{HitContext, OrderState, Placement, ReplacementOrder, Verdict};
use flashbuf::policy::order::{Cflru, ClockSweep, Lru, LruWsr, MidpointLru};

fn frames(n: usize) -> Vec<Frame> {
    (0..n).map(|_| Frame::default()).collect()
}

fn context(frames: usize, evictions: u64) -> HitContext {
    HitContext {
        instance_frames: frames,
        evictions,
        now_ms: 0,
    }
}

fn dirty(frames: &[Frame], id: FrameId) {
    frames[id as usize]
        .oldest_modification
        .store(7, Ordering::Relaxed);
}

/// The first `max` frames a walk offers, all skipped (so bookkeeping still applies).
fn offered(state: &mut dyn OrderState, frames: &[Frame], max: usize) -> Vec<FrameId> {
    let mut out = Vec::new();
    state.walk(frames, &mut |id| {
        if out.len() >= max {
            return Verdict::Stop;
        }
        out.push(id);
        Verdict::Skip
    });
    out
}

/// Takes the first frame offered.
fn take(state: &mut dyn OrderState, frames: &[Frame]) -> Option<FrameId> {
    let mut taken = None;
    state.walk(frames, &mut |id| {
        taken = Some(id);
        Verdict::Take
    });
    taken
}

/// A hit as the core does it: the lock-free decision, then the locked part if asked for.
fn hit(
    order: &dyn ReplacementOrder,
    state: &mut dyn OrderState,
    frames: &[Frame],
    id: FrameId,
    ctx: &HitContext,
) -> bool {
    let moved = order.on_hit(&frames[id as usize], ctx);
    if moved {
        state.hit(frames, id, ctx);
    }
    moved
}

#[test]
fn lru_evicts_least_recently_used_first_and_prefetched_pages_before_all() {
    let f = frames(8);
    let ctx = context(8, 0);
    let mut s = Lru.new_state(0, 8);
    for id in 0..5 {
        s.insert(&f, id, Placement::Missed, &ctx);
    }
    assert_eq!(offered(s.as_mut(), &f, 10), vec![0, 1, 2, 3, 4]);
    // Every hit moves the page to the head.
    assert!(hit(&Lru, s.as_mut(), &f, 0, &ctx));
    assert!(hit(&Lru, s.as_mut(), &f, 2, &ctx));
    assert_eq!(offered(s.as_mut(), &f, 10), vec![1, 3, 4, 0, 2]);
    // A prefetched page goes to the eviction end; a page given back goes there too.
    s.insert(&f, 5, Placement::Prefetched, &ctx);
    assert_eq!(take(s.as_mut(), &f), Some(5));
    assert_eq!(take(s.as_mut(), &f), Some(1));
    assert_eq!(s.len(), 4);
    s.check(&f).unwrap();
}

#[test]
fn midpoint_insertion_puts_missed_pages_at_the_head_of_the_old_sublist() {
    // InnoDB keeps an old sublist only from 512 pages on (BUF_LRU_OLD_MIN_LEN).
    let n = 600;
    let f = frames(n + 2);
    // Eviction has begun (InnoDB moves nothing on a hit before the first eviction).
    let ctx = context(n + 2, 1);
    let order = MidpointLru {
        old_blocks_pct: 37,
        old_blocks_time_ms: 0,
    };
    let mut s = order.new_state(0, n + 2);
    for id in 0..n as FrameId {
        s.insert(&f, id, Placement::Missed, &ctx);
    }
    let old = (0..n).filter(|&i| f[i].old.load(Ordering::Relaxed)).count();
    let expected = n * 37 / 100;
    assert!(
        old.abs_diff(expected) <= 20,
        "old sublist {old} pages, about {expected} expected"
    );
    // A newly read page enters at the old sublist's head: it is offered right around the
    // old/young boundary, not last as with plain LRU. (The boundary then moves by InnoDB's
    // rebalancing, with its tolerance of 20 pages, so the new page may already count as the
    // oldest young page.)
    let new = n as FrameId;
    s.insert(&f, new, Placement::Missed, &ctx);
    let walk = offered(s.as_mut(), &f, n + 1);
    let position = walk.iter().position(|&id| id == new).unwrap();
    let old_now = (0..=n)
        .filter(|&i| f[i].old.load(Ordering::Relaxed))
        .count();
    assert!(
        position + 1 == old_now || position == old_now,
        "new page offered {position}th, old sublist {old_now} pages"
    );
    assert!(
        position < n / 2,
        "not at the head: offered {position}th of {n}"
    );
    // With old_blocks_time 0 a hit on an old page (the LRU end's) makes it young at once.
    let tail = walk[0];
    assert!(f[tail as usize].old.load(Ordering::Relaxed));
    assert!(hit(&order, s.as_mut(), &f, tail, &ctx));
    assert!(!f[tail as usize].old.load(Ordering::Relaxed));
    assert_eq!(*offered(s.as_mut(), &f, n + 1).last().unwrap(), tail);
    // A page just made young does not move on a hit (no mutex taken) until a quarter of the
    // young part has been evicted since.
    assert!(!hit(&order, s.as_mut(), &f, tail, &ctx));
    let later = context(n + 2, 1 + (n as u64) * 63 / 400 + 1);
    assert!(hit(&order, s.as_mut(), &f, tail, &later));
    s.check(&f).unwrap();
}

#[test]
fn clock_sweep_decrements_usage_counts_and_keeps_its_hand() {
    let f = frames(4);
    let ctx = context(4, 0);
    let mut s = ClockSweep.new_state(0, 4);
    for id in 0..4 {
        s.insert(&f, id, Placement::Missed, &ctx);
    }
    let count = |id: FrameId| f[id as usize].order_word.load(Ordering::Relaxed);
    assert_eq!((0..4).map(count).collect::<Vec<_>>(), vec![1, 1, 1, 1]);
    // Hits raise the count without the mutex, up to 5.
    for _ in 0..7 {
        assert!(!hit(&ClockSweep, s.as_mut(), &f, 2, &ctx));
    }
    assert_eq!(count(2), 5);
    // The first sweep takes every count 1 -> 0 (2 goes to 4); the second offers frame 0.
    assert_eq!(take(s.as_mut(), &f), Some(0));
    assert_eq!((1..4).map(count).collect::<Vec<_>>(), vec![0, 4, 0]);
    // The hand stays after frame 0: the next victim is 1, then 3 (2 still has uses).
    assert_eq!(take(s.as_mut(), &f), Some(1));
    assert_eq!(take(s.as_mut(), &f), Some(3));
    assert_eq!(count(2), 3, "passed once more");
    // A pinned frame is skipped without losing its count.
    f[2].pin();
    assert_eq!(take(s.as_mut(), &f), None);
    assert_eq!(count(2), 3);
    f[2].unpin();
    assert_eq!(take(s.as_mut(), &f), Some(2));
    assert!(s.is_empty());
    // Prefetched pages start at 0: the first candidates.
    s.insert(&f, 1, Placement::Missed, &ctx);
    s.insert(&f, 3, Placement::Prefetched, &ctx);
    assert_eq!(take(s.as_mut(), &f), Some(3));
}

#[test]
fn cflru_offers_the_clean_pages_of_its_window_first() {
    // 10 frames, window 40% = 4 pages at the LRU end.
    let f = frames(10);
    let ctx = context(10, 0);
    let order = Cflru { window_pct: 40 };
    let mut s = order.new_state(0, 10);
    for id in 0..10 {
        s.insert(&f, id, Placement::Missed, &ctx);
    }
    for id in [0, 1, 3, 5] {
        dirty(&f, id);
    }
    // Window (LRU end first): 0 d, 1 d, 2 c, 3 d. Clean ones first: 2; then the whole list from
    // the LRU end (the window's dirty pages, then beyond it).
    let walk = offered(s.as_mut(), &f, 11);
    assert_eq!(walk, vec![2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(take(s.as_mut(), &f), Some(2));
    // No clean page left in the window (0, 1, 3, 4 -> 4 is clean): 4 now.
    assert_eq!(take(s.as_mut(), &f), Some(4));
    // Window 0 d, 1 d, 3 d, 5 d: all dirty, so the LRU page itself is offered, dirty.
    assert_eq!(take(s.as_mut(), &f), Some(0));
    s.check(&f).unwrap();
}

#[test]
fn lru_wsr_gives_warm_dirty_pages_a_second_chance_and_hits_clear_the_cold_flag() {
    let f = frames(6);
    let ctx = context(6, 0);
    let mut s = LruWsr.new_state(0, 6);
    for id in 0..5 {
        s.insert(&f, id, Placement::Missed, &ctx);
    }
    dirty(&f, 0);
    dirty(&f, 1);
    let cold = |id: FrameId| f[id as usize].order_word.load(Ordering::Relaxed) != 0;
    // 0 and 1 are dirty without the cold flag: both move to the head, flagged; 2 is offered.
    assert_eq!(take(s.as_mut(), &f), Some(2));
    assert!(cold(0) && cold(1));
    // (A walk that is not stopped goes round again: it is bounded by twice the length.)
    assert_eq!(offered(s.as_mut(), &f, 4), vec![3, 4, 0, 1]);
    // A hit clears the flag (and moves the page to the head).
    assert!(hit(&LruWsr, s.as_mut(), &f, 0, &ctx));
    assert!(!cold(0));
    // Order now 3 4 1 0; 3 and 4 clean. Dirty 3 and 4 without flags: they get second chances,
    // and cold dirty 1 is offered.
    dirty(&f, 3);
    dirty(&f, 4);
    assert_eq!(take(s.as_mut(), &f), Some(1));
    assert!(cold(3) && cold(4));
    // Only dirty pages remain, 0 warm: it gets its chance, then 3 (cold) is offered.
    assert_eq!(take(s.as_mut(), &f), Some(3));
    assert!(cold(0));
    s.check(&f).unwrap();
}

/// The core skips `on_hit` for a young page inside the order's young window
/// (`ReplacementOrder::young_window`): that is sound only if `on_hit` answers "no move" for every
/// such hit. Checked over young and old pages, clocks and eviction counts on both sides of the
/// window; orders without a window return none.
#[test]
fn the_young_window_skips_only_hits_that_on_hit_would_not_move() {
    let n = 600;
    let order = MidpointLru {
        old_blocks_pct: 37,
        old_blocks_time_ms: 1000,
    };
    let window = order.young_window(n).unwrap();
    assert_eq!(window, n as u64 * 63 / 400);
    let frame = Frame::default();
    let mut skipped = 0;
    for old in [false, true] {
        frame.old.store(old, Ordering::Relaxed);
        for clock in [0u64, 5, 100, 1000] {
            frame.order_clock.store(clock, Ordering::Relaxed);
            for evictions in [
                0u64,
                clock,
                clock + window - 1,
                clock + window,
                clock + 5 * window,
            ] {
                let fast_skip = evictions == 0 || (!old && evictions < clock + window);
                if fast_skip {
                    skipped += 1;
                    assert!(
                        !order.on_hit(&frame, &context(n, evictions)),
                        "clock {clock}, evictions {evictions}: skipped a hit that moves"
                    );
                }
            }
        }
    }
    assert!(skipped > 0);
    for other in [
        &Lru as &dyn ReplacementOrder,
        &Cflru { window_pct: 33 },
        &LruWsr,
        &ClockSweep,
    ] {
        assert_eq!(other.young_window(n), None, "{}", other.name());
    }
}

/// An old page moves once `old_blocks_time` has passed since its first access on the clock the
/// hit is given (`HitContext::now_ms`, the pool's coarse clock), and not a millisecond before;
/// a page never accessed is not held back.
#[test]
fn an_old_page_moves_once_old_blocks_time_has_passed_on_the_hits_clock() {
    let order = MidpointLru {
        old_blocks_pct: 37,
        old_blocks_time_ms: 1000,
    };
    let frame = Frame::default();
    frame.old.store(true, Ordering::Relaxed);
    frame.first_access_ms.store(500, Ordering::Relaxed);
    let at = |now_ms| HitContext {
        instance_frames: 600,
        evictions: 1,
        now_ms,
    };
    assert!(!order.on_hit(&frame, &at(500)));
    assert!(!order.on_hit(&frame, &at(1499)));
    assert!(order.on_hit(&frame, &at(1500)));
    frame.first_access_ms.store(0, Ordering::Relaxed);
    assert!(order.on_hit(&frame, &at(0)));
}

/// Before an instance's first eviction no hit moves a page, old or young, whatever the clock
/// (InnoDB's `buf_page_peek_if_too_old`: `freed_page_clock == 0` is "either the warm-up phase
/// or an in-memory workload"); from the first eviction on, an old page moves again.
#[test]
fn no_hit_moves_a_page_before_the_first_eviction() {
    let n = 600;
    let f = frames(n);
    let order = MidpointLru {
        old_blocks_pct: 37,
        old_blocks_time_ms: 0,
    };
    let mut s = order.new_state(0, n);
    let before = context(n, 0);
    for id in 0..n as FrameId {
        s.insert(&f, id, Placement::Missed, &before);
    }
    let walk = offered(s.as_mut(), &f, n);
    let tail = walk[0];
    assert!(f[tail as usize].old.load(Ordering::Relaxed));
    for young in [false, true] {
        let id = if young { *walk.last().unwrap() } else { tail };
        f[id as usize].order_clock.store(0, Ordering::Relaxed);
        assert!(!order.on_hit(&f[id as usize], &before), "frame {id} moved");
    }
    let timed = MidpointLru {
        old_blocks_pct: 37,
        old_blocks_time_ms: 1000,
    };
    f[tail as usize].first_access_ms.store(1, Ordering::Relaxed);
    let late = HitContext {
        instance_frames: n,
        evictions: 0,
        now_ms: 1_000_000,
    };
    assert!(!timed.on_hit(&f[tail as usize], &late));
    assert_eq!(
        offered(s.as_mut(), &f, n),
        walk,
        "the order is as the pages were read"
    );
    // The first eviction: the old page at the tail moves on its next hit.
    assert!(order.on_hit(&f[tail as usize], &context(n, 1)));
    assert!(timed.on_hit(
        &f[tail as usize],
        &HitContext {
            evictions: 1,
            ..late
        }
    ));
    s.check(&f).unwrap();
}
