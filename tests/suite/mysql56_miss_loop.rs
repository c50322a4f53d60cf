//! MySQL 5.6's miss loop (`free_block_loop = "5.6"`, docs/algorithms.md, "The host's miss loop:
//! 5.6 or 5.7"), against 5.7's:
//!
//! - a miss that finds the free list empty while the page cleaner's LRU batch of its instance
//!   is being set up waits until the batch's writes are done, then takes a frame; 5.7's miss
//!   does not wait;
//! - 5.6.26's page cleaner writes the LRU tail in batches of at most 100 pages; 5.7's in one
//!   batch of the scan depth.
//!
//! The batch is held open by the test itself (`Instance::lru_batch`), so the wait is
//! deterministic: the missing thread cannot finish before the test ends the batch.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use flashbuf::datafile::DATA_START;
use flashbuf::db::{Database, DatabaseConfig};
use flashbuf::device::SharedDevice;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::pool::{FreeBlockLoop, PoolConfig, Scheme};
use flashbuf::wal::WalConfig;

const PAGE: usize = 4096;
/// Data pages of every database here.
const PAGES: u64 = 1024;
const LOG_KIB: u64 = 16 * 1024;

/// A vanilla database (InnoDB's doublewrite) on memory devices, its cleaner run by hand.
fn database(host: FreeBlockLoop, frames: usize, depth: usize) -> Database {
    let mut pool = PoolConfig::for_scheme(Scheme::Vanilla, frames);
    pool.background = false;
    pool.instances = 1;
    pool.old_blocks_time_ms = 0;
    pool.lru_scan_depth = depth;
    pool.time_constant_scale = 1.0;
    // A small flush-list part, so the round's largest batch is its LRU part's.
    pool.io_capacity = 10;
    pool.io_capacity_max = 20;
    pool.free_block_loop = host;
    let config = DatabaseConfig {
        pool,
        wal: WalConfig {
            log_size: LOG_KIB * 1024,
            page_size: PAGE,
            buffer_size: 64 * 1024,
            full_timeout: Duration::from_secs(5),
        },
        checkpoint_period_ms: 1_000_000,
        flush_log_at_trx_commit: 0,
        log_flush_period_ms: 20,
        data_pages: Some(PAGES),
    };
    let data: SharedDevice = Arc::new(MemoryDevice::new(PAGE, DATA_START + PAGES).unwrap());
    let log: SharedDevice =
        Arc::new(MemoryDevice::new(PAGE, LOG_KIB * 1024 / PAGE as u64).unwrap());
    let (db, _) = Database::open(data, log, &config).unwrap();
    assert!(
        db.pool()
            .core()
            .parts
            .write_path
            .name()
            .starts_with("doublewrite")
    );
    db
}

/// Updates pages `0..n` once: the pool fills with dirty pages and its free list empties.
fn fill_dirty(db: &Database, n: u64) {
    for page in 0..n {
        let mut tx = db.begin();
        tx.lock(&[page]).unwrap();
        tx.update(page, 128, &page.to_le_bytes()).unwrap();
        tx.commit().unwrap();
    }
}

/// A miss in a full pool while the test holds the instance's LRU batch open: returns whether it
/// finished before the batch ended, and the pool's batch waits after.
fn miss_during_batch(host: FreeBlockLoop) -> (bool, u64) {
    let db = Arc::new(database(host, 64, 16));
    fill_dirty(&db, 64);
    let core = Arc::clone(db.pool().core());
    assert_eq!(core.instances[0].free_len(), 0, "{host}: the pool is full");
    let running = core.instances[0].lru_batch.begin();
    let reader = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.pool().read(500).unwrap().data().len())
    };
    // 5.6's miss must still be waiting after 300 ms; 5.7's must finish while the batch is
    // held, however slowly this host runs it (up to 60 s).
    let patience = match host {
        FreeBlockLoop::Mysql56 => Duration::from_millis(300),
        FreeBlockLoop::Mysql57 => Duration::from_secs(60),
    };
    let held_since = Instant::now();
    while !reader.is_finished() && held_since.elapsed() < patience {
        std::thread::sleep(Duration::from_millis(5));
    }
    let finished_early = reader.is_finished();
    drop(running);
    assert_eq!(reader.join().unwrap(), PAGE);
    let waits = core.counters.lru_batch_waits.load(Ordering::Relaxed);
    drop(core);
    Arc::into_inner(db).unwrap().close().unwrap();
    (finished_early, waits)
}

