//! What a client of the key-value layer sees: aborts and dropped transactions leave no trace,
//! uncommitted writes are invisible (a reader waits for the writer, then sees the outcome), a
//! deadlock or a lock timeout is a retryable conflict after which the transaction is rolled
//! back, scans wait for keys locked by writers, size limits are clear errors, and a transaction
//! in flight at a crash is rolled back by recovery (also when its changes reached the disk).

use std::sync::Arc;
use std::time::{Duration, Instant};

use flashbuf::Error;
use flashbuf::device::SharedDevice;
use flashbuf::device::fault::{FaultConfig, FaultDevice};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::kv::{Direction, FULL_RANGE, KvEngine};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;

const PAGE: usize = 4096;

fn config() -> KvConfig {
    let mut config = KvConfig::new(32);
    config.database.wal = WalConfig {
        log_size: 8 << 20,
        page_size: PAGE,
        buffer_size: 256 * 1024,
        full_timeout: Duration::from_secs(5),
    };
    config.lock_timeout = Duration::from_millis(300);
    config
}

/// `config()` with a lock timeout no scheduling delay reaches, for tests where a reader must
/// wait for a writer however late either thread runs.
fn patient_config() -> KvConfig {
    let mut config = config();
    config.lock_timeout = crate::poll::LIMIT;
    config
}

/// Returns once a lock request has begun to wait since `before` (`LockStats::waits`, counted
/// before the request sleeps), then lets it wait `WAITED` more: a reader spawned late still
/// waits for the writer, on a loaded host too.
fn until_a_request_waits(kv: &KvStore, before: u64) {
    crate::poll::until("a lock request waiting", || kv.lock_stats().waits > before);
    std::thread::sleep(WAITED);
}

/// How long a writer keeps its lock after a reader began to wait for it.
const WAITED: Duration = Duration::from_millis(100);

fn devices() -> (SharedDevice, SharedDevice) {
    (
        Arc::new(MemoryDevice::new(PAGE, 512).unwrap()),
        Arc::new(MemoryDevice::new(PAGE, (8 << 20) / PAGE as u64).unwrap()),
    )
}

fn value_of(kv: &KvStore, tree: u32, key: &[u8]) -> Option<Vec<u8>> {
    let mut txn = kv.begin().unwrap();
    let value = txn.get(tree, key).unwrap();
    txn.commit().unwrap();
    value
}

#[test]
fn aborted_and_dropped_transactions_leave_no_trace() {
    let (data, log) = devices();
    let (kv, _) = KvStore::open(data, log, &config()).unwrap();
    let t = kv.open_tree("t").unwrap();
    assert_eq!(kv.open_tree("t").unwrap(), t, "open_tree is idempotent");
    let u = kv.open_tree("u").unwrap();
    let mut txn = kv.begin().unwrap();
    txn.put(t, b"a", b"1").unwrap();
    txn.put(u, b"a", b"x").unwrap();
    txn.commit().unwrap();
    let mut txn = kv.begin().unwrap();
    txn.put(t, b"a", b"2").unwrap();
    txn.put(t, b"b", b"3").unwrap();
    assert!(txn.delete(u, b"a").unwrap());
    for n in 0..200u32 {
        txn.put(t, &n.to_be_bytes(), &[7; 300]).unwrap(); // splits, which stay
    }
    txn.abort().unwrap();
    assert_eq!(value_of(&kv, t, b"a"), Some(b"1".to_vec()));
    assert_eq!(value_of(&kv, t, b"b"), None);
    assert_eq!(value_of(&kv, u, b"a"), Some(b"x".to_vec()));
    {
        let mut txn = kv.begin().unwrap();
        txn.put(t, b"c", b"4").unwrap();
    } // dropped: aborted
    assert_eq!(value_of(&kv, t, b"c"), None);
    let mut count = 0;
    let mut txn = kv.begin().unwrap();
    txn.scan(
        t,
        FULL_RANGE,
        Direction::Forward,
        usize::MAX,
        &mut |_, _| {
            count += 1;
            true
        },
    )
    .unwrap();
    txn.commit().unwrap();
    assert_eq!(count, 1);
    assert!(kv.check().unwrap().is_ok());
    kv.close().unwrap();
}

