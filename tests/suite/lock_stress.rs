//! Stress of the record lock manager (`txn::lock`): many threads run transactions that lock a
//! few random keys of a small key set in random modes (upgrades included), hold them for a
//! moment and release them, as strict two-phase locking does. Per-key atomic counters, updated
//! by each holder right after its grant and right before its release, check that exclusivity
//! is never violated: no reader beside a writer, never two writers. Deadlock victims release
//! everything and go on; a 60-second wait timeout means a deadlock the detector missed, so
//! none may time out. Run once with one bucket (every key collides with every other) and once
//! with the default table. Before each release the auto-commit read's probe
//! (`is_held_exclusive`) must see every key as the releasing transaction holds it.

#![cfg(not(feature = "shuttle"))]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use flashbuf::Error;
use flashbuf::txn::lock::{HeldLocks, LockManager, Mode};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const THREADS: usize = 8;
const TRANSACTIONS: usize = 2000;
const KEYS: usize = 6;
const TREES: u32 = 2;

/// What the holders of one key say they hold.
#[derive(Default)]
struct KeyState {
    readers: AtomicUsize,
    writer: AtomicU64,
}

struct Shared {
    locks: LockManager,
    keys: Vec<KeyState>,
    violations: AtomicUsize,
    committed: AtomicUsize,
    victims: AtomicUsize,
}

impl Shared {
    fn state(&self, tree: u32, key: usize) -> &KeyState {
        &self.keys[tree as usize * KEYS + key]
    }

    fn violation(&self, what: String) {
        eprintln!("violation: {what}");
        self.violations.fetch_add(1, Ordering::SeqCst);
    }

    /// Called right after `txn` was granted `mode` on the key (holding `before` until then).
    fn granted(&self, txn: u64, tree: u32, key: usize, before: Option<Mode>, mode: Mode) {
        let state = self.state(tree, key);
        match mode {
            Mode::Shared => {
                state.readers.fetch_add(1, Ordering::SeqCst);
                let writer = state.writer.load(Ordering::SeqCst);
                if writer != 0 {
                    self.violation(format!("{txn} reads key {tree}/{key} written by {writer}"));
                }
            }
            Mode::Exclusive => {
                if before == Some(Mode::Shared) {
                    state.readers.fetch_sub(1, Ordering::SeqCst);
                }
                if let Err(writer) =
                    state
                        .writer
                        .compare_exchange(0, txn, Ordering::SeqCst, Ordering::SeqCst)
                {
                    self.violation(format!("{txn} writes key {tree}/{key} written by {writer}"));
                }
                let readers = state.readers.load(Ordering::SeqCst);
                if readers != 0 {
                    self.violation(format!("{txn} writes key {tree}/{key} read by {readers}"));
                }
            }
        }
    }

    /// Called right before `txn` releases everything in `held`. The auto-commit read's probe
    /// must see each key as `txn` holds it: exclusive where it holds it exclusive, and not
    /// exclusive where it holds it shared (no other transaction can hold it exclusive then),
    /// whatever the other keys of the bucket are doing (the probe answers from a count of the
    /// bucket's exclusive holds when that is zero).
    fn releasing(&self, txn: u64, held: &HeldLocks) {
        for lock in held.iter() {
            let probed = self.locks.is_held_exclusive(lock.hash, lock.tree, lock.key);
            if probed != (lock.mode == Mode::Exclusive) {
                self.violation(format!(
                    "{txn} holds {:?}/{:?} {:?} but the probe says exclusive: {probed}",
                    lock.tree, lock.key, lock.mode
                ));
            }
            let key = usize::from(lock.key[0]);
            let state = self.state(lock.tree, key);
            match lock.mode {
                Mode::Shared => {
                    state.readers.fetch_sub(1, Ordering::SeqCst);
                }
                Mode::Exclusive => {
                    if state
                        .writer
                        .compare_exchange(txn, 0, Ordering::SeqCst, Ordering::SeqCst)
                        .is_err()
                    {
                        self.violation(format!("{txn} lost its write lock on {key}"));
                    }
                }
            }
        }
    }
}

