//! What the page cleaner writes when the whole database is cached (issue 20, item 3;
//! docs/performance.md, "Why the page cleaner writes with the whole database cached"):
//!
//! - with the log's checkpoint age below the adaptive-flushing low-water mark and free frames
//!   to spare, nothing asked for a write, so the data device sees none (vanilla's InnoDB cleaner
//!   and LRU-C's dirty-region flusher alike);
//! - past the low-water mark the cleaner writes flush-list pages for the checkpoint (what the
//!   log's headroom needs), still none from the LRU end while free frames are plenty;
//! - a pool short of free frames still gets them from the cleaner's LRU part (vanilla's tail
//!   flush, LRU-C's dirty region): the out-of-memory behaviour is unchanged.

use std::sync::Arc;
use std::time::{Duration, Instant};

use flashbuf::datafile::DATA_START;
use flashbuf::db::{Database, DatabaseConfig};
use flashbuf::device::SharedDevice;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::pool::{PoolConfig, PoolStats, Scheme};
use flashbuf::wal::WalConfig;

const PAGE: usize = 4096;

/// Data pages of every database here.
const PAGES: u64 = 64;

fn config(scheme: Scheme, frames: usize, log_kib: u64) -> DatabaseConfig {
    let mut pool = PoolConfig::for_scheme(scheme, frames);
    pool.cleaner_period_ms = 5;
    pool.time_constant_scale = 1.0;
    pool.lru_scan_depth = 8;
    DatabaseConfig {
        pool,
        wal: WalConfig {
            log_size: log_kib * 1024,
            page_size: PAGE,
            buffer_size: 64 * 1024,
            full_timeout: Duration::from_secs(5),
        },
        checkpoint_period_ms: 20,
        flush_log_at_trx_commit: 0,
        log_flush_period_ms: 20,
        data_pages: Some(PAGES),
    }
}

fn devices(log_kib: u64) -> (SharedDevice, SharedDevice) {
    (
        Arc::new(MemoryDevice::new(PAGE, DATA_START + PAGES).unwrap()),
        Arc::new(MemoryDevice::new(PAGE, log_kib * 1024 / PAGE as u64).unwrap()),
    )
}

/// One transaction updating 8 bytes of `page` (locked alone: no waits).
fn update(db: &Database, page: u64, value: u64) {
    let mut tx = db.begin();
    tx.lock(&[page]).unwrap();
    tx.update(page, 128 + (value as usize % 64) * 8, &value.to_le_bytes())
        .unwrap();
    tx.commit().unwrap();
}

/// The log's modified age: current LSN minus the oldest change not yet written (0 if none),
/// what adaptive flushing compares with the low-water mark.
fn modified_age(db: &Database) -> u64 {
    match db.pool().oldest_unflushed_lsn() {
        0 => 0,
        oldest => db.wal().current_lsn().saturating_sub(oldest),
    }
}

fn low_water_mark(db: &Database) -> u64 {
    db.wal().margins().adaptive_flushing_lwm
}

fn cleaner_writes(stats: &PoolStats) -> u64 {
    stats.lru_flushes + stats.flush_list_flushes
}

