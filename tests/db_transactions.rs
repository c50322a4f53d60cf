//! The transactional layer on RAM devices: commit and reopen, rollback, lock order, torn-page
//! repair from a full page image, concurrent transfers keeping their sum, recoverability writes
//! with a small log.

use std::sync::Arc;
use std::time::Duration;

use flashbuf::db::{Database, DatabaseConfig};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, SharedDevice};
use flashbuf::pool::{PoolConfig, Scheme};
use flashbuf::wal::WalConfig;

const PAGE: usize = 4096;

fn config(scheme: Scheme, frames: usize, log_kib: u64) -> DatabaseConfig {
    let mut pool = PoolConfig::for_scheme(scheme, frames);
    pool.cleaner_period_ms = 20;
    pool.lru_scan_depth = 8;
    DatabaseConfig {
        pool,
        wal: WalConfig {
            log_size: log_kib * 1024,
            page_size: PAGE,
            buffer_size: if log_kib <= 256 { 32 * 1024 } else { 64 * 1024 },
            full_timeout: Duration::from_secs(5),
        },
        checkpoint_period_ms: 50,
    }
}

fn devices(pages: u64, log_kib: u64) -> (SharedDevice, SharedDevice) {
    (
        Arc::new(MemoryDevice::new(PAGE, pages).unwrap()),
        Arc::new(MemoryDevice::new(PAGE, log_kib * 1024 / PAGE as u64).unwrap()),
    )
}

fn read_u64(bytes: &[u8], offset: usize) -> u64 {
    u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap())
}

#[test]
fn committed_changes_survive_reopen_and_dropped_ones_do_not() {
    let (data, log) = devices(64, 512);
    {
        let (db, report) = Database::open(
            Arc::clone(&data),
            Arc::clone(&log),
            &config(Scheme::LruC, 16, 512),
        )
        .unwrap();
        assert_eq!(report.committed, 0);
        let mut tx = db.begin();
        tx.lock(&[3, 9]).unwrap();
        tx.update(3, 100, &7u64.to_le_bytes()).unwrap();
        tx.update(9, 200, &8u64.to_le_bytes()).unwrap();
        tx.commit().unwrap();
        let mut aborted = db.begin();
        aborted.lock(&[3]).unwrap();
        aborted.update(3, 100, &99u64.to_le_bytes()).unwrap();
        drop(aborted);
        assert_eq!(
            read_u64(db.pool().read(3).unwrap().data(), 100),
            7,
            "rollback restores"
        );
        // No close: a crash in which every completed write survives (RAM devices).
    }
    let (db, report) = Database::open(data, log, &config(Scheme::LruC, 16, 512)).unwrap();
    assert!(report.committed >= 1, "{report:?}");
    assert_eq!(read_u64(db.pool().read(3).unwrap().data(), 100), 7);
    assert_eq!(read_u64(db.pool().read(9).unwrap().data(), 200), 8);
    db.close().unwrap();
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let (data, log) = devices(16, 256);
    let (db, _) = Database::open(data, log, &config(Scheme::Vanilla, 16, 256)).unwrap();
    let mut tx = db.begin();
    tx.lock(&[5]).unwrap();
    assert!(tx.lock(&[2]).is_err(), "descending lock order is refused");
    assert!(tx.update(7, 100, &[1]).is_err(), "page not locked");
    assert!(
        tx.update(5, 0, &[1]).is_err(),
        "header bytes are not writable"
    );
    assert!(
        tx.update(5, PAGE - 1, &[1, 2]).is_err(),
        "past the page end"
    );
    assert!(tx.lock(&[99]).is_err(), "page out of range");
    drop(tx);
    db.close().unwrap();
}

#[test]
fn a_torn_page_is_restored_from_its_image() {
    let (data, log) = devices(32, 512);
    {
        let (db, _) = Database::open(
            Arc::clone(&data),
            Arc::clone(&log),
            &config(Scheme::LruC, 16, 512),
        )
        .unwrap();
        let mut tx = db.begin();
        tx.lock(&[4]).unwrap();
        tx.update(4, 64, &42u64.to_le_bytes()).unwrap();
        tx.commit().unwrap();
        // Write the page out (so it is on the device), then dirty it again and "crash".
        db.pool().flush_all().unwrap();
        let mut tx = db.begin();
        tx.lock(&[4]).unwrap();
        tx.update(4, 72, &43u64.to_le_bytes()).unwrap();
        tx.commit().unwrap();
    }
    // Tear page 4 on the device: half new garbage, half old.
    let mut buf = AlignedBuf::new(PAGE);
    data.read_page(4, &mut buf).unwrap();
    buf.as_mut_slice()[..PAGE / 2].fill(0xAB);
    data.write_page(4, &buf).unwrap();
    let (db, report) = Database::open(data, log, &config(Scheme::LruC, 16, 512)).unwrap();
    assert!(
        report.images_restored >= 1 && report.torn_pages_repaired >= 1,
        "{report:?}"
    );
    let page = db.pool().read(4).unwrap();
    assert_eq!(read_u64(page.data(), 64), 42);
    assert_eq!(read_u64(page.data(), 72), 43);
    drop(page);
    db.close().unwrap();
}

