//! The read-ahead parts in the real pool (`mem` device, no background cleaner): a sequential
//! scan under `+seq` misses about once per `prefetch_pages + 1` pages after the trigger, random
//! access prefetches nothing, and `+history` learns a repeated sequence of scattered pages and
//! reads successors ahead; the prefetcher's memory is reported in the pool's `extra` stats.

use flashbuf::device::{AlignedBuf, DeviceSpec, OpenOptions, SharedDevice, open};
use flashbuf::engine::Composition;
use flashbuf::page::stamp;
use flashbuf::pool::{BufferPool, PoolConfig};

const PAGE: usize = 4096;
const PAGES: u64 = 2048;

fn device() -> SharedDevice {
    let device = open(
        &DeviceSpec::parse("mem").unwrap(),
        &OpenOptions {
            page_size: PAGE,
            pages: PAGES,
            create: true,
        },
    )
    .unwrap();
    let mut buf = AlignedBuf::new(PAGE);
    for page in 0..PAGES {
        buf.as_mut_slice().fill(0);
        stamp(buf.as_mut_slice(), page, 1);
        device.write_page(page, &buf).unwrap();
    }
    device
}

fn pool(scheme: &str) -> BufferPool {
    let mut config = PoolConfig::for_scheme(Composition::parse(scheme).unwrap(), 256);
    config.background = false;
    config.instances = 1;
    config.torn_page_protection = Some(flashbuf::pool::TornPageProtection::None);
    BufferPool::open(device(), config).unwrap()
}

#[test]
fn a_sequential_scan_reads_ahead_after_the_trigger() {
    let pool = pool("vanilla+seq");
    for page in 0..1000 {
        drop(pool.read(page).unwrap());
    }
    let stats = pool.stats();
    // Trigger 4, 8 pages ahead: the first 4 pages miss, then one miss per 9 pages.
    assert!(stats.prefetches >= 850, "prefetched {}", stats.prefetches);
    assert!(stats.misses <= 4 + 1000 / 9 + 2, "misses {}", stats.misses);
    assert!(stats.extra["seq_triggers"] > 100.0);
    assert!(stats.extra["prefetch_memory_bytes"] > 0.0);
    pool.close().unwrap();
}

#[test]
fn random_access_reads_nothing_ahead() {
    let pool = pool("vanilla+seq");
    let mut x: u64 = 99;
    for _ in 0..3000 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        // Even pages only: never the page after the previous one.
        drop(pool.read((x >> 33) % (PAGES / 2) * 2).unwrap());
    }
    assert_eq!(pool.stats().prefetches, 0);
    pool.close().unwrap();
}

#[test]
fn history_learns_a_repeated_sequence_of_scattered_pages() {
    let pool = pool("vanilla+history");
    // 400 scattered pages (more than the 256 frames, so each pass misses), visited in the same
    // order three times.
    let sequence: Vec<u64> = (0..400u64).map(|i| i * 997 % PAGES).collect();
    let mut misses_per_pass = Vec::new();
    for _ in 0..3 {
        let before = pool.stats().misses;
        for &page in &sequence {
            drop(pool.read(page).unwrap());
        }
        misses_per_pass.push(pool.stats().misses - before);
    }
    let stats = pool.stats();
    // Pass 1 learns weight 1, pass 2 weight 2 (the threshold); in pass 3 a miss reads its
    // successor ahead, which is then a hit (a hit predicts nothing), so about every other page
    // misses.
    assert_eq!(misses_per_pass[0], 400);
    assert!(stats.prefetches > 100, "prefetched {}", stats.prefetches);
    assert!(
        misses_per_pass[2] <= misses_per_pass[0] * 6 / 10,
        "misses per pass {misses_per_pass:?}"
    );
    let memory = stats.extra["prefetch_memory_bytes"];
    let bound = stats.extra["history_entries_max"]
        * flashbuf::policy::prefetch::history::ENTRY_BYTES as f64
        + 1024.0;
    assert!(memory > 0.0 && memory <= bound, "{memory} > {bound}");
    pool.close().unwrap();
}
