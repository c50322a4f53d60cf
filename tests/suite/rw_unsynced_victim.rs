//! RW as its paper ran it (`rw+unsynced-victim`, docs/policies.md): the fused command is the
//! whole miss, so a read stall waits for no sync; the victim's write is still counted on the
//! data file's sync gate, so the next sync (a checkpoint's) covers it. The default `rw`
//! protects the victim as any single-page flush and syncs on every fused miss.

use std::sync::Arc;

use flashbuf::core::BufferPool;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, Device, SharedDevice};
use flashbuf::engine::{Composition, PoolConfig, TornPageProtection};

const PAGE: usize = 4096;
const FRAMES: usize = 16;
const PAGES: u64 = 64;
/// The payload byte each test page carries.
const MARK: usize = 64;

/// A pool of `scheme` over a fresh memory device, every frame holding a dirty page (pages
/// `PAGES - FRAMES ..`, marked with their page number), so that every miss meets a dirty victim.
fn dirty_pool(scheme: &str) -> (Arc<MemoryDevice>, BufferPool) {
    let device = Arc::new(MemoryDevice::new(PAGE, PAGES).unwrap());
    let shared: SharedDevice = device.clone();
    let mut config = PoolConfig::for_scheme(Composition::parse(scheme).unwrap(), FRAMES);
    config.background = false;
    config.torn_page_protection = Some(TornPageProtection::None);
    config.lru_scan_depth = 2;
    let pool = BufferPool::open(shared, config).unwrap();
    for page in PAGES - FRAMES as u64..PAGES {
        let mut guard = pool.write(page).unwrap();
        guard.data_mut()[MARK] = page as u8;
    }
    (device, pool)
}

/// Reads `count` pages that are not cached: each miss evicts a dirty page.
fn miss(pool: &BufferPool, count: u64) {
    for page in 0..count {
        drop(pool.read(page).unwrap());
    }
}

#[test]
fn the_papers_fused_read_waits_for_no_sync() {
    let (device, pool) = dirty_pool("rw+unsynced-victim");
    let before = device.stats().syncs;
    miss(&pool, 8);
    let stats = pool.stats();
    assert!(stats.fused_reads >= 8, "fused reads: {}", stats.fused_reads);
    assert_eq!(
        device.stats().syncs,
        before,
        "a fused miss synced the device"
    );
    assert_eq!(stats.write_path.fsyncs, 0);
    assert_eq!(stats.write_path.doublewrite_pages, 0);
    // The victims' writes were counted: the next sync covers them (one device sync), and a
    // second finds nothing left to cover.
    pool.sync_data().unwrap();
    assert_eq!(device.stats().syncs, before + 1);
    pool.sync_data().unwrap();
    assert_eq!(device.stats().syncs, before + 1);
    // The victims are on the device with their contents.
    let mut buf = AlignedBuf::new(PAGE);
    let mut found = 0;
    for page in PAGES - FRAMES as u64..PAGES {
        device.read_page(page, &mut buf).unwrap();
        if buf.as_slice()[MARK] == page as u8 {
            found += 1;
        }
    }
    assert!(found >= 8, "{found} victims on the device");
}

#[test]
fn the_default_rw_syncs_after_each_fused_miss() {
    let (device, pool) = dirty_pool("rw");
    let before = device.stats().syncs;
    miss(&pool, 8);
    let stats = pool.stats();
    assert!(stats.fused_reads >= 8, "fused reads: {}", stats.fused_reads);
    assert!(
        device.stats().syncs >= before + stats.fused_reads,
        "{} syncs for {} fused misses",
        device.stats().syncs - before,
        stats.fused_reads
    );
}

#[test]
fn unsynced_victim_needs_the_rw_miss_path() {
    let err = Composition::parse("vanilla+unsynced-victim")
        .unwrap_err()
        .to_string();
    assert!(err.contains("rw"), "{err}");
    let rw = Composition::parse("vanilla+rw+unsynced-victim").unwrap();
    assert!(rw.rw_unsynced_victim);
    assert!(!Composition::parse("rw").unwrap().rw_unsynced_victim);
}
