//! Stress: many threads read and update pages whose payload carries the page id, a version and
//! a checksum, on every preset, through a pool much smaller than the database; a fifth of the
//! operations are multi-page transactions that latch two or three pages exclusively in
//! ascending order and hold them together (the pattern that deadlocked `rw`). Afterwards every
//! page on the device must carry exactly the number of updates made to it (no lost or torn
//! update), and the pool's invariant checker must pass. A watchdog turns a hang into a failure
//! that prints every pinned, latched or busy frame.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use flashbuf::device::{AlignedBuf, SharedDevice};
use flashbuf::engine::compose::Composition;
use flashbuf::page::{PAGE_HEADER_SIZE, payload, payload_mut, stamp};
use flashbuf::pool::{BufferPool, PoolConfig, Scheme};
use rand::{Rng, SeedableRng};

/// A run that makes no progress for this long is a hang.
const HANG: Duration = Duration::from_secs(60);

const PAGE: usize = 4096;
const PAGES: u64 = 600;

fn record(page: u64, version: u64) -> [u8; 24] {
    let mut out = [0u8; 24];
    out[..8].copy_from_slice(&page.to_le_bytes());
    out[8..16].copy_from_slice(&version.to_le_bytes());
    let sum = crc32c::crc32c(&out[..16]) as u64;
    out[16..].copy_from_slice(&sum.to_le_bytes());
    out
}

fn parse(page: u64, bytes: &[u8]) -> u64 {
    let body = &bytes[..24];
    let stored_page = u64::from_le_bytes(body[..8].try_into().unwrap());
    let version = u64::from_le_bytes(body[8..16].try_into().unwrap());
    let sum = u64::from_le_bytes(body[16..24].try_into().unwrap());
    assert_eq!(stored_page, page, "page {page} holds another page's record");
    assert_eq!(
        sum,
        crc32c::crc32c(&body[..16]) as u64,
        "torn record on page {page}"
    );
    // The same record is repeated at the end of the payload: both halves must agree.
    let tail = &bytes[bytes.len() - 24..];
    assert_eq!(body, tail, "torn update on page {page}");
    version
}

fn write_record(page: u64, version: u64, bytes: &mut [u8]) {
    let rec = record(page, version);
    bytes[..24].copy_from_slice(&rec);
    let len = bytes.len();
    bytes[len - 24..].copy_from_slice(&rec);
}

fn formatted_device(spec: &str) -> SharedDevice {
    let device = flashbuf::device::open(
        &flashbuf::device::DeviceSpec::parse(spec).unwrap(),
        &flashbuf::device::OpenOptions {
            page_size: PAGE,
            pages: PAGES,
            create: true,
        },
    )
    .unwrap();
    let mut buf = AlignedBuf::new(PAGE);
    for page in 0..PAGES {
        buf.as_mut_slice().fill(0);
        write_record(page, 0, payload_mut(buf.as_mut_slice()));
        stamp(buf.as_mut_slice(), page, 1);
        device.write_page(page, &buf).unwrap();
    }
    device.sync().unwrap();
    device
}

fn pick(rng: &mut rand::rngs::SmallRng) -> u64 {
    // 80% of accesses to the first 100 pages.
    if rng.gen_bool(0.8) {
        rng.gen_range(0..100)
    } else {
        rng.gen_range(0..PAGES)
    }
}

/// Diagnostics: with FLASHBUF_HANG_SLEEP set, a worker that fails sleeps first, so that a
/// debugger can attach and see what the other threads are doing.
fn hang_sleep() {
    if std::env::var("FLASHBUF_HANG_SLEEP").is_ok() {
        eprintln!(
            "worker failed; sleeping for a debugger (pid {})",
            std::process::id()
        );
        std::thread::sleep(Duration::from_secs(120));
    }
}

fn update(pool: &BufferPool, page: u64, updates: &[AtomicU64]) {
    let mut guard = pool.write(page).unwrap_or_else(|e| {
        hang_sleep();
        panic!("{}: {e}\n{}", pool.scheme(), pool.core().dump_busy_frames())
    });
    let version = parse(page, payload(guard.data()));
    write_record(page, version + 1, payload_mut(guard.data_mut()));
    updates[page as usize].fetch_add(1, Ordering::Relaxed);
}

