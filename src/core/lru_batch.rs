//! One instance's background LRU batch as MySQL 5.6's `buf_LRU_get_free_block` sees it
//! (`buf0lru.cc`, `buf0flu.cc` of 5.6.26, the LRU-C prototype's host; docs/algorithms.md,
//! "The host's miss loop: 5.6 or 5.7").
//!
//! - `init_flush[BUF_FLUSH_LRU]`: set while the page cleaner scans the LRU tail and hands the
//!   dirty pages it found to the write path (`buf_flush_start` .. `buf_flush_end`);
//! - `no_flush[BUF_FLUSH_LRU]`: the event that fires once the batch's last write has
//!   completed.
//!
//! A 5.6 query thread that finds the free list empty while `init_flush` is set waits for the
//! event (`buf_flush_wait_batch_end`) instead of scanning or flushing a page itself, then
//! starts its loop again. `try_lru_scan` is 5.6's `buf_pool->try_LRU_scan`: cleared when a
//! thread's first tail scan finds nothing clean, so the next threads skip that scan and go
//! straight to a single-page flush; set again when a batch of this instance ends.
//!
//! The state's mutex is a leaf: nothing else is taken while it is held, and it is never held
//! across I/O. Invariant: `initialising` implies `running`.

use std::time::Duration;

use crate::sync::{AtomicBool, Condvar, Mutex, Ordering};

/// A waiter looks at the batch again at least this often (a wake-up is never needed for
/// progress, only for promptness; the build's condition variable may wake spuriously).
const RECHECK: Duration = Duration::from_millis(50);

#[derive(Debug, Default)]
struct BatchState {
    /// The cleaner is scanning and dispatching (`init_flush`).
    initialising: bool,
    /// The batch's writes are not all complete.
    running: bool,
}

/// One instance's LRU batch state and the event its waiters sleep on.
#[derive(Debug)]
pub struct LruBatch {
    state: Mutex<BatchState>,
    ended: Condvar,
    try_lru_scan: AtomicBool,
}

impl Default for LruBatch {
    fn default() -> Self {
        LruBatch {
            state: Mutex::new(BatchState::default()),
            ended: Condvar::new(),
            try_lru_scan: AtomicBool::new(true),
        }
    }
}

/// A running batch; dropping it ends the batch and wakes its waiters.
#[derive(Debug)]
#[must_use = "dropping the guard ends the batch"]
pub struct RunningBatch<'a> {
    batch: &'a LruBatch,
}

impl LruBatch {
    /// Starts a batch. One cleaner thread serves an instance, so its batches never overlap;
    /// should a second caller start one while a batch runs, it waits for that batch to end
    /// (5.6's `buf_flush_start` refuses a second batch of a type while one runs).
    pub fn begin(&self) -> RunningBatch<'_> {
        let mut state = self.state.lock();
        // Bound: the running batch's guard ends it.
        while state.running {
            let _ = self.ended.wait_for(&mut state, RECHECK);
        }
        state.initialising = true;
        state.running = true;
        RunningBatch { batch: self }
    }

    /// If a batch is initialising, waits until its writes are done and returns `true`;
    /// otherwise returns `false` at once.
    pub fn wait_if_initialising(&self) -> bool {
        let mut state = self.state.lock();
        if !state.initialising {
            return false;
        }
        // Bound: the cleaner ends every batch it begins (the guard's drop).
        while state.running {
            let _ = self.ended.wait_for(&mut state, RECHECK);
        }
        true
    }

    /// 5.6's `try_LRU_scan`: whether a first-iteration tail scan is worth trying.
    #[must_use]
    pub fn try_lru_scan(&self) -> bool {
        self.try_lru_scan.load(Ordering::Acquire)
    }

    /// A first-iteration tail scan found nothing clean: the next threads skip theirs.
    pub fn scan_found_nothing(&self) {
        self.try_lru_scan.store(false, Ordering::Release);
    }

    /// A batch of this instance (LRU or flush list) ended: scans are worth trying again.
    pub fn batch_ended(&self) {
        self.try_lru_scan.store(true, Ordering::Release);
    }
}

impl RunningBatch<'_> {
    /// The scan is over and the pages are with the write path (`buf_flush_end`): threads that
    /// find the free list empty from now on scan or flush for themselves again.
    pub fn dispatched(&self) {
        self.batch.state.lock().initialising = false;
    }
}

impl Drop for RunningBatch<'_> {
    fn drop(&mut self) {
        let mut state = self.batch.state.lock();
        state.initialising = false;
        state.running = false;
        drop(state);
        self.batch.batch_ended();
        self.batch.ended.notify_all();
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn no_wait_without_a_batch_or_once_dispatched() {
        let batch = LruBatch::default();
        assert!(!batch.wait_if_initialising());
        let running = batch.begin();
        running.dispatched();
        assert!(!batch.wait_if_initialising());
        drop(running);
        assert!(!batch.wait_if_initialising());
    }

    #[test]
    fn a_waiter_sleeps_until_the_batch_ends() {
        let batch = Arc::new(LruBatch::default());
        let running = batch.begin();
        let (ready, is_ready) = std::sync::mpsc::channel();
        let waiter = {
            let batch = Arc::clone(&batch);
            std::thread::spawn(move || {
                // The clock starts before the test is told, so the wait measured covers the
                // test's 30 ms however late this thread runs.
                let began = std::time::Instant::now();
                ready.send(()).unwrap();
                assert!(batch.wait_if_initialising());
                began.elapsed()
            })
        };
        is_ready.recv().unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert!(!waiter.is_finished());
        drop(running);
        assert!(waiter.join().unwrap() >= Duration::from_millis(30));
    }

    #[test]
    fn dispatching_keeps_the_batch_running() {
        let batch = LruBatch::default();
        let running = batch.begin();
        running.dispatched();
        assert!(batch.state.lock().running);
        drop(running);
        assert!(!batch.state.lock().running);
    }

    #[test]
    fn try_lru_scan_is_cleared_by_a_failed_scan_and_set_by_a_batch() {
        let batch = LruBatch::default();
        assert!(batch.try_lru_scan());
        batch.scan_found_nothing();
        assert!(!batch.try_lru_scan());
        drop(batch.begin());
        assert!(batch.try_lru_scan());
    }
}
