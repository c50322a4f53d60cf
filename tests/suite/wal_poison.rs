//! A failed sync or write poisons the log: every later call reports the original cause and
//! nothing past the last good sync is ever reported durable.

use crate::wal_common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use flashbuf::error::{DeviceError, Error};
use flashbuf::wal::{LogRecord, Wal};
use wal_common::{Shim, config, mem_for, record};

fn is_injected(err: &Error, what: &str) -> bool {
    matches!(err, Error::Poisoned(DeviceError::Injected(message)) if message == what)
}

#[test]
fn a_sync_failure_poisons_every_later_call() {
    let config = config(32, 8);
    let shim = Shim::new(mem_for(&config), Duration::ZERO);
    let wal = Wal::create(shim.clone(), config.clone()).unwrap();
    let good = wal.append(&[record(0, 1, 50)]).unwrap();
    wal.flush_to(good).unwrap();

    shim.fail_sync.store(true, Ordering::SeqCst);
    let bad = wal.append(&[LogRecord::Commit { txn: 2 }]).unwrap();
    let err = wal.flush_to(bad).unwrap_err();
    assert!(is_injected(&err, "fsync failed"), "{err}");
    assert_eq!(
        wal.durable_lsn(),
        good,
        "nothing past the failed sync is durable"
    );

    // The device recovers, but the log does not pretend.
    shim.fail_sync.store(false, Ordering::SeqCst);
    for err in [
        wal.flush_to(bad).unwrap_err(),
        wal.append(&[LogRecord::Commit { txn: 3 }]).unwrap_err(),
        wal.write_checkpoint(good).unwrap_err(),
    ] {
        assert!(is_injected(&err, "fsync failed"), "{err}");
    }
    assert!(wal.poison_cause().is_some());
    assert_eq!(wal.durable_lsn(), good);
}

#[test]
fn a_write_failure_poisons_the_waiting_followers_too() {
    let config = config(64, 8);
    let shim = Shim::new(mem_for(&config), Duration::from_millis(2));
    let wal = Wal::create(shim.clone(), config).unwrap();
    shim.fail_writes.store(true, Ordering::SeqCst);
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4u64)
            .map(|txn| {
                let wal = &wal;
                scope.spawn(move || {
                    let lsn = wal.append(&[LogRecord::Commit { txn }])?;
                    wal.flush_to(lsn)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for result in results {
        let err = result.unwrap_err();
        assert!(is_injected(&err, "write failed"), "{err}");
    }
    assert_eq!(
        wal.stats().flushes,
        0,
        "no sync was counted as a group commit"
    );
}

#[test]
fn a_failed_checkpoint_slot_write_poisons() {
    let config = config(32, 8);
    let shim = Shim::new(mem_for(&config), Duration::ZERO);
    let wal = Wal::create(shim.clone(), config).unwrap();
    let lsn = wal.append(&[record(1, 1, 10)]).unwrap();
    wal.flush_to(lsn).unwrap();
    shim.fail_writes.store(true, Ordering::SeqCst);
    let err = wal.write_checkpoint(lsn).unwrap_err();
    assert!(is_injected(&err, "write failed"), "{err}");
    shim.fail_writes.store(false, Ordering::SeqCst);
    assert!(is_injected(
        &wal.append(&[record(2, 2, 0)]).unwrap_err(),
        "write failed"
    ));
}
