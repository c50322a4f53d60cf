//! The B+-tree under concurrent threads, against `BTreeMap` models:
//!
//! - disjoint key ranges: each thread inserts, updates and deletes its own keys (interleaved in
//!   the key space, so threads share leaves and split and merge them under each other), with a
//!   small pool so pages are evicted; at the end each thread's model equals what the tree holds
//!   for its keys, scans in both directions agree, and the checker finds no problem;
//! - overlapping keys: threads put and delete random keys of one shared range in transactions;
//!   each commit takes a sequence number while it still holds its locks (so the numbers follow
//!   the serialization order of conflicting transactions); replaying the committed operations in
//!   that order on a `BTreeMap` must give exactly the tree's contents. Conflicts (deadlocks,
//!   timeouts) are retried.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flashbuf::device::SharedDevice;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::kv::{Direction, FULL_RANGE, KvEngine, KvTxn, with_retries};
use flashbuf::pool::{PoolConfig, Scheme};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const PAGE: usize = 4096;

fn open(frames: usize, pages: u64) -> KvStore {
    let mut config = KvConfig::new(frames);
    config.database.pool = PoolConfig::for_scheme(Scheme::LruC, frames);
    config.database.pool.cleaner_period_ms = 5;
    config.database.wal = WalConfig {
        log_size: 32 << 20,
        page_size: PAGE,
        buffer_size: 1 << 20,
        full_timeout: Duration::from_secs(10),
    };
    config.database.checkpoint_period_ms = 20;
    config.lock_timeout = Duration::from_millis(200);
    let data: SharedDevice = Arc::new(MemoryDevice::new(PAGE, pages).unwrap());
    let log: SharedDevice = Arc::new(MemoryDevice::new(PAGE, (32 << 20) / PAGE as u64).unwrap());
    KvStore::open(data, log, &config).unwrap().0
}

fn key(thread: u64, n: u64, threads: u64) -> Vec<u8> {
    // Interleaved: neighbouring keys belong to different threads.
    let mut key = format!("{:08}", n * threads + thread).into_bytes();
    key.extend(std::iter::repeat_n(b'-', (n % 7) as usize * 20));
    key
}

fn everything(kv: &KvStore, tree: u32, direction: Direction) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut txn = kv.begin().unwrap();
    let mut out = Vec::new();
    txn.scan(tree, FULL_RANGE, direction, usize::MAX, &mut |k, v| {
        out.push((k.to_vec(), v.to_vec()));
        true
    })
    .unwrap();
    txn.commit().unwrap();
    out
}