#[test]
fn readers_wait_for_writers_and_see_only_committed_values() {
    let (data, log) = devices();
    let (kv, _) = KvStore::open(data, log, &patient_config()).unwrap();
    let t = kv.open_tree("t").unwrap();
    let mut setup = kv.begin().unwrap();
    setup.put(t, b"k", b"old").unwrap();
    setup.put(t, b"l", b"other").unwrap();
    setup.commit().unwrap();
    std::thread::scope(|scope| {
        let mut writer = kv.begin().unwrap();
        writer.put(t, b"k", b"new").unwrap();
        let waits_before = kv.lock_stats().waits;
        let reader = scope.spawn(|| {
            let start = Instant::now();
            let mut txn = kv.begin().unwrap();
            let mut seen = Vec::new();
            txn.scan(t, FULL_RANGE, Direction::Forward, 10, &mut |k, v| {
                seen.push((k.to_vec(), v.to_vec()));
                true
            })
            .unwrap();
            txn.commit().unwrap();
            (start.elapsed(), seen)
        });
        until_a_request_waits(&kv, waits_before);
        writer.abort().unwrap();
        let (waited, seen) = reader.join().unwrap();
        assert!(waited >= WAITED, "the scan did not wait: {waited:?}");
        assert_eq!(
            seen,
            vec![
                (b"k".to_vec(), b"old".to_vec()),
                (b"l".to_vec(), b"other".to_vec())
            ],
            "the scan saw an uncommitted value"
        );
    });
    kv.close().unwrap();
}

/// An auto-commit read (`KvEngine::get_committed_into`) of a key another transaction holds
/// exclusive waits for that transaction, then sees its outcome: the old value after an abort,
/// the new one after a commit. A key nobody holds is read at once, and absent keys read as
/// absent. Size limits and unknown trees are errors, as in a transaction.
#[test]
fn auto_commit_reads_wait_for_writers_and_see_only_committed_values() {
    let (data, log) = devices();
    let (kv, _) = KvStore::open(data, log, &patient_config()).unwrap();
    let t = kv.open_tree("t").unwrap();
    let mut setup = kv.begin().unwrap();
    setup.put(t, b"k", b"old").unwrap();
    setup.put(t, b"l", b"other").unwrap();
    setup.commit().unwrap();
    let mut value = Vec::new();
    assert!(kv.get_committed_into(t, b"l", &mut value).unwrap());
    assert_eq!(value, b"other");
    assert!(!kv.get_committed_into(t, b"absent", &mut value).unwrap());
    assert!(value.is_empty(), "an absent key leaves the buffer empty");
    for (outcome, expected) in [("abort", &b"old"[..]), ("commit", &b"new"[..])] {
        let waited_before = flashbuf::txn::committed_reads_waited();
        std::thread::scope(|scope| {
            let mut writer = kv.begin().unwrap();
            writer.put(t, b"k", b"new").unwrap();
            let waits_before = kv.lock_stats().waits;
            let reader = scope.spawn(|| {
                let start = Instant::now();
                let mut value = Vec::new();
                let found = kv.get_committed_into(t, b"k", &mut value).unwrap();
                (start.elapsed(), found, value)
            });
            // Unlocked keys stay readable while the writer holds `k`.
            let mut other = Vec::new();
            assert!(kv.get_committed_into(t, b"l", &mut other).unwrap());
            until_a_request_waits(&kv, waits_before);
            match outcome {
                "abort" => writer.abort().unwrap(),
                _ => writer.commit().unwrap(),
            }
            let (waited, found, value) = reader.join().unwrap();
            assert!(
                waited >= WAITED,
                "the read did not wait for the writer ({outcome}): {waited:?}"
            );
            assert!(found);
            assert_eq!(value, expected, "after the writer's {outcome}");
        });
        assert!(
            flashbuf::txn::committed_reads_waited() > waited_before,
            "the read should have waited as a transaction"
        );
    }
    let limits = kv.trees().limits();
    let err = kv
        .get_committed_into(t, &vec![0; limits.max_key + 1], &mut value)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(kv.get_committed_into(99, b"k", &mut value).is_err());
    kv.close().unwrap();
}

