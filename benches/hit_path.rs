//! Micro-benchmark of the hit path: fetch and release a cached page (shared latch), and the
//! same read done optimistically (`BufferPool::read_optimistic`: no pin, no latch, a validated
//! version), single thread (ns per hit; target at most 100 ns) and two threads (hits per
//! second), plus the pool's memory overhead per frame. Run: `cargo bench --bench hit_path`.
//!
//! For instruction counts (`valgrind --tool=callgrind`; docs/performance.md, "Optimistic
//! reads"): `HIT_PATH_COUNT=N HIT_PATH_ONLY=latched|optimistic|lookups|lookups-latched` runs only
//! N operations of one kind after the setup: page hits (on the first `HIT_PATH_SPAN` pages, 64 by
//! default, at most 4096), or transactional point lookups (begin,
//! get, commit) on a cached tree of 100 000 keys (16-byte keys, 100-byte values, 16 KiB pages)
//! with optimistic descents on or off. Two runs with different N give the instructions per
//! operation as the difference of their totals over the difference of N.

use std::sync::Arc;
use std::time::{Duration, Instant};

use flashbuf::device::SharedDevice;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::kv::{KvEngine, TreeId};
use flashbuf::pool::{BufferPool, PoolConfig, Scheme};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;

/// Pages of the device, all of them read in before measuring (the widest span of hits).
const PAGES: usize = 4096;
/// Frames of the pool: twice the pages, so that the free frames the page cleaner keeps
/// (InnoDB's `lru_scan_depth` per instance) never push a measured page out. With a pool of
/// exactly `PAGES` frames the cleaner evicted about 1% of the span on every pass, and the
/// "all pages" figures were a mix of hits and misses on `mem` (each a copy of 16 KiB).
const FRAMES: usize = 2 * PAGES;
const HITS: u64 = 5_000_000;

fn pool(scheme: Scheme) -> Arc<BufferPool> {
    let device: SharedDevice = Arc::new(MemoryDevice::new(16 * 1024, PAGES as u64).unwrap());
    let mut config = PoolConfig::for_scheme(scheme, FRAMES);
    config.verify_checksums = false;
    let pool = Arc::new(BufferPool::open(device, config).unwrap());
    for page in 0..PAGES as u64 {
        drop(pool.read(page).unwrap());
    }
    pool
}

fn hits(pool: &BufferPool, seed: u64, count: u64, span: u64) -> u64 {
    // A cheap LCG keeps the page choice out of the measurement.
    let mut x = seed | 1;
    let mut sum = 0u64;
    for _ in 0..count {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let page = (x >> 33) % span;
        let guard = pool.read(page).unwrap();
        sum = sum.wrapping_add(u64::from(guard.data()[0]));
    }
    sum
}

fn optimistic_hits(pool: &BufferPool, seed: u64, count: u64, span: u64) -> u64 {
    let mut x = seed | 1;
    let mut sum = 0u64;
    for _ in 0..count {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let page = (x >> 33) % span;
        let byte = pool
            .read_optimistic(page, |view| view.byte(0).unwrap_or(0))
            .unwrap();
        sum = sum.wrapping_add(u64::from(byte));
    }
    sum
}

/// A cached tree of 100 000 keys for the lookup counts.
fn lookup_store() -> (KvStore, TreeId) {
    const KEYS: u64 = 100_000;
    let mut config = KvConfig::new(4096);
    config.database.wal = WalConfig {
        log_size: 64 << 20,
        page_size: 4096,
        buffer_size: 1 << 20,
        full_timeout: Duration::from_secs(30),
    };
    let (kv, _) = KvStore::open_specs("mem", "mem", 16 * 1024, 8192, &config).unwrap();
    let tree = kv.open_tree("lookups").unwrap();
    let loaded = kv
        .bulk_load(
            tree,
            &mut (0..KEYS).map(|n| (lookup_key(n).to_vec(), vec![7u8; 100])),
        )
        .unwrap();
    assert_eq!(loaded, KEYS);
    (kv, tree)
}

fn lookup_key(n: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[8..].copy_from_slice(&(2 * n).to_be_bytes());
    key
}

fn lookups(kv: &KvStore, tree: TreeId, count: u64) {
    let mut x = 5u64;
    for _ in 0..count {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let mut txn = kv.begin().unwrap();
        assert!(
            txn.get(tree, &lookup_key((x >> 33) % 100_000))
                .unwrap()
                .is_some()
        );
        txn.commit().unwrap();
    }
}

