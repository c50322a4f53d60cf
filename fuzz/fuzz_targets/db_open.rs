//! `Database::open` over damaged data and log images of a database with known commits.
//!
//! The base: 40 acknowledged transactions on RAM devices, then a crash (the database is dropped
//! without closing; every completed write survives). Input byte 0 picks the device to damage
//! (even: log, odd: data), the rest is a list of mutations. Open must not panic or hang, and
//! must end in an error or a database. When the damage is confined to log records the log can
//! prove were durable (after the checkpoint's redo LSN, before the start of the last flush, the
//! proving page's header intact), open must fail: a silent open would have dropped
//! acknowledged commits. Other damage (data pages, the last flush) is the lead's side of issue
//! 8 (data-file header, high-water mark, the page-LSN cross-check): the target checks only
//! that it does not panic, and reads every committed value (reads may fail with an error).
//!
//! Written against today's `db.rs` API; update it when `Database::open` changes.

#![no_main]

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use flashbuf::db::{Database, DatabaseConfig};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::pool::{PoolConfig, Scheme};
use flashbuf::wal::{Wal, WalConfig};
use fuzz_support::{
    PAGE, apply, device_from, first_changed_lsn, header_unchanged, mutations, snapshot,
};
use libfuzzer_sys::fuzz_target;

const DATA_PAGES: u64 = 64;
const LOG_PAGES: u64 = 40;

struct Base {
    data: Vec<u8>,
    log: Vec<u8>,
    /// (page, offset) -> committed value.
    values: BTreeMap<(u64, usize), u64>,
    redo_lsn: u64,
    /// The largest flush stamp of the undamaged log: the start of its last flush.
    last_flush_start: u64,
}

fn config() -> DatabaseConfig {
    let mut pool = PoolConfig::for_scheme(Scheme::LruC, 16);
    pool.cleaner_period_ms = 5;
    DatabaseConfig {
        pool,
        wal: WalConfig {
            log_size: LOG_PAGES * PAGE as u64,
            page_size: PAGE,
            buffer_size: 8 * PAGE,
            full_timeout: Duration::from_secs(2),
        },
        checkpoint_period_ms: 1_000_000,
    }
}

fn base() -> &'static Base {
    static BASE: OnceLock<Base> = OnceLock::new();
    BASE.get_or_init(|| {
        let data = Arc::new(MemoryDevice::new(PAGE, DATA_PAGES).unwrap());
        let log = Arc::new(MemoryDevice::new(PAGE, LOG_PAGES).unwrap());
        let mut values = BTreeMap::new();
        {
            let (db, _) = Database::open(data.clone(), log.clone(), &config()).unwrap();
            for txn in 0..40u64 {
                let page = 1 + txn % 12;
                let offset = 64 + (txn as usize / 12) * 8;
                let mut tx = db.begin();
                tx.lock(&[page]).unwrap();
                tx.update(page, offset, &(txn + 1).to_le_bytes()).unwrap();
                tx.commit().unwrap();
                values.insert((page, offset), txn + 1);
                if txn == 25 {
                    db.checkpoint().unwrap();
                }
            }
            // Dropped without close: a crash.
        }
        let log_image = snapshot(&log);
        let copy = device_from(&log_image);
        let (_, recovery) = Wal::open(copy, config().wal).unwrap();
        Base {
            data: snapshot(&data),
            log: log_image,
            values,
            redo_lsn: recovery.checkpoint.redo_lsn,
            last_flush_start: recovery.proven_durable_lsn,
        }
    })
}

fuzz_target!(|input: &[u8]| {
    let Some((&which, rest)) = input.split_first() else {
        return;
    };
    let base = base();
    let mut data = base.data.clone();
    let mut log = base.log.clone();
    let damage_log = which % 2 == 0;
    let target = if damage_log { &mut log } else { &mut data };
    let list = mutations(rest, target.len(), 8);
    apply(target, &list);
    let (first, slots_changed) = first_changed_lsn(&base.log, &log);
    let provable = damage_log
        && !slots_changed
        && first.is_some_and(|lsn| lsn >= base.redo_lsn && lsn < base.last_flush_start)
        && header_unchanged(&base.log, &log, base.last_flush_start / PAGE as u64);
    // `FUZZ_REPORT=1` prints each input's class (to count what a corpus exercises).
    let report = std::env::var_os("FUZZ_REPORT").is_some();
    let opened = Database::open(device_from(&data), device_from(&log), &config());
    match opened {
        Ok((db, recovery)) => {
            if report {
                eprintln!("CLASS provable={provable} outcome=ok");
            }
            assert!(
                !provable,
                "provable log damage at LSN {first:?} opened silently: {recovery:?}"
            );
            for (&(page, offset), _value) in &base.values {
                // A read may fail (corrupt page): that is an error, not silent loss. Whether a
                // wrong value is read is the lead's check (data-file header, page-LSN check).
                if let Ok(guard) = db.pool().read(page) {
                    let _ = guard.data()[offset];
                }
            }
            let _ = db.close();
        }
        Err(_) => {
            if report {
                eprintln!("CLASS provable={provable} outcome=error");
            }
        }
    }
});
