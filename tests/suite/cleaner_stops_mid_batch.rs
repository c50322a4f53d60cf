//! A pool that shuts down while its cleaner writes a large background batch ends the batch after
//! the chunk in flight instead of writing it all first: LRU-C's flusher writing a whole dirty
//! region (`policy::writeback::innodb`, `write_and_free`; at 500 TPC-C warehouses one region is
//! a whole instance, and writing it out delayed the end of a run by minutes), and the page
//! cleaner's flush-list part (`Core::flush_oldest_ext` with the shutdown as its stop). The pages
//! not written stay dirty, for the close's own write-back (or none, after `abandon`).
//!
//! Both pools set `time_constant_scale = 1`, so the cleaner's period is the configured minute
//! and its only round is the one the miss wakes. Under the automatic scale the period of a
//! 2,048-frame instance is about a second, and on a loaded host a timed round could begin while
//! the pages were still being dirtied; its flush-list part once had no stop, and wrote the whole
//! pool after `abandon` (this test failed about 1 run in 8 that way).

use std::sync::Arc;

use flashbuf::device::{AlignedBuf, OpenOptions, SharedDevice};
use flashbuf::pool::{BufferPool, PoolConfig, Scheme};

const PAGE: usize = 4096;
const FRAMES: usize = 2048;
/// Distance between the pool's pages on the disk.
const STRIDE: u64 = 64;
/// The page whose miss starts the flusher's round.
const MISSED: u64 = FRAMES as u64 * STRIDE;

/// An emulated disk in real time (no time scale, so a miss's waits stay short), with the pool's
/// pages `STRIDE` apart so that every write seeks: a region of `FRAMES` pages takes seconds to
/// write in chunks. The page the miss reads is formatted.
fn slow_device() -> SharedDevice {
    let device = flashbuf::device::open(
        &flashbuf::device::DeviceSpec::parse("emu:hdd").unwrap(),
        &OpenOptions {
            page_size: PAGE,
            pages: MISSED + 1,
            create: true,
        },
    )
    .unwrap();
    let mut buf = AlignedBuf::new(PAGE);
    flashbuf::page::stamp(buf.as_mut_slice(), MISSED, 1);
    device.write_page(MISSED, &buf).unwrap();
    device
}

/// One instance of `FRAMES` frames whose cleaner runs only when a miss wakes it.
fn config(scheme: Scheme) -> PoolConfig {
    let mut config = PoolConfig::for_scheme(scheme, FRAMES);
    config.instances = 1;
    config.cleaner_period_ms = 60_000;
    config.time_constant_scale = 1.0;
    config.write_batch_pages = 64;
    config
}

/// Fills every frame with a new dirty page, then misses once, and returns the pool once the
/// device has made `writes` writes since the miss began.
fn pool_after_a_miss_on_a_dirty_pool(config: PoolConfig, writes: u64) -> BufferPool {
    let pool = BufferPool::open(slow_device(), config).unwrap();
    for page in (0..FRAMES as u64).map(|i| i * STRIDE) {
        let mut guard = pool.create(page).unwrap();
        guard.data_mut()[100] = 1;
    }
    let writes_before = pool.device().stats().writes;
    drop(pool.read(MISSED).unwrap());
    crate::poll::until("the cleaner's batch", || {
        pool.device().stats().writes >= writes_before + writes
    });
    pool
}

/// Stops the pool and asserts that far fewer than the batch's pages were written.
fn assert_abandon_ends_the_batch(pool: BufferPool) {
    let device = Arc::clone(pool.device());
    pool.abandon();
    let written = device.stats().writes;
    assert!(
        written < FRAMES as u64 / 2,
        "the cleaner wrote {written} times for {FRAMES} dirty pages after the pool stopped"
    );
}

/// With no clean page to evict, the LRU-C pointer passes the whole pool, so the dirty region
/// holds every frame and the flusher takes it as one batch; the pool stops once it has begun
/// (2 writes: the miss's own single-page flush, or the batch's first copies).
#[test]
fn shutdown_ends_a_dirty_region_batch_after_the_chunk_in_flight() {
    let pool = pool_after_a_miss_on_a_dirty_pool(config(Scheme::LruC), 2);
    assert_abandon_ends_the_batch(pool);
}

/// Vanilla's round after a miss on a pool that is all dirty: the LRU tail part writes at most
/// `lru_scan_depth` (8) pages, then the flush-list part, whose plan is every dirty page (above
/// `max_dirty_pages_pct` InnoDB flushes `io_capacity` pages a second, here for a minute's
/// period). The pool stops once more writes were made than the miss (a single-page flush: 2
/// writes with its doublewrite copy) and the tail part (16) can account for, so inside the
/// flush-list batch.
#[test]
fn shutdown_ends_a_flush_list_batch_after_the_chunk_in_flight() {
    let mut config = config(Scheme::Vanilla);
    config.lru_scan_depth = 8;
    config.io_capacity = 10_000;
    config.io_capacity_max = 20_000;
    let pool = pool_after_a_miss_on_a_dirty_pool(config, 2 + 2 * 8 + 4);
    assert_abandon_ends_the_batch(pool);
}
