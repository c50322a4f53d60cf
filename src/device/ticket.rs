//! Completion tickets for asynchronous I/O.
//!
//! A ticket is either already complete (validation errors, RAM devices), complete at a known
//! instant (emulated devices compute the completion time at submission and the waiter sleeps
//! until then), or completed later through a shared [`Completion`]: by another thread (io_uring
//! reaper, thread pool), or by the waiter itself when the completion has a [`Driver`] (the file
//! device's per-thread rings: the waiter reaps the ring its request went to instead of sleeping
//! until a reaper thread wakes it).

use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

use crate::error::DeviceError;

/// What makes a pending [`Completion`] complete when nobody else does: the queue its request
/// went to, which any waiter may reap.
pub trait Driver: Send + Sync + std::fmt::Debug {
    /// Reaps completions (blocking while none has arrived) until `completion` is complete.
    fn drive(&self, completion: &Completion);
    /// Reaps what has already completed, without blocking.
    fn poll(&self);
}

/// A completion slot filled by another thread, or by its waiter through its [`Driver`].
#[derive(Debug, Default)]
pub struct Completion {
    result: Mutex<Option<Result<(), DeviceError>>>,
    ready: Condvar,
    /// The queue to reap while waiting (`None`: another thread completes it). Weak: a ticket
    /// kept after its device is gone must not keep the device's queues (and file) open; the
    /// device completes every request before it drops them.
    driver: Option<std::sync::Weak<dyn Driver>>,
}

impl Completion {
    /// A new, pending slot.
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::new(Completion::default())
    }

    /// A new, pending slot whose waiters reap `driver`.
    #[must_use]
    pub fn with_driver(driver: std::sync::Weak<dyn Driver>) -> Arc<Self> {
        Arc::new(Completion {
            driver: Some(driver),
            ..Completion::default()
        })
    }

    /// Fills the slot and wakes the waiter. Completing twice keeps the first result.
    pub fn complete(&self, result: Result<(), DeviceError>) {
        let mut slot = self.result.lock();
        if slot.is_none() {
            *slot = Some(result);
        }
        drop(slot);
        self.ready.notify_all();
    }

    /// Whether the result is in (never blocks, never reaps: what a [`Driver`] checks).
    #[must_use]
    pub fn has_result(&self) -> bool {
        self.result.lock().is_some()
    }

    /// Whether the result is in (never blocks; reaps what has arrived first, when driven).
    fn is_complete(&self) -> bool {
        if self.result.lock().is_some() {
            return true;
        }
        if let Some(driver) = self.driver.as_ref().and_then(std::sync::Weak::upgrade) {
            driver.poll();
        }
        self.result.lock().is_some()
    }

    fn wait(&self) -> Result<(), DeviceError> {
        if self.result.lock().is_none()
            && let Some(driver) = self.driver.as_ref().and_then(std::sync::Weak::upgrade)
        {
            driver.drive(self);
        }
        let mut slot = self.result.lock();
        loop {
            if let Some(result) = slot.as_ref() {
                return result.clone();
            }
            self.ready.wait(&mut slot);
        }
    }
}

#[derive(Debug)]
enum State {
    Done(Result<(), DeviceError>),
    At(Instant, Result<(), DeviceError>),
    Shared(Arc<Completion>),
}

/// The handle of one submitted request.
#[derive(Debug)]
#[must_use = "an I/O is complete only when its ticket says so"]
pub struct IoTicket {
    state: State,
}

impl IoTicket {
    /// A ticket already complete with `result`.
    pub fn done(result: Result<(), DeviceError>) -> Self {
        IoTicket {
            state: State::Done(result),
        }
    }

    /// A ticket that completes with `result` at `instant` (emulated devices).
    pub fn at(instant: Instant, result: Result<(), DeviceError>) -> Self {
        IoTicket {
            state: State::At(instant, result),
        }
    }

    /// A ticket completed by another thread through `completion`.
    pub fn shared(completion: Arc<Completion>) -> Self {
        IoTicket {
            state: State::Shared(completion),
        }
    }

    /// The instant this ticket completes, if it is known in advance.
    #[must_use]
    pub fn deadline(&self) -> Option<Instant> {
        match &self.state {
            State::At(instant, _) => Some(*instant),
            State::Done(_) | State::Shared(_) => None,
        }
    }

    /// Whether the request has completed (never blocks).
    #[must_use]
    pub fn is_complete(&self) -> bool {
        match &self.state {
            State::Done(_) => true,
            State::At(instant, _) => Instant::now() >= *instant,
            State::Shared(completion) => completion.is_complete(),
        }
    }

    /// Blocks until the request completes and returns its result.
    ///
    /// # Errors
    /// The request's device error.
    pub fn wait(self) -> Result<(), DeviceError> {
        match self.state {
            State::Done(result) => result,
            State::At(instant, result) => {
                sleep_until(instant);
                result
            }
            State::Shared(completion) => completion.wait(),
        }
    }
}

/// Waits for every ticket; returns the first error, after all have completed.
///
/// # Errors
/// The first failed request's error.
pub fn wait_all(tickets: impl IntoIterator<Item = IoTicket>) -> Result<(), DeviceError> {
    let mut first_error = None;
    for ticket in tickets {
        if let Err(err) = ticket.wait() {
            first_error.get_or_insert(err);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Sleeps until `instant`: how an emulated device's waiter reaches the modelled completion.
/// The calling thread's timer slack is tightened first ([`tight_timer`], once per thread), so
/// the overshoot is the host's scheduling delay alone, not the default 50 us of slack on top;
/// emulated devices scale time up so that what remains stays small in device time.
pub fn sleep_until(instant: Instant) {
    tight_timer();
    let now = Instant::now();
    if instant > now {
        std::thread::sleep(instant - now);
    }
}

thread_local! {
    /// Whether [`tight_timer`] already ran on this thread.
    static TIGHT_TIMER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Asks the kernel to wake the calling thread's timed sleeps on time (`PR_SET_TIMERSLACK` of
/// 1 ns): the default slack lets a sleep end up to 50 us late, so that every emulated
/// completion would come that much late in real time, and a time scale of 8-16 would turn it
/// into several microseconds of device time on 10-100 us I/Os. Once per thread (later calls
/// return at once); the slack is per thread and inherited by threads it spawns. Best effort: on
/// failure (or off Linux) the thread keeps the default slack.
pub fn tight_timer() {
    TIGHT_TIMER.with(|done| {
        if !done.replace(true) {
            set_timer_slack_ns(1);
        }
    });
}

#[cfg(target_os = "linux")]
fn set_timer_slack_ns(nanos: libc::c_ulong) {
    // SAFETY: PR_SET_TIMERSLACK only changes the calling thread's timer slack.
    let _ = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, nanos, 0, 0, 0) };
}

#[cfg(not(target_os = "linux"))]
fn set_timer_slack_ns(_nanos: u64) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn timer_slack_ns() -> libc::c_int {
        // SAFETY: PR_GET_TIMERSLACK only reads the calling thread's timer slack.
        unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) }
    }

    #[test]
    fn a_device_waiter_sleeps_with_a_tight_timer() {
        let (before, after) = std::thread::spawn(|| {
            // The kernel's default for a thread nobody tightened: 50 us.
            set_timer_slack_ns(0);
            let before = timer_slack_ns();
            sleep_until(Instant::now() + std::time::Duration::from_micros(10));
            (before, timer_slack_ns())
        })
        .join()
        .unwrap();
        assert!(before > 1, "default slack {before} ns");
        assert_eq!(after, 1);
    }
}
