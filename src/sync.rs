//! The synchronisation primitives of the buffer pool (core and policies), behind one facade.
//!
//! Normal builds use `parking_lot` and `std` atomics. With the `shuttle` feature (tests only:
//! `cargo test --release --features shuttle --test shuttle pool::`) every primitive here is
//! shuttle's, so the randomized-schedule model tests run the pool's real code: its latches,
//! pins, page table, list mutexes and condition variables, and the record lock manager's
//! bucket mutexes and condition variables (`txn::lock`, `tests/shuttle/lock.rs`). Other code
//! (devices, the log) keeps `parking_lot`: it never yields to the scheduler while holding a
//! lock, so it is safe under shuttle as a black box.
//!
//! The API is `parking_lot`'s: `lock()` returns the guard, `Condvar::wait_for` takes the guard
//! by `&mut`. [`Latch`] is a raw reader-writer lock (the page latch): shared, exclusive,
//! downgrade, with unlocking `unsafe` as in `lock_api`.

#[cfg(not(feature = "shuttle"))]
mod imp {
    use std::time::Duration;

    use lock_api::{RawRwLock as _, RawRwLockDowngrade as _};
    pub use parking_lot::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
    pub use std::sync::atomic::{
        AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
    };
    pub use std::thread::JoinHandle;

    /// A raw reader-writer latch.
    pub struct Latch(parking_lot::RawRwLock);

    impl Latch {
        /// An unlocked latch.
        #[must_use]
        pub const fn new() -> Self {
            Latch(<parking_lot::RawRwLock as lock_api::RawRwLock>::INIT)
        }
        /// Takes the latch shared.
        pub fn lock_shared(&self) {
            self.0.lock_shared();
        }
        /// Tries to take the latch shared.
        pub fn try_lock_shared(&self) -> bool {
            self.0.try_lock_shared()
        }
        /// Takes the latch exclusive.
        pub fn lock_exclusive(&self) {
            self.0.lock_exclusive();
        }
        /// Tries to take the latch exclusive.
        pub fn try_lock_exclusive(&self) -> bool {
            self.0.try_lock_exclusive()
        }
        /// Whether anyone holds the latch (for diagnostics only).
        pub fn is_locked(&self) -> bool {
            self.0.is_locked()
        }
        /// Releases a shared hold.
        ///
        /// # Safety
        /// The caller holds the latch shared.
        pub unsafe fn unlock_shared(&self) {
            // SAFETY: forwarded.
            unsafe { self.0.unlock_shared() }
        }
        /// Releases an exclusive hold.
        ///
        /// # Safety
        /// The caller holds the latch exclusive.
        pub unsafe fn unlock_exclusive(&self) {
            // SAFETY: forwarded.
            unsafe { self.0.unlock_exclusive() }
        }
        /// Turns an exclusive hold into a shared one without letting a writer in between.
        ///
        /// # Safety
        /// The caller holds the latch exclusive.
        pub unsafe fn downgrade(&self) {
            // SAFETY: forwarded.
            unsafe { self.0.downgrade() }
        }
    }

    /// Gives the processor to another thread.
    pub fn yield_now() {
        std::thread::yield_now();
    }

    /// Sleeps for `duration` (real time).
    pub fn sleep(duration: Duration) {
        std::thread::sleep(duration);
    }

    /// Starts a named thread.
    ///
    /// # Errors
    /// The OS refused the thread.
    pub fn spawn<F>(name: &str, body: F) -> std::io::Result<JoinHandle<()>>
    where
        F: FnOnce() + Send + 'static,
    {
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(body)
    }
}

#[cfg(feature = "shuttle")]
mod imp {
    #![allow(clippy::missing_panics_doc)]
    use std::ops::{Deref, DerefMut};
    use std::time::{Duration, Instant};

    pub use shuttle::sync::atomic::{
        AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
    };
    pub use shuttle::thread::JoinHandle;

    /// A mutex with `parking_lot`'s API over shuttle's.
    #[derive(Debug, Default)]
    pub struct Mutex<T>(shuttle::sync::Mutex<T>);