/// Accounts: 8-byte signed balances, 64 per page, on pages 0..ACCOUNT_PAGES.
const ACCOUNT_PAGES: u64 = 24;
const PER_PAGE: u64 = 64;

fn transfer(db: &Database, from: u64, to: u64, amount: i64) -> flashbuf::Result<()> {
    let (from_page, to_page) = (from / PER_PAGE, to / PER_PAGE);
    let offset = |account: u64| 64 + (account % PER_PAGE) as usize * 8;
    let mut tx = db.begin();
    tx.lock(&[from_page, to_page])?;
    let balance = |tx: &flashbuf::db::Transaction<'_>, account: u64| -> flashbuf::Result<i64> {
        let bytes = tx.page(account / PER_PAGE)?;
        Ok(i64::from_le_bytes(
            bytes[offset(account)..offset(account) + 8]
                .try_into()
                .unwrap(),
        ))
    };
    let from_balance = balance(&tx, from)? - amount;
    tx.update(from_page, offset(from), &from_balance.to_le_bytes())?;
    let to_balance = balance(&tx, to)? + amount;
    tx.update(to_page, offset(to), &to_balance.to_le_bytes())?;
    tx.commit().map(|_| ())
}

fn total(db: &Database) -> i64 {
    (0..ACCOUNT_PAGES)
        .map(|page| {
            let guard = db.pool().read(page).unwrap();
            (0..PER_PAGE as usize)
                .map(|i| {
                    i64::from_le_bytes(guard.data()[64 + i * 8..72 + i * 8].try_into().unwrap())
                })
                .sum::<i64>()
        })
        .sum()
}

#[test]
fn concurrent_transfers_keep_the_sum_across_reopen_and_a_small_log_forces_recoverability_writes() {
    let (data, log) = devices(ACCOUNT_PAGES, 256);
    let cfg = config(Scheme::LruC, 16, 256);
    {
        let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
        let db = Arc::new(db);
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let db = Arc::clone(&db);
                std::thread::spawn(move || {
                    let mut x = t * 7919 + 1;
                    for _ in 0..400 {
                        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        let accounts = ACCOUNT_PAGES * PER_PAGE;
                        let from = (x >> 33) % accounts;
                        let to = (x >> 13) % accounts;
                        transfer(&db, from, to, ((x >> 50) % 100) as i64).unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(total(&db), 0);
        let stats = db.pool().stats();
        assert!(
            stats.sync_recoverability_writes > 0,
            "a 256 KiB log must force synchronous recoverability writes: {stats:?}"
        );
        db.pool().check_invariants().unwrap();
    }
    let (db, report) = Database::open(data, log, &cfg).unwrap();
    assert_eq!(total(&db), 0, "{report:?}");
    db.close().unwrap();
}

#[test]
fn a_failed_write_poisons_the_pool_and_reaches_the_caller() {
    use flashbuf::device::fault::{FaultConfig, FaultDevice};
    let inner: SharedDevice = Arc::new(MemoryDevice::new(PAGE, 64).unwrap());
    let device: SharedDevice = Arc::new(
        FaultDevice::new_zeroed(
            inner,
            FaultConfig {
                fail_writes: vec![1],
                ..FaultConfig::default()
            },
        )
        .unwrap(),
    );
    let mut config = PoolConfig::for_scheme(Scheme::LruC, 16);
    config.cleaner_period_ms = 60_000; // keep the cleaner out of the way
    let pool = flashbuf::pool::BufferPool::open(device, config).unwrap();
    pool.write(3).unwrap().data_mut()[100] = 1;
    let err = pool.flush_all().expect_err("the first write fails");
    assert!(err.to_string().contains("injected"), "{err}");
    let again = pool
        .write(4)
        .map(|_| ())
        .expect_err("writes are refused after a failed write");
    assert!(matches!(again, flashbuf::Error::Poisoned(_)), "{again}");
    assert_eq!(
        pool.read(3).unwrap().data()[100],
        1,
        "cached pages stay readable"
    );
    assert!(
        pool.shutdown().is_err(),
        "shutdown reports the poisoned state"
    );
}