/// Two or three pages latched exclusive in ascending order, held together, then updated.
fn transaction(pool: &BufferPool, rng: &mut rand::rngs::SmallRng, updates: &[AtomicU64]) {
    let mut pages: Vec<u64> = (0..rng.gen_range(2..=3)).map(|_| pick(rng)).collect();
    pages.sort_unstable();
    pages.dedup();
    let mut guards: Vec<_> = pages
        .iter()
        .map(|&page| {
            pool.write(page).unwrap_or_else(|e| {
                hang_sleep();
                panic!("{}: {e}\n{}", pool.scheme(), pool.core().dump_busy_frames())
            })
        })
        .collect();
    for (guard, &page) in guards.iter_mut().zip(&pages) {
        let version = parse(page, payload(guard.data()));
        write_record(page, version + 1, payload_mut(guard.data_mut()));
        updates[page as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// Joins the workers; if the operation counter stops moving for [`HANG`], fails with a dump of
/// every pinned, latched or busy frame instead of waiting forever.
fn join_with_watchdog(
    pool: &BufferPool,
    scheme: &str,
    handles: Vec<std::thread::JoinHandle<()>>,
    progress: &AtomicU64,
) {
    let mut last = (progress.load(Ordering::Relaxed), Instant::now());
    while handles.iter().any(|handle| !handle.is_finished()) {
        std::thread::sleep(Duration::from_millis(50));
        let now = progress.load(Ordering::Relaxed);
        if now != last.0 {
            last = (now, Instant::now());
        } else if last.1.elapsed() > HANG {
            panic!(
                "{scheme}: no progress for {HANG:?} after {now} operations (a hang); busy frames:\n{}",
                pool.core().dump_busy_frames()
            );
        }
    }
    for handle in handles {
        handle.join().unwrap();
    }
}

fn run(spec: &str, scheme: Scheme, instances: usize, threads: usize, ops: usize) {
    let device = formatted_device(spec);
    let mut config = PoolConfig::for_scheme(scheme, 64);
    config.lru_scan_depth = 16;
    config.cleaner_period_ms = 5;
    config.bgwriter_delay_ms = 5;
    config.old_blocks_time_ms = 0;
    config.instances = instances;
    let pool = Arc::new(BufferPool::open(Arc::clone(&device), config).unwrap());
    let opened = pool.stats();
    let updates: Arc<Vec<AtomicU64>> = Arc::new((0..PAGES).map(|_| AtomicU64::new(0)).collect());
    let progress = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let pool = Arc::clone(&pool);
            let updates = Arc::clone(&updates);
            let progress = Arc::clone(&progress);
            std::thread::spawn(move || {
                let mut rng = rand::rngs::SmallRng::seed_from_u64(t as u64);
                for _ in 0..ops {
                    match rng.gen_range(0..10) {
                        0..=3 => {
                            let page = pick(&mut rng);
                            let guard = pool.read(page).unwrap_or_else(|e| {
                                hang_sleep();
                                panic!("{}: {e}\n{}", pool.scheme(), pool.core().dump_busy_frames())
                            });
                            parse(page, payload(guard.data()));
                        }
                        4..=7 => update(&pool, pick(&mut rng), &updates),
                        _ => transaction(&pool, &mut rng, &updates),
                    }
                    progress.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    join_with_watchdog(&pool, scheme.name(), handles, &progress);
    pool.check_invariants()
        .unwrap_or_else(|e| panic!("{scheme}: {e}"));
    let stats = pool.stats();
    assert_extras_windowed(scheme.name(), &opened, &stats, &stats.since(&opened));
    eprintln!(
        "{scheme}: hits {} misses {} stalls {} fused {} evictions {} lru_flushes {} list_flushes {} extra {:?}",
        stats.hits,
        stats.misses,
        stats.read_stalls,
        stats.fused_reads,
        stats.evictions,
        stats.lru_flushes,
        stats.flush_list_flushes,
        stats.extra
    );
    assert!(
        stats.hits + stats.misses >= (threads * ops) as u64,
        "{scheme}: {stats:?}"
    );
    assert!(
        stats.misses > 0 && stats.evictions > 0,
        "{scheme}: the pool must churn"
    );
    pool.shutdown().unwrap();
    pool.check_invariants()
        .unwrap_or_else(|e| panic!("{scheme} after flush: {e}"));
    assert_eq!(pool.stats().dirty_pages, 0);
    let mut buf = AlignedBuf::new(PAGE);
    for page in 0..PAGES {
        device.read_page(page, &mut buf).unwrap();
        flashbuf::page::verify(buf.as_slice(), page).unwrap();
        let version = parse(page, &buf.as_slice()[PAGE_HEADER_SIZE..]);
        assert_eq!(
            version,
            updates[page as usize].load(Ordering::Relaxed),
            "{scheme}: page {page}"
        );
    }
}

/// A measured window (`PoolStats::since`) of the `extra` figures: each gauge as it is now,
/// each counter as the difference (never below zero); the gauges' names are kept.
#[allow(clippy::float_cmp)] // the same f64 operations on the same values
fn assert_extras_windowed(
    scheme: &str,
    before: &flashbuf::core::stats::PoolStats,
    now: &flashbuf::core::stats::PoolStats,
    window: &flashbuf::core::stats::PoolStats,
) {
    assert_eq!(window.extra_gauges, now.extra_gauges, "{scheme}");
    for (name, &value) in &now.extra {
        let expected = if now.extra_gauges.contains(name) {
            value
        } else {
            (value - before.extra.get(name).copied().unwrap_or(0.0)).max(0.0)
        };
        assert_eq!(window.extra[name], expected, "{scheme}: extra `{name}`");
    }
    for name in &now.extra_gauges {
        assert!(
            now.extra.contains_key(name),
            "{scheme}: gauge `{name}` has a value"
        );
    }
}

/// The parts no preset holds (the flush-rate controllers, the prefetchers) window their extras
/// too, and their settings (`p_scan`, the prefetch depth) stay gauges.
#[test]
fn every_part_windows_its_extras() {
    for text in [
        "vanilla+percona",
        "vanilla+self-tuning",
        "pg-clock+seq",
        "pg-clock+history",
        "ace-clock+seq",
        "lru-c+self-tuning",
    ] {
        let composition = Composition::parse(text).unwrap();
        let device = formatted_device("mem");
        let mut config = PoolConfig::for_scheme(composition, 64);
        config.cleaner_period_ms = 5;
        config.bgwriter_delay_ms = 5;
        let pool = BufferPool::open(device, config).unwrap();
        let updates: Vec<AtomicU64> = (0..PAGES).map(|_| AtomicU64::new(0)).collect();
        for page in (0..PAGES).chain(0..PAGES) {
            update(&pool, page, &updates);
        }
        let before = pool.stats();
        assert!(before.misses > 0, "{text}: the pool must churn");
        for page in 0..PAGES {
            update(&pool, page, &updates);
        }
        let now = pool.stats();
        assert_extras_windowed(text, &before, &now, &now.since(&before));
        for gauge in ["p_scan", "seq_prefetch_pages", "history_entries_max"] {
            if now.extra.contains_key(gauge) {
                assert!(
                    now.extra_gauges.contains(gauge),
                    "{text}: `{gauge}` is a gauge"
                );
            }
        }
        pool.shutdown().unwrap();
    }
}

#[test]
fn every_scheme_keeps_every_update() {
    for scheme in Scheme::presets() {
        run("mem", scheme, 1, 8, 3000);
    }
}

#[test]
fn every_scheme_keeps_every_update_with_instances() {
    for scheme in Scheme::presets() {
        run("mem", scheme, 4, 8, 2000);
    }
}

#[test]
fn every_scheme_keeps_every_update_on_an_emulated_ssd() {
    for scheme in Scheme::presets() {
        run("emu:ssd-a,time_scale=2", scheme, 2, 8, 600);
    }
}
