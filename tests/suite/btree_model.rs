//! The B+-tree against `std::collections::BTreeMap`, single-threaded: random sequences of puts,
//! deletes, gets and range scans in both directions, with small and large keys and values on
//! 4 KiB pages, so that leaves and inner nodes split at every level and underfull leaves merge;
//! after each sequence the checker must find the structure intact, and a reopen must give the
//! same contents.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use flashbuf::btree::check::check;
use flashbuf::device::SharedDevice;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::kv::{Direction, KvEngine};
use flashbuf::pool::{PoolConfig, Scheme};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use proptest::prelude::*;

const PAGE: usize = 4096;

fn config(frames: usize) -> KvConfig {
    let mut config = KvConfig::new(frames);
    config.database.pool = PoolConfig::for_scheme(Scheme::LruC, frames);
    config.database.pool.cleaner_period_ms = 10;
    config.database.wal = WalConfig {
        log_size: 16 << 20,
        page_size: PAGE,
        buffer_size: 256 * 1024,
        full_timeout: Duration::from_secs(5),
    };
    config.database.checkpoint_period_ms = 20;
    config
}

fn devices(pages: u64) -> (SharedDevice, SharedDevice) {
    (
        Arc::new(MemoryDevice::new(PAGE, pages).unwrap()),
        Arc::new(MemoryDevice::new(PAGE, (16 << 20) / PAGE as u64).unwrap()),
    )
}

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(u16, u16),
    Get(Vec<u8>),
    Scan(Option<Vec<u8>>, Option<Vec<u8>>, bool, usize),
}

/// Keys from a small space (so deletes and updates hit), some long (up to the 256-byte max).
fn key() -> impl Strategy<Value = Vec<u8>> {
    (0u16..600, 0usize..4).prop_map(|(n, long)| {
        let mut key = format!("{n:05}").into_bytes();
        if long == 0 {
            key.extend(std::iter::repeat_n(b'x', 180 + usize::from(n % 70)));
        }
        key
    })
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    (0usize..8, any::<u8>()).prop_map(|(size, byte)| {
        let len = match size {
            0 => 0,
            1 => 700,
            _ => size * 13,
        };
        vec![byte; len]
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (key(), value()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => key().prop_map(Op::Delete),
        1 => (0u16..600, 0u16..200).prop_map(|(a, n)| Op::DeleteRange(a, a.saturating_add(n))),
        1 => key().prop_map(Op::Get),
        1 => (proptest::option::of(key()), proptest::option::of(key()), any::<bool>(), 1usize..400)
            .prop_map(|(a, b, back, limit)| Op::Scan(a, b, back, limit)),
    ]
}

fn scan_all(kv: &KvStore, tree: u32, direction: Direction) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut txn = kv.begin().unwrap();
    let mut out = Vec::new();
    txn.scan(
        tree,
        flashbuf::kv::FULL_RANGE,
        direction,
        usize::MAX,
        &mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            true
        },
    )
    .unwrap();
    txn.commit().unwrap();
    out
}

