//! A shuttle model of the auto-commit read's protocol (`KvStore::get_committed_into`,
//! `src/txn/mod.rs`): under the leaf's shared latch the reader asks the lock manager whether a
//! transaction holds the key exclusive; if none does it returns the row as it is on the leaf,
//! otherwise it reads again as a one-read transaction (a shared lock, which waits).
//!
//! The model runs the real lock manager (its bucket mutexes and condition variables are
//! shuttle's with the `shuttle` feature) and stands a shuttle `RwLock` over the row for the
//! leaf's latch. Writers follow the transaction layer's order: the key's exclusive lock, then
//! the change under the exclusive latch (a poison value first, as an uncommitted change), then
//! either a committed value or the rollback to the old one, each under the latch, and only then
//! the lock's release. The model checks that no reader ever returns the poison, under random
//! and PCT schedules.
//!
//! `the_probe_before_the_latch_reads_uncommitted_values` runs the same model with the probe
//! moved before the latch and expects shuttle to find a schedule that returns the poison: the
//! model can tell the right order from the wrong one.
//!
//! Run: `cargo test --release --features shuttle --test shuttle committed_read::`.

use std::sync::Arc;

use shuttle::sync::RwLock;

use flashbuf::txn::lock::{HeldLocks, LockManager, Mode};

const KEY: &[u8] = b"row";
const POISON: u64 = u64::MAX;

struct Model {
    locks: LockManager,
    /// The row on its leaf, behind the stand-in for the leaf's latch.
    leaf: RwLock<u64>,
    /// Probe the lock table before taking the latch (the broken order).
    probe_first: bool,
}

impl Model {
    /// A writer transaction: exclusive lock, the poison, then commit `value` or roll back.
    fn write(&self, txn: u64, value: u64, commit: bool) {
        let hash = self.locks.hash(0, KEY);
        // Shuttle's timed waits never time out and the scripts cannot deadlock (one key).
        self.locks
            .lock_hashed(txn, hash, 0, KEY, Mode::Exclusive)
            .unwrap();
        let old = {
            let mut row = self.leaf.write().unwrap();
            std::mem::replace(&mut *row, POISON)
        };
        shuttle::thread::yield_now();
        *self.leaf.write().unwrap() = if commit { value } else { old };
        let mut held = HeldLocks::default();
        held.insert(hash, 0, KEY, Mode::Exclusive);
        self.locks.release_all(txn, &held);
    }

    /// An auto-commit read.
    fn read(&self, txn: u64) -> u64 {
        let hash = self.locks.hash(0, KEY);
        let fast = if self.probe_first {
            let held = self.locks.is_held_exclusive(hash, 0, KEY);
            let row = *self.leaf.read().unwrap();
            (!held).then_some(row)
        } else {
            let row = self.leaf.read().unwrap();
            (!self.locks.is_held_exclusive(hash, 0, KEY)).then_some(*row)
        };
        if let Some(row) = fast {
            return row;
        }
        self.locks
            .lock_hashed(txn, hash, 0, KEY, Mode::Shared)
            .unwrap();
        let row = *self.leaf.read().unwrap();
        let mut held = HeldLocks::default();
        held.insert(hash, 0, KEY, Mode::Shared);
        self.locks.release_all(txn, &held);
        row
    }
}

fn model(probe_first: bool) {
    let model = Arc::new(Model {
        locks: LockManager::new(std::time::Duration::from_secs(3600)),
        leaf: RwLock::new(0),
        probe_first,
    });
    let writers: Vec<_> = [(1, 10, true), (2, 20, false)]
        .into_iter()
        .map(|(txn, value, commit)| {
            let model = Arc::clone(&model);
            shuttle::thread::spawn(move || model.write(txn, value, commit))
        })
        .collect();
    let readers: Vec<_> = [100u64, 200]
        .into_iter()
        .map(|txn| {
            let model = Arc::clone(&model);
            shuttle::thread::spawn(move || {
                for attempt in 0..2 {
                    let row = model.read(txn + attempt);
                    assert_ne!(
                        row, POISON,
                        "an auto-commit read returned an uncommitted row"
                    );
                    assert!([0, 10].contains(&row), "a value nobody committed: {row}");
                }
            })
        })
        .collect();
    for thread in writers.into_iter().chain(readers) {
        thread.join().unwrap();
    }
    assert_eq!(*model.leaf.read().unwrap(), 10, "the committed value stays");
}

fn iterations() -> usize {
    std::env::var("SHUTTLE_LOCK_ITERATIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1000)
}

#[test]
fn auto_commit_reads_never_return_uncommitted_rows() {
    let iterations = iterations();
    shuttle::check_random(|| model(false), iterations);
    shuttle::check_pct(|| model(false), iterations, 3);
}

#[test]
#[should_panic(expected = "uncommitted")]
fn the_probe_before_the_latch_reads_uncommitted_values() {
    shuttle::check_random(|| model(true), 20 * iterations());
}