/// A read-committed read inside a transaction (`KvTxn::get_committed_into`) sees the
/// transaction's own writes, waits for another transaction's uncommitted write, and keeps no
/// lock: another transaction can change the key before the reader ends.
#[test]
fn read_committed_reads_in_a_transaction_keep_no_lock() {
    let (data, log) = devices();
    let (kv, _) = KvStore::open(data, log, &patient_config()).unwrap();
    let t = kv.open_tree("t").unwrap();
    let mut setup = kv.begin().unwrap();
    setup.put(t, b"k", b"old").unwrap();
    setup.commit().unwrap();
    let mut value = Vec::new();
    let mut reader = kv.begin().unwrap();
    assert!(reader.get_committed_into(t, b"k", &mut value).unwrap());
    assert_eq!(value, b"old");
    // No lock kept: a writer gets the key at once, without waiting.
    let waits = kv.lock_stats().waits;
    let mut writer = kv.begin().unwrap();
    writer.put(t, b"k", b"new").unwrap();
    writer.commit().unwrap();
    assert_eq!(
        kv.lock_stats().waits,
        waits,
        "the read kept a lock the writer waited for"
    );
    assert!(reader.get_committed_into(t, b"k", &mut value).unwrap());
    assert_eq!(value, b"new", "the latest committed value");
    // Its own write.
    reader.put(t, b"mine", b"1").unwrap();
    assert!(reader.get_committed_into(t, b"mine", &mut value).unwrap());
    assert_eq!(value, b"1");
    reader.commit().unwrap();
    // An uncommitted write of another transaction is waited for, then its outcome seen.
    std::thread::scope(|scope| {
        let mut writer = kv.begin().unwrap();
        writer.put(t, b"k", b"newer").unwrap();
        let waits_before = kv.lock_stats().waits;
        let read = scope.spawn(|| {
            let start = Instant::now();
            let mut txn = kv.begin().unwrap();
            let mut value = Vec::new();
            assert!(txn.get_committed_into(t, b"k", &mut value).unwrap());
            txn.commit().unwrap();
            (start.elapsed(), value)
        });
        until_a_request_waits(&kv, waits_before);
        writer.abort().unwrap();
        let (waited, value) = read.join().unwrap();
        assert!(waited >= WAITED, "did not wait: {waited:?}");
        assert_eq!(value, b"new");
    });
    kv.close().unwrap();
}