fn run(ops: &[Op], frames: usize) {
    let (data, log) = devices(4096);
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    {
        let (kv, _) = KvStore::open(Arc::clone(&data), Arc::clone(&log), &config(frames)).unwrap();
        let tree = kv.open_tree("t").unwrap();
        for op in ops {
            let mut txn = kv.begin().unwrap();
            match op {
                Op::Put(k, v) => {
                    txn.put(tree, k, v).unwrap();
                    model.insert(k.clone(), v.clone());
                }
                Op::Delete(k) => {
                    assert_eq!(txn.delete(tree, k).unwrap(), model.remove(k).is_some());
                }
                Op::DeleteRange(a, b) => {
                    let doomed: Vec<Vec<u8>> = model
                        .range(format!("{a:05}").into_bytes()..format!("{b:05}").into_bytes())
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in doomed {
                        assert!(txn.delete(tree, &k).unwrap());
                        model.remove(&k);
                    }
                }
                Op::Get(k) => assert_eq!(txn.get(tree, k).unwrap(), model.get(k).cloned()),
                Op::Scan(a, b, back, limit) => {
                    let low = a.as_deref().map_or(Bound::Unbounded, Bound::Included);
                    let high = b.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
                    let direction = if *back {
                        Direction::Backward
                    } else {
                        Direction::Forward
                    };
                    let mut got = Vec::new();
                    txn.scan(tree, (low, high), direction, *limit, &mut |k, v| {
                        got.push((k.to_vec(), v.to_vec()));
                        true
                    })
                    .unwrap();
                    let valid = match (a, b) {
                        (Some(a), Some(b)) => a < b,
                        _ => true,
                    };
                    let expected: Vec<(Vec<u8>, Vec<u8>)> = if valid {
                        let iter = model
                            .range::<[u8], _>((low, high))
                            .map(|(k, v)| (k.clone(), v.clone()));
                        if *back {
                            iter.rev().take(*limit).collect()
                        } else {
                            iter.take(*limit).collect()
                        }
                    } else {
                        Vec::new()
                    };
                    assert_eq!(got.len(), expected.len(), "scan {op:?}");
                    assert!(got == expected, "scan {op:?} differs");
                }
            }
            txn.commit().unwrap();
        }
        let report = kv.check().unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        let forward = scan_all(&kv, tree, Direction::Forward);
        let expected: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert!(forward == expected, "full scan differs from the model");
        let mut backward = scan_all(&kv, tree, Direction::Backward);
        backward.reverse();
        assert!(backward == expected, "backward scan differs from the model");
        kv.close().unwrap();
    }
    let (kv, _) = KvStore::open(data, log, &config(frames)).unwrap();
    let tree = kv.open_tree("t").unwrap();
    let expected: Vec<_> = model.into_iter().collect();
    assert!(
        scan_all(&kv, tree, Direction::Forward) == expected,
        "reopen"
    );
    assert!(kv.check().unwrap().is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_operations_match_a_btreemap(ops in proptest::collection::vec(op(), 1..600)) {
        run(&ops, 64);
    }
}

/// Enough keys for three levels at 4 KiB pages with long keys, then deletes of most of them
/// (merges, empty-node removal, root collapse), with a small pool so pages are evicted.
#[test]
fn splits_at_every_level_then_shrink_back() {
    let (data, log) = devices(8192);
    let (kv, _) = KvStore::open(data, log, &config(48)).unwrap();
    let tree = kv.open_tree("deep").unwrap();
    let key = |n: u32| {
        let mut k = format!("{:08}", (n.wrapping_mul(2_654_435_761)) % 1_000_000).into_bytes();
        k.extend(std::iter::repeat_n(b'k', 200));
        k
    };
    let mut model = BTreeMap::new();
    for n in 0..4000u32 {
        let mut txn = kv.begin().unwrap();
        txn.put(tree, &key(n), &n.to_le_bytes()).unwrap();
        txn.commit().unwrap();
        model.insert(key(n), n.to_le_bytes().to_vec());
    }
    let report = check(kv.trees().database().pool()).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert!(
        report.trees[0].height >= 3,
        "height {}",
        report.trees[0].height
    );
    for n in 0..3990u32 {
        let mut txn = kv.begin().unwrap();
        assert!(txn.delete(tree, &key(n)).unwrap());
        txn.commit().unwrap();
        model.remove(&key(n));
    }
    let report = check(kv.trees().database().pool()).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    // Ten keys are left: at most one leaf each (merges and removals freed the rest).
    assert!(report.trees[0].leaves <= 10, "{:?}", report.trees[0]);
    assert!(
        report.free_pages > 100,
        "pages freed: {}",
        report.free_pages
    );
    let expected: Vec<_> = model.clone().into_iter().collect();
    assert!(scan_all(&kv, tree, Direction::Forward) == expected);
    // Deleting the rest removes every node; the root collapses back into an empty leaf.
    for k in model.keys() {
        let mut txn = kv.begin().unwrap();
        assert!(txn.delete(tree, k).unwrap());
        txn.commit().unwrap();
    }
    let report = check(kv.trees().database().pool()).unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!((report.trees[0].height, report.trees[0].keys), (1, 0));
    assert_eq!(
        report.free_pages + 2,
        report.high_water,
        "all but meta and root free"
    );
    kv.close().unwrap();
}

/// Leaf hints (a put first tries the leaf of the thread's last row access) under the structure
/// changes that make a hint stale: read-modify-writes and inserts next to rows just read (the
/// leaf splits under the hint), wide range deletes (the hinted leaf merges away and becomes a
/// free page) followed by inserts into the other tree on another thread (which reuse the freed
/// pages for keys around the hinted one, while this thread's hint still names them). Both
/// trees must match their models and pass the checker, with hints on (and many puts taking
/// them) and off (none taking them).
#[test]
fn leaf_hints_survive_splits_merges_and_page_reuse() {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    for hints in [true, false] {
        let (data, log) = devices(8192);
        let (kv, _) = KvStore::open(data, log, &config(48)).unwrap();
        kv.trees().set_leaf_hints(hints);
        let trees = [kv.open_tree("a").unwrap(), kv.open_tree("b").unwrap()];
        let mut models: [BTreeMap<Vec<u8>, Vec<u8>>; 2] = [BTreeMap::new(), BTreeMap::new()];
        let mut rng = SmallRng::seed_from_u64(20261128);
        let key = |n: u32, tail: u32| format!("{n:06}-{tail:03}").into_bytes();
        for round in 0..3000u32 {
            let which = usize::from(rng.gen_bool(0.3));
            let (tree, model) = (trees[which], &mut models[which]);
            let n = rng.gen_range(0..4000u32);
            let mut txn = kv.begin().unwrap();
            match rng.gen_range(0..10) {
                // Read a row, then write it and rows right after it.
                0..=5 => {
                    let k = key(n, 0);
                    assert_eq!(txn.get(tree, &k).unwrap(), model.get(&k).cloned());
                    let value = vec![(round % 251) as u8; 40 + (round % 7) as usize * 30];
                    txn.put(tree, &k, &value).unwrap();
                    model.insert(k, value.clone());
                    for tail in 1..rng.gen_range(1..12u32) {
                        txn.put(tree, &key(n, tail), &value).unwrap();
                        model.insert(key(n, tail), value.clone());
                    }
                }
                // Read a row, delete a wide range around it, then write it again.
                6 => {
                    let k = key(n, 0);
                    assert_eq!(txn.get(tree, &k).unwrap(), model.get(&k).cloned());
                    let doomed: Vec<Vec<u8>> = model
                        .range(key(n.saturating_sub(300), 0)..key(n + 300, 0))
                        .map(|(k, _)| k.clone())
                        .collect();
                    for d in &doomed {
                        assert!(txn.delete(tree, d).unwrap());
                        model.remove(d);
                    }
                    txn.commit().unwrap();
                    // The other tree grows into the freed pages before the hint is used, with
                    // keys around this one, on another thread (whose puts leave this thread's
                    // hint on the freed leaf).
                    let other = trees[1 - which];
                    let filled: Vec<Vec<u8>> = (n.saturating_sub(20)..n + 20)
                        .map(|m| key(m, 500))
                        .collect();
                    std::thread::scope(|scope| {
                        scope.spawn(|| {
                            let mut fill = kv.begin().unwrap();
                            for fk in &filled {
                                fill.put(other, fk, &[7u8; 200]).unwrap();
                            }
                            fill.commit().unwrap();
                        });
                    });
                    for fk in filled {
                        models[1 - which].insert(fk, vec![7u8; 200]);
                    }
                    let mut txn = kv.begin().unwrap();
                    txn.put(tree, &k, b"back").unwrap();
                    models[which].insert(k, b"back".to_vec());
                    txn.commit().unwrap();
                    continue;
                }
                _ => {
                    let k = key(n, rng.gen_range(0..12));
                    assert_eq!(txn.get(tree, &k).unwrap(), model.get(&k).cloned());
                }
            }
            txn.commit().unwrap();
        }
        let report = kv.check().unwrap();
        assert!(report.is_ok(), "hints {hints}: {:?}", report.problems);
        for (tree, model) in trees.iter().zip(&models) {
            let expected: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            assert!(
                scan_all(&kv, *tree, Direction::Forward) == expected,
                "hints {hints}: a tree differs from its model"
            );
        }
        let taken = kv.trees().hinted_puts();
        if hints {
            assert!(taken > 3000, "only {taken} puts took a hint");
        } else {
            assert_eq!(taken, 0);
        }
        kv.close().unwrap();
    }
}