/// One transaction: 1 to 4 random requests, each held across a few yields.
fn transaction(shared: &Shared, txn: u64, rng: &mut SmallRng, held: &mut HeldLocks) {
    let requests = rng.gen_range(1..=4);
    for _ in 0..requests {
        let tree = rng.gen_range(0..TREES);
        let key = [rng.gen_range(0..KEYS as u8), 0xAB];
        let mode = if rng.gen_bool(0.4) {
            Mode::Exclusive
        } else {
            Mode::Shared
        };
        let hash = shared.locks.hash(tree, &key);
        let before = held.mode(hash, tree, &key);
        if before.is_some_and(|held| held >= mode) {
            continue;
        }
        match shared.locks.lock_hashed(txn, hash, tree, &key, mode) {
            Ok(()) => {
                shared.granted(txn, tree, usize::from(key[0]), before, mode);
                held.insert(hash, tree, &key, mode);
            }
            Err(Error::Conflict(_)) => {
                shared.victims.fetch_add(1, Ordering::SeqCst);
                break;
            }
            Err(other) => panic!("unexpected lock error {other}"),
        }
        for _ in 0..rng.gen_range(0..3) {
            std::thread::yield_now();
        }
    }
    shared.releasing(txn, held);
    shared.locks.release_all(txn, held);
    held.clear();
    shared.committed.fetch_add(1, Ordering::SeqCst);
}

fn stress(buckets: usize) {
    let shared = Arc::new(Shared {
        locks: LockManager::with_buckets(Duration::from_secs(60), buckets),
        keys: (0..KEYS * TREES as usize)
            .map(|_| KeyState::default())
            .collect(),
        violations: AtomicUsize::new(0),
        committed: AtomicUsize::new(0),
        victims: AtomicUsize::new(0),
    });
    let threads: Vec<_> = (0..THREADS)
        .map(|thread| {
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(thread as u64 + 17 * buckets as u64);
                let mut held = HeldLocks::take_spare();
                for n in 0..TRANSACTIONS {
                    let txn = 1 + (thread * TRANSACTIONS + n) as u64;
                    transaction(&shared, txn, &mut rng, &mut held);
                }
                held.recycle();
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("a stress thread panicked");
    }
    let stats = shared.locks.stats();
    eprintln!(
        "{buckets} bucket(s): {} transactions, {} waits, {} deadlock victims, {} timeouts",
        shared.committed.load(Ordering::SeqCst),
        stats.waits,
        stats.deadlocks,
        stats.timeouts
    );
    assert_eq!(shared.violations.load(Ordering::SeqCst), 0);
    assert_eq!(
        shared.committed.load(Ordering::SeqCst),
        THREADS * TRANSACTIONS
    );
    assert_eq!(stats.timeouts, 0, "a deadlock went undetected");
    assert_eq!(
        stats.deadlocks,
        shared.victims.load(Ordering::SeqCst) as u64,
        "every conflict was a deadlock victim"
    );
    for state in &shared.keys {
        assert_eq!(state.readers.load(Ordering::SeqCst), 0);
        assert_eq!(state.writer.load(Ordering::SeqCst), 0);
    }
    // Everything was released: a new transaction gets every key exclusive at once.
    for tree in 0..TREES {
        for key in 0..KEYS as u8 {
            assert_eq!(
                shared
                    .locks
                    .try_lock(u64::MAX, tree, &[key, 0xAB], Mode::Exclusive),
                flashbuf::txn::lock::TryLock::Granted
            );
        }
    }
}

#[test]
fn exclusivity_holds_and_nothing_deadlocks_when_every_key_collides() {
    stress(1);
}

#[test]
fn exclusivity_holds_and_nothing_deadlocks_in_the_default_table() {
    stress(flashbuf::txn::lock::BUCKETS);
}
