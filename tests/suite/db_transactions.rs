//! The transactional layer on RAM devices: commit and reopen, rollback, lock order, torn-page
//! repair from a page image (also from an image later than the first redo record of the page:
//! issue 8, bug 1) and from the doublewrite copy, concurrent transfers keeping their sum,
//! recoverability writes with a small log, the rules that keep a log from being formatted over
//! a database, and a failed data sync poisoning the database without losing a commit.

use std::sync::Arc;
use std::time::Duration;

use flashbuf::datafile::DATA_START;
use flashbuf::db::{Database, DatabaseConfig};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, SharedDevice};
use flashbuf::pool::{PoolConfig, Scheme, TornPageProtection};
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
        ..DatabaseConfig::default()
    }
}

/// A data device with room for `pages` data pages after the header and doublewrite area, and
/// a log device of `log_kib` KiB.
fn devices(pages: u64, log_kib: u64) -> (SharedDevice, SharedDevice) {
    (
        Arc::new(MemoryDevice::new(PAGE, DATA_START + pages).unwrap()),
        Arc::new(MemoryDevice::new(PAGE, log_kib * 1024 / PAGE as u64).unwrap()),
    )
}

/// Overwrites the first half of data page `page` on the device with garbage: a torn write.
fn tear(data: &SharedDevice, page: u64) {
    let mut buf = AlignedBuf::new(PAGE);
    data.read_page(DATA_START + page, &mut buf).unwrap();
    buf.as_mut_slice()[..PAGE / 2].fill(0xAB);
    data.write_page(DATA_START + page, &buf).unwrap();
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
        db.abandon();
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

fn with_protection(mut config: DatabaseConfig, protection: TornPageProtection) -> DatabaseConfig {
    config.pool.torn_page_protection = Some(protection);
    config.checkpoint_period_ms = 600_000; // no background checkpoint passes the torn write
    config
}

#[test]
fn a_torn_page_is_restored_from_its_image() {
    let (data, log) = devices(32, 512);
    let cfg = with_protection(
        config(Scheme::LruC, 16, 512),
        TornPageProtection::PageImages,
    );
    {
        let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
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
        db.abandon();
    }
    tear(&data, 4);
    let (db, report) = Database::open(data, log, &cfg).unwrap();
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

/// Issue 8, bug 1: the log after the redo point holds a redo record of page 4 logged while it
/// was dirty (no image: its image lies before the redo point), then the page was written
/// cleanly, then changed again (a new image) and that write tore. Replay must not stop at the
/// first redo record: the later image repairs the page.
#[test]
fn a_torn_page_is_repaired_by_an_image_after_its_first_redo_record() {
    let (data, log) = devices(32, 512);
    let cfg = with_protection(
        config(Scheme::Vanilla, 16, 512),
        TornPageProtection::PageImages,
    );
    {
        let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
        let update = |page: u64, offset: usize, value: u64| {
            let mut tx = db.begin();
            tx.lock(&[page]).unwrap();
            tx.update(page, offset, &value.to_le_bytes()).unwrap();
            tx.commit().unwrap()
        };
        let first = update(4, 64, 1); // image of page 4 + redo, page 4 dirty
        update(9, 64, 2); // page 9 dirty from `first` on: its oldest change is the redo point
        update(4, 72, 3); // page 4 still dirty: redo only, after the redo point
        // Write page 4 alone (its oldest change is below `first`, page 9's is not), then
        // checkpoint: the redo point is page 9's oldest change, after page 4's image, before
        // page 4's second change.
        db.pool().preflush(first).unwrap();
        db.checkpoint().unwrap();
        assert!(db.wal().checkpoint_lsn() > 0);
        update(4, 80, 4); // page 4 clean again: a new image, then the write that will tear
        db.pool().flush_all().unwrap();
        db.abandon();
    }
    tear(&data, 4);
    let (db, report) = Database::open(data, log, &cfg).unwrap();
    assert!(report.torn_pages_repaired >= 1, "{report:?}");
    assert!(
        report.redo_superseded >= 1,
        "the early redo record was skipped: {report:?}"
    );
    let page = db.pool().read(4).unwrap();
    assert_eq!(
        [
            read_u64(page.data(), 64),
            read_u64(page.data(), 72),
            read_u64(page.data(), 80)
        ],
        [1, 3, 4]
    );
    drop(page);
    assert_eq!(read_u64(db.pool().read(9).unwrap().data(), 64), 2);
    db.close().unwrap();
}

#[test]
fn a_torn_page_is_restored_from_the_doublewrite_copy() {
    let (data, log) = devices(32, 512);
    let cfg = with_protection(
        config(Scheme::Vanilla, 16, 512),
        TornPageProtection::Doublewrite,
    );
    {
        let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
        let mut tx = db.begin();
        tx.lock(&[4]).unwrap();
        tx.update(4, 64, &42u64.to_le_bytes()).unwrap();
        tx.commit().unwrap();
        db.pool().flush_all().unwrap();
        assert!(db.pool().stats().write_path.doublewrite_pages >= 1);
        db.abandon();
    }
    tear(&data, 4);
    let (db, report) = Database::open(data, log, &cfg).unwrap();
    assert!(report.doublewrite_restored >= 1, "{report:?}");
    assert_eq!(read_u64(db.pool().read(4).unwrap().data(), 64), 42);
    db.close().unwrap();
}

#[test]
fn a_torn_page_without_protection_is_a_clear_error() {
    let (data, log) = devices(32, 512);
    let cfg = with_protection(config(Scheme::Vanilla, 16, 512), TornPageProtection::None);
    {
        let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
        let mut tx = db.begin();
        tx.lock(&[4]).unwrap();
        tx.update(4, 64, &42u64.to_le_bytes()).unwrap();
        tx.commit().unwrap();
        db.pool().flush_all().unwrap();
        let mut tx = db.begin();
        tx.lock(&[4]).unwrap();
        tx.update(4, 72, &43u64.to_le_bytes()).unwrap();
        tx.commit().unwrap();
        db.abandon();
    }
    tear(&data, 4);
    let err = Database::open(data, log, &cfg).map(|_| ()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("page 4") && text.contains("none"), "{text}");
}

#[test]
fn a_log_is_never_formatted_over_a_database() {
    let (data, log) = devices(16, 256);
    let cfg = config(Scheme::Vanilla, 16, 256);
    let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
    let mut tx = db.begin();
    tx.lock(&[1]).unwrap();
    tx.update(1, 64, &5u64.to_le_bytes()).unwrap();
    tx.commit().unwrap();
    db.close().unwrap();
    // Both checkpoint slots zeroed (issue 8: the log was silently re-formatted).
    let zero = AlignedBuf::new(PAGE);
    log.write_page(0, &zero).unwrap();
    log.write_page(1, &zero).unwrap();
    let err = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg)
        .map(|_| ())
        .unwrap_err();
    assert!(err.to_string().contains("refusing to format"), "{err}");
    // A fresh log for an existing data file: bound to another log.
    let (_, other_log) = devices(1, 256);
    let err = Database::open(Arc::clone(&data), Arc::clone(&other_log), &cfg)
        .map(|_| ())
        .unwrap_err();
    assert!(err.to_string().contains("refusing to format"), "{err}");
    // The log of another database.
    let (data2, log2) = devices(16, 256);
    Database::open(data2, Arc::clone(&log2), &cfg)
        .unwrap()
        .0
        .close()
        .unwrap();
    let err = Database::open(data, log2, &cfg).map(|_| ()).unwrap_err();
    assert!(err.to_string().contains("bound to log"), "{err}");
}

#[test]
fn a_zeroed_or_truncated_data_file_is_an_error() {
    let (data, log) = devices(16, 256);
    // Page images: no doublewrite copy would restore the zeroed page.
    let cfg = with_protection(
        config(Scheme::Vanilla, 16, 256),
        TornPageProtection::PageImages,
    );
    let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
    for page in 0..16 {
        let mut tx = db.begin();
        tx.lock(&[page]).unwrap();
        tx.update(page, 64, &page.to_le_bytes()).unwrap();
        tx.commit().unwrap();
    }
    db.close().unwrap();
    // A data page zeroed below the high-water mark.
    let zero = AlignedBuf::new(PAGE);
    data.write_page(DATA_START + 3, &zero).unwrap();
    let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg).unwrap();
    let err = db.pool().read(3).map(|_| ()).unwrap_err();
    assert!(err.to_string().contains("high-water"), "{err}");
    db.abandon();
    // The whole data file zeroed: the log holds a database, the data device is blank.
    for page in 0..DATA_START + 16 {
        data.write_page(page, &zero).unwrap();
    }
    let err = Database::open(Arc::clone(&data), Arc::clone(&log), &cfg)
        .map(|_| ())
        .unwrap_err();
    assert!(err.to_string().contains("blank"), "{err}");
    // A truncated data file (shorter than its header says).
    let (data, log) = devices(16, 256);
    Database::open(Arc::clone(&data), Arc::clone(&log), &cfg)
        .unwrap()
        .0
        .close()
        .unwrap();
    let short: SharedDevice = Arc::new(MemoryDevice::new(PAGE, DATA_START + 8).unwrap());
    let mut buf = AlignedBuf::new(PAGE);
    for page in 0..DATA_START + 8 {
        data.read_page(page, &mut buf).unwrap();
        short.write_page(page, &buf).unwrap();
    }
    let err = Database::open(short, log, &cfg).map(|_| ()).unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
}

