//! Shuttle models of the hit path's pin/claim protocol (`core::frame`, `core::page_table`):
//! the page table is read without a lock, so a reader pins a *candidate* frame that an evictor
//! may be claiming, unmapping, re-pointing (the fused RW command maps the missed page to the
//! victim's frame while the victim is still mapped) or handing to another page at the same
//! moment. With the `shuttle` feature every atomic, latch and mutex of the pool is shuttle's
//! (`src/sync.rs`), so these tests run the pool's real code under random and PCT schedules.
//!
//! Run: `cargo test --release --features shuttle --test shuttle pin::` (more schedules:
//! `SHUTTLE_PIN_ITERATIONS=20000`).
//!
//! Each model has readers that **hold** their guard across scheduling points (where an evictor
//! can run) and check it at every one, beside threads whose misses evict the pages they hold:
//!
//! - a guard holds the page it asked for, with that page's bytes, for as long as it lives (a
//!   pinned frame is never evicted, re-pointed or reused);
//! - a reader never gets a frame holding another page's data, even when the frame it looked up
//!   went to another page and back (ABA);
//! - afterwards no frame is pinned, latched or claimed (pins never go negative: an unpin of an
//!   unpinned frame panics), the pool's invariants hold and no update was lost.
//!
//! The optimistic-read models (`core::optimistic`, at the end of this file) check that a
//! validated read never returns another page's bytes or a half-written page while writers
//! change it and evictors repurpose its frame.
//!
//! Deliberate bugs the models fail on, and those they miss, are listed in docs/performance.md
//! ("The pin/claim protocol's model", "Optimistic reads"): the reader skipping its page checks, the evictor
//! dropping its pin check or reading the pins before it claims. Shuttle runs every atomic as
//! sequentially consistent, so a weakened memory ordering cannot fail these models.

use std::sync::Arc;

use shuttle::sync::atomic::{AtomicBool, Ordering};

use flashbuf::device::SharedDevice;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::pool::{BufferPool, PoolConfig, Scheme, TornPageProtection};

const PAGE: usize = 4096;
const FRAMES: usize = 16;
const PAGES: u64 = 20;
/// The payload byte that counts the updates of a page.
const COUNTER: usize = 64;
/// The payload byte holding a page's own id.
const MARK: usize = 65;
/// Scheduling points a reader holds its guard across.
const HOLD_STEPS: usize = 3;

/// A full pool of `FRAMES` frames over `PAGES` pages, each page carrying its id at `MARK`.
/// Pages `PAGES - FRAMES ..` are cached, `PAGES - FRAMES` at the eviction end; with `dirty`
/// every cached page is dirty (misses must write or fuse before they evict), else all clean.
fn pool(scheme: Scheme, dirty: bool) -> Arc<BufferPool> {
    let device: SharedDevice = Arc::new(MemoryDevice::new(PAGE, PAGES).unwrap());
    let mut config = PoolConfig::for_scheme(scheme, FRAMES);
    config.background = false;
    config.torn_page_protection = Some(TornPageProtection::None);
    config.lru_scan_depth = 2;
    let pool = Arc::new(BufferPool::open(device, config).unwrap());
    for page in 0..PAGES {
        let mut guard = pool.write(page).unwrap();
        let data = guard.data_mut();
        data[MARK] = page as u8;
        data[COUNTER] = 0;
    }
    pool.flush_all().unwrap();
    if dirty {
        for page in PAGES - FRAMES as u64..PAGES {
            let mut guard = pool.write(page).unwrap();
            guard.data_mut()[COUNTER] = 0;
        }
    }
    pool
}

/// Checks that a guard's frame holds `page` with `page`'s bytes.
fn check_holds(page_id: u64, data: &[u8], page: u64, when: &str) {
    assert_eq!(
        page_id, page,
        "{when}: a guard for page {page} holds page {page_id}"
    );
    assert_eq!(
        data[MARK], page as u8,
        "{when}: a guard for page {page} has page {}'s bytes",
        data[MARK]
    );
}

/// Reads `page` and holds the guard across `HOLD_STEPS` scheduling points, checking at each
/// that the frame still holds the page.
fn read_and_hold(pool: &BufferPool, page: u64) {
    let guard = pool.read(page).unwrap();
    check_holds(guard.page_id(), guard.data(), page, "read");
    for _ in 0..HOLD_STEPS {
        shuttle::thread::yield_now();
        check_holds(guard.page_id(), guard.data(), page, "read, held");
    }
}

