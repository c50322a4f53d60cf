//! An update that keeps a row's length is logged as a patch of the bytes it changes (redo:
//! the new bytes; undo: the old ones; `src/btree/patch.rs`), as InnoDB logs an update in place
//! by its changed fields: the log grows by a fraction of the row, an abort puts the row back
//! byte for byte, and the committed change survives a restart. (Crashes with patched rows in
//! flight: `txn_crash`, whose balances are updated in place, and `txn_rollback_splits`.)

use std::sync::Arc;

use flashbuf::device::SharedDevice;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::kv::KvEngine;
use flashbuf::txn::{KvConfig, KvStore};

const PAGE: usize = 4096;
const ROW: usize = 300;

fn row() -> Vec<u8> {
    (0..ROW).map(|i| (i % 251) as u8).collect()
}

fn logged_bytes(kv: &KvStore) -> u64 {
    kv.trees().database().wal().stats().appended_bytes
}

fn value_of(kv: &KvStore, tree: u32, key: &[u8]) -> Option<Vec<u8>> {
    let mut txn = kv.begin().unwrap();
    let value = txn.get(tree, key).unwrap();
    txn.commit().unwrap();
    value
}

/// Updates `item-1` to `value` and aborts; returns the log bytes that took.
fn update_then_abort(kv: &KvStore, tree: u32, value: &[u8]) -> u64 {
    let before = logged_bytes(kv);
    let mut txn = kv.begin().unwrap();
    txn.put(tree, b"item-1", value).unwrap();
    txn.abort().unwrap();
    logged_bytes(kv) - before
}

#[test]
fn an_update_in_place_logs_its_changed_bytes_and_aborts_and_restarts_exactly() {
    let data: SharedDevice = Arc::new(MemoryDevice::new(PAGE, 256).unwrap());
    let log: SharedDevice = Arc::new(MemoryDevice::new(PAGE, 256).unwrap());
    let mut config = KvConfig::new(64);
    config.database.wal.log_size = 256 * PAGE as u64;
    config.database.wal.page_size = PAGE;
    config.database.wal.buffer_size = 64 * 1024;
    let (kv, _) = KvStore::open(Arc::clone(&data), Arc::clone(&log), &config).unwrap();
    let tree = kv.open_tree("stock").unwrap();
    let mut txn = kv.begin().unwrap();
    txn.put(tree, b"item-1", &row()).unwrap();
    txn.commit().unwrap();

    // Two fields change, as a TPC-C stock update does (the quantity, then the counters).
    let mut updated = row();
    updated[0] ^= 1;
    updated[242..254].fill(9);

    let patched = update_then_abort(&kv, tree, &updated);
    assert_eq!(
        value_of(&kv, tree, b"item-1"),
        Some(row()),
        "the abort put it back"
    );
    // The same with every byte changed: the whole row is logged, in the change and its undo
    // and again in the rollback.
    let flipped: Vec<u8> = row().iter().map(|byte| !byte).collect();
    let whole = update_then_abort(&kv, tree, &flipped);
    assert_eq!(value_of(&kv, tree, b"item-1"), Some(row()));
    assert!(
        whole > 3 * ROW as u64,
        "{whole} log bytes for a whole-row update and its rollback"
    );
    assert!(
        patched * 3 < whole,
        "{patched} log bytes for a patched update and its rollback, {whole} for a whole row"
    );

    let mut txn = kv.begin().unwrap();
    txn.put(tree, b"item-1", &updated).unwrap();
    txn.commit().unwrap();
    kv.close().unwrap();
    let (kv, _) = KvStore::open(data, log, &config).unwrap();
    assert_eq!(value_of(&kv, tree, b"item-1"), Some(updated));
    assert!(kv.check().unwrap().into_result().is_ok());
    kv.close().unwrap();
}
