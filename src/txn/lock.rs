//! The lock manager: key locks (shared for reads, exclusive for writes) held until the end of
//! the transaction (strict two-phase locking), with waiting, deadlock detection on a wait-for
//! graph, and a wait timeout.
//!
//! **Table.** Locks live in a fixed table of buckets (4096 by default), each a mutex over its
//! exact entries (tree, key bytes, holders, waiters; a short key and the first holder inside
//! the entry; the bucket's first entry inside the bucket, further ones in a vector, so an
//! uncontended request reads the bucket's own cache lines and no heap buffer) and one condition
//! variable for the bucket's waiters. A key's bucket is picked by a seeded, non-cryptographic
//! hash of the tree and key ([`LockManager::hash`]), computed once per request and kept in the
//! transaction's [`HeldLocks`] for the release. An uncontended acquire or release is one
//! mutex lock and unlock (two atomic operations) around a scan of the bucket's few entries; a
//! vacated entry keeps its key and holder buffers for the next key of the bucket, and
//! [`HeldLocks`] is recycled per thread, so the steady state allocates nothing.
//!
//! **Exclusive holds per bucket.** Each bucket also has a count of the exclusive holds of its
//! entries (changed under its mutex, on a grant that makes a transaction an exclusive holder
//! and on the release of one), kept in a dense array beside the buckets. The auto-commit read's
//! probe ([`LockManager::is_held_exclusive`]) reads that count first and takes the mutex only
//! when it is not zero, so a read of a key whose bucket nobody writes writes no shared cache
//! line and, the array being 16 KiB, usually misses no cache either. Invariant: the count
//! equals the number of (transaction, key) pairs of the bucket held exclusive.
//!
//! **Collisions.** Entries compare the whole key, so keys whose hashes collide (same bucket, or
//! even the same 64-bit hash) never conflict with each other: a collision cannot make a key
//! wait for another key's lock, cannot add a wait-for edge, and cannot let two conflicting
//! holders in. What colliding keys share is the bucket's mutex (held for a scan of its entries,
//! never while waiting) and its condition variable: a release in the bucket wakes the waiters
//! of every key there, and each looks at its own entry again and sleeps on (at most one extra
//! wake-up per release in the bucket, and every wait is bounded by the timeout anyway).
//!
//! **Conflicts.** A request that conflicts records wait-for edges to the holders it conflicts
//! with and searches the graph for a cycle through itself before each wait; a cycle makes the
//! requester the victim ([`Error::Conflict`]). A wait longer than the timeout is a conflict
//! too. The victim's caller rolls its transaction back and the client sees a retryable error.
//! An upgrade (shared to exclusive) waits for the other shared holders; two upgraders deadlock
//! and one is the victim. Transactions waiting for exclusive mode go before new shared
//! requests, so a stream of readers cannot starve a writer.
//!
//! Lock order: a bucket mutex → the wait-for graph mutex → the statistics mutex. No latch or
//! other lock is taken under any of them; a bucket mutex may be taken while the caller holds a
//! page latch (try-lock only: it never waits there).
//!
//! Bounds: a wait is bounded by the timeout, woken at least every [`WAIT_SLICE`] to look again;
//! a cycle search visits each waiting transaction at most once; a bucket holds one entry per
//! key locked or waited for in it at once, plus its first entry when that is vacant (an entry
//! past the first is removed when it falls vacant, so a lookup never scans vacant heap
//! entries; the vector keeps its capacity, so the next key of the bucket allocates nothing).
//!
//! With the `shuttle` feature the mutexes and condition variables are shuttle's
//! (`crate::sync`), so `tests/shuttle/lock.rs` runs this code under randomized schedules.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::kv::TreeId;
use crate::sync::{AtomicU32, Condvar, Mutex, MutexGuard, Ordering};
use crate::wal::TxnId;

/// Buckets of a lock manager made by [`LockManager::new`].
pub const BUCKETS: usize = 4096;
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

/// Bytes of a key kept inside its entry; longer keys live in the entry's heap buffer. 56 holds
/// every TPC-C key (the longest, a customer by name, is 39 bytes) and YCSB's, so that no
/// bucket of their lock tables allocates a key buffer, and a bucket still fits four cache
/// lines (test `a_bucket_fits_four_cache_lines`).
const INLINE_KEY: usize = 56;
/// Bytes a key buffer reserves when it first holds a key longer than [`INLINE_KEY`].
const LONG_KEY_RESERVE: usize = 2 * INLINE_KEY;

/// A lock's key, inside the entry when it is short (TPC-C's keys are 2-39 bytes), so that
/// comparing it touches no other cache line.
#[derive(Debug)]
#[repr(C)]
struct EntryKey {
    len: usize,
    inline: [u8; INLINE_KEY],
    /// The key when longer than [`INLINE_KEY`] (its buffer kept for the next long key).
    long: Vec<u8>,
}

impl Default for EntryKey {
    fn default() -> Self {
        EntryKey {
            len: 0,
            inline: [0; INLINE_KEY],
            long: Vec::new(),
        }
    }
}

impl EntryKey {
    fn get(&self) -> &[u8] {
        if self.len <= INLINE_KEY {
            &self.inline[..self.len]
        } else {
            &self.long
        }
    }