/// Issue 8, bug 3: a failed data-device sync whose writes are lost (Linux after a failed
/// fsync). The database refuses every later commit, and reopening recovers every acknowledged
/// commit from the log.
#[test]
fn a_failed_sync_poisons_the_database_and_loses_no_acknowledged_commit() {
    use flashbuf::device::fault::{FaultConfig, FaultDevice};
    let (inner_data, log) = devices(32, 512);
    let data: Arc<FaultDevice> = Arc::new(
        FaultDevice::new_zeroed(
            Arc::clone(&inner_data),
            FaultConfig {
                seed: 7,
                // Past the syncs of creating the database; the checkpoints below fail one.
                fail_syncs: vec![8],
                sync_failure_loses_pending: true,
                ..FaultConfig::default()
            },
        )
        .unwrap(),
    );
    let mut cfg = config(Scheme::Vanilla, 16, 512);
    cfg.checkpoint_period_ms = 5;
    let mut acknowledged = Vec::new();
    match Database::open(Arc::clone(&data) as SharedDevice, Arc::clone(&log), &cfg) {
        Ok((db, _)) => {
            for n in 0..200u64 {
                let page = n % 30;
                let mut tx = db.begin();
                let done = tx
                    .lock(&[page])
                    .and_then(|()| tx.update(page, 64 + 8 * (n / 30) as usize, &n.to_le_bytes()))
                    .and_then(|()| tx.commit());
                match done {
                    Ok(_) => acknowledged.push(n),
                    Err(err) => {
                        // The failing sync itself (a transaction's own single-page flush) or a
                        // later commit refused because of it.
                        assert!(
                            matches!(
                                err,
                                flashbuf::Error::Poisoned(_) | flashbuf::Error::Device(_)
                            ),
                            "after a failed sync commits are refused: {err}"
                        );
                        break;
                    }
                }
                if n % 10 == 0 {
                    let _ = db.checkpoint();
                }
            }
            assert!(
                db.check_usable().is_err(),
                "a sync failed within 200 commits: {:?}",
                data.counters()
            );
            db.abandon();
        }
        Err(err) => panic!("open: {err}"),
    }
    assert!(!acknowledged.is_empty());
    // Reopen on what the medium holds now (the lost writes are gone from it).
    let image: SharedDevice = Arc::new(data.crash().unwrap());
    let (db, _) = Database::open(image, log, &config(Scheme::Vanilla, 16, 512)).unwrap();
    for n in acknowledged {
        let page = n % 30;
        let value = read_u64(
            db.pool().read(page).unwrap().data(),
            64 + 8 * (n / 30) as usize,
        );
        assert_eq!(value, n, "acknowledged commit {n} lost");
    }
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
    // Page images fill the log fast enough to force recoverability writes.
    let mut cfg = config(Scheme::LruC, 16, 256);
    cfg.pool.torn_page_protection = Some(TornPageProtection::PageImages);
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
        match Arc::try_unwrap(db) {
            Ok(db) => db.abandon(),
            Err(_) => panic!("the workers are done"),
        }
    }
    let (db, report) = Database::open(data, log, &cfg).unwrap();
    assert_eq!(total(&db), 0, "{report:?}");
    db.close().unwrap();
}

#[test]
fn a_failed_write_poisons_the_pool_and_reaches_the_caller() {
    use flashbuf::device::fault::{FaultConfig, FaultDevice};
    let inner: SharedDevice = Arc::new(MemoryDevice::new(PAGE, 64).unwrap());
    // A bare pool over a device (no database layout): writes go in place.
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
    config.time_constant_scale = 1.0;
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
