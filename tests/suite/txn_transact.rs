//! `KvEngine::transact`: the stack-held transaction `KvStore` runs a body in (the path every
//! workload takes through `workload::record::run_txn`) ends as the body says, and as the boxed
//! `begin` path does: a commit is visible and survives a restart, a rollback and a failing
//! body leave nothing, and a conflicting body's error reaches the caller as retryable. The
//! in-memory reference (`MemoryKv`) takes the trait's default path and must agree.

use flashbuf::error::Error;
use flashbuf::kv::{KvEngine, TxnEnd};
use flashbuf::txn::{KvConfig, KvStore};

fn value_of(engine: &dyn KvEngine, tree: u32, key: &[u8]) -> Option<Vec<u8>> {
    let mut value = Vec::new();
    engine
        .get_committed_into(tree, key, &mut value)
        .unwrap()
        .then_some(value)
}

/// Commit, rollback and a failing body on `engine`, checked through committed reads.
fn ends_as_the_body_says(engine: &dyn KvEngine) {
    let tree = engine.open_tree("t").unwrap();
    let end = engine
        .transact(&mut |txn| {
            txn.put(tree, b"kept", b"1")?;
            Ok(TxnEnd::Commit)
        })
        .unwrap();
    assert_eq!(end, TxnEnd::Commit);
    assert_eq!(value_of(engine, tree, b"kept").as_deref(), Some(&b"1"[..]));

    let end = engine
        .transact(&mut |txn| {
            txn.put(tree, b"rolled back", b"2")?;
            txn.put(tree, b"kept", b"changed")?;
            Ok(TxnEnd::Rollback)
        })
        .unwrap();
    assert_eq!(end, TxnEnd::Rollback);
    assert_eq!(value_of(engine, tree, b"rolled back"), None);
    assert_eq!(value_of(engine, tree, b"kept").as_deref(), Some(&b"1"[..]));

    let failed = engine.transact(&mut |txn| {
        txn.put(tree, b"failed", b"3")?;
        txn.delete(tree, b"kept")?;
        Err(Error::Conflict("the body gave up".into()))
    });
    match failed {
        Err(err) => assert!(err.is_retryable(), "{err}"),
        Ok(end) => panic!("a failing body's transaction ended as {end:?}"),
    }
    assert_eq!(value_of(engine, tree, b"failed"), None);
    assert_eq!(value_of(engine, tree, b"kept").as_deref(), Some(&b"1"[..]));
}

#[test]
fn a_stack_held_transaction_ends_as_its_body_says_and_its_commit_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = format!("file:{}", dir.path().join("data").display());
    let log = format!("file:{}", dir.path().join("log").display());
    let config = KvConfig::new(256);
    let (kv, _) = KvStore::open_specs(&data, &log, 4096, 4096, &config).unwrap();
    ends_as_the_body_says(&kv);
    kv.close().unwrap();
    let (kv, _) = KvStore::open_specs(&data, &log, 4096, 4096, &config).unwrap();
    let tree = kv.open_tree("t").unwrap();
    assert_eq!(value_of(&kv, tree, b"kept").as_deref(), Some(&b"1"[..]));
    assert_eq!(value_of(&kv, tree, b"rolled back"), None);
    assert_eq!(value_of(&kv, tree, b"failed"), None);
    kv.close().unwrap();
}

#[test]
fn the_default_path_through_begin_agrees() {
    ends_as_the_body_says(&flashbuf::kv::MemoryKv::default());
}
