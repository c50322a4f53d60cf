//! Ctrl-C during `flashbuf bench`, `sweep` and `reproduce` (issue 13, item 2; issue 18): the
//! first SIGINT sets a flag that the harness polls; the current scheme stops and is reported as
//! interrupted (its partial measurement is discarded, not mislabelled as a full run), the
//! remaining schemes are skipped, and the command still prints and writes the finished schemes'
//! results.
//!
//! **One Ctrl-C can arrive as two signals.** `timeout -s INT`, a supervisor that signals the
//! process and then its process group, or a terminal and a wrapper that forwards the signal
//! all deliver SIGINT twice within microseconds. The handler used to be installed with
//! `SA_RESETHAND`, so whether the copy found the handler or the default action (end the
//! process: no table, no report.html) depended on whether the first copy had been handled yet
//! — about one run in nine lost everything that had finished. Now the handler stays installed:
//! a SIGINT within [`REPEAT_GRACE`] of the first is the same Ctrl-C and changes nothing; one
//! later is a deliberate second Ctrl-C and ends the process at once (exit code 130).
//!
//! The handler only reads the monotonic clock, does atomic operations and, on the second
//! Ctrl-C, `write` and `_exit` (all async-signal-safe). `SA_RESTART` keeps system calls of
//! other threads from failing with `EINTR` because of it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Monotonic time of the first SIGINT in nanoseconds (0: none yet).
static FIRST_NS: AtomicU64 = AtomicU64::new(0);

/// SIGINTs closer than this to the first one are copies of the same Ctrl-C.
pub const REPEAT_GRACE: Duration = Duration::from_secs(1);

const SECOND_CTRL_C: &[u8] = b"\nflashbuf: second Ctrl-C: stopping now, without the results\n";

/// `CLOCK_MONOTONIC` in nanoseconds, at least 1 (async-signal-safe).
fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given; it is async-signal-safe.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut now);
    }
    let ns = u64::try_from(now.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(now.tv_nsec).unwrap_or(0));
    ns.max(1)
}

extern "C" fn on_sigint(_signal: libc::c_int) {
    let now = monotonic_ns();
    match FIRST_NS.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => INTERRUPTED.store(true, Ordering::SeqCst),
        Err(first) if is_second_ctrl_c(first, now) => {
            // SAFETY: write and _exit are async-signal-safe; the buffer outlives the call.
            unsafe {
                libc::write(
                    libc::STDERR_FILENO,
                    SECOND_CTRL_C.as_ptr().cast(),
                    SECOND_CTRL_C.len(),
                );
                libc::_exit(130);
            }
        }
        Err(_) => {} // a copy of the first Ctrl-C
    }
}

/// Whether a SIGINT at `now_ns` is a deliberate second Ctrl-C after one at `first_ns`.
fn is_second_ctrl_c(first_ns: u64, now_ns: u64) -> bool {
    u128::from(now_ns.saturating_sub(first_ns)) >= REPEAT_GRACE.as_nanos()
}

/// Installs the handler (idempotent: a later call keeps what earlier SIGINTs recorded).
pub fn install() {
    // SAFETY: a zeroed sigaction is a valid starting value; the handler is an `extern "C"`
    // function that only does async-signal-safe work (see the module docs).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&raw mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &raw const action, std::ptr::null_mut());
    }
}

/// Whether Ctrl-C was pressed since the process started.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_within_the_grace_are_the_same_ctrl_c() {
        let first = 5_000_000_000;
        assert!(!is_second_ctrl_c(first, first));
        assert!(!is_second_ctrl_c(first, first + 999_999_999));
        assert!(is_second_ctrl_c(first, first + 1_000_000_000));
        assert!(!is_second_ctrl_c(first, first - 1)); // a clock that did not advance
    }
}
