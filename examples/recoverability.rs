//! Synchronous recoverability writes versus log size (issue 5): 16 threads run bank transfers
//! through the transactional layer on an emulated SSD (data) with the log on a second emulated
//! SSD, once with a small log and once with a large one, and report how many page writes the
//! committing threads had to do themselves because the log was full.
//!
//! Run: `cargo run --release --example recoverability [-- DEVICE]` (default `emu:ssd-a`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use flashbuf::db::{Database, DatabaseConfig};
use flashbuf::device::{DeviceSpec, OpenOptions, open};
use flashbuf::pool::{PoolConfig, Scheme};
use flashbuf::wal::WalConfig;

const DATA_PAGES: u64 = 8192;
const PER_PAGE: u64 = 512;

fn run(device: &str, log_mib: u64) -> flashbuf::Result<()> {
    let spec = DeviceSpec::parse(device)?;
    let data = open(
        &spec,
        &OpenOptions {
            page_size: 16384,
            pages: flashbuf::datafile::DATA_START + DATA_PAGES,
            create: true,
        },
    )?;
    let log_spec = DeviceSpec::parse(&format!("{device},plp=on"))?;
    let log_pages = log_mib * 1024 * 1024 / 4096;
    let log = open(
        &log_spec,
        &OpenOptions {
            page_size: 4096,
            pages: log_pages,
            create: true,
        },
    )?;
    let mut pool = PoolConfig::for_scheme(Scheme::LruC, 1024);
    pool.old_blocks_time_ms = 0;
    let config = DatabaseConfig {
        pool,
        wal: WalConfig {
            log_size: log_pages * 4096,
            page_size: 4096,
            buffer_size: if log_mib < 8 { 256 << 10 } else { 1 << 20 },
            full_timeout: Duration::from_secs(30),
        },
        checkpoint_period_ms: 1000,
        ..DatabaseConfig::default()
    };
    let (db, _) = Database::open(data, log, &config)?;
    let db = Arc::new(db);
    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..16u64)
        .map(|t| {
            let (db, stop, commits) = (Arc::clone(&db), Arc::clone(&stop), Arc::clone(&commits));
            std::thread::spawn(move || -> flashbuf::Result<()> {
                let mut x = t.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                while !stop.load(Ordering::Relaxed) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let accounts = DATA_PAGES * PER_PAGE;
                    let (a, b) = (x % accounts, (x >> 32) % accounts);
                    let mut tx = db.begin();
                    tx.lock(&[a / PER_PAGE, b / PER_PAGE])?;
                    let at = |acct: u64| 64 + (acct % PER_PAGE) as usize * 8;
                    let from = i64::from_le_bytes(
                        tx.page(a / PER_PAGE)?[at(a)..at(a) + 8]
                            .try_into()
                            .unwrap_or([0; 8]),
                    ) - 1;
                    tx.update(a / PER_PAGE, at(a), &from.to_le_bytes())?;
                    let to = i64::from_le_bytes(
                        tx.page(b / PER_PAGE)?[at(b)..at(b) + 8]
                            .try_into()
                            .unwrap_or([0; 8]),
                    ) + 1;
                    tx.update(b / PER_PAGE, at(b), &to.to_le_bytes())?;
                    tx.commit()?;
                    commits.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(8));
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker
            .join()
            .map_err(|_| flashbuf::Error::Config("worker panicked".into()))??;
    }
    let real = start.elapsed().as_secs_f64();
    let scale = db.pool().device().info().time_scale;
    let stats = db.pool().stats();
    let wal = db.wal().stats();
    println!(
        "log {log_mib:>4} MiB: {:>7.0} commits/s (device time), page writes: {} by the cleaner, {} flush-list, {} synchronous recoverability ({:.1}% of writes synchronous), {} checkpoints, mean group {:.1}",
        commits.load(Ordering::Relaxed) as f64 / (real / scale),
        stats.lru_flushes,
        stats.flush_list_flushes,
        stats.sync_recoverability_writes,
        stats.sync_write_pct(),
        wal.checkpoints,
        wal.mean_group_size,
    );
    match Arc::try_unwrap(db) {
        Ok(db) => db.close(),
        Err(_) => Err(flashbuf::Error::InvalidArgument(
            "a worker still holds the database".into(),
        )),
    }
}

fn main() -> flashbuf::Result<()> {
    let device = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "emu:ssd-a".to_string());
    println!(
        "transfers, 16 threads, 8192 pages of 16 KiB, 1024 frames, lru-c, data and log on {device}"
    );
    for log_mib in [2, 256] {
        run(&device, log_mib)?;
    }
    Ok(())
}
