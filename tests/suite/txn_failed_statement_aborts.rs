//! The error contract of a transaction (issue 18; `KvStore`'s docs, "abort on error"): a
//! statement that fails rolls the whole transaction back, so a caller that ignores the error
//! and commits cannot commit the writes made before it. The reference engine `MemoryKv` follows
//! the same contract.

use flashbuf::kv::{Direction, FULL_RANGE, KvEngine, MemoryKv};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::{Error, Result};

const PAGE_SIZE: usize = 4096;

fn store() -> KvStore {
    let (kv, _) = KvStore::open_specs("mem", "mem", PAGE_SIZE, 256, &KvConfig::new(64)).unwrap();
    kv
}

fn value_of(kv: &dyn KvEngine, tree: u32, key: &[u8]) -> Option<Vec<u8>> {
    let mut txn = kv.begin().unwrap();
    let value = txn.get(tree, key).unwrap();
    txn.commit().unwrap();
    value
}

/// Writes `a`, then a statement that fails with `fail`; returns what each later call said.
fn fail_then_commit(
    kv: &dyn KvEngine,
    tree: u32,
    fail: &dyn Fn(&mut dyn flashbuf::kv::KvTxn) -> Result<()>,
) -> (Error, Error, Error) {
    let mut txn = kv.begin().unwrap();
    txn.put(tree, b"a", b"1").unwrap();
    let failed = fail(&mut *txn).expect_err("the statement must fail");
    let later = txn
        .put(tree, b"b", b"2")
        .expect_err("a later put must fail");
    let commit = txn.commit().expect_err("the commit must fail");
    (failed, later, commit)
}

#[test]
fn an_oversized_put_rolls_back_the_writes_before_it() {
    let kv = store();
    let tree = kv.open_tree("t").unwrap();
    let limit = kv.trees().limits().max_value;
    let big = vec![7u8; limit + 1];
    let (failed, later, commit) = fail_then_commit(&kv, tree, &|txn| txn.put(tree, b"x", &big));
    assert!(matches!(failed, Error::InvalidArgument(_)), "{failed}");
    for err in [&later, &commit] {
        let text = err.to_string();
        assert!(
            text.contains("rolled back") && text.contains(&failed.to_string()),
            "the later error must name the first: {text}"
        );
        assert!(!err.is_retryable(), "{text}");
    }
    assert_eq!(
        value_of(&kv, tree, b"a"),
        None,
        "the write before the failure was committed"
    );
    assert_eq!(value_of(&kv, tree, b"b"), None);
    // The store goes on: a new transaction works, and its commit is durable in the tree.
    let mut txn = kv.begin().unwrap();
    txn.put(tree, b"a", b"ok").unwrap();
    txn.commit().unwrap();
    assert_eq!(value_of(&kv, tree, b"a"), Some(b"ok".to_vec()));
    kv.close().unwrap();
}

#[test]
fn failed_reads_and_scans_end_the_transaction_too() {
    let kv = store();
    let tree = kv.open_tree("t").unwrap();
    let long_key = vec![1u8; kv.trees().limits().max_key + 1];
    let (failed, _, commit) =
        fail_then_commit(&kv, tree, &|txn| txn.get(tree, &long_key).map(drop));
    assert!(matches!(failed, Error::InvalidArgument(_)), "{failed}");
    assert!(commit.to_string().contains("rolled back"), "{commit}");
    let (failed, _, _) = fail_then_commit(&kv, tree, &|txn| {
        txn.scan(999, FULL_RANGE, Direction::Forward, 10, &mut |_, _| true)
    });
    assert!(failed.to_string().contains("999"), "{failed}");
    assert_eq!(value_of(&kv, tree, b"a"), None);
    // Abort after the failure is a no-op, not an error.
    let mut txn = kv.begin().unwrap();
    txn.put(tree, b"a", b"1").unwrap();
    assert!(txn.delete(tree, &long_key).is_err());
    txn.abort().unwrap();
    assert_eq!(value_of(&kv, tree, b"a"), None);
    kv.close().unwrap();
}

#[test]
fn the_reference_engine_follows_the_same_contract() {
    let kv = MemoryKv::new();
    let tree = kv.open_tree("t").unwrap();
    let (failed, later, commit) = fail_then_commit(&kv, tree, &|txn| txn.put(42, b"x", b"y"));
    assert!(matches!(failed, Error::InvalidArgument(_)), "{failed}");
    assert!(later.to_string().contains("rolled back"), "{later}");
    assert!(commit.to_string().contains("rolled back"), "{commit}");
    assert_eq!(kv.len(tree), 0, "the write before the failure was kept");
}
