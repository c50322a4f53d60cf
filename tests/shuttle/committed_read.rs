//! A shuttle model of the auto-commit read's protocol (`KvStore::get_committed_into`,
//! `src/txn/mod.rs`): under the leaf's shared latch the reader asks the lock manager whether a
//! transaction holds the key exclusive; if none does it returns the row as it is on the leaf,
//! otherwise it reads again as a one-read transaction (a shared lock, which waits).
//!
//! The model runs the real lock manager (its bucket mutexes and condition variables are
//! shuttle's with the `shuttle` feature) and stands a shuttle `RwLock` and a version word (the
//! frame's seqlock: odd while a writer changes the page) over the row for the leaf's latch.
//! Writers follow the transaction layer's order: the key's exclusive lock, then the change
//! under the exclusive latch (a poison value first, as an uncommitted change), then either a
//! committed value or the rollback to the old one, each under the latch, and only then the
//! lock's release. Readers take one of the two paths of `TreeStore::read_row`: the latched one
//! (copy and probe under the shared latch) or the optimistic one (version, copy, probe,
//! validation; retried on a failed validation). The model checks that no reader ever returns
//! the poison, under random and PCT schedules.
//!
//! The probe answers from the bucket's count of exclusive holds when it is zero, without the
//! bucket's mutex (`LockManager::is_held_exclusive`). Two more models cover that count: in one
//! every writer first reads the row under a shared lock and then upgrades it (the count must
//! follow an upgrade), in the other the lock table has one bucket and a third writer holds
//! another key of it exclusive throughout its own change (the count is not zero, and the
//! probe must still answer for the reader's key alone).
//!
//! The `..._reads_uncommitted_values` models move the probe before the latch, or before the
//! optimistic read's start, and expect shuttle to find a schedule that returns the poison: the
//! model can tell the right orders from the wrong ones.
//!
//! Run: `cargo test --release --features shuttle --test shuttle committed_read::`.

use std::sync::Arc;

use shuttle::sync::RwLock;
use shuttle::sync::atomic::{AtomicU64, Ordering};

use flashbuf::txn::lock::{HeldLocks, LockManager, Mode};

const KEY: &[u8] = b"row";
const POISON: u64 = u64::MAX;

/// How readers read the row.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    /// Copy and probe under the shared latch.
    Latched,
    /// Version, copy, probe, validation.
    Optimistic,
    /// Broken: the probe before the shared latch.
    ProbeBeforeLatch,
    /// Broken: the probe before the optimistic read's start.
    ProbeBeforeStart,
}

/// Who the writers are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Writers {
    /// Each takes the key exclusive at once.
    Plain,
    /// Each takes the key shared first, then upgrades it.
    Upgrading,
    /// As `Plain`, beside a writer of another key of the same (only) bucket.
    Colliding,
}

/// Tries of an upgrading writer.
const UPGRADE_ATTEMPTS: usize = 3;

/// A key of the reader's bucket that nobody reads.
const OTHER_KEY: &[u8] = b"other";

struct Model {
    locks: LockManager,
    writers: Writers,
    /// The row on its leaf: the latch (the guarded value is unused, the row is `row`), the
    /// seqlock's version and the row's bytes.
    latch: RwLock<()>,
    version: AtomicU64,
    row: AtomicU64,
    path: Path,
    /// The value a writer committed (0: none did).
    committed: AtomicU64,
}

impl Model {
    /// A writer transaction: exclusive lock, the poison, then commit `value` or roll back.
    fn write(&self, txn: u64, value: u64, commit: bool) {
        let hash = self.locks.hash(0, KEY);
        // Shuttle's timed waits never time out. The plain scripts cannot deadlock (one key);
        // two upgraders can, and the victim gives up its shared lock and tries again.
        if self.writers == Writers::Upgrading {
            if !self.upgrade(txn, hash) {
                return;
            }
        } else {
            self.locks
                .lock_hashed(txn, hash, 0, KEY, Mode::Exclusive)
                .unwrap();
        }
        let old = self.change(POISON);
        shuttle::thread::yield_now();
        self.change(if commit { value } else { old });
        let mut held = HeldLocks::default();
        held.insert(hash, 0, KEY, Mode::Exclusive);
        self.locks.release_all(txn, &held);
        if commit {
            self.committed.store(value, Ordering::SeqCst);
        }
    }

    /// Takes the key shared, then exclusive; whether it got it. A deadlock victim (two
    /// upgraders, or an edge a sleeping waiter has not renewed yet) gives up its shared lock
    /// and tries again, [`UPGRADE_ATTEMPTS`] times in all, then gives up its write.
    fn upgrade(&self, txn: u64, hash: u64) -> bool {
        for _ in 0..UPGRADE_ATTEMPTS {
            let upgraded = self
                .locks
                .lock_hashed(txn, hash, 0, KEY, Mode::Shared)
                .and_then(|()| {
                    shuttle::thread::yield_now();
                    self.locks.lock_hashed(txn, hash, 0, KEY, Mode::Exclusive)
                });
            if upgraded.is_ok() {
                return true;
            }
            self.locks.release(txn, hash, 0, KEY);
        }
        false
    }

