//! Per-thread spares: the buffers that a thread's transactions, mini-transactions, scans and
//! row updates reuse from one call to the next, so that the steady state allocates nothing
//! (issue 20; allocations per transaction are measured by `examples/txn_cost.rs`, see
//! `docs/performance.md`, "Allocations per transaction").
//!
//! A spare lives in a `thread_local!` slot holding `Cell<Option<T>>`. [`take`] empties the
//! slot and returns what it held (or a new `T`), [`keep`] puts a value back. Invariants: a slot
//! holds at most one spare; a caller that takes while the slot is empty (nested use, or the
//! first use on a thread) gets a new `T`, and of two values kept the last one stays. While the
//! thread exits its slots are gone: `take` then makes a new `T` and `keep` drops the value.
//! Callers decide what is worth keeping (each caps the capacity it keeps, so that one huge
//! transaction does not pin its buffers for the thread's life).

use std::cell::Cell;
use std::thread::LocalKey;

/// A thread-local slot for one spare `T`.
pub type Slot<T> = LocalKey<Cell<Option<T>>>;

/// The calling thread's spare from `slot` (the slot is left empty), or a new `T`.
#[must_use]
pub fn take<T: Default>(slot: &'static Slot<T>) -> T {
    slot.try_with(Cell::take).ok().flatten().unwrap_or_default()
}

/// Keeps `value` as the calling thread's spare in `slot` (dropped while the thread exits).
pub fn keep<T>(slot: &'static Slot<T>, value: T) {
    // A destroyed slot (thread exit) drops `value` with the closure.
    let _ = slot.try_with(|spare| spare.set(Some(value)));
}

#[cfg(test)]
mod tests {
    use super::*;

    std::thread_local! {
        static SLOT: Cell<Option<Vec<u8>>> = const { Cell::new(None) };
    }

    #[test]
    fn a_kept_buffer_comes_back_with_its_capacity_and_a_nested_take_gets_a_new_one() {
        let mut outer = take(&SLOT);
        assert_eq!(
            outer.capacity(),
            0,
            "a thread's first take makes a new value"
        );
        outer.reserve(64);
        keep(&SLOT, outer);
        let again = take(&SLOT);
        assert!(again.capacity() >= 64, "the kept buffer comes back");
        let nested = take(&SLOT);
        assert_eq!(
            nested.capacity(),
            0,
            "the slot is empty while its spare is out"
        );
        keep(&SLOT, nested);
        keep(&SLOT, again);
        assert!(take(&SLOT).capacity() >= 64, "the last value kept stays");
    }

    #[test]
    fn spares_are_per_thread() {
        let mut buffer = take(&SLOT);
        buffer.reserve(32);
        keep(&SLOT, buffer);
        let other = std::thread::spawn(|| take(&SLOT).capacity())
            .join()
            .unwrap();
        assert_eq!(other, 0, "another thread does not see this thread's spare");
    }
}
