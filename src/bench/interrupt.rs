//! Ctrl-C during `flashbuf bench` (issue 13, item 2): the first SIGINT sets a flag that the
//! harness polls; the current scheme stops and is reported as interrupted (its partial
//! measurement is discarded, not mislabelled as a full run), the remaining schemes are skipped,
//! and the command still prints and writes the finished schemes' results. The handler is
//! installed with `SA_RESETHAND`, so a second Ctrl-C ends the process at once.
//!
//! The handler only stores to an atomic (async-signal-safe).

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_signal: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the handler (once per process; later calls reinstall it).
pub fn install() {
    // SAFETY: a zeroed sigaction is a valid starting value; the handler is an `extern "C"`
    // function that only performs an atomic store, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&raw mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &raw const action, std::ptr::null_mut());
    }
}

/// Whether Ctrl-C was pressed since the process started.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}
