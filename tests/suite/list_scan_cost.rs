//! The emulated host's CPU under the list mutexes (pool-config key `list_scan_ns`,
//! docs/regime.md, "The LRU mutex's hold time"):
//!
//! - every page a miss's tail scan inspects is charged `list_scan_ns` of device time, and a
//!   background scan (a page-cleaner round) `list_scan_ns x time_constant_scale`; nothing is
//!   charged at 0;
//! - the charge is held under the list mutex: a second thread missing meanwhile waits for it
//!   (RR-serialization), which it never does here at 0.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, SharedDevice};
use flashbuf::page::stamp;
use flashbuf::pool::{BufferPool, PoolConfig, Scheme};

const PAGE: usize = 4096;
const PAGES: u64 = 512;
const FRAMES: usize = 64;

/// A memory device with every page written once (clean pages only: no write is ever needed).
fn device() -> SharedDevice {
    let device: SharedDevice = Arc::new(MemoryDevice::new(PAGE, PAGES).unwrap());
    let mut buf = AlignedBuf::new(PAGE);
    for page in 0..PAGES {
        buf.as_mut_slice().fill(0);
        stamp(buf.as_mut_slice(), page, 1);
        device.write_page(page, &buf).unwrap();
    }
    device
}

/// Vanilla over one instance of [`FRAMES`] frames, its cleaner off (only misses scan).
fn pool(list_scan_ns: f64) -> BufferPool {
    let mut config = PoolConfig::for_scheme(Scheme::Vanilla, FRAMES);
    config.instances = 1;
    config.background = false;
    config.old_blocks_time_ms = 0;
    config.list_scan_ns = list_scan_ns;
    BufferPool::open(device(), config).unwrap()
}

/// Reads every page in turn, `rounds` times: each read past the first `FRAMES` misses and scans
/// the tail for a clean page.
fn read_all(pool: &BufferPool, rounds: u64, offset: u64) {
    for i in 0..rounds * PAGES {
        drop(pool.read((i + offset) % PAGES).unwrap());
    }
}

fn extra(pool: &BufferPool, key: &str) -> Option<f64> {
    pool.stats().extra.get(key).copied()
}

#[test]
fn each_inspected_page_of_a_miss_scan_is_charged_list_scan_ns() {
    let ns = 2_000.0;
    let pool = pool(ns);
    read_all(&pool, 2, 0);
    let stats = pool.stats();
    let scanned = stats.extra["user_scan_clean_pages"];
    assert!(
        stats.misses > 2 * PAGES - FRAMES as u64 - 1,
        "{} misses",
        stats.misses
    );
    assert!(scanned >= (stats.misses - FRAMES as u64) as f64);
    // Only the misses' clean scans ran (no dirty page, no cleaner): their pages, at `ns` each.
    let held_ms = extra(&pool, "list_scan_hold_ms").unwrap();
    let expected_ms = scanned * ns / 1e6;
    assert!(
        (held_ms - expected_ms).abs() <= 1e-6 * expected_ms.max(1.0),
        "held {held_ms} ms for {scanned} pages at {ns} ns: expected {expected_ms} ms"
    );
}

#[test]
fn a_cleaner_round_is_charged_on_the_background_clock() {
    let (ns, scale, depth) = (1_000.0, 0.5, 16);
    let mut config = PoolConfig::for_scheme(Scheme::Vanilla, FRAMES);
    config.instances = 1;
    config.background = false;
    config.lru_scan_depth = depth;
    config.time_constant_scale = scale;
    config.list_scan_ns = ns;
    let pool = BufferPool::open(device(), config).unwrap();
    // A full pool of clean pages, its free list empty.
    read_all(&pool, 1, 0);
    let core = pool.core();
    let held = || core.counters.list_scan_hold_ns.load(Ordering::Relaxed);
    let before = held();
    core.parts.writeback.round(core).unwrap();
    // The round's tail scan frees `depth` clean pages, each charged `ns x scale`.
    let expected = (depth as f64 * ns * scale) as u64;
    assert_eq!(held() - before, expected);
}

#[test]
fn nothing_is_charged_or_reported_at_zero() {
    let pool = pool(0.0);
    read_all(&pool, 1, 0);
    assert!(pool.stats().misses > 0);
    assert_eq!(extra(&pool, "list_scan_hold_ms"), None);
}

#[test]
fn a_miss_waits_for_another_threads_charged_scan() {
    // 100 us of device time per inspected page (emulated devices scale it; memory does not):
    // each miss holds the LRU mutex for 100 us or more, so two threads missing at once queue.
    let pool = Arc::new(pool(100_000.0));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let pool = Arc::clone(&pool);
            std::thread::spawn(move || read_all(&pool, 1, t * PAGES / 2))
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let lru = &pool.stats().mutexes["lru"];
    assert!(lru.contended > 0, "{lru:?}");
    // The waits add up to at least a few of the holds (each at least 100 us).
    assert!(
        Duration::from_nanos(lru.wait_ns) >= Duration::from_micros(100),
        "{lru:?}"
    );
}

#[test]
fn a_negative_or_huge_price_is_refused_naming_the_key() {
    for text in ["list_scan_ns = -1.0\n", "list_scan_ns = 2e6\n"] {
        let err = PoolConfig::from_toml(Scheme::Vanilla, FRAMES, text).unwrap_err();
        assert!(err.to_string().contains("list_scan_ns"), "{err}");
    }
    // A whole number is a price too.
    let config = PoolConfig::from_toml(Scheme::Vanilla, FRAMES, "list_scan_ns = 3000\n").unwrap();
    assert!((config.list_scan_ns - 3000.0).abs() < f64::EPSILON);
}