/// Latches `page` exclusive, holds it like [`read_and_hold`], and bumps its counter.
fn update_and_hold(pool: &BufferPool, page: u64) {
    let mut guard = pool.write(page).unwrap();
    check_holds(guard.page_id(), guard.data(), page, "write");
    for _ in 0..HOLD_STEPS {
        shuttle::thread::yield_now();
        check_holds(guard.page_id(), guard.data(), page, "write, held");
    }
    let data = guard.data_mut();
    data[COUNTER] = data[COUNTER].wrapping_add(1);
}

/// After the threads: no frame pinned, claimed or latched; invariants; every page readable
/// with its own bytes; `updates` counted in all.
fn check_quiescent(pool: &BufferPool, updates: u32) {
    let core = pool.core();
    for (id, frame) in core.frames.iter().enumerate() {
        assert_eq!(
            frame.pin.load(Ordering::SeqCst),
            0,
            "frame {id} still pinned: {frame:?}"
        );
        assert_eq!(frame.io_state(), 0, "frame {id} still claimed: {frame:?}");
        assert!(!frame.is_latched(), "frame {id} still latched: {frame:?}");
    }
    pool.check_invariants().unwrap();
    let mut total = 0;
    for page in 0..PAGES {
        let guard = pool.read(page).unwrap();
        check_holds(guard.page_id(), guard.data(), page, "after");
        total += u32::from(guard.data()[COUNTER]);
    }
    assert_eq!(total, updates, "an update was lost");
}

/// The pages at the eviction end, which the misses below evict (6 first, then 7).
const HOT: [u64; 2] = [PAGES - FRAMES as u64, PAGES - FRAMES as u64 + 1];

/// The model: a reader and a writer hold the pages at the eviction end (each several times,
/// so one also misses a page evicted under it), while a third thread misses on cold pages,
/// evicting what it can (clean pages, dirty ones after a write or by the fused command, or a
/// copy to WAR's TWB) — and later re-reads the hot pages, so a frame the first reader looked
/// up may have gone to another page and come back to its own (ABA). `cleaner`: a writeback
/// round between the misses (WAR's TWB needs one to drain).
fn pin_against_eviction(scheme: Scheme, dirty: bool, cleaner: bool) {
    let pool = pool(scheme, dirty);
    let before = pool.stats();
    let mut handles = Vec::new();
    {
        let pool = Arc::clone(&pool);
        handles.push(shuttle::thread::spawn(move || {
            for page in [HOT[0], HOT[1], HOT[0]] {
                read_and_hold(&pool, page);
            }
        }));
    }
    {
        let pool = Arc::clone(&pool);
        handles.push(shuttle::thread::spawn(move || {
            for page in [HOT[1], HOT[0]] {
                update_and_hold(&pool, page);
            }
        }));
    }
    let done = Arc::new(AtomicBool::new(false));
    {
        let pool = Arc::clone(&pool);
        let done = Arc::clone(&done);
        handles.push(shuttle::thread::spawn(move || {
            for page in [0, 1, 2, HOT[0], 3] {
                read_and_hold(&pool, page);
            }
            done.store(true, Ordering::SeqCst);
        }));
    }
    let cleaner = cleaner.then(|| {
        let pool = Arc::clone(&pool);
        shuttle::thread::spawn(move || {
            let core = pool.core();
            for _ in 0..64 {
                core.parts.writeback.round(core).unwrap();
                if done.load(Ordering::SeqCst) {
                    break;
                }
                shuttle::thread::yield_now();
            }
        })
    });
    for handle in handles {
        handle.join().unwrap();
    }
    if let Some(cleaner) = cleaner {
        cleaner.join().unwrap();
    }
    // The model evicted under the readers: four cold pages came into a full pool.
    let evictions = pool.stats().since(&before).evictions;
    assert!(
        evictions >= 4,
        "only {evictions} evictions: the model misses its point"
    );
    if scheme == Scheme::War {
        // Reading every page back needs frames; with the cleaner gone, empty the TWB first.
        pool.flush_all().unwrap();
    }
    check_quiescent(&pool, 2);
}