    fn set(&mut self, key: &[u8]) {
        self.len = key.len();
        if key.len() <= INLINE_KEY {
            self.inline[..key.len()].copy_from_slice(key);
        } else {
            self.long.clear();
            // A first long key reserves room for longer ones (keys of one index vary in length),
            // so that a bucket's buffer grows once rather than with every longer key.
            self.long.reserve(key.len().max(LONG_KEY_RESERVE));
            self.long.extend_from_slice(key);
        }
    }
}

/// The transactions holding one lock: the first inside the entry (most locks have one holder),
/// any others in a vector. Invariants: a transaction appears at most once; `more` is empty
/// while `first` is `None`.
#[derive(Debug, Default)]
struct Holders {
    first: Option<(TxnId, Mode)>,
    more: Vec<(TxnId, Mode)>,
}

impl Holders {
    fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    fn iter(&self) -> impl Iterator<Item = &(TxnId, Mode)> {
        self.first.iter().chain(self.more.iter())
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut (TxnId, Mode)> {
        self.first.iter_mut().chain(self.more.iter_mut())
    }

    fn push(&mut self, holder: (TxnId, Mode)) {
        debug_assert!(self.iter().all(|(txn, _)| *txn != holder.0));
        match self.first {
            None => self.first = Some(holder),
            Some(_) => self.more.push(holder),
        }
    }

    /// Removes `txn` (if it holds the lock), keeping the invariants; the mode it held.
    fn remove(&mut self, txn: TxnId) -> Option<Mode> {
        let removed = if let Some((_, mode)) = self.first.filter(|(holder, _)| *holder == txn) {
            self.first = self.more.pop();
            Some(mode)
        } else if let Some(at) = self.more.iter().position(|(holder, _)| *holder == txn) {
            Some(self.more.swap_remove(at).1)
        } else {
            None
        };
        debug_assert!(self.first.is_some() || self.more.is_empty());
        removed
    }
}

/// One key's lock inside a bucket. Vacant (no holder, no waiter) entries are reused for the
/// next key of the bucket, keeping their buffers. The fields an uncontended acquire or release
/// reads (hash, tree, a short key, the first holder, the waiter counts) lie inside the entry,
/// so it touches the bucket's line and the entry's, and no heap buffer.
/// Laid out in declaration order (`repr(C)`): what a lookup compares (hash, tree, a short key)
/// comes first, in the entry's first cache line.
#[derive(Debug, Default)]
#[repr(C)]
struct Entry {
    hash: u64,
    tree: TreeId,
    key: EntryKey,
    holders: Holders,
    waiting: usize,
    /// Transactions waiting for this lock in exclusive mode (upgraders included).
    exclusive_waiters: Vec<TxnId>,
}

impl Entry {
    fn is_vacant(&self) -> bool {
        self.holders.is_empty() && self.waiting == 0 && self.exclusive_waiters.is_empty()
    }

    fn is_for(&self, hash: u64, tree: TreeId, key: &[u8]) -> bool {
        self.hash == hash && self.tree == tree && self.key.get() == key
    }

    /// Whether a holder (other than `txn`) or a queued writer stands in the way of `txn`
    /// getting `mode` (see [`Entry::blockers`]); allocates nothing.
    fn is_blocked(&self, txn: TxnId, mode: Mode) -> bool {
        let mut holds = false;
        for (holder, held) in self.holders.iter() {
            if *holder == txn {
                holds = true;
            } else if mode == Mode::Exclusive || *held == Mode::Exclusive {
                return true;
            }
        }
        mode == Mode::Shared && !holds && self.exclusive_waiters.iter().any(|w| *w != txn)
    }

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

    /// Grants `mode` to `txn` (raising a mode it holds); whether this made `txn` an
    /// exclusive holder it was not before (for [`LockManager::exclusive_holds`]).
    #[must_use]
    fn grant(&mut self, txn: TxnId, mode: Mode) -> bool {
        if let Some((_, held)) = self.holders.iter_mut().find(|(holder, _)| *holder == txn) {
            let raised = *held == Mode::Shared && mode == Mode::Exclusive;
            *held = (*held).max(mode);
            return raised;
        }
        self.holders.push((txn, mode));
        mode == Mode::Exclusive
    }
}

/// The exact entries of one bucket: the first inside the bucket (most buckets hold at most one
/// key at a time), any others in a vector, so that an uncontended request reads the entry on
/// the bucket's own cache lines instead of following a pointer to the heap. `first` is always
/// there (vacant when unused). Invariant, outside a critical section that is changing an
/// entry: no entry of `more` is vacant ([`Entries::change`] removes one that falls vacant), so a
/// lookup reads only the bucket's own lines and the heap entries of keys locked now. `more`
/// keeps its capacity when it shrinks, and the long-key buffer of the last entry removed from
/// it waits in `spare_key` for the next entry added (an index of long keys, such as TPC-C's
/// customers by name, then allocates nothing per lock).
#[derive(Debug, Default)]
#[repr(C)]
struct Entries {
    first: Entry,
    more: Vec<Entry>,
    spare_key: Vec<u8>,
}

impl Entries {
    fn iter(&self) -> impl Iterator<Item = &Entry> {
        std::iter::once(&self.first).chain(self.more.iter())
    }

    /// Entry `index` of [`Entries::iter`]'s order.
    fn at(&mut self, index: usize) -> &mut Entry {
        match index {
            0 => &mut self.first,
            _ => &mut self.more[index - 1],
        }
    }

