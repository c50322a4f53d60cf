//! The lock manager: key locks (shared for reads, exclusive for writes) held until the end of
//! the transaction (strict two-phase locking), with waiting, deadlock detection on a wait-for
//! graph, and a wait timeout.
//!
//! Locks live in [`SHARDS`] hash shards, each a mutex over a map from `(tree, key)` to the
//! holders, with one condition variable for the shard's waiters. A request that conflicts
//! records wait-for edges to the holders it conflicts with and searches the graph for a cycle
//! through itself before each wait; a cycle makes the requester the victim
//! ([`Error::Conflict`]). A wait longer than the timeout is a conflict too. The victim's caller
//! rolls its transaction back and the client sees a retryable error. An upgrade (shared to
//! exclusive) waits for the other shared holders; two upgraders deadlock and one is the victim.
//!
//! Lock order: a shard mutex → the wait-for graph mutex. No latch or other lock is taken under
//! either; a shard mutex may be taken while the caller holds a page latch (try-lock only: it
//! never waits there).
//!
//! Bounds: a wait is bounded by the timeout, woken at least every [`WAIT_SLICE`] to look again;
//! a cycle search visits each waiting transaction at most once.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::kv::TreeId;
use crate::wal::TxnId;

/// Number of shards.
pub const SHARDS: usize = 256;
/// Longest single sleep of a waiter before it looks at the lock again.
pub const WAIT_SLICE: Duration = Duration::from_millis(20);

/// Lock mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Shared (reads).
    Shared,
    /// Exclusive (writes).
    Exclusive,
}

/// A locked item.
pub type LockKey = (TreeId, Vec<u8>);

#[derive(Debug, Default)]
struct Entry {
    holders: Vec<(TxnId, Mode)>,
    waiting: usize,
    /// Transactions waiting for this lock in exclusive mode (upgraders included).
    exclusive_waiters: Vec<TxnId>,
}

impl Entry {
    /// What `txn` waits for to get `mode`: holders (other than `txn`) whose mode conflicts and,
    /// for a shared request of a transaction that holds nothing here yet, the transactions
    /// waiting for exclusive mode (they go first, so a stream of readers cannot starve a
    /// writer or an upgrader).
    fn blockers(&self, txn: TxnId, mode: Mode) -> Vec<TxnId> {
        let mut blockers: Vec<TxnId> = self
            .holders
            .iter()
            .filter(|(holder, held)| {
                *holder != txn && (mode == Mode::Exclusive || *held == Mode::Exclusive)
            })
            .map(|(holder, _)| *holder)
            .collect();
        if mode == Mode::Shared && self.holders.iter().all(|(holder, _)| *holder != txn) {
            blockers.extend(self.exclusive_waiters.iter().copied().filter(|w| *w != txn));
        }
        blockers
    }

    fn grant(&mut self, txn: TxnId, mode: Mode) {
        match self.holders.iter_mut().find(|(holder, _)| *holder == txn) {
            Some((_, held)) => *held = (*held).max(mode),
            None => self.holders.push((txn, mode)),
        }
    }
}

#[derive(Debug, Default)]
struct Shard {
    table: Mutex<HashMap<LockKey, Entry>>,
    waiters: Condvar,
}

/// Counters of the lock manager.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LockStats {
    /// Requests that had to wait.
    pub waits: u64,
    /// Deadlock victims.
    pub deadlocks: u64,
    /// Wait timeouts.
    pub timeouts: u64,
    /// Real nanoseconds requests spent waiting (granted, victims and timeouts alike).
    pub wait_ns: u64,
}

impl LockStats {
    /// The counters accumulated since `earlier`.
    #[must_use]
    pub fn since(&self, earlier: &LockStats) -> LockStats {
        LockStats {
            waits: self.waits.saturating_sub(earlier.waits),
            deadlocks: self.deadlocks.saturating_sub(earlier.deadlocks),
            timeouts: self.timeouts.saturating_sub(earlier.timeouts),
            wait_ns: self.wait_ns.saturating_sub(earlier.wait_ns),
        }
    }
}

/// The lock table.
#[derive(Debug)]
pub struct LockManager {
    shards: Box<[Shard]>,
    hasher: std::collections::hash_map::RandomState,
    /// Wait-for graph: a waiting transaction → the transactions it waits for.
    waits_for: Mutex<HashMap<TxnId, Vec<TxnId>>>,
    timeout: Duration,
    stats: Mutex<LockStats>,
}