/// Random schedules, then PCT (depth 3: the bugs this model is for need a reader preempted
/// between two steps of its handshake and an evictor preempted between two of its own).
/// `SHUTTLE_PIN_ITERATIONS` (default 1000) schedules of each kind.
fn explore(scheme: Scheme, dirty: bool, cleaner: bool) {
    let iterations = std::env::var("SHUTTLE_PIN_ITERATIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1000);
    shuttle::check_random(
        move || pin_against_eviction(scheme, dirty, cleaner),
        iterations,
    );
    shuttle::check_pct(
        move || pin_against_eviction(scheme, dirty, cleaner),
        iterations,
        3,
    );
}

/// Clean eviction (`try_evict_clean`: claim `IO_EVICT`, then check pins under the shard).
#[test]
fn clean_eviction_never_takes_a_pinned_frame() {
    explore(Scheme::Vanilla, false, false);
}

/// A single-page flush, then eviction of the written page (`evict_written`: the `IO_WRITE`
/// claim upgraded to `IO_EVICT`, then the pin check).
#[test]
fn eviction_after_a_write_never_takes_a_pinned_frame() {
    explore(Scheme::Vanilla, true, false);
}

/// The fused RW command: the missed page is mapped to the victim's frame while the victim is
/// still mapped (the translation re-pointed), and the frame changes page under `IO_EVICT`.
#[test]
fn fused_command_never_repoints_a_pinned_frame() {
    explore(Scheme::Rw, true, false);
}

/// WAR: a dirty page copied to the TWB and unmapped while readers look it up.
#[test]
fn twb_copy_never_unmaps_a_pinned_frame() {
    explore(Scheme::War, true, true);
}

/// LRU-C: the dirty region's flushes and evictions (claims on the side list).
#[test]
fn lru_c_eviction_never_takes_a_pinned_frame() {
    explore(Scheme::LruC, true, true);
}

// ----- optimistic (version-validated) reads: `core::optimistic` -----

/// Bytes of the stripe a writer fills with one value, one byte per scheduling point: a reader
/// that does not validate can see it half old, half new (a torn page).
const STRIPE: std::ops::Range<usize> = 66..70;

/// A point where shuttle may switch threads, or not: unlike `yield_now` (after which shuttle
/// runs another thread if it can, so two threads that both yield at every step advance in
/// lockstep and a reader never sees a half-written stripe), a shuttle atomic access lets the
/// scheduler pick any thread, the current one included.
fn scheduling_point() {
    AtomicBool::new(false).load(Ordering::SeqCst);
}

/// Reads `page` optimistically through the pool's API, pausing between the byte reads so
/// writers and evictors run in the middle of the read; returns (mark, stripe) of what the
/// validated read (or its latched fallback) saw.
fn optimistic_snapshot(pool: &BufferPool, page: u64) -> (u8, Vec<u8>) {
    pool.read_optimistic(page, |view| {
        let mark = view.byte(MARK).unwrap_or(u8::MAX);
        let mut stripe = Vec::new();
        for at in STRIPE {
            scheduling_point();
            stripe.push(view.byte(at).unwrap_or(u8::MAX));
        }
        (mark, stripe)
    })
    .unwrap()
}

/// A validated optimistic read of `page` holds `page`'s bytes, not torn.
fn check_snapshot(page: u64, (mark, stripe): &(u8, Vec<u8>)) {
    assert_eq!(
        *mark, page as u8,
        "an optimistic read of page {page} returned page {mark}'s bytes"
    );
    assert!(
        stripe.iter().all(|&byte| byte == stripe[0]),
        "an optimistic read of page {page} returned a torn stripe {stripe:?}"
    );
}

/// Latches `page` exclusive and fills its stripe with a new value, one byte per scheduling
/// point.
fn fill_stripe(pool: &BufferPool, page: u64, value: u8) {
    let mut guard = pool.write(page).unwrap();
    for at in STRIPE {
        guard.data_mut()[at] = value;
        scheduling_point();
    }
}

/// The model: an optimistic reader reads the pages at the eviction end again and again while
/// a writer fills their stripes byte by byte and a third thread misses on cold pages, evicting
/// them (and re-reads one, so a frame may go to another page and back). Every validated read
/// must hold its own page's bytes with a whole stripe.
fn optimistic_against_writes_and_eviction(scheme: Scheme, dirty: bool) {
    let pool = pool(scheme, dirty);
    let before = pool.stats();
    let mut handles = Vec::new();
    {
        let pool = Arc::clone(&pool);
        handles.push(shuttle::thread::spawn(move || {
            for page in [HOT[0], HOT[1], HOT[0], HOT[1]] {
                check_snapshot(page, &optimistic_snapshot(&pool, page));
            }
        }));
    }
    {
        let pool = Arc::clone(&pool);
        handles.push(shuttle::thread::spawn(move || {
            for (value, page) in [(1, HOT[0]), (2, HOT[1]), (3, HOT[0])] {
                fill_stripe(&pool, page, value);
            }
        }));
    }
    {
        let pool = Arc::clone(&pool);
        handles.push(shuttle::thread::spawn(move || {
            for page in [0, 1, HOT[0], 2] {
                let guard = pool.read(page).unwrap();
                check_holds(guard.page_id(), guard.data(), page, "miss");
            }
        }));
    }
    for handle in handles {
        handle.join().unwrap();
    }
    let evictions = pool.stats().since(&before).evictions;
    assert!(
        evictions >= 3,
        "only {evictions} evictions: the model misses its point"
    );
    for page in [HOT[0], HOT[1]] {
        check_snapshot(page, &optimistic_snapshot(&pool, page));
    }
    check_quiescent(&pool, 0);
}

fn explore_optimistic(scheme: Scheme, dirty: bool) {
    let iterations = std::env::var("SHUTTLE_PIN_ITERATIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1000);
    shuttle::check_random(
        move || optimistic_against_writes_and_eviction(scheme, dirty),
        iterations,
    );
    shuttle::check_pct(
        move || optimistic_against_writes_and_eviction(scheme, dirty),
        iterations,
        3,
    );
}

/// Optimistic reads against byte-by-byte writers and clean evictions.
#[test]
fn optimistic_reads_never_see_torn_or_foreign_pages() {
    explore_optimistic(Scheme::Vanilla, false);
}

/// Optimistic reads against the fused RW command (a frame changes page while still mapped).
#[test]
fn optimistic_reads_survive_the_fused_command() {
    explore_optimistic(Scheme::Rw, true);
}

/// Schedules (over all iterations of [`optimistic_hits_count_validated_reads`]) in which an
/// optimistic validation failed: the model is vacuous unless some did.
static FAILED_VALIDATIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Optimistic reads in this model per run.
const COUNTED_READS: u64 = 4;

/// The model: an optimistic reader reads the hot pages while a writer fills their stripes, so
/// some optimistic starts fail their validation and are retried (or fall back to a latch).
/// Every page request must count exactly one hit or miss: each `read_optimistic` one (a failed
/// start counts nothing), each latched write one.
fn optimistic_hits_match_reads() {
    let pool = pool(Scheme::Vanilla, false);
    let before = pool.stats();
    let failures_before = pool
        .core()
        .counters
        .optimistic_failures
        .load(std::sync::atomic::Ordering::SeqCst);
    let writes = [(1, HOT[0]), (2, HOT[1]), (3, HOT[0])];
    let reader = {
        let pool = Arc::clone(&pool);
        shuttle::thread::spawn(move || {
            for page in [HOT[0], HOT[1], HOT[0], HOT[1]] {
                check_snapshot(page, &optimistic_snapshot(&pool, page));
            }
        })
    };
    let writer = {
        let pool = Arc::clone(&pool);
        shuttle::thread::spawn(move || {
            for (value, page) in writes {
                fill_stripe(&pool, page, value);
            }
        })
    };
    reader.join().unwrap();
    writer.join().unwrap();
    let counted = pool.stats().since(&before);
    let failures = pool
        .core()
        .counters
        .optimistic_failures
        .load(std::sync::atomic::Ordering::SeqCst)
        - failures_before;
    if failures > 0 {
        FAILED_VALIDATIONS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    assert_eq!(
        counted.hits + counted.misses,
        COUNTED_READS + writes.len() as u64,
        "{} hits and {} misses for {COUNTED_READS} reads and {} writes ({failures} failed \
         optimistic validations): a failed optimistic start was counted",
        counted.hits,
        counted.misses,
        writes.len()
    );
    check_quiescent(&pool, 0);
}

/// The hit count equals the page requests that succeeded, however many optimistic starts
/// failed validation on the way.
#[test]
fn optimistic_hits_count_validated_reads() {
    let iterations = std::env::var("SHUTTLE_PIN_ITERATIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1000);
    shuttle::check_random(optimistic_hits_match_reads, iterations);
    shuttle::check_pct(optimistic_hits_match_reads, iterations, 3);
    assert!(
        FAILED_VALIDATIONS.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "no schedule made an optimistic validation fail: the model misses its point"
    );
}
