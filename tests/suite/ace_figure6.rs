//! ACE's Figure 6 (Papon and Athanassoulis, ICDE 2023, section IV), replayed through the real
//! pool: ACE's writer and evictor (`policy::miss::ace`) over the real replacement orders, on a
//! `mem` device, with `n_w = 3` and no prefetching (so `n_e = 1`).
//!
//! The figure (described in the text, the image is not in our copy) lists six pages from the
//! eviction end, p6 first (p6 is the least recently used), and shows:
//! - (a) LRU with dirty p6, p4, p2: ACE writes the first three dirty pages in LRU order
//!   (p6, p4, p2) concurrently and evicts p6 (with prefetching it would evict p6, p5, p4).
//! - (b) CFLRU whose clean-first window holds p6, p5, p4, all dirty: no clean page to evict in
//!   the window, so the victim p6 is dirty; ACE writes p6, p5, p4 and evicts p6.
//! - (c) LRU-WSR with dirty p6, p4, p1 whose cold flag is set and dirty p3 whose flag is not:
//!   p3 gets its second chance (moved to the head, flag set); ACE writes p6, p4, p1 and evicts
//!   p6.
//!
//! Each case builds the state with real accesses (16 frames, the pool's minimum: p1..p6 plus
//! ten clean pages nearer the head, plus extra dirty pages where the figure has them, which
//! must *not* be written), then misses on a new page. What was written is read back from the
//! device (each dirtied page carries a marker); what was evicted is read from the page table.

use flashbuf::device::{AlignedBuf, DeviceSpec, OpenOptions, SharedDevice, open};
use flashbuf::engine::Composition;
use flashbuf::page::{payload, payload_mut, stamp};
use flashbuf::pool::{BufferPool, PoolConfig};

const PAGE: usize = 4096;
const FRAMES: usize = 16;
const MARK: u8 = 0xA5;

fn device() -> SharedDevice {
    let device = open(
        &DeviceSpec::parse("mem").unwrap(),
        &OpenOptions {
            page_size: PAGE,
            pages: 64,
            create: true,
        },
    )
    .unwrap();
    let mut buf = AlignedBuf::new(PAGE);
    for page in 0..64 {
        buf.as_mut_slice().fill(0);
        stamp(buf.as_mut_slice(), page, 1);
        device.write_page(page, &buf).unwrap();
    }
    device
}

fn pool(scheme: &str, device: &SharedDevice, cflru_window_pct: usize) -> BufferPool {
    let mut config = PoolConfig::for_scheme(Composition::parse(scheme).unwrap(), FRAMES);
    config.background = false;
    config.instances = 1;
    config.ace_n_w = 3;
    config.cflru_window_pct = cflru_window_pct;
    config.torn_page_protection = Some(flashbuf::pool::TornPageProtection::None);
    BufferPool::open(device.clone(), config).unwrap()
}

/// Fills the pool so that the eviction end reads `eviction_order` (first = evicted first), the
/// other pages of 1..=16 nearer the head; pages in `dirty` are modified (with the marker), the
/// rest only read. Every frame is in use afterwards (the free list is empty).
fn build(pool: &BufferPool, eviction_order: &[u64], dirty: &[u64]) {
    let mut order: Vec<u64> = eviction_order.to_vec();
    order.extend((1..=FRAMES as u64).filter(|p| !eviction_order.contains(p)));
    assert_eq!(order.len(), FRAMES);
    // Read every page in once (reverse, so a first pass already leaves the right order), then
    // touch them again in eviction order: each hit moves the page to the head, so the first
    // touched ends at the eviction end.
    for &page in order.iter().rev() {
        drop(pool.read(page).unwrap());
    }
    for &page in &order {
        if dirty.contains(&page) {
            let mut guard = pool.write(page).unwrap();
            payload_mut(guard.data_mut())[0] = MARK;
        } else {
            drop(pool.read(page).unwrap());
        }
    }
    assert_eq!(pool.stats().free_frames, 0);
    assert_eq!(pool.stats().dirty_pages, dirty.len() as u64);
}