/// Outcome of a try-lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryLock {
    /// Granted (or already held in a sufficient mode).
    Granted,
    /// Held by another transaction in a conflicting mode.
    Busy,
}

impl LockManager {
    /// A lock manager whose waits give up after `timeout`.
    #[must_use]
    pub fn new(timeout: Duration) -> Self {
        LockManager {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            hasher: std::collections::hash_map::RandomState::new(),
            waits_for: Mutex::new(HashMap::new()),
            timeout,
            stats: Mutex::new(LockStats::default()),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> LockStats {
        self.stats.lock().clone()
    }

    fn shard(&self, tree: TreeId, key: &[u8]) -> &Shard {
        let mut hasher = self.hasher.build_hasher();
        tree.hash(&mut hasher);
        key.hash(&mut hasher);
        &self.shards[hasher.finish() as usize % SHARDS]
    }

    /// Takes the lock if it can be granted now; never waits.
    pub fn try_lock(&self, txn: TxnId, tree: TreeId, key: &[u8], mode: Mode) -> TryLock {
        let shard = self.shard(tree, key);
        let mut table = shard.table.lock();
        let lock_key = (tree, key.to_vec());
        let entry = table.entry(lock_key).or_default();
        if entry.blockers(txn, mode).is_empty() {
            entry.grant(txn, mode);
            TryLock::Granted
        } else {
            if entry.holders.is_empty() && entry.waiting == 0 && entry.exclusive_waiters.is_empty()
            {
                table.remove(&(tree, key.to_vec()));
            }
            TryLock::Busy
        }
    }

    /// Takes the lock, waiting for conflicting holders.
    ///
    /// # Errors
    /// [`Error::Conflict`] when this request closes a wait-for cycle (deadlock victim) or
    /// waits longer than the timeout.
    pub fn lock(&self, txn: TxnId, tree: TreeId, key: &[u8], mode: Mode) -> Result<()> {
        let shard = self.shard(tree, key);
        let lock_key: LockKey = (tree, key.to_vec());
        let deadline = Instant::now() + self.timeout;
        let mut table = shard.table.lock();
        let mut waited = false;
        let mut wait_began = None;
        // Bound: the deadline (each round sleeps at most WAIT_SLICE or until woken).
        loop {
            let entry = table.entry(lock_key.clone()).or_default();
            let blockers = entry.blockers(txn, mode);
            if blockers.is_empty() {
                entry.grant(txn, mode);
                entry.exclusive_waiters.retain(|w| *w != txn);
                if waited {
                    self.waits_for.lock().remove(&txn);
                }
                self.count_wait(wait_began);
                return Ok(());
            }
            if mode == Mode::Exclusive && !entry.exclusive_waiters.contains(&txn) {
                entry.exclusive_waiters.push(txn);
            }
            if !waited {
                self.stats.lock().waits += 1;
                waited = true;
                wait_began = Some(Instant::now());
            }
            if self.closes_cycle(txn, blockers) {
                self.stats.lock().deadlocks += 1;
                self.count_wait(wait_began);
                self.give_up(&mut table, &lock_key, txn);
                return Err(Error::Conflict(format!(
                    "deadlock: transaction {txn} chosen as the victim"
                )));
            }
            let now = Instant::now();
            if now >= deadline {
                self.stats.lock().timeouts += 1;
                self.count_wait(wait_began);
                self.give_up(&mut table, &lock_key, txn);
                return Err(Error::Conflict(format!(
                    "lock wait timeout after {:?} (transaction {txn})",
                    self.timeout
                )));
            }
            if let Some(entry) = table.get_mut(&lock_key) {
                entry.waiting += 1;
            }
            let _ = shard
                .waiters
                .wait_for(&mut table, (deadline - now).min(WAIT_SLICE));
            if let Some(entry) = table.get_mut(&lock_key) {
                entry.waiting -= 1;
            }
        }
    }

    /// Adds the time since `began` (a request's first wait) to the wait total.
    fn count_wait(&self, began: Option<Instant>) {
        if let Some(began) = began {
            let waited = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
            let mut stats = self.stats.lock();
            stats.wait_ns = stats.wait_ns.saturating_add(waited);
        }
    }

    fn give_up(&self, table: &mut HashMap<LockKey, Entry>, key: &LockKey, txn: TxnId) {
        self.waits_for.lock().remove(&txn);
        let mut wake = false;
        if let Some(entry) = table.get_mut(key) {
            let before = entry.exclusive_waiters.len();
            entry.exclusive_waiters.retain(|w| *w != txn);
            // Readers queued behind this writer may go now.
            wake = entry.exclusive_waiters.len() < before && entry.waiting > 0;
            if entry.holders.is_empty() && entry.waiting == 0 {
                table.remove(key);
            }
        }
        if wake {
            self.shard(key.0, &key.1).waiters.notify_all();
        }
    }

    /// Records `txn → blockers` and reports whether a cycle now runs through `txn`.
    fn closes_cycle(&self, txn: TxnId, blockers: Vec<TxnId>) -> bool {
        let mut graph = self.waits_for.lock();
        graph.insert(txn, blockers);
        let mut stack: Vec<TxnId> = graph.get(&txn).cloned().unwrap_or_default();
        let mut seen = HashSet::new();
        // Bound: each waiting transaction is expanded at most once.
        while let Some(next) = stack.pop() {
            if next == txn {
                return true;
            }
            if seen.insert(next)
                && let Some(edges) = graph.get(&next)
            {
                stack.extend(edges.iter().copied());
            }
        }
        false
    }

    /// Releases every lock in `keys` held by `txn` and wakes their waiters.
    pub fn release_all(&self, txn: TxnId, keys: impl IntoIterator<Item = LockKey>) {
        for key in keys {
            let shard = self.shard(key.0, &key.1);
            let mut table = shard.table.lock();
            let mut wake = false;
            if let Some(entry) = table.get_mut(&key) {
                entry.holders.retain(|(holder, _)| *holder != txn);
                wake = entry.waiting > 0;
                if entry.holders.is_empty() && entry.waiting == 0 {
                    table.remove(&key);
                }
            }
            drop(table);
            if wake {
                shard.waiters.notify_all();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn shared_locks_share_and_exclusive_ones_exclude() {
        let locks = LockManager::new(Duration::from_millis(50));
        locks.lock(1, 0, b"k", Mode::Shared).unwrap();
        locks.lock(2, 0, b"k", Mode::Shared).unwrap();
        assert_eq!(locks.try_lock(3, 0, b"k", Mode::Exclusive), TryLock::Busy);
        assert!(matches!(
            locks.lock(3, 0, b"k", Mode::Exclusive),
            Err(Error::Conflict(_))
        ));
        locks.release_all(1, [(0, b"k".to_vec())]);
        locks.release_all(2, [(0, b"k".to_vec())]);
        locks.lock(3, 0, b"k", Mode::Exclusive).unwrap();
        assert_eq!(locks.try_lock(1, 0, b"k", Mode::Shared), TryLock::Busy);
        assert_eq!(locks.try_lock(3, 0, b"k", Mode::Shared), TryLock::Granted);
        assert_eq!(locks.stats().timeouts, 1);
    }

    #[test]
    fn a_deadlock_picks_a_victim_and_the_other_proceeds() {
        let locks = Arc::new(LockManager::new(Duration::from_secs(5)));
        locks.lock(1, 0, b"a", Mode::Exclusive).unwrap();
        locks.lock(2, 0, b"b", Mode::Exclusive).unwrap();
        let other = Arc::clone(&locks);
        let waiter = std::thread::spawn(move || {
            let result = other.lock(1, 0, b"b", Mode::Exclusive);
            // Either way transaction 1 ends and lets go of everything it holds.
            other.release_all(1, [(0, b"a".to_vec()), (0, b"b".to_vec())]);
            result.is_ok()
        });
        std::thread::sleep(Duration::from_millis(50));
        let second = locks.lock(2, 0, b"a", Mode::Exclusive);
        if second.is_err() {
            locks.release_all(2, [(0, b"b".to_vec())]);
        } else {
            locks.release_all(2, [(0, b"a".to_vec()), (0, b"b".to_vec())]);
        }
        let first_ok = waiter.join().unwrap();
        assert!(
            first_ok != second.is_ok(),
            "exactly one of the two is the victim"
        );
        assert_eq!(locks.stats().deadlocks, 1);
    }
}