    fn get(&self, hash: u64, tree: TreeId, key: &[u8]) -> Option<&Entry> {
        self.iter().find(|entry| entry.is_for(hash, tree, key))
    }

    fn position(&self, hash: u64, tree: TreeId, key: &[u8]) -> Option<usize> {
        self.iter().position(|entry| entry.is_for(hash, tree, key))
    }

    /// The entry of the key, made from a vacant one (or a new one) when the key has none.
    fn find_or_add(&mut self, hash: u64, tree: TreeId, key: &[u8]) -> &mut Entry {
        if let Some(index) = self.position(hash, tree, key) {
            return self.at(index);
        }
        let index = self.vacant();
        let entry = self.at(index);
        entry.hash = hash;
        entry.tree = tree;
        entry.key.set(key);
        entry
    }

    /// Applies `change` to the key's entry, if it has one, and removes the entry if that left
    /// it vacant and it is not the first (the others keep their entries, in another order):
    /// every change that can vacate an entry goes through here, which keeps the invariant.
    fn change<R>(
        &mut self,
        hash: u64,
        tree: TreeId,
        key: &[u8],
        change: impl FnOnce(&mut Entry) -> R,
    ) -> Option<R> {
        let index = self.position(hash, tree, key)?;
        let result = change(self.at(index));
        if index > 0 && self.more[index - 1].is_vacant() {
            let removed = self.more.swap_remove(index - 1);
            if removed.key.long.capacity() > self.spare_key.capacity() {
                self.spare_key = removed.key.long;
            }
        }
        debug_assert!(self.is_trimmed());
        Some(result)
    }

    /// Whether every entry past the first is in use (the invariant above).
    fn is_trimmed(&self) -> bool {
        self.more.iter().all(|entry| !entry.is_vacant())
    }

    /// The position of a vacant entry, added at the end when there is none.
    fn vacant(&mut self) -> usize {
        if let Some(index) = self.iter().position(Entry::is_vacant) {
            return index;
        }
        let mut entry = Entry::default();
        entry.key.long = std::mem::take(&mut self.spare_key);
        self.more.push(entry);
        self.more.len()
    }
}

/// A bucket: its entries (the first inside it), the condition variable its waiters sleep on,
/// and how many exclusive holds its entries have. Aligned to cache lines (four of them), so
/// that two threads locking keys of neighbouring buckets do not share a line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Bucket {
    entries: Mutex<Entries>,
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
    buckets: Box<[Bucket]>,
    /// Per bucket (same index), the number of (transaction, key) pairs of the bucket held
    /// exclusive. Changed only under the bucket's mutex, by [`LockManager::grant`] and
    /// [`LockManager::release`]; read without it by [`LockManager::is_held_exclusive`], for
    /// which zero means that no key of the bucket is held exclusive (see there for why a
    /// reader may trust it). A dense array apart from the buckets (4 bytes each, 16 KiB for
    /// [`BUCKETS`]) so that a reader's look stays in its core's cache: inside the buckets it
    /// was a cache miss on every auto-commit read (docs/performance.md, "Exclusive-hold counts
    /// apart from the buckets").
    exclusive_holds: Box<[AtomicU32]>,
    /// `buckets.len() - 1` (the length is a power of two).
    mask: u64,
    /// Seed of the key hash (random per manager, so no fixed key set collides everywhere).
    seed: u64,
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

/// Multiplier of the key hash (the 64-bit golden ratio).
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// A folded 64x64 → 128-bit multiplication: every input bit reaches the low output bits.
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

impl LockManager {
    /// A lock manager with [`BUCKETS`] buckets whose waits give up after `timeout`.
    #[must_use]
    pub fn new(timeout: Duration) -> Self {
        Self::with_buckets(timeout, BUCKETS)
    }

