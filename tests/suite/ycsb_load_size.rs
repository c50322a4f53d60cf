//! The YCSB load: `record_count` rows of 10 x 100-byte fields under sorted `user` keys, with
//! the keys YCSB's `buildKeyName` gives (hashed by default, ordered on request).
//!
//! `cargo test --release --test suite ycsb_load_size:: -- --ignored --nocapture` loads 10^6 records
//! and prints rows and bytes (the figures in docs/workloads.md).

use flashbuf::kv::{Direction, FULL_RANGE, KvEngine, MemoryKv};
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::ycsb::{Ycsb, YcsbConfig, YcsbWorkload};

fn keys(kv: &MemoryKv) -> Vec<Vec<u8>> {
    let tree = kv.open_tree("ycsb.usertable").unwrap();
    let mut txn = kv.begin().unwrap();
    let mut keys = Vec::new();
    txn.scan(
        tree,
        FULL_RANGE,
        Direction::Forward,
        usize::MAX,
        &mut |k, _| {
            keys.push(k.to_vec());
            true
        },
    )
    .unwrap();
    keys
}

#[test]
fn hashed_and_ordered_keys_load_in_order() {
    let ycsb = Ycsb::standard(YcsbWorkload::A, 10_000).unwrap();
    let kv = MemoryKv::new();
    let report = ycsb.load(&kv, &mut |_| {}).unwrap();
    assert_eq!(report.rows(), 10_000);
    let mut expected: Vec<Vec<u8>> = (0..10_000).map(|n| ycsb.key(n)).collect();
    expected.sort();
    assert_eq!(keys(&kv), expected);
    // Hashed keys: YCSB's "user" + the FNV-hashed number, e.g. not "user1".
    assert!(!expected.contains(&b"user1".to_vec()));

    let mut config = YcsbConfig::standard(YcsbWorkload::A, 1000);
    config.ordered_inserts = true;
    config.zero_padding = 8;
    config.field_count = 3;
    config.field_length = 10;
    let ordered = Ycsb::new(config).unwrap();
    let kv = MemoryKv::new();
    let report = ordered.load(&kv, &mut |_| {}).unwrap();
    assert_eq!(report.tables[0].value_bytes, 1000 * 3 * 12);
    let keys = keys(&kv);
    assert_eq!(keys.first().unwrap(), b"user00000000");
    assert_eq!(keys.last().unwrap(), b"user00000999");
}

#[test]
#[ignore = "load-size measurement for docs/workloads.md (about 5 s, 1.5 GB of RAM)"]
fn load_size_per_million_records() {
    let ycsb = Ycsb::standard(YcsbWorkload::A, 1_000_000).unwrap();
    let kv = MemoryKv::new();
    let report = ycsb.load(&kv, &mut |_| {}).unwrap();
    let t = &report.tables[0];
    eprintln!(
        "YCSB load, 10^6 records, in {:?}: {} rows, {} key bytes, {} value bytes",
        report.elapsed, t.rows, t.key_bytes, t.value_bytes
    );
    assert!(ycsb.check(&kv).unwrap().is_consistent());
}