/// Updates every page of a database the pool holds whole until the log's modified age is
/// 80-100% of the adaptive-flushing low-water mark (a 2 MiB log: about 185 KB), then lets the
/// cleaner run about 20 more rounds: nothing asked for a write, so it must write nothing and the
/// data device must see no write at all. (At that age InnoDB's `pct_for_lsn` formula, without
/// the low-water mark, would ask for about 9% of `io_capacity` a round.)
fn cached_with_room(scheme: Scheme) {
    let (data, log) = devices(2048);
    let cfg = config(scheme, 4 * PAGES as usize, 2048);
    let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
    for page in 0..PAGES {
        drop(db.pool().read(page).unwrap());
    }
    let writes_before = data.stats().writes;
    let lwm = low_water_mark(&db);
    let mut value = 0u64;
    // Bound: each sweep adds redo, so the age grows to the target.
    while modified_age(&db) < lwm / 10 * 8 {
        for page in 0..PAGES {
            update(&db, page, value);
            value += 1;
            if modified_age(&db) >= lwm / 10 * 8 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
    let age = modified_age(&db);
    assert!(age < lwm, "{scheme:?}: age {age}, low-water mark {lwm}");
    let stats = db.pool().stats();
    assert_eq!(PAGES, stats.dirty_pages, "{scheme:?}: {stats:?}");
    assert_eq!(0, cleaner_writes(&stats), "{scheme:?}: {stats:?}");
    assert_eq!(0, stats.sync_recoverability_writes, "{scheme:?}");
    assert_eq!(0, stats.sync_replacement_writes, "{scheme:?}");
    assert_eq!(
        writes_before,
        data.stats().writes,
        "{scheme:?}: the data device was written with the database cached and the log roomy"
    );
    db.close().unwrap();
}

#[test]
fn a_cached_database_whose_log_has_room_is_not_written_by_vanillas_cleaner() {
    cached_with_room(Scheme::Vanilla);
}

#[test]
fn a_cached_database_whose_log_has_room_is_not_written_by_lru_cs_flusher() {
    cached_with_room(Scheme::LruC);
}

/// Past the low-water mark (a 1 MiB log) the cleaner writes flush-list pages for the
/// checkpoint, and none from the LRU end: three quarters of the frames are free.
fn cached_past_low_water(scheme: Scheme) {
    cached_past_low_water_in_order(scheme, false);
}

/// As [`cached_past_low_water`], with the round in MySQL 5.6's order or 5.7's
/// (`cleaner_plans_first`).
fn cached_past_low_water_in_order(scheme: Scheme, plans_first: bool) {
    let (data, log) = devices(1024);
    let mut cfg = config(scheme, 4 * PAGES as usize, 1024);
    cfg.pool.cleaner_plans_first = plans_first;
    let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
    let lwm = low_water_mark(&db);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut value = 0u64;
    while db.pool().stats().flush_list_flushes == 0 {
        assert!(
            Instant::now() < deadline,
            "{scheme:?}: no checkpoint flushing"
        );
        // Below the low-water mark keep making redo; above it wait for the cleaner.
        if modified_age(&db) < lwm + lwm / 2 {
            for page in 0..PAGES {
                update(&db, page, value);
                value += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let stats = db.pool().stats();
    assert_eq!(0, stats.lru_flushes, "{scheme:?}: {stats:?}");
    assert_eq!(0, stats.sync_replacement_writes, "{scheme:?}: {stats:?}");
    db.close().unwrap();
}

#[test]
fn past_the_low_water_mark_vanillas_cleaner_writes_only_for_the_checkpoint() {
    cached_past_low_water(Scheme::Vanilla);
}

#[test]
fn past_the_low_water_mark_lru_cs_flusher_writes_only_for_the_checkpoint() {
    cached_past_low_water(Scheme::LruC);
}

/// Out of memory (16 frames for 64 pages), updates of random pages: the cleaner's LRU part
/// writes dirty pages from the eviction end and frees their frames.
fn short_of_frames(scheme: Scheme) {
    short_of_frames_in_order(scheme, false);
}

/// As [`short_of_frames`], in MySQL 5.6's round order or 5.7's.
fn short_of_frames_in_order(scheme: Scheme, plans_first: bool) {
    let (data, log) = devices(16 * 1024);
    let mut cfg = config(scheme, 16, 16 * 1024);
    cfg.pool.cleaner_plans_first = plans_first;
    let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
    let mut x = 12_345u64;
    let deadline = Instant::now() + Duration::from_secs(30);
    while db.pool().stats().lru_flushes == 0 {
        assert!(
            Instant::now() < deadline,
            "{scheme:?}: {:?}",
            db.pool().stats()
        );
        for _ in 0..64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            update(&db, (x >> 33) % PAGES, x);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let stats = db.pool().stats();
    assert!(stats.evictions > 0, "{scheme:?}: {stats:?}");
    db.close().unwrap();
}

#[test]
fn a_pool_short_of_frames_still_gets_them_from_vanillas_tail_flush() {
    short_of_frames(Scheme::Vanilla);
}

#[test]
fn a_pool_short_of_frames_still_gets_them_from_lru_cs_dirty_region() {
    short_of_frames(Scheme::LruC);
}

#[test]
fn in_mysql_57s_round_order_the_flusher_still_writes_for_the_checkpoint() {
    cached_past_low_water_in_order(Scheme::LruC, true);
    cached_past_low_water_in_order(Scheme::Vanilla, true);
}

#[test]
fn in_mysql_57s_round_order_a_pool_short_of_frames_still_gets_them() {
    short_of_frames_in_order(Scheme::LruC, true);
    short_of_frames_in_order(Scheme::Vanilla, true);
}