    /// A lock manager with `buckets` buckets (rounded up to a power of two, at least one).
    /// Fewer buckets only mean more keys per bucket (tests use one to make every key collide).
    #[must_use]
    pub fn with_buckets(timeout: Duration, buckets: usize) -> Self {
        let buckets = buckets.max(1).next_power_of_two();
        LockManager {
            buckets: (0..buckets).map(|_| Bucket::default()).collect(),
            exclusive_holds: (0..buckets).map(|_| AtomicU32::new(0)).collect(),
            mask: buckets as u64 - 1,
            seed: rand::random::<u64>() | 1,
            waits_for: Mutex::new(HashMap::new()),
            timeout,
            stats: Mutex::new(LockStats::default()),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> LockStats {
        self.stats.lock().clone()
    }

    /// The hash of a lock key (seeded per manager; not cryptographic: collisions cost only
    /// sharing a bucket, see the module documentation).
    #[must_use]
    pub fn hash(&self, tree: TreeId, key: &[u8]) -> u64 {
        let mut hash = fold(self.seed ^ u64::from(tree), MIX);
        let mut chunks = key.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            hash = fold(hash ^ u64::from_le_bytes(word), MIX);
        }
        let rest = chunks.remainder();
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        hash = fold(hash ^ u64::from_le_bytes(word), MIX);
        fold(hash ^ key.len() as u64, MIX)
    }

    fn bucket(&self, hash: u64) -> &Bucket {
        &self.buckets[(hash & self.mask) as usize]
    }

    /// The exclusive-hold count of the bucket of `hash` ([`LockManager::exclusive_holds`]).
    fn exclusive_holds(&self, hash: u64) -> &AtomicU32 {
        &self.exclusive_holds[(hash & self.mask) as usize]
    }

    /// [`Entry::grant`], counting a new exclusive hold; `entry` is one of the bucket of
    /// `hash`, and the caller holds that bucket's mutex.
    fn grant(&self, hash: u64, entry: &mut Entry, txn: TxnId, mode: Mode) {
        if entry.grant(txn, mode) {
            self.exclusive_holds(hash).fetch_add(1, Ordering::Release);
        }
    }

    /// Takes the lock if it can be granted now; never waits.
    pub fn try_lock(&self, txn: TxnId, tree: TreeId, key: &[u8], mode: Mode) -> TryLock {
        self.try_lock_hashed(txn, self.hash(tree, key), tree, key, mode)
    }

    /// [`LockManager::try_lock`] with the key's [`LockManager::hash`] already computed.
    pub fn try_lock_hashed(
        &self,
        txn: TxnId,
        hash: u64,
        tree: TreeId,
        key: &[u8],
        mode: Mode,
    ) -> TryLock {
        let bucket = self.bucket(hash);
        let mut entries = bucket.entries.lock();
        let entry = entries.find_or_add(hash, tree, key);
        if entry.is_blocked(txn, mode) {
            TryLock::Busy
        } else {
            self.grant(hash, entry, txn, mode);
            TryLock::Granted
        }
    }

    /// Whether a transaction holds `key` exclusive now (waiters do not count: a writer changes
    /// a row only once it holds the lock). Never waits; the bucket's mutex may be taken under a
    /// page latch, as a try-lock's is. [`crate::txn::KvStore`]'s auto-commit read asks this under
    /// the leaf latch: no holder means the row on the leaf is committed.
    ///
    /// When no key of the bucket is held exclusive (its count is zero, the common case) this
    /// answers from that count alone, without the bucket's mutex: one read of a line that
    /// only grants and releases of exclusive locks write. The answer is as good as the mutex's
    /// for the reader's purpose. A writer counts its hold (under the mutex) before it changes
    /// any row, and it changes a row only under the leaf's exclusive latch. So a reader that
    /// saw the change, having taken the leaf latch or read its version after the writer left
    /// it, sees the count raised, or lowered again only by the release after the commit (when
    /// the row it saw is committed). A change the reader did not see happens after its copy,
    /// and its validation or its latch catches it.
    #[must_use]
    pub fn is_held_exclusive(&self, hash: u64, tree: TreeId, key: &[u8]) -> bool {
        if self.exclusive_holds(hash).load(Ordering::Acquire) == 0 {
            return false;
        }
        let entries = self.bucket(hash).entries.lock();
        entries.get(hash, tree, key).is_some_and(|entry| {
            entry
                .holders
                .iter()
                .any(|(_, mode)| *mode == Mode::Exclusive)
        })
    }

    /// Takes the lock, waiting for conflicting holders.
    ///
    /// # Errors
    /// [`Error::Conflict`] when this request closes a wait-for cycle (deadlock victim) or
    /// waits longer than the timeout.
    pub fn lock(&self, txn: TxnId, tree: TreeId, key: &[u8], mode: Mode) -> Result<()> {
        self.lock_hashed(txn, self.hash(tree, key), tree, key, mode)
    }

    /// [`LockManager::lock`] with the key's [`LockManager::hash`] already computed.
    ///
    /// # Errors
    /// As [`LockManager::lock`].
    pub fn lock_hashed(
        &self,
        txn: TxnId,
        hash: u64,
        tree: TreeId,
        key: &[u8],
        mode: Mode,
    ) -> Result<()> {
        let bucket = self.bucket(hash);
        let mut entries = bucket.entries.lock();
        let entry = entries.find_or_add(hash, tree, key);
        if !entry.is_blocked(txn, mode) {
            self.grant(hash, entry, txn, mode);
            return Ok(());
        }
        self.wait_for_lock(bucket, entries, txn, hash, (tree, key), mode)
    }

    /// The slow path of [`LockManager::lock_hashed`]: records the wait, checks for a deadlock,
    /// sleeps on the bucket, and looks again until granted, victim or timed out.
    fn wait_for_lock(
        &self,
        bucket: &Bucket,
        mut entries: MutexGuard<'_, Entries>,
        txn: TxnId,
        hash: u64,
        (tree, key): (TreeId, &[u8]),
        mode: Mode,
    ) -> Result<()> {
        let wait_began = Instant::now();
        let deadline = wait_began + self.timeout;
        self.stats.lock().waits += 1;
        // Bound: the deadline (each round sleeps at most WAIT_SLICE or until woken).
        loop {
            let entry = entries.find_or_add(hash, tree, key);
            let blockers = entry.blockers(txn, mode);
            if blockers.is_empty() {
                self.grant(hash, entry, txn, mode);
                entry.exclusive_waiters.retain(|w| *w != txn);
                self.waits_for.lock().remove(&txn);
                self.count_wait(wait_began);
                return Ok(());
            }
            if mode == Mode::Exclusive && !entry.exclusive_waiters.contains(&txn) {
                entry.exclusive_waiters.push(txn);
            }
            if self.closes_cycle(txn, blockers) {
                self.stats.lock().deadlocks += 1;
                self.count_wait(wait_began);
                self.give_up(bucket, &mut entries, txn, hash, (tree, key));
                return Err(Error::Conflict(format!(
                    "deadlock: transaction {txn} chosen as the victim"
                )));
            }
            let now = Instant::now();
            if now >= deadline {
                self.stats.lock().timeouts += 1;
                self.count_wait(wait_began);
                self.give_up(bucket, &mut entries, txn, hash, (tree, key));
                return Err(Error::Conflict(format!(
                    "lock wait timeout after {:?} (transaction {txn})",
                    self.timeout
                )));
            }
            entry.waiting += 1;
            let _ = bucket
                .waiters
                .wait_for(&mut entries, (deadline - now).min(WAIT_SLICE));
            // The entry stayed this key's: it was not vacant while this request waited. It may
            // fall vacant now (its holders and exclusive waiters gone); the next round's
            // `find_or_add` takes it, or another, again.
            entries.change(hash, tree, key, |entry| entry.waiting -= 1);
        }
    }

    /// Adds the time since `began` (a request's first wait) to the wait total.
    fn count_wait(&self, began: Instant) {
        let waited = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mut stats = self.stats.lock();
        stats.wait_ns = stats.wait_ns.saturating_add(waited);
    }

    /// Withdraws a failed request of `txn`: its wait-for edges and its place among the
    /// exclusive waiters (readers queued behind it may go now).
    fn give_up(
        &self,
        bucket: &Bucket,
        entries: &mut Entries,
        txn: TxnId,
        hash: u64,
        (tree, key): (TreeId, &[u8]),
    ) {
        self.waits_for.lock().remove(&txn);
        entries.change(hash, tree, key, |entry| {
            let before = entry.exclusive_waiters.len();
            entry.exclusive_waiters.retain(|w| *w != txn);
            if entry.exclusive_waiters.len() < before && entry.waiting > 0 {
                bucket.waiters.notify_all();
            }
        });
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

    /// Releases `txn`'s lock on one key (hashed by [`LockManager::hash`]) and wakes the
    /// bucket's waiters if the key has any.
    pub fn release(&self, txn: TxnId, hash: u64, tree: TreeId, key: &[u8]) {
        let bucket = self.bucket(hash);
        let mut entries = bucket.entries.lock();
        let wake = entries
            .change(hash, tree, key, |entry| {
                if entry.holders.remove(txn) == Some(Mode::Exclusive) {
                    let before = self.exclusive_holds(hash).fetch_sub(1, Ordering::Release);
                    debug_assert!(
                        before > 0,
                        "an exclusive hold released that was never counted"
                    );
                }
                entry.waiting > 0
            })
            .unwrap_or(false);
        drop(entries);
        if wake {
            bucket.waiters.notify_all();
        }
    }

    /// Releases every lock in `held` (taken by `txn`) and wakes their waiters.
    pub fn release_all(&self, txn: TxnId, held: &HeldLocks) {
        for lock in held.iter() {
            self.release(txn, lock.hash, lock.tree, lock.key);
        }
    }
}

/// One lock a transaction holds, as [`HeldLocks::iter`] yields it.
#[derive(Debug, Clone, Copy)]
pub struct HeldLock<'a> {
    /// The key's [`LockManager::hash`].
    pub hash: u64,
    /// The tree.
    pub tree: TreeId,
    /// The key.
    pub key: &'a [u8],
    /// The mode held.
    pub mode: Mode,
}

#[derive(Debug, Clone, Copy)]
struct HeldSlot {
    hash: u64,
    tree: TreeId,
    mode: Mode,
    key_start: usize,
    key_end: usize,
}

/// Up to this many held locks are looked up by a linear scan; beyond it through an index.
const LINEAR_HELD: usize = 16;
/// An empty index slot.
const NO_SLOT: u32 = u32::MAX;
/// Largest held-lock count whose buffers go back to the thread's spare for reuse.
const SPARE_MAX_LOCKS: usize = 4096;
/// Largest key arena that goes back to the thread's spare for reuse.
const SPARE_MAX_KEY_BYTES: usize = 256 << 10;

thread_local! {
    static SPARE: std::cell::Cell<Option<HeldLocks>> = const { std::cell::Cell::new(None) };
}

/// The locks one transaction holds: their hashes, trees, modes and keys (in one byte arena),
/// with an open-addressing index once there are more than a few. Its buffers are reused:
/// [`HeldLocks::take_spare`] takes the calling thread's spare, [`HeldLocks::recycle`] gives
/// them back, so a thread's transactions allocate nothing for their locks once warm.
#[derive(Debug, Default)]
pub struct HeldLocks {
    slots: Vec<HeldSlot>,
    keys: Vec<u8>,
    /// Power-of-two table of positions in `slots` ([`NO_SLOT`]: empty); empty while
    /// `slots.len() <= LINEAR_HELD`.
    index: Vec<u32>,
}

impl HeldLocks {
    /// The calling thread's spare (empty, with its buffers' capacity), or a new one.
    #[must_use]
    pub fn take_spare() -> HeldLocks {
        crate::spare::take(&SPARE)
    }

