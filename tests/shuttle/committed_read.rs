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

struct Model {
    locks: LockManager,
    /// The row on its leaf: the latch (the guarded value is unused, the row is `row`), the
    /// seqlock's version and the row's bytes.
    latch: RwLock<()>,
    version: AtomicU64,
    row: AtomicU64,
    path: Path,
}

impl Model {
    /// A writer transaction: exclusive lock, the poison, then commit `value` or roll back.
    fn write(&self, txn: u64, value: u64, commit: bool) {
        let hash = self.locks.hash(0, KEY);
        // Shuttle's timed waits never time out and the scripts cannot deadlock (one key).
        self.locks
            .lock_hashed(txn, hash, 0, KEY, Mode::Exclusive)
            .unwrap();
        let old = self.change(POISON);
        shuttle::thread::yield_now();
        self.change(if commit { value } else { old });
        let mut held = HeldLocks::default();
        held.insert(hash, 0, KEY, Mode::Exclusive);
        self.locks.release_all(txn, &held);
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

fn model(path: Path) {
    let model = Arc::new(Model {
        locks: LockManager::new(std::time::Duration::from_secs(3600)),
        latch: RwLock::new(()),
        version: AtomicU64::new(0),
        row: AtomicU64::new(0),
        path,
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
    assert_eq!(
        model.row.load(Ordering::SeqCst),
        10,
        "the committed value stays"
    );
}

fn iterations() -> usize {
    std::env::var("SHUTTLE_LOCK_ITERATIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1000)
}

fn check(path: Path) {
    let iterations = iterations();
    shuttle::check_random(move || model(path), iterations);
    shuttle::check_pct(move || model(path), iterations, 3);
}

#[test]
fn latched_auto_commit_reads_never_return_uncommitted_rows() {
    check(Path::Latched);
}

#[test]
fn optimistic_auto_commit_reads_never_return_uncommitted_rows() {
    check(Path::Optimistic);
}

#[test]
#[should_panic(expected = "uncommitted")]
fn the_probe_before_the_latch_reads_uncommitted_values() {
    shuttle::check_random(|| model(Path::ProbeBeforeLatch), 20 * iterations());
}

#[test]
#[should_panic(expected = "uncommitted")]
fn the_probe_before_the_optimistic_start_reads_uncommitted_values() {
    shuttle::check_random(|| model(Path::ProbeBeforeStart), 20 * iterations());
}