    /// Writes the row under the exclusive latch (the version odd meanwhile); the old row.
    fn change(&self, row: u64) -> u64 {
        let _latch = self.latch.write().unwrap();
        self.version.fetch_add(1, Ordering::SeqCst);
        let old = self.row.swap(row, Ordering::SeqCst);
        self.version.fetch_add(1, Ordering::SeqCst);
        old
    }

    /// An auto-commit read.
    fn read(&self, txn: u64) -> u64 {
        let hash = self.locks.hash(0, KEY);
        let probe = || self.locks.is_held_exclusive(hash, 0, KEY);
        let fast = match self.path {
            Path::Latched => {
                let _latch = self.latch.read().unwrap();
                (!probe()).then(|| self.row.load(Ordering::SeqCst))
            }
            Path::ProbeBeforeLatch => {
                let held = probe();
                let _latch = self.latch.read().unwrap();
                (!held).then(|| self.row.load(Ordering::SeqCst))
            }
            Path::Optimistic | Path::ProbeBeforeStart => loop {
                let early = self.path == Path::ProbeBeforeStart && probe();
                let version = self.version.load(Ordering::SeqCst);
                if version % 2 == 1 {
                    shuttle::thread::yield_now();
                    continue;
                }
                let row = self.row.load(Ordering::SeqCst);
                let held = if self.path == Path::Optimistic {
                    probe()
                } else {
                    early
                };
                if self.version.load(Ordering::SeqCst) == version {
                    break (!held).then_some(row);
                }
            },
        };
        if let Some(row) = fast {
            return row;
        }
        self.locks
            .lock_hashed(txn, hash, 0, KEY, Mode::Shared)
            .unwrap();
        let row = {
            let _latch = self.latch.read().unwrap();
            self.row.load(Ordering::SeqCst)
        };
        let mut held = HeldLocks::default();
        held.insert(hash, 0, KEY, Mode::Shared);
        self.locks.release_all(txn, &held);
        row
    }
}

/// A writer of [`OTHER_KEY`] that holds it exclusive across a few scheduling points.
fn other_writer(model: &Model) {
    let hash = model.locks.hash(0, OTHER_KEY);
    model
        .locks
        .lock_hashed(50, hash, 0, OTHER_KEY, Mode::Exclusive)
        .unwrap();
    for _ in 0..3 {
        shuttle::thread::yield_now();
    }
    model.locks.release(50, hash, 0, OTHER_KEY);
}

fn model(path: Path, writers: Writers) {
    let buckets = if writers == Writers::Colliding {
        1
    } else {
        flashbuf::txn::lock::BUCKETS
    };
    let model = Arc::new(Model {
        locks: LockManager::with_buckets(std::time::Duration::from_secs(3600), buckets),
        writers,
        latch: RwLock::new(()),
        version: AtomicU64::new(0),
        row: AtomicU64::new(0),
        path,
        committed: AtomicU64::new(0),
    });
    let mut threads: Vec<_> = [(1, 10, true), (2, 20, false)]
        .into_iter()
        .map(|(txn, value, commit)| {
            let model = Arc::clone(&model);
            shuttle::thread::spawn(move || model.write(txn, value, commit))
        })
        .collect();
    if writers == Writers::Colliding {
        let model = Arc::clone(&model);
        threads.push(shuttle::thread::spawn(move || other_writer(&model)));
    }
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
    for thread in threads.into_iter().chain(readers) {
        thread.join().unwrap();
    }
    assert_eq!(
        model.row.load(Ordering::SeqCst),
        model.committed.load(Ordering::SeqCst),
        "the committed value stays"
    );
}

fn iterations() -> usize {
    std::env::var("SHUTTLE_LOCK_ITERATIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1000)
}

fn check(path: Path, writers: Writers) {
    let iterations = iterations();
    shuttle::check_random(move || model(path, writers), iterations);
    shuttle::check_pct(move || model(path, writers), iterations, 3);
}

#[test]
fn latched_auto_commit_reads_never_return_uncommitted_rows() {
    check(Path::Latched, Writers::Plain);
}

#[test]
fn optimistic_auto_commit_reads_never_return_uncommitted_rows() {
    check(Path::Optimistic, Writers::Plain);
}

#[test]
fn auto_commit_reads_never_return_rows_of_upgraded_locks() {
    check(Path::Latched, Writers::Upgrading);
    check(Path::Optimistic, Writers::Upgrading);
}

#[test]
fn auto_commit_reads_answer_for_their_key_in_a_bucket_another_writer_holds() {
    check(Path::Latched, Writers::Colliding);
    check(Path::Optimistic, Writers::Colliding);
}

#[test]
#[should_panic(expected = "uncommitted")]
fn the_probe_before_the_latch_reads_uncommitted_values() {
    shuttle::check_random(
        || model(Path::ProbeBeforeLatch, Writers::Plain),
        20 * iterations(),
    );
}

#[test]
#[should_panic(expected = "uncommitted")]
fn the_probe_before_the_optimistic_start_reads_uncommitted_values() {
    shuttle::check_random(
        || model(Path::ProbeBeforeStart, Writers::Plain),
        20 * iterations(),
    );
}
