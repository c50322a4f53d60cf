//! Shuttle models of the record lock manager's acquire/release/wait protocol (`txn::lock`):
//! with the `shuttle` feature its bucket mutexes and condition variables are shuttle's
//! (`src/sync.rs`), so these tests run its real code under random and PCT schedules.
//!
//! Run: `cargo test --release --features shuttle --test shuttle lock::` (more schedules:
//! `SHUTTLE_LOCK_ITERATIONS=20000`).
//!
//! Three threads run scripted transactions whose requests cross: two that read one key and then
//! write the other's (a deadlock when both reads come first), and an upgrader (shared, then
//! exclusive, on a key the others read). Each holder updates per-key counters right after its
//! grant and right before its release, and at every scheduling point in between the models
//! check:
//!
//! - exclusivity: never a reader beside a writer, never two writers;
//! - no lost wake-up and no missed deadlock: shuttle's condition-variable waits never time out
//!   (its `wait_timeout` is a plain wait), so a waiter that nobody wakes, or a wait-for cycle
//!   with no victim, leaves every thread blocked and shuttle fails the schedule;
//! - afterwards every lock is free (a new transaction gets each key exclusive at once).
//!
//! One model puts every key in one bucket (all keys collide), the other uses the default table.
//! The deliberate bugs the models were checked against are listed in docs/performance.md
//! ("The lock manager").

use std::sync::Arc;

use shuttle::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use flashbuf::txn::lock::{BUCKETS, HeldLocks, LockManager, Mode, TryLock};

const KEYS: [&[u8]; 2] = [b"alpha", b"beta"];
/// Attempts of a transaction whose every try is a deadlock victim.
const ATTEMPTS: u64 = 3;

/// What the holders of one key say they hold.
#[derive(Default)]
struct KeyState {
    readers: AtomicUsize,
    writer: AtomicU64,
}

struct Model {
    locks: LockManager,
    keys: [KeyState; 2],
}

impl Model {
    fn check(&self, key: usize) {
        let state = &self.keys[key];
        let writer = state.writer.load(Ordering::SeqCst);
        let readers = state.readers.load(Ordering::SeqCst);
        assert!(
            writer == 0 || readers == 0,
            "key {key}: writer {writer} beside {readers} reader(s)"
        );
    }

    fn granted(&self, txn: u64, key: usize, before: Option<Mode>, mode: Mode) {
        let state = &self.keys[key];
        match mode {
            Mode::Shared => {
                state.readers.fetch_add(1, Ordering::SeqCst);
            }
            Mode::Exclusive => {
                if before == Some(Mode::Shared) {
                    state.readers.fetch_sub(1, Ordering::SeqCst);
                }
                let previous =
                    state
                        .writer
                        .compare_exchange(0, txn, Ordering::SeqCst, Ordering::SeqCst);
                assert!(
                    previous.is_ok(),
                    "key {key}: {txn} granted exclusive while {previous:?} writes it"
                );
            }
        }
        self.check(key);
    }

    fn release_all(&self, txn: u64, held: &mut HeldLocks) {
        for lock in held.iter() {
            let key = KEYS.iter().position(|k| *k == lock.key).unwrap();
            self.check(key);
            match lock.mode {
                Mode::Shared => {
                    self.keys[key].readers.fetch_sub(1, Ordering::SeqCst);
                }
                Mode::Exclusive => {
                    self.keys[key].writer.store(0, Ordering::SeqCst);
                }
            }
        }
        self.locks.release_all(txn, held);
        held.clear();
    }

    /// Runs `script` as one transaction; `false` when it was a deadlock victim (it has then
    /// released everything).
    fn attempt(&self, txn: u64, script: &[(usize, Mode)]) -> bool {
        let mut held = HeldLocks::default();
        for &(key, mode) in script {
            let hash = self.locks.hash(0, KEYS[key]);
            let before = held.mode(hash, 0, KEYS[key]);
            if self
                .locks
                .lock_hashed(txn, hash, 0, KEYS[key], mode)
                .is_err()
            {
                self.release_all(txn, &mut held);
                return false;
            }
            self.granted(txn, key, before, mode);
            held.insert(hash, 0, KEYS[key], mode);
            shuttle::thread::yield_now();
            self.check(key);
        }
        self.release_all(txn, &mut held);
        true
    }

    fn run(&self, thread: u64, script: &[(usize, Mode)]) {
        for attempt in 0..ATTEMPTS {
            if self.attempt(1 + thread * 100 + attempt, script) {
                return;
            }
        }
    }
}

const SCRIPTS: [&[(usize, Mode)]; 3] = [
    &[(0, Mode::Shared), (1, Mode::Exclusive)],
    &[(1, Mode::Shared), (0, Mode::Exclusive)],
    &[(0, Mode::Shared), (0, Mode::Exclusive)],
];

fn model(buckets: usize) {
    let model = Arc::new(Model {
        // Shuttle's timed waits never time out; the timeout is never reached.
        locks: LockManager::with_buckets(std::time::Duration::from_secs(3600), buckets),
        keys: Default::default(),
    });
    let threads: Vec<_> = SCRIPTS
        .iter()
        .enumerate()
        .map(|(thread, script)| {
            let model = Arc::clone(&model);
            shuttle::thread::spawn(move || model.run(thread as u64, script))
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    for key in KEYS {
        assert_eq!(
            model.locks.try_lock(u64::MAX, 0, key, Mode::Exclusive),
            TryLock::Granted,
            "a lock was left held"
        );
    }
    assert_eq!(model.locks.stats().timeouts, 0);
}

fn iterations() -> usize {
    std::env::var("SHUTTLE_LOCK_ITERATIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1000)
}

fn check(buckets: usize) {
    let iterations = iterations();
    shuttle::check_random(move || model(buckets), iterations);
    shuttle::check_pct(move || model(buckets), iterations, 3);
}

#[test]
fn crossed_requests_keep_exclusivity_and_never_hang_when_every_key_collides() {
    check(1);
}

#[test]
fn crossed_requests_keep_exclusivity_and_never_hang_in_the_default_table() {
    check(BUCKETS);
}