/// Writers put a poison value, then either overwrite it and commit or roll back, over a few
/// keys that splits and merges move between leaves; auto-commit readers on other threads must
/// never see the poison (an uncommitted value) and must always find the key.
#[test]
fn auto_commit_reads_never_see_uncommitted_values_under_stress() {
    const KEYS: u32 = 400;
    const POISON: &[u8] = b"uncommitted";
    let (data, log) = devices();
    let mut config = config();
    config.lock_timeout = Duration::from_secs(5);
    let (kv, _) = KvStore::open(data, log, &config).unwrap();
    let t = kv.open_tree("t").unwrap();
    let mut setup = kv.begin().unwrap();
    for n in 0..KEYS {
        setup.put(t, &n.to_be_bytes(), &[1; 40]).unwrap();
    }
    setup.commit().unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let reads = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|scope| {
        for writer in 0..2u32 {
            let (kv, stop) = (&kv, &stop);
            scope.spawn(move || {
                let mut round = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    round += 1;
                    let key = ((round * 7 + writer * 13) % KEYS).to_be_bytes();
                    let mut txn = kv.begin().unwrap();
                    if txn.put(t, &key, POISON).is_err() {
                        continue; // a conflict: rolled back already
                    }
                    // Values of several lengths make leaves split and merge around the key.
                    let len = 20 + (round as usize * 37) % 400;
                    if round.is_multiple_of(3) {
                        txn.abort().unwrap();
                    } else if txn.put(t, &key, &vec![2; len]).is_ok() {
                        let _ = txn.commit();
                    }
                }
            });
        }
        for reader in 0..2u32 {
            let (kv, stop, reads) = (&kv, &stop, &reads);
            scope.spawn(move || {
                let mut value = Vec::new();
                let mut n = reader;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    n = (n + 11) % KEYS;
                    let key = n.to_be_bytes();
                    match kv.get_committed_into(t, &key, &mut value) {
                        Ok(found) => {
                            assert!(found, "key {n} vanished");
                            assert_ne!(value, POISON, "key {n}: an uncommitted value was read");
                            reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        Err(err) => assert!(err.is_retryable(), "{err}"),
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_millis(1500));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    assert!(
        reads.load(std::sync::atomic::Ordering::Relaxed) > 1000,
        "too few reads to mean anything"
    );
    kv.close().unwrap();
}

#[test]
fn conflicts_are_retryable_and_roll_the_transaction_back() {
    let (data, log) = devices();
    let (kv, _) = KvStore::open(data, log, &config()).unwrap();
    let t = kv.open_tree("t").unwrap();
    let mut holder = kv.begin().unwrap();
    holder.put(t, b"k", b"held").unwrap();
    let mut waiter = kv.begin().unwrap();
    waiter.put(t, b"mine", b"1").unwrap();
    let err = waiter.get(t, b"k").unwrap_err();
    assert!(matches!(err, Error::Conflict(_)), "{err}");
    assert!(err.is_retryable());
    // The victim is rolled back at once: its write is gone, its locks are free, and any
    // further call fails the same way.
    assert!(matches!(waiter.put(t, b"x", b"y"), Err(Error::Conflict(_))));
    holder.commit().unwrap();
    assert_eq!(value_of(&kv, t, b"mine"), None);
    assert_eq!(value_of(&kv, t, b"k"), Some(b"held".to_vec()));
    assert!(waiter.commit().is_err());
    assert!(kv.lock_stats().timeouts >= 1);
    kv.close().unwrap();
}

#[test]
fn size_limits_and_unknown_trees_are_clear_errors() {
    let (data, log) = devices();
    let (kv, _) = KvStore::open(data, log, &config()).unwrap();
    let t = kv.open_tree("t").unwrap();
    let limits = kv.trees().limits();
    // Each failed statement ends its transaction (abort on error: tests/suite/txn_failed_statement_aborts.rs).
    let err = kv
        .begin()
        .unwrap()
        .put(t, &vec![0; limits.max_key + 1], b"v")
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)) && err.to_string().contains("key"));
    let err = kv
        .begin()
        .unwrap()
        .put(t, b"k", &vec![0; limits.max_value + 1])
        .unwrap_err();
    assert!(err.to_string().contains("value of"), "{err}");
    assert!(kv.begin().unwrap().get(99, b"k").is_err());
    let mut txn = kv.begin().unwrap();
    txn.put(t, &vec![1; limits.max_key], &vec![2; limits.max_value])
        .unwrap();
    txn.commit().unwrap();
    assert!(kv.open_tree("").is_err());
    assert!(kv.open_tree(&"n".repeat(65)).is_err());
    kv.close().unwrap();
}

#[test]
fn a_transaction_in_flight_at_a_crash_is_rolled_back_by_recovery() {
    let data = Arc::new(
        FaultDevice::new_zeroed(
            Arc::new(MemoryDevice::new(PAGE, 512).unwrap()),
            FaultConfig::default(),
        )
        .unwrap(),
    );
    let log = Arc::new(
        FaultDevice::new_zeroed(
            Arc::new(MemoryDevice::new(PAGE, (8 << 20) / PAGE as u64).unwrap()),
            FaultConfig::default(),
        )
        .unwrap(),
    );
    {
        let (kv, _) = KvStore::open(
            Arc::clone(&data) as SharedDevice,
            Arc::clone(&log) as SharedDevice,
            &config(),
        )
        .unwrap();
        let t = kv.open_tree("t").unwrap();
        let mut txn = kv.begin().unwrap();
        for n in 0..300u32 {
            txn.put(t, &n.to_be_bytes(), b"committed").unwrap();
        }
        txn.commit().unwrap();
        let mut loser = kv.begin().unwrap();
        for n in 0..300u32 {
            loser.put(t, &n.to_be_bytes(), &[9; 100]).unwrap();
        }
        loser.put(t, b"zzz", b"new key").unwrap();
        // Its changes reach the data device (and the log the WAL rule needs), not its outcome.
        kv.trees().database().pool().flush_all().unwrap();
        std::mem::forget(loser);
        // The crash: the devices stop here.
        let _images = (data.crash().unwrap(), log.crash().unwrap());
        kv.abandon();
    }
    let (kv, recovery) = KvStore::open(
        Arc::new(data.crash().unwrap()),
        Arc::new(log.crash().unwrap()),
        &config(),
    )
    .unwrap();
    assert_eq!(recovery.losers_rolled_back, 1, "{recovery:?}");
    assert_eq!(recovery.undo_applied, 301);
    let t = kv.open_tree("t").unwrap();
    for n in [0u32, 150, 299] {
        assert_eq!(
            value_of(&kv, t, &n.to_be_bytes()),
            Some(b"committed".to_vec())
        );
    }
    assert_eq!(value_of(&kv, t, b"zzz"), None);
    assert!(kv.check().unwrap().is_ok());
    kv.close().unwrap();
}