    /// Empties this and keeps its buffers as the calling thread's spare (not when it grew
    /// past 4096 locks or 256 KiB of keys: a huge transaction's buffers are freed; nor while
    /// the thread is exiting).
    pub fn recycle(mut self) {
        if self.slots.capacity() > SPARE_MAX_LOCKS || self.keys.capacity() > SPARE_MAX_KEY_BYTES {
            return;
        }
        self.clear();
        crate::spare::keep(&SPARE, self);
    }

    /// Number of locks held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no lock is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Forgets every lock (the buffers stay).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.keys.clear();
        self.index.clear();
    }

    /// The mode held on a key (`hash` is its [`LockManager::hash`]), if any.
    #[must_use]
    pub fn mode(&self, hash: u64, tree: TreeId, key: &[u8]) -> Option<Mode> {
        self.held_at(hash, tree, key).map(|(_, mode)| mode)
    }

    /// Where the key is held (`hash` is its [`LockManager::hash`]) and in which mode, if it
    /// is: `at` for [`HeldLocks::raise`].
    #[must_use]
    pub fn held_at(&self, hash: u64, tree: TreeId, key: &[u8]) -> Option<(usize, Mode)> {
        self.position(hash, tree, key)
            .map(|at| (at, self.slots[at].mode))
    }