#[test]
fn threads_on_disjoint_keys_match_their_models() {
    const THREADS: u64 = 4;
    let kv = Arc::new(open(32, 16_384));
    let tree = kv.open_tree("shared").unwrap();
    let models: Vec<BTreeMap<Vec<u8>, Vec<u8>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|thread| {
                let kv = Arc::clone(&kv);
                scope.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(thread);
                    let mut model = BTreeMap::new();
                    for round in 0..3000u64 {
                        let n = rng.gen_range(0..800);
                        let k = key(thread, n, THREADS);
                        let delete = rng.gen_bool(0.35);
                        let value = vec![(round % 251) as u8; rng.gen_range(0..300)];
                        // A short range scan every 50 rounds reads (and share-locks) other
                        // threads' keys too, so a round can be a deadlock victim: it is then
                        // rolled back, and the model keeps its state.
                        let attempt = || -> flashbuf::Result<()> {
                            let mut txn = kv.begin()?;
                            if delete {
                                assert_eq!(txn.delete(tree, &k)?, model.contains_key(&k));
                            } else {
                                txn.put(tree, &k, &value)?;
                            }
                            if round % 50 == 0 {
                                let mut seen = 0;
                                txn.scan(
                                    tree,
                                    FULL_RANGE,
                                    Direction::Backward,
                                    20,
                                    &mut |_, _| {
                                        seen += 1;
                                        true
                                    },
                                )?;
                                assert!(seen <= 20);
                            }
                            txn.commit()
                        };
                        match attempt() {
                            Ok(()) => {}
                            Err(flashbuf::Error::Conflict(_)) => continue,
                            Err(other) => panic!("round {round}: {other}"),
                        }
                        if delete {
                            model.remove(&k);
                        } else {
                            model.insert(k.clone(), value);
                        }
                    }
                    model
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut expected: Vec<(Vec<u8>, Vec<u8>)> = models.into_iter().flatten().collect();
    expected.sort();
    let forward = everything(&kv, tree, Direction::Forward);
    assert_eq!(forward.len(), expected.len());
    assert!(
        forward == expected,
        "tree differs from the union of the models"
    );
    let mut backward = everything(&kv, tree, Direction::Backward);
    backward.reverse();
    assert!(backward == expected);
    let report = kv.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert!(report.trees[0].height >= 2);
    Arc::try_unwrap(kv).ok().unwrap().close().unwrap();
}

#[derive(Debug, Clone)]
enum Change {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
}

#[test]
fn overlapping_transactions_serialize_in_lock_order() {
    const THREADS: u64 = 8;
    let kv = Arc::new(open(64, 16_384));
    let tree = kv.open_tree("contended").unwrap();
    let sequence = AtomicU64::new(0);
    let committed: Mutex<Vec<(u64, Vec<Change>)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let kv = Arc::clone(&kv);
            let (sequence, committed) = (&sequence, &committed);
            scope.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(100 + thread);
                for _ in 0..400 {
                    let plan: Vec<(bool, Vec<u8>, usize)> = (0..rng.gen_range(1..5))
                        .map(|_| {
                            let n = rng.gen_range(0..300u32);
                            (
                                rng.gen_bool(0.3),
                                format!("k{n:04}").into_bytes(),
                                rng.gen_range(0..200),
                            )
                        })
                        .collect();
                    let result = with_retries(kv.as_ref(), 50, |txn: &mut dyn KvTxn| {
                        let mut changes = Vec::new();
                        for (delete, k, len) in &plan {
                            // Read first (shared lock, then upgrade): deadlocks happen.
                            let before = txn.get(tree, k)?;
                            if *delete {
                                txn.delete(tree, k)?;
                                changes.push(Change::Delete(k.clone()));
                            } else {
                                let mut value = before.unwrap_or_default();
                                value.truncate(*len);
                                value.resize(*len, thread as u8);
                                txn.put(tree, k, &value)?;
                                changes.push(Change::Put(k.clone(), value));
                            }
                        }
                        // Still holding every lock: the number orders this commit after any
                        // conflicting one that committed before.
                        Ok((sequence.fetch_add(1, Ordering::SeqCst), changes))
                    });
                    let ((seq, changes), _) = result.unwrap();
                    committed.lock().unwrap().push((seq, changes));
                }
            });
        }
    });
    let mut log = committed.into_inner().unwrap();
    log.sort_by_key(|(seq, _)| *seq);
    let mut model = BTreeMap::new();
    for (_, changes) in log {
        for change in changes {
            match change {
                Change::Put(k, v) => {
                    model.insert(k, v);
                }
                Change::Delete(k) => {
                    model.remove(&k);
                }
            }
        }
    }
    let expected: Vec<_> = model.into_iter().collect();
    assert!(
        everything(&kv, tree, Direction::Forward) == expected,
        "not serializable"
    );
    let report = kv.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    let stats = kv.lock_stats();
    eprintln!(
        "lock waits {}, deadlocks {}, timeouts {}",
        stats.waits, stats.deadlocks, stats.timeouts
    );
    assert!(stats.waits > 0, "the threads must conflict");
    Arc::try_unwrap(kv).ok().unwrap().close().unwrap();
}

/// Scans in both directions (at the tree level, no key locks) while writers insert and delete
/// keys between stable ones, splitting and merging the leaves being scanned: every scan sees
/// keys in strict order and every stable key exactly once.
#[test]
fn scans_both_ways_stay_ordered_and_complete_during_splits_and_merges() {
    const STABLE: u64 = 3000;
    let kv = Arc::new(open(24, 16_384));
    let tree = kv.open_tree("scanned").unwrap();
    let stable = |n: u64| format!("{:08}", n * 10).into_bytes();
    let pairs = (0..STABLE).map(|n| (stable(n), vec![b's'; 40]));
    kv.bulk_load(tree, &mut pairs.into_iter()).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let scans = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for writer in 0..2u64 {
            let (kv, stop) = (Arc::clone(&kv), &stop);
            scope.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(writer);
                while !stop.load(Ordering::Relaxed) {
                    // A burst of inserts into one region, then its deletion: splits, merges.
                    let base = rng.gen_range(0..STABLE - 60);
                    let keys: Vec<Vec<u8>> = (base..base + 60)
                        .map(|n| format!("{:08}", n * 10 + 1 + writer * 4).into_bytes())
                        .collect();
                    for key in &keys {
                        let mut txn = kv.begin().unwrap();
                        txn.put(tree, key, &[b'w'; 200]).unwrap();
                        txn.commit().unwrap();
                    }
                    for key in &keys {
                        let mut txn = kv.begin().unwrap();
                        assert!(txn.delete(tree, key).unwrap());
                        txn.commit().unwrap();
                    }
                }
            });
        }
        for scanner in 0..2 {
            let (kv, scans) = (Arc::clone(&kv), &scans);
            scope.spawn(move || {
                let direction = if scanner == 0 {
                    Direction::Forward
                } else {
                    Direction::Backward
                };
                for _ in 0..40 {
                    let mut previous: Option<Vec<u8>> = None;
                    let mut stable_seen = 0u64;
                    kv.trees()
                        .scan(
                            tree,
                            std::ops::Bound::Unbounded,
                            direction,
                            &mut |key, _| {
                                if let Some(previous) = &previous {
                                    let ordered = match direction {
                                        Direction::Forward => key > previous.as_slice(),
                                        Direction::Backward => key < previous.as_slice(),
                                    };
                                    assert!(ordered, "scan {direction:?} out of order");
                                }
                                if key.ends_with(b"0") {
                                    stable_seen += 1;
                                }
                                previous = Some(key.to_vec());
                                flashbuf::btree::Visit::Continue
                            },
                        )
                        .unwrap();
                    assert_eq!(
                        stable_seen, STABLE,
                        "a {direction:?} scan lost or repeated keys"
                    );
                    scans.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        while scans.load(Ordering::Relaxed) < 80 {
            std::thread::sleep(Duration::from_millis(5));
        }
        stop.store(true, Ordering::Relaxed);
    });
    let report = kv.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.trees[0].keys, STABLE);
    Arc::try_unwrap(kv).ok().unwrap().close().unwrap();
}