    /// The guard of [`Mutex`] (an `Option` so a condvar wait can take it and put it back).
    pub struct MutexGuard<'a, T>(Option<shuttle::sync::MutexGuard<'a, T>>);

    impl<T> Mutex<T> {
        /// A mutex holding `value`.
        pub fn new(value: T) -> Self {
            Mutex(shuttle::sync::Mutex::new(value))
        }
        /// Locks it.
        pub fn lock(&self) -> MutexGuard<'_, T> {
            MutexGuard(Some(
                self.0
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            ))
        }
        /// Locks it if free.
        pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
            self.0.try_lock().ok().map(|guard| MutexGuard(Some(guard)))
        }
    }

    impl<T> Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            match &self.0 {
                Some(guard) => guard,
                None => unreachable!("a guard is only empty inside a condvar wait"),
            }
        }
    }

    impl<T> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            match &mut self.0 {
                Some(guard) => guard,
                None => unreachable!("a guard is only empty inside a condvar wait"),
            }
        }
    }

    /// The result of a timed condvar wait.
    #[derive(Debug, Clone, Copy)]
    pub struct WaitTimeoutResult(bool);

    impl WaitTimeoutResult {
        /// Whether the wait ended by timeout (shuttle: possibly).
        #[must_use]
        pub fn timed_out(self) -> bool {
            self.0
        }
    }

    /// A condition variable with `parking_lot`'s API over shuttle's.
    #[derive(Debug, Default)]
    pub struct Condvar(shuttle::sync::Condvar);

    impl Condvar {
        /// A new condition variable.
        pub fn new() -> Self {
            Condvar(shuttle::sync::Condvar::new())
        }
        /// Waits for a notification or `timeout` (shuttle treats the timeout as a possible
        /// spurious wake-up).
        pub fn wait_for<T>(
            &self,
            guard: &mut MutexGuard<'_, T>,
            timeout: Duration,
        ) -> WaitTimeoutResult {
            let Some(inner) = guard.0.take() else {
                unreachable!("waited on an empty guard");
            };
            let (inner, result) = self
                .0
                .wait_timeout(inner, timeout)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            guard.0 = Some(inner);
            WaitTimeoutResult(result.timed_out())
        }
        /// Waits until `deadline` or a notification.
        pub fn wait_until<T>(
            &self,
            guard: &mut MutexGuard<'_, T>,
            deadline: Instant,
        ) -> WaitTimeoutResult {
            let timeout = deadline.saturating_duration_since(Instant::now());
            self.wait_for(guard, timeout)
        }
        /// Wakes one waiter.
        pub fn notify_one(&self) {
            self.0.notify_one();
        }
        /// Wakes every waiter.
        pub fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    /// A reader-writer lock with `parking_lot`'s API over shuttle's.
    #[derive(Debug, Default)]
    pub struct RwLock<T>(shuttle::sync::RwLock<T>);
    /// Shared guard of [`RwLock`].
    pub type RwLockReadGuard<'a, T> = shuttle::sync::RwLockReadGuard<'a, T>;
    /// Exclusive guard of [`RwLock`].
    pub type RwLockWriteGuard<'a, T> = shuttle::sync::RwLockWriteGuard<'a, T>;

    impl<T> RwLock<T> {
        /// A lock holding `value`.
        pub fn new(value: T) -> Self {
            RwLock(shuttle::sync::RwLock::new(value))
        }
        /// Locks it shared.
        pub fn read(&self) -> RwLockReadGuard<'_, T> {
            self.0
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }
        /// Locks it exclusive.
        pub fn write(&self) -> RwLockWriteGuard<'_, T> {
            self.0
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }
    }

    const EXCLUSIVE: u32 = u32::MAX;

    /// A raw reader-writer latch built on a shuttle atomic; waiting yields to the scheduler.
    pub struct Latch(AtomicU32);

    impl Latch {
        /// An unlocked latch.
        #[must_use]
        pub fn new() -> Self {
            Latch(AtomicU32::new(0))
        }
        /// Takes the latch shared.
        pub fn lock_shared(&self) {
            while !self.try_lock_shared() {
                shuttle::thread::yield_now();
            }
        }
        /// Tries to take the latch shared.
        pub fn try_lock_shared(&self) -> bool {
            let current = self.0.load(Ordering::SeqCst);
            current != EXCLUSIVE
                && self
                    .0
                    .compare_exchange(current, current + 1, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
        }
        /// Takes the latch exclusive.
        pub fn lock_exclusive(&self) {
            while !self.try_lock_exclusive() {
                shuttle::thread::yield_now();
            }
        }
        /// Tries to take the latch exclusive.
        pub fn try_lock_exclusive(&self) -> bool {
            self.0
                .compare_exchange(0, EXCLUSIVE, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        }
        /// Whether anyone holds the latch.
        pub fn is_locked(&self) -> bool {
            self.0.load(Ordering::SeqCst) != 0
        }
        /// Releases a shared hold.
        ///
        /// # Safety
        /// The caller holds the latch shared.
        pub unsafe fn unlock_shared(&self) {
            let before = self.0.fetch_sub(1, Ordering::SeqCst);
            assert!(
                before != 0 && before != EXCLUSIVE,
                "shared unlock of {before}"
            );
        }
        /// Releases an exclusive hold.
        ///
        /// # Safety
        /// The caller holds the latch exclusive.
        pub unsafe fn unlock_exclusive(&self) {
            let before = self.0.swap(0, Ordering::SeqCst);
            assert_eq!(before, EXCLUSIVE, "exclusive unlock of a latch not held so");
        }
        /// Turns an exclusive hold into a shared one.
        ///
        /// # Safety
        /// The caller holds the latch exclusive.
        pub unsafe fn downgrade(&self) {
            let before = self.0.swap(1, Ordering::SeqCst);
            assert_eq!(before, EXCLUSIVE, "downgrade of a latch not held exclusive");
        }
    }

    /// Gives the processor to another (shuttle) thread.
    pub fn yield_now() {
        shuttle::thread::yield_now();
    }

    /// Shuttle has no time: a sleep is a yield.
    pub fn sleep(_duration: Duration) {
        shuttle::thread::yield_now();
    }

    /// Starts a shuttle thread.
    ///
    /// # Errors
    /// Never (the signature matches the normal build).
    pub fn spawn<F>(_name: &str, body: F) -> std::io::Result<JoinHandle<()>>
    where
        F: FnOnce() + Send + 'static,
    {
        Ok(shuttle::thread::spawn(body))
    }
}

pub use imp::*;

impl Default for Latch {
    fn default() -> Self {
        Latch::new()
    }
}

/// A value alone on its cache lines, so that threads writing neighbouring values do not move
/// one line between their cores (false sharing). 128 bytes, not 64: x86's adjacent-line
/// prefetcher fetches lines in pairs. Not a primitive of the facade above: it pads whatever it
/// holds, under shuttle too.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct CacheLines<T>(pub T);

impl<T> std::ops::Deref for CacheLines<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