    /// Raises the mode of the lock [`HeldLocks::held_at`] found at `at` (the set unchanged
    /// since).
    pub fn raise(&mut self, at: usize, mode: Mode) {
        let slot = &mut self.slots[at];
        slot.mode = slot.mode.max(mode);
    }

    /// Records that the key is held in `mode` (raising the mode of a key already held).
    pub fn insert(&mut self, hash: u64, tree: TreeId, key: &[u8], mode: Mode) {
        match self.position(hash, tree, key) {
            Some(at) => self.raise(at, mode),
            None => self.insert_absent(hash, tree, key, mode),
        }
    }

    /// Records a key not held yet (as [`HeldLocks::held_at`] found it) in `mode`: one lookup
    /// fewer than [`HeldLocks::insert`].
    pub fn insert_absent(&mut self, hash: u64, tree: TreeId, key: &[u8], mode: Mode) {
        debug_assert!(
            self.position(hash, tree, key).is_none(),
            "insert_absent of a key already held"
        );
        let key_start = self.keys.len();
        self.keys.extend_from_slice(key);
        self.slots.push(HeldSlot {
            hash,
            tree,
            mode,
            key_start,
            key_end: self.keys.len(),
        });
        let count = self.slots.len();
        if count > LINEAR_HELD {
            if self.index.len() < count * 2 {
                self.rebuild_index();
            } else {
                self.index_insert(count - 1);
            }
        }
    }

    /// The locks held.
    pub fn iter(&self) -> impl Iterator<Item = HeldLock<'_>> {
        self.slots.iter().map(|slot| HeldLock {
            hash: slot.hash,
            tree: slot.tree,
            key: &self.keys[slot.key_start..slot.key_end],
            mode: slot.mode,
        })
    }

    fn is_at(&self, at: usize, hash: u64, tree: TreeId, key: &[u8]) -> bool {
        let slot = &self.slots[at];
        slot.hash == hash && slot.tree == tree && &self.keys[slot.key_start..slot.key_end] == key
    }

    fn position(&self, hash: u64, tree: TreeId, key: &[u8]) -> Option<usize> {
        if self.index.is_empty() {
            return (0..self.slots.len()).find(|at| self.is_at(*at, hash, tree, key));
        }
        let mask = self.index.len() - 1;
        let mut probe = (hash >> 32) as usize & mask;
        // Bound: the index is at most half full, so a probe meets an empty slot.
        loop {
            match self.index[probe] {
                NO_SLOT => return None,
                at if self.is_at(at as usize, hash, tree, key) => return Some(at as usize),
                _ => probe = (probe + 1) & mask,
            }
        }
    }

    fn index_insert(&mut self, at: usize) {
        let mask = self.index.len() - 1;
        let mut probe = (self.slots[at].hash >> 32) as usize & mask;
        // Bound: the index is at most half full.
        while self.index[probe] != NO_SLOT {
            probe = (probe + 1) & mask;
        }
        self.index[probe] = u32::try_from(at).unwrap_or(NO_SLOT - 1);
    }

