//! Every YCSB core workload (A-F) runs against the serial reference engine with four
//! clients: the operations follow the workload's mix, every read finds its row, updates
//! change rows, inserts add exactly one row each, and `check` finds every row well formed.

use std::collections::BTreeMap;

use flashbuf::kv::{Direction, FULL_RANGE, KvEngine, MemoryKv};
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::ycsb::{KeyFormat, OP_NAMES, Ycsb, YcsbConfig, YcsbWorkload};

const RECORDS: u64 = 2000;
const THREADS: usize = 4;
const OPS_PER_THREAD: usize = 1000;

fn snapshot(kv: &MemoryKv) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let tree = kv.open_tree("ycsb.usertable").unwrap();
    let mut txn = kv.begin().unwrap();
    let mut rows = BTreeMap::new();
    txn.scan(
        tree,
        FULL_RANGE,
        Direction::Forward,
        usize::MAX,
        &mut |k, v| {
            rows.insert(k.to_vec(), v.to_vec());
            true
        },
    )
    .unwrap();
    rows
}

fn run(workload: YcsbWorkload) {
    run_with(workload, KeyFormat::Text);
}

fn run_with(workload: YcsbWorkload, key_format: KeyFormat) {
    let mut config = YcsbConfig::standard(workload, RECORDS);
    config.key_format = key_format;
    let ycsb = Ycsb::new(config).unwrap();
    let kv = MemoryKv::new();
    let report = ycsb.load(&kv, &mut |_| {}).unwrap();
    assert_eq!(report.rows(), RECORDS);
    assert_eq!(report.tables[0].value_bytes, RECORDS * 10 * 102);
    let before = snapshot(&kv);
    match key_format {
        KeyFormat::Text => assert!(before.keys().all(|k| k.starts_with(b"user"))),
        KeyFormat::Binary => {
            assert!(before.keys().all(|k| k.len() == 8));
            assert_eq!(report.tables[0].key_bytes, RECORDS * 8);
        }
    }
    assert!(before.contains_key(&ycsb.key(0)) && before.contains_key(&ycsb.key(RECORDS - 1)));

    let counts = std::sync::Mutex::new([0usize; 5]);
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (ycsb, kv, counts) = (&ycsb, &kv, &counts);
            scope.spawn(move || {
                let mut worker = ycsb.worker(thread);
                let mut mine = [0usize; 5];
                for _ in 0..OPS_PER_THREAD {
                    let outcome = worker.run_one(kv).unwrap();
                    assert_eq!((outcome.retries, outcome.rolled_back), (0, false));
                    mine[outcome.txn_type] += 1;
                }
                let mut all = counts.lock().unwrap();
                for (total, n) in all.iter_mut().zip(mine) {
                    *total += n;
                }
            });
        }
    });
    let counts = counts.into_inner().unwrap();
    let total = (THREADS * OPS_PER_THREAD) as f64;
    for ((count, expected), name) in counts.iter().zip(workload.shares()).zip(OP_NAMES) {
        let share = *count as f64 * 100.0 / total;
        assert!(
            (share - expected).abs() < 3.0,
            "{workload:?} {name}: {share}% vs {expected}%"
        );
    }
    assert_eq!(ycsb.not_found(), 0, "{workload:?}: reads find their rows");
    assert_eq!(ycsb.inserted(), counts[2] as u64);

    let after = snapshot(&kv);
    assert_eq!(after.len() as u64, RECORDS + ycsb.inserted());
    let changed = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(v))
        .count();
    let writes = counts[1] + counts[4];
    if writes > 0 {
        assert!(
            changed > writes / 4,
            "{workload:?}: {changed} rows changed by {writes} writes"
        );
    } else {
        assert_eq!(changed, 0, "{workload:?} writes nothing");
    }
    let check = ycsb.check(&kv).unwrap();
    assert!(check.is_consistent(), "{workload:?}: {check}");
    assert_eq!(check.rows_scanned, after.len() as u64);
}

#[test]
fn workload_a() {
    run(YcsbWorkload::A);
}

#[test]
fn workload_b() {
    run(YcsbWorkload::B);
}

#[test]
fn workload_c() {
    run(YcsbWorkload::C);
}

#[test]
fn workload_d() {
    run(YcsbWorkload::D);
}

#[test]
fn workload_e() {
    run(YcsbWorkload::E);
}

#[test]
fn workload_f() {
    run(YcsbWorkload::F);
}

/// Binary keys (8 big-endian bytes, vmcache's form) under the workloads that insert (D) and
/// scan (E): every read finds its row, inserts add one 8-byte key each, and the check holds.
#[test]
fn workload_d_with_binary_keys() {
    run_with(YcsbWorkload::D, KeyFormat::Binary);
}

#[test]
fn workload_e_with_binary_keys() {
    run_with(YcsbWorkload::E, KeyFormat::Binary);
}

#[test]
fn check_catches_a_malformed_row_and_a_lost_insert() {
    let ycsb = Ycsb::standard(YcsbWorkload::D, 100).unwrap();
    let kv = MemoryKv::new();
    ycsb.load(&kv, &mut |_| {}).unwrap();
    let tree = kv.open_tree("ycsb.usertable").unwrap();
    let mut txn = kv.begin().unwrap();
    txn.put(tree, &ycsb.key(5), b"short").unwrap();
    assert!(txn.delete(tree, &ycsb.key(6)).unwrap());
    txn.commit().unwrap();
    let report = ycsb.check(&kv).unwrap();
    assert_eq!(report.violations_total, 2, "{report}");
}