/// Optimistic descents (`btree/optimistic.rs`) under concurrent splits and evictions: reader
/// threads look up a preloaded set of keys that never change (and keys that never exist) while
/// writer threads insert new keys between them, splitting leaves and inner nodes, in a pool
/// small enough that inner nodes are evicted and read back. Every lookup must find exactly the
/// preloaded value (or nothing); a descent that used an unvalidated child or a torn node would
/// land on a wrong leaf and miss a key.
#[test]
fn optimistic_lookups_stay_exact_under_splits_and_evictions() {
    const STABLE: u64 = 3000;
    const WRITERS: u64 = 2;
    const READERS: u64 = 2;
    let kv = Arc::new(open(48, 16_384));
    let tree = kv.open_tree("optimistic").unwrap();
    let stable_key = |n: u64| format!("{:08}-s", n * 10).into_bytes();
    let stable_value = |n: u64| format!("value {n}").into_bytes();
    for chunk in (0..STABLE).collect::<Vec<_>>().chunks(200) {
        with_retries(kv.as_ref(), 10, |txn| {
            for &n in chunk {
                txn.put(tree, &stable_key(n), &stable_value(n))?;
            }
            Ok(())
        })
        .unwrap();
    }
    let before = kv.trees().database().pool().stats();
    let writers_done = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for writer in 0..WRITERS {
            let kv = Arc::clone(&kv);
            let writers_done = &writers_done;
            scope.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(100 + writer);
                for round in 0..1500u64 {
                    let n = rng.gen_range(0..STABLE * 10);
                    let key = format!("{n:08}-w{writer}{}", "x".repeat((round % 5) as usize * 40));
                    let value = vec![writer as u8; rng.gen_range(0..200)];
                    match with_retries(kv.as_ref(), 10, |txn| txn.put(tree, key.as_bytes(), &value))
                    {
                        Ok(_) | Err(flashbuf::Error::Conflict(_)) => {}
                        Err(other) => panic!("writer {writer}: {other}"),
                    }
                }
                writers_done.fetch_add(1, Ordering::SeqCst);
            });
        }
        for reader in 0..READERS {
            let kv = Arc::clone(&kv);
            let writers_done = &writers_done;
            scope.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(200 + reader);
                let mut lookups = 0u64;
                // Bound: until the writers finish, and at least 2000 lookups.
                while writers_done.load(Ordering::SeqCst) < WRITERS || lookups < 2000 {
                    let n = rng.gen_range(0..STABLE);
                    let absent = format!("{:08}-s", n * 10 + 5).into_bytes();
                    let mut txn = kv.begin().unwrap();
                    assert_eq!(
                        txn.get(tree, &stable_key(n)).unwrap(),
                        Some(stable_value(n)),
                        "lookup {lookups} of stable key {n}"
                    );
                    assert_eq!(txn.get(tree, &absent).unwrap(), None, "absent key {n}");
                    txn.commit().unwrap();
                    lookups += 1;
                }
            });
        }
    });
    let stats = kv.trees().database().pool().stats().since(&before);
    assert!(stats.evictions > 0, "the pool never evicted during the run");
    let report = kv.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert!(report.trees[0].height >= 3, "no inner splits");
    Arc::try_unwrap(kv).ok().unwrap().close().unwrap();
}