/// `HIT_PATH_ONLY`: one kind of operation, `HIT_PATH_COUNT` times (for callgrind).
fn only(kind: &str) {
    let count: u64 = std::env::var("HIT_PATH_COUNT")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(100_000);
    let span: u64 = std::env::var("HIT_PATH_SPAN")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|span| (1..=PAGES as u64).contains(span))
        .unwrap_or(64);
    match kind {
        "latched" | "optimistic" => {
            let pool = pool(Scheme::Vanilla);
            let sum = if kind == "latched" {
                hits(&pool, 7, count, span)
            } else {
                optimistic_hits(&pool, 7, count, span)
            };
            println!("{kind}: {count} hits (checksum {sum})");
            pool.shutdown().unwrap();
        }
        "lookups" | "lookups-latched" => {
            let (kv, tree) = lookup_store();
            kv.trees().set_optimistic_descents(kind == "lookups");
            lookups(&kv, tree, 1000);
            lookups(&kv, tree, count);
            println!("{kind}: {count} lookups");
            kv.close().unwrap();
        }
        other => panic!(
            "HIT_PATH_ONLY={other}: expected latched, optimistic, lookups or lookups-latched"
        ),
    }
}

fn main() {
    if let Ok(kind) = std::env::var("HIT_PATH_ONLY") {
        only(&kind);
        return;
    }
    for scheme in [Scheme::Vanilla, Scheme::LruC] {
        let pool = pool(scheme);
        for (label, span) in [("64 hot pages", 64), ("all 4096 pages", PAGES as u64)] {
            let misses = pool.stats().misses;
            let start = Instant::now();
            let sum = hits(&pool, 7, HITS, span);
            let elapsed = start.elapsed();
            println!(
                "{scheme:<8} 1 thread, {label:<15}: {:>6.1} ns per hit ({} misses, checksum {sum})",
                elapsed.as_nanos() as f64 / HITS as f64,
                pool.stats().misses - misses
            );
            let misses = pool.stats().misses;
            let start = Instant::now();
            let sum = optimistic_hits(&pool, 7, HITS, span);
            let elapsed = start.elapsed();
            println!(
                "{scheme:<8} 1 thread, {label:<15}: {:>6.1} ns per optimistic hit ({} misses, \
                 checksum {sum})",
                elapsed.as_nanos() as f64 / HITS as f64,
                pool.stats().misses - misses
            );
        }
        let start = Instant::now();
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let pool = Arc::clone(&pool);
                std::thread::spawn(move || hits(&pool, t + 11, HITS, PAGES as u64))
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        let elapsed = start.elapsed();
        println!(
            "{scheme:<8} 2 threads: {:>6.2} M hits/s",
            2.0 * HITS as f64 / elapsed.as_secs_f64() / 1e6
        );
        let start = Instant::now();
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let pool = Arc::clone(&pool);
                std::thread::spawn(move || optimistic_hits(&pool, t + 11, HITS, PAGES as u64))
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        let elapsed = start.elapsed();
        println!(
            "{scheme:<8} 2 threads: {:>6.2} M optimistic hits/s",
            2.0 * HITS as f64 / elapsed.as_secs_f64() / 1e6
        );
        let stats = pool.stats();
        println!(
            "{scheme:<8} hits {} misses {} lru mutex acquisitions {:?}",
            stats.hits,
            stats.misses,
            stats
                .mutexes
                .values()
                .map(|m| m.acquisitions)
                .collect::<Vec<_>>()
        );
        pool.shutdown().unwrap();
    }
    churn_memory();
    println!(
        "memory per frame beyond the page: Frame {} B + free-list slot 4 B; page table 4 B per \
         page of the device's touched ranges",
        std::mem::size_of::<flashbuf::pool::frame::Frame>(),
    );
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmRSS:"))
                .and_then(|line| line.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// Pool memory must not grow during a run: a pool of 1024 frames over 16384 pages, 2M random
/// reads and writes (constant eviction), resident memory sampled before and after.
fn churn_memory() {
    let device: SharedDevice = Arc::new(MemoryDevice::new(16 * 1024, 16384).unwrap());
    for page in 0..16384u64 {
        let mut buf = flashbuf::device::AlignedBuf::new(16 * 1024);
        flashbuf::page::stamp(buf.as_mut_slice(), page, 1);
        device.write_page(page, &buf).unwrap();
    }
    let pool = BufferPool::open(device, PoolConfig::for_scheme(Scheme::LruC, 1024)).unwrap();
    let mut x = 99u64;
    let mut step = |count: u64| {
        for _ in 0..count {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let page = (x >> 33) % 16384;
            if x.is_multiple_of(2) {
                drop(pool.read(page).unwrap());
            } else {
                pool.write(page).unwrap().data_mut()[100] = 1;
            }
        }
    };
    step(200_000);
    let before = rss_kib();
    step(2_000_000);
    let after = rss_kib();
    println!(
        "resident memory over 2M operations with eviction: {before} KiB before, {after} KiB after ({} misses)",
        pool.stats().misses
    );
}