#[test]
fn a_56_miss_waits_for_the_cleaners_batch_and_a_57_miss_does_not() {
    let (early, waits) = miss_during_batch(FreeBlockLoop::Mysql56);
    assert!(
        !early,
        "5.6: the miss finished while the batch was initialising"
    );
    assert_eq!(waits, 1, "5.6: one wait for one batch");

    let (early, waits) = miss_during_batch(FreeBlockLoop::Mysql57);
    assert!(early, "5.7: the miss waited for the batch");
    assert_eq!(waits, 0);
}

/// Runs one cleaner round on a full, all-dirty pool with a scan depth of 250 and returns the
/// largest batch the cleaner built.
fn largest_lru_batch(host: FreeBlockLoop) -> u64 {
    let db = database(host, 600, 250);
    fill_dirty(&db, 600);
    let core = db.pool().core();
    core.parts.writeback.round(core).unwrap();
    assert!(
        core.counters.lru_flushes.load(Ordering::Relaxed) >= 200,
        "{host}: the LRU part wrote the tail"
    );
    let largest = core.counters.max_flush_batch.load(Ordering::Relaxed);
    db.close().unwrap();
    largest
}

#[test]
fn mysql_56_writes_the_lru_tail_in_batches_of_100() {
    assert_eq!(largest_lru_batch(FreeBlockLoop::Mysql56), 100);
    assert!(largest_lru_batch(FreeBlockLoop::Mysql57) > 200);
}

/// The RAW loop's misses split by where their frame came from: the free list, the miss's own
/// scan for a clean page at the LRU tail, or a read stall; the page cleaner's LRU part counts
/// the clean pages it frees (`regime`'s `cleaner_freed_over_misses`).
#[test]
fn misses_split_by_where_their_frame_came_from() {
    let db = database(FreeBlockLoop::Mysql57, 64, 16);
    let core = Arc::clone(db.pool().core());
    let count = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
    let read = |pages: std::ops::Range<u64>| {
        for page in pages {
            assert_eq!(db.pool().read(page).unwrap().data().len(), PAGE);
        }
    };
    // Clean pages fill the pool from its free list.
    let from_free = count(&core.counters.misses_from_free_list);
    read(0..64);
    assert!(count(&core.counters.misses_from_free_list) > from_free);
    assert_eq!(core.instances[0].free_len(), 0, "the pool is full");
    // A cleaner round frees clean pages from the tail up to the scan depth; misses take them.
    core.parts.writeback.round(&core).unwrap();
    let freed = count(&core.counters.cleaner_freed_clean);
    assert_eq!(
        freed, 16,
        "the LRU part tops the free list up to the scan depth"
    );
    let from_free = count(&core.counters.misses_from_free_list);
    read(100..116);
    assert_eq!(count(&core.counters.misses_from_free_list), from_free + 16);
    // With the free list empty a miss evicts a clean page its own scan finds.
    let from_scan = count(&core.counters.misses_from_own_scan);
    read(200..208);
    assert_eq!(count(&core.counters.misses_from_own_scan), from_scan + 8);
    // With every page dirty a miss stalls.
    fill_dirty(&db, 64);
    read(300..304);
    let stats = db.pool().stats();
    assert!(stats.read_stalls >= 4, "{stats:?}");
    assert_eq!(
        count(&core.counters.misses_from_free_list)
            + count(&core.counters.misses_from_own_scan)
            + stats.read_stalls,
        stats.misses,
        "every miss is counted once, by where its frame came from"
    );
    let extra = &stats.extra;
    assert_eq!(extra["cleaner_freed_clean_pages"], freed as f64);
    assert_eq!(
        extra["misses_from_own_scan"],
        count(&core.counters.misses_from_own_scan) as f64
    );
    drop(core);
    db.close().unwrap();
}