fn written(device: &SharedDevice, pages: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let mut buf = AlignedBuf::new(PAGE);
    pages
        .into_iter()
        .filter(|&page| {
            device.read_page(page, &mut buf).unwrap();
            payload(buf.as_slice())[0] == MARK
        })
        .collect()
}

fn cached(pool: &BufferPool, page: u64) -> bool {
    pool.core().table.lookup(page).is_some()
}

/// Misses on a new page and returns (pages written, pages evicted among 1..=16).
fn miss(pool: &BufferPool, device: &SharedDevice) -> (Vec<u64>, Vec<u64>) {
    drop(pool.read(40).unwrap());
    let written = written(device, 1..=FRAMES as u64);
    let evicted = (1..=FRAMES as u64).filter(|&p| !cached(pool, p)).collect();
    (written, evicted)
}

#[test]
fn figure_6a_lru_writes_the_first_three_dirty_pages_and_evicts_the_top() {
    let device = device();
    let pool = pool("pg-lru+ace", &device, 33);
    // p6 p5 p4 p3 p2 p1 from the eviction end; p6, p4, p2 dirty, and p1 dirty too (a fourth
    // dirty page that n_w = 3 must leave alone).
    build(&pool, &[6, 5, 4, 3, 2, 1], &[6, 4, 2, 1]);
    let (mut written, evicted) = miss(&pool, &device);
    written.sort_unstable();
    assert_eq!(written, vec![2, 4, 6]);
    assert_eq!(evicted, vec![6]);
    assert_eq!(pool.stats().sync_replacement_writes, 3);
    assert_eq!(pool.stats().dirty_pages, 1, "p1 stays dirty");
    pool.abandon();
}

#[test]
fn figure_6b_cflru_writes_the_dirty_window_and_evicts_the_top() {
    let device = device();
    // A window of 3 of 16 frames (19%): p6, p5, p4.
    let pool = pool("pg-cflru+ace", &device, 19);
    // The window is all dirty; p2 is dirty outside it.
    build(&pool, &[6, 5, 4, 3, 2, 1], &[6, 5, 4, 2]);
    let (mut written, evicted) = miss(&pool, &device);
    written.sort_unstable();
    assert_eq!(written, vec![4, 5, 6]);
    assert_eq!(evicted, vec![6]);
    pool.abandon();
}

#[test]
fn figure_6b_variant_cflru_evicts_a_clean_window_page_without_writing() {
    let device = device();
    let pool = pool("pg-cflru+ace", &device, 19);
    // p5 clean inside the window: CFLRU evicts it first, ACE's writer never runs.
    build(&pool, &[6, 5, 4, 3, 2, 1], &[6, 4, 2]);
    let (written, evicted) = miss(&pool, &device);
    assert!(written.is_empty(), "{written:?}");
    assert_eq!(evicted, vec![5]);
    pool.abandon();
}

#[test]
fn figure_6c_lru_wsr_skips_the_warm_dirty_page_and_writes_the_cold_ones() {
    let device = device();
    let pool = pool("pg-lru-wsr+ace", &device, 33);
    build(&pool, &[6, 5, 4, 3, 2, 1], &[6, 4, 3, 1]);
    // Set the cold flag of p6, p4, p1 (LRU-WSR keeps it in the frame's order word, bit 0;
    // the figure's state has it set from an earlier second chance).
    for page in [6, 4, 1] {
        let frame = pool.core().table.lookup(page).unwrap();
        pool.core().frames[frame as usize]
            .order_word
            .store(1, std::sync::atomic::Ordering::Relaxed);
    }
    let (mut written, evicted) = miss(&pool, &device);
    written.sort_unstable();
    assert_eq!(written, vec![1, 4, 6]);
    assert_eq!(evicted, vec![6]);
    // p3 got its second chance: still dirty, cached, now cold at the head.
    assert!(cached(&pool, 3));
    assert_eq!(pool.stats().dirty_pages, 1);
    let p3 = pool.core().table.lookup(3).unwrap();
    assert_eq!(
        pool.core().frames[p3 as usize]
            .order_word
            .load(std::sync::atomic::Ordering::Relaxed),
        1,
        "cold flag set"
    );
    pool.abandon();
}