    fn rebuild_index(&mut self) {
        let size = (self.slots.len() * 4).next_power_of_two();
        self.index.clear();
        self.index.resize(size, NO_SLOT);
        for at in 0..self.slots.len() {
            self.index_insert(at);
        }
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_bucket_fits_four_cache_lines() {
        // The first entry is read on the bucket's own lines; a change that grows the bucket
        // past four lines makes the table a third larger.
        assert!(
            std::mem::size_of::<Bucket>() <= 256,
            "bucket of {} bytes",
            std::mem::size_of::<Bucket>()
        );
    }

    fn held(locks: &LockManager, keys: &[&[u8]]) -> HeldLocks {
        let mut held = HeldLocks::default();
        for key in keys {
            held.insert(locks.hash(0, key), 0, key, Mode::Exclusive);
        }
        held
    }

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
        locks.release_all(1, &held(&locks, &[b"k"]));
        locks.release_all(2, &held(&locks, &[b"k"]));
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
            other.release_all(1, &held(&other, &[b"a", b"b"]));
            result.is_ok()
        });
        std::thread::sleep(Duration::from_millis(50));
        let second = locks.lock(2, 0, b"a", Mode::Exclusive);
        if second.is_err() {
            locks.release_all(2, &held(&locks, &[b"b"]));
        } else {
            locks.release_all(2, &held(&locks, &[b"a", b"b"]));
        }
        let first_ok = waiter.join().unwrap();
        assert!(
            first_ok != second.is_ok(),
            "exactly one of the two is the victim"
        );
        assert_eq!(locks.stats().deadlocks, 1);
    }

    #[test]
    fn colliding_keys_never_wait_for_each_other() {
        // One bucket: every key collides. Crossed exclusive requests on distinct keys are
        // neither a wait nor a deadlock.
        let locks = LockManager::with_buckets(Duration::from_millis(50), 1);
        locks.lock(1, 0, b"a", Mode::Exclusive).unwrap();
        locks.lock(2, 0, b"b", Mode::Exclusive).unwrap();
        locks.lock(1, 0, b"c", Mode::Exclusive).unwrap();
        locks.lock(2, 0, b"d", Mode::Exclusive).unwrap();
        locks.lock(2, 1, b"a", Mode::Exclusive).unwrap();
        assert_eq!(locks.try_lock(2, 0, b"a", Mode::Shared), TryLock::Busy);
        let stats = locks.stats();
        assert_eq!((stats.waits, stats.deadlocks), (0, 0));
        locks.release_all(1, &held(&locks, &[b"a", b"c"]));
        assert_eq!(locks.try_lock(2, 0, b"a", Mode::Shared), TryLock::Granted);
    }

    /// Checks every bucket's exclusive-hold count against its entries.
    fn assert_counts(locks: &LockManager) {
        for (n, (bucket, counted)) in locks
            .buckets
            .iter()
            .zip(locks.exclusive_holds.iter())
            .enumerate()
        {
            let entries = bucket.entries.lock();
            let exact = entries
                .iter()
                .flat_map(|entry| entry.holders.iter())
                .filter(|(_, mode)| *mode == Mode::Exclusive)
                .count();
            assert_eq!(
                counted.load(Ordering::Acquire) as usize,
                exact,
                "bucket {n}: counted exclusive holds against its entries"
            );
        }
    }

    #[test]
    fn exclusive_holds_are_counted_through_grants_upgrades_and_releases() {
        // One bucket: every key collides, so the count covers several keys at once.
        let locks = LockManager::with_buckets(Duration::from_millis(30), 1);
        let hash = |key: &[u8]| locks.hash(0, key);
        let probe = |key: &[u8]| locks.is_held_exclusive(hash(key), 0, key);
        locks.lock(1, 0, b"a", Mode::Shared).unwrap();
        locks.lock(2, 0, b"a", Mode::Shared).unwrap();
        assert_counts(&locks);
        assert!(!probe(b"a"), "shared holders only");
        assert_eq!(
            locks.try_lock(3, 0, b"b", Mode::Exclusive),
            TryLock::Granted
        );
        assert_eq!(
            locks.try_lock(3, 0, b"b", Mode::Exclusive),
            TryLock::Granted
        );
        assert_counts(&locks);
        assert!(probe(b"b"));
        assert!(
            !probe(b"a"),
            "the count is raised by b, the exact answer for a stays no"
        );
        locks.release(2, hash(b"a"), 0, b"a");
        locks.lock(1, 0, b"a", Mode::Exclusive).unwrap();
        assert_counts(&locks);
        assert!(probe(b"a"), "an upgrade makes an exclusive holder");
        locks.lock(1, 0, b"a", Mode::Shared).unwrap();
        assert_counts(&locks);
        assert!(probe(b"a"), "a shared request keeps the exclusive hold");
        locks.release(1, hash(b"a"), 0, b"a");
        assert_counts(&locks);
        assert!(!probe(b"a") && probe(b"b"));
        locks.release(3, hash(b"b"), 0, b"b");
        locks.release(3, hash(b"b"), 0, b"b");
        locks.release(9, hash(b"c"), 0, b"c");
        assert_counts(&locks);
        assert_eq!(locks.exclusive_holds[0].load(Ordering::Acquire), 0);
        assert!(!probe(b"a") && !probe(b"b"));
    }

    #[test]
    fn entries_past_the_first_leave_when_they_fall_vacant_and_keep_the_capacity() {
        let locks = LockManager::with_buckets(Duration::from_millis(30), 1);
        let keys: Vec<[u8; 4]> = (0u32..8).map(u32::to_be_bytes).collect();
        let mut held = HeldLocks::default();
        for key in &keys {
            locks.lock(1, 0, key, Mode::Exclusive).unwrap();
            held.insert(locks.hash(0, key), 0, key, Mode::Exclusive);
        }
        // A shared request that times out behind the writer leaves no entry behind either.
        assert!(locks.lock(2, 0, &keys[5], Mode::Shared).is_err());
        assert_eq!(locks.buckets[0].entries.lock().more.len(), 7);
        locks.release(1, locks.hash(0, &keys[3]), 0, &keys[3]);
        {
            let entries = locks.buckets[0].entries.lock();
            assert_eq!(entries.more.len(), 6, "the vacated entry left");
            assert!(entries.is_trimmed());
        }
        for key in &keys {
            assert_eq!(
                locks.try_lock(3, 0, key, Mode::Shared),
                if key == &keys[3] {
                    TryLock::Granted
                } else {
                    TryLock::Busy
                },
                "every other key still held, found after the reorder"
            );
        }
        locks.release_all(1, &held);
        locks.release(3, locks.hash(0, &keys[3]), 0, &keys[3]);
        let entries = locks.buckets[0].entries.lock();
        assert!(entries.more.is_empty() && entries.more.capacity() >= 7);
        assert!(entries.first.is_vacant());
        drop(entries);
        assert_counts(&locks);
    }

    #[test]
    fn exclusive_holds_granted_after_a_wait_are_counted() {
        let locks = Arc::new(LockManager::with_buckets(Duration::from_secs(10), 4));
        locks.lock(1, 0, b"k", Mode::Shared).unwrap();
        let waiter = {
            let locks = Arc::clone(&locks);
            std::thread::spawn(move || locks.lock(2, 0, b"k", Mode::Exclusive))
        };
        while locks.stats().waits == 0 {
            std::thread::yield_now();
        }
        locks.release(1, locks.hash(0, b"k"), 0, b"k");
        waiter.join().unwrap().unwrap();
        assert_counts(&locks);
        assert!(locks.is_held_exclusive(locks.hash(0, b"k"), 0, b"k"));
        locks.release(2, locks.hash(0, b"k"), 0, b"k");
        assert_counts(&locks);
        assert!(!locks.is_held_exclusive(locks.hash(0, b"k"), 0, b"k"));
    }

    #[test]
    fn an_upgrade_waits_for_the_other_readers_and_keeps_its_entry() {
        let locks = LockManager::with_buckets(Duration::from_millis(30), 1);
        locks.lock(1, 0, b"k", Mode::Shared).unwrap();
        locks.lock(2, 0, b"k", Mode::Shared).unwrap();
        assert!(locks.lock(1, 0, b"k", Mode::Exclusive).is_err());
        let mut two = HeldLocks::default();
        two.insert(locks.hash(0, b"k"), 0, b"k", Mode::Shared);
        locks.release_all(2, &two);
        locks.lock(1, 0, b"k", Mode::Exclusive).unwrap();
        assert_eq!(locks.try_lock(2, 0, b"k", Mode::Shared), TryLock::Busy);
    }

    #[test]
    fn held_locks_find_every_key_past_the_linear_scan() {
        let locks = LockManager::new(Duration::from_millis(10));
        let mut held = HeldLocks::default();
        let keys: Vec<Vec<u8>> = (0u32..200).map(|n| n.to_be_bytes().to_vec()).collect();
        for (n, key) in keys.iter().enumerate() {
            let mode = if n % 3 == 0 {
                Mode::Exclusive
            } else {
                Mode::Shared
            };
            held.insert(locks.hash(7, key), 7, key, mode);
            held.insert(locks.hash(7, key), 7, key, Mode::Shared);
        }
        assert_eq!(held.len(), 200);
        for (n, key) in keys.iter().enumerate() {
            let expected = if n % 3 == 0 {
                Mode::Exclusive
            } else {
                Mode::Shared
            };
            assert_eq!(held.mode(locks.hash(7, key), 7, key), Some(expected));
            assert_eq!(held.mode(locks.hash(8, key), 8, key), None);
        }
        assert_eq!(held.iter().count(), 200);
        held.clear();
        assert!(held.is_empty());
        assert_eq!(held.mode(locks.hash(7, &keys[0]), 7, &keys[0]), None);
    }

    #[test]
    fn holders_keep_the_first_inside_and_each_transaction_once() {
        let mut holders = Holders::default();
        assert!(holders.is_empty());
        for txn in 1..=4 {
            holders.push((txn, Mode::Shared));
        }
        holders.remove(1);
        holders.remove(9);
        let mut left: Vec<TxnId> = holders.iter().map(|(txn, _)| *txn).collect();
        left.sort_unstable();
        assert_eq!(left, [2, 3, 4]);
        for txn in [3, 2, 4] {
            holders.remove(txn);
        }
        assert!(holders.is_empty() && holders.more.is_empty());
    }

    #[test]
    fn keys_around_the_inline_size_lock_exactly() {
        let locks = LockManager::with_buckets(Duration::from_millis(10), 1);
        let base = [7u8; INLINE_KEY + 8];
        for len in [
            0,
            1,
            INLINE_KEY - 1,
            INLINE_KEY,
            INLINE_KEY + 1,
            INLINE_KEY + 8,
        ] {
            locks.lock(1, 0, &base[..len], Mode::Exclusive).unwrap();
        }
        for len in [
            0,
            1,
            INLINE_KEY - 1,
            INLINE_KEY,
            INLINE_KEY + 1,
            INLINE_KEY + 8,
        ] {
            let key = &base[..len];
            assert_eq!(
                locks.try_lock(2, 0, key, Mode::Shared),
                TryLock::Busy,
                "{len}"
            );
            let mut other = base;
            other[len.saturating_sub(1)] = 8;
            let differs = &other[..len];
            if len > 0 {
                assert_eq!(
                    locks.try_lock(2, 0, differs, Mode::Shared),
                    TryLock::Granted
                );
            }
        }
        let all: Vec<&[u8]> = [
            0,
            1,
            INLINE_KEY - 1,
            INLINE_KEY,
            INLINE_KEY + 1,
            INLINE_KEY + 8,
        ]
        .iter()
        .map(|len| &base[..*len])
        .collect();
        locks.release_all(1, &held(&locks, &all));
        // A vacated long entry is reused for a short key and the other way round.
        locks
            .lock(3, 0, &base[..INLINE_KEY + 8], Mode::Exclusive)
            .unwrap();
        assert_eq!(
            locks.try_lock(4, 0, &base[..INLINE_KEY + 8], Mode::Shared),
            TryLock::Busy
        );
        assert_eq!(
            locks.try_lock(4, 0, &base[..2], Mode::Exclusive),
            TryLock::Granted
        );
    }
}
