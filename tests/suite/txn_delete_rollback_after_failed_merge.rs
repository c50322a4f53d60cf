//! A transaction whose delete reached the log but whose follow-up leaf merge failed is rolled
//! back whole: the delete is undone too (regression test of the "lost commit" of the long
//! `txn_crash` campaign).
//!
//! The bug: `TreeStore::delete` logs the row change with its undo entry, then merges the leaf
//! it left underfull as a separate system mini-transaction. When that merge failed (here: the
//! data device crashed, so reading a sibling fails), the error returned before the transaction
//! had added the undo entry to its list; the rollback then skipped the delete and logged
//! `TxnAbort`, so recovery saw a finished transaction and the deleted row stayed deleted. In
//! the campaign this was an archive transaction moving a history record: the record vanished
//! while the transfer that wrote it had committed, which looked like a lost commit.
//!
//! Layout: values of 700 bytes make leaves of four cells (sequential inserts split one cell
//! off), so `k032..k035` share a leaf; deleting `k032` and `k035` first leaves two cells, and
//! deleting `k033` then leaves one, underfull (under a quarter of the page), which the delete
//! merges with a neighbour. The test asserts that this delete failed, so a change of layout
//! cannot make it pass vacuously.
//! The store is reopened with a cold cache so the neighbours must be read from the device.

use std::sync::Arc;
use std::time::Duration;

use flashbuf::device::SharedDevice;
use flashbuf::device::fault::{FaultConfig, FaultDevice};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::kv::KvEngine;
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;

const PAGE: usize = 4096;
const KEYS: u32 = 60;
/// Deleted (and committed) before the crash.
const GONE: [u32; 2] = [32, 35];
/// Changed by the interrupted transaction before the crash.
const EARLIER: u32 = 50;
/// Deleted by the transaction the crash interrupts.
const TARGET: u32 = 33;

fn config() -> KvConfig {
    let mut config = KvConfig::new(32);
    config.database.wal = WalConfig {
        log_size: 256 * PAGE as u64,
        page_size: PAGE,
        buffer_size: 64 * 1024,
        full_timeout: Duration::from_secs(2),
    };
    // Nothing in the background may write the dirty leaf (and poison the pool) in the few
    // microseconds of the test's window; checkpoints still run at open.
    config.database.checkpoint_period_ms = 60_000;
    config.database.pool.cleaner_period_ms = 60_000;
    config.database.pool.time_constant_scale = 1.0;
    config
}

fn key(n: u32) -> Vec<u8> {
    format!("k{n:03}").into_bytes()
}

fn value(n: u32) -> Vec<u8> {
    let mut value = n.to_le_bytes().to_vec();
    value.resize(700, b'v');
    value
}

fn open(data: &Arc<FaultDevice>, log: &Arc<FaultDevice>) -> KvStore {
    KvStore::open(
        Arc::clone(data) as SharedDevice,
        Arc::clone(log) as SharedDevice,
        &config(),
    )
    .unwrap()
    .0
}

/// Wraps what a crashed device left as a fresh fault device.
fn reopen_device(image: MemoryDevice) -> Arc<FaultDevice> {
    Arc::new(FaultDevice::new(Arc::new(image), FaultConfig::default()).unwrap())
}

#[test]
fn a_delete_whose_leaf_merge_fails_is_undone_by_the_rollback() {
    let data = reopen_device(MemoryDevice::new(PAGE, 512).unwrap());
    let log = reopen_device(MemoryDevice::new(PAGE, 300).unwrap());
    let kv = open(&data, &log);
    let tree = kv.open_tree("t").unwrap();
    let mut txn = kv.begin().unwrap();
    for n in 0..KEYS {
        txn.put(tree, &key(n), &value(n)).unwrap();
    }
    txn.commit().unwrap();
    let mut txn = kv.begin().unwrap();
    for n in GONE {
        assert!(txn.delete(tree, &key(n)).unwrap());
    }
    txn.commit().unwrap();
    kv.close().unwrap();

    // Cold cache: every page is on the device only.
    let data = reopen_device(data.crash().unwrap());
    let log = reopen_device(log.crash().unwrap());
    let kv = open(&data, &log);
    let mut txn = kv.begin().unwrap();
    // An earlier change of the same transaction, so that its rollback has something to undo
    // and logs `TxnAbort` (as the campaign's archive transactions did).
    txn.put(tree, &key(EARLIER), b"changed").unwrap();
    assert_eq!(txn.get(tree, &key(TARGET)).unwrap(), Some(value(TARGET)));
    // The data device dies; the log lives on (the campaign's `crash_data` runs).
    let data_image = data.crash().unwrap();
    let deleted = txn.delete(tree, &key(TARGET));
    assert!(
        deleted.is_err(),
        "the merge after the delete must fail (it reads a sibling): {deleted:?}"
    );
    // The rollback must undo the delete although the delete reported an error.
    let aborted = txn.abort();
    assert!(
        aborted.is_ok(),
        "the rollback needs only cached pages: {aborted:?}"
    );
    // Later commits make the abort durable (here: a log flush).
    let wal = kv.trees().database().wal();
    wal.flush_to(wal.current_lsn()).unwrap();
    let log_image = log.crash().unwrap();
    kv.abandon();

    let data = reopen_device(data_image);
    let log = reopen_device(log_image);
    let kv = open(&data, &log);
    let mut txn = kv.begin().unwrap();
    for n in (0..KEYS).filter(|n| !GONE.contains(n)) {
        assert_eq!(
            txn.get(tree, &key(n)).unwrap(),
            Some(value(n)),
            "key {n} after recovery"
        );
    }
    txn.commit().unwrap();
    assert!(kv.check().unwrap().is_ok());
    kv.close().unwrap();
}
