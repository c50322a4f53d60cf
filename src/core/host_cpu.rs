//! The emulated host's CPU inside the list mutexes (docs/regime.md, "The LRU mutex's hold
//! time").
//!
//! The LRU-C paper's MySQL scanned up to `innodb_lru_scan_depth` (1,024) pages of an 81,920-frame
//! instance's LRU tail on a miss, holding the LRU mutex throughout, and blames the queue behind
//! those scans (RR-serialization, LRU-C §2.3 and §5.2.2) for part of every scheme's time. A
//! shrunk pool scans 28 times fewer pages per miss and a scaled clock makes each of them cheaper
//! again, so on this host the mutex costs the clients nothing. [`hold`] gives a scan back its
//! price: the caller, still holding the list's mutex, sleeps for the device time
//! `pages x list_scan_ns` (times the device's time scale), and the threads queueing on the mutex
//! wait behind it as they would behind a CPU-bound scan. A sleep, not a spin: on a 2-core host
//! a spinning holder would take a core from the threads the model is about.
//!
//! Invariant: over a thread's holds, the real time slept equals the time asked for to within
//! one oversleep (the host's wake-up lateness): each hold's oversleep is carried as credit and
//! taken off the next holds of the same thread, so that holds far shorter than the host's
//! wake-up lateness (a few microseconds against 50-100) still add up to their sum.

use std::time::Duration;

/// Largest oversleep carried to the next holds: beyond it the host was descheduled, not late.
#[cfg(not(feature = "shuttle"))]
const MAX_CREDIT: Duration = Duration::from_millis(5);

#[cfg(not(feature = "shuttle"))]
thread_local! {
    /// Real time this thread overslept in earlier holds and has not yet given back.
    static CREDIT: std::cell::Cell<Duration> = const { std::cell::Cell::new(Duration::ZERO) };
}

/// What a hold of `real` does with `credit` of earlier oversleep: `(sleep, credit left)`; the
/// sleep is `None` when the credit covers the whole hold.
#[cfg_attr(feature = "shuttle", allow(dead_code))]
fn plan(real: Duration, credit: Duration) -> (Option<Duration>, Duration) {
    match credit.checked_sub(real) {
        Some(left) => (None, left),
        None => (Some(real.saturating_sub(credit)), Duration::ZERO),
    }
}

/// Holds the calling thread for `real` (real time), minus the credit of its earlier oversleeps.
#[cfg(not(feature = "shuttle"))]
pub(crate) fn hold(real: Duration) {
    let (sleep, credit) = plan(real, CREDIT.get());
    CREDIT.set(credit);
    let Some(wanted) = sleep else {
        return;
    };
    let start = std::time::Instant::now();
    crate::device::ticket::sleep_until(start + wanted);
    let overslept = start.elapsed().saturating_sub(wanted);
    CREDIT.set(overslept.min(MAX_CREDIT));
}

/// Shuttle has no time: a hold is a yield (the mutex is still held across it).
#[cfg(feature = "shuttle")]
pub(crate) fn hold(_real: Duration) {
    crate::sync::yield_now();
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;
    use std::time::Instant;

    const US: Duration = Duration::from_micros(1);

    #[test]
    fn credit_pays_for_holds_until_it_runs_out() {
        assert_eq!(plan(5 * US, 12 * US), (None, 7 * US));
        assert_eq!(plan(7 * US, 7 * US), (None, Duration::ZERO));
        assert_eq!(plan(5 * US, 2 * US), (Some(3 * US), Duration::ZERO));
        assert_eq!(plan(5 * US, Duration::ZERO), (Some(5 * US), Duration::ZERO));
    }

    #[test]
    fn holds_never_add_up_to_less_than_asked_beyond_one_oversleep() {
        // 2,000 holds of 5 us, each far below the host's wake-up lateness: the credit makes
        // the whole last at least their sum: each oversleep pays only for later holds.
        let start = Instant::now();
        for _ in 0..2000 {
            hold(5 * US);
        }
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(10), "held {took:?} of 10 ms");
    }

    #[test]
    fn a_long_hold_lasts_at_least_its_time() {
        let start = Instant::now();
        hold(Duration::from_millis(3));
        assert!(start.elapsed() >= Duration::from_millis(3));
    }
}
