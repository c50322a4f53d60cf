//! The per-thread-ring io_uring engine of the file device (the default where io_uring works;
//! docs/performance.md, "The file device against fio", measured why).
//!
//! Each submitting thread gets an io_uring of its own ([`RING_ENTRIES`] entries; the file
//! registered as fixed file 0 when asked, `FLASHBUF_URING_FIXED_FILE=1`, which measured no
//! faster here), up to [`MAX_RINGS`] rings per device
//! (threads beyond share the existing rings, round robin). A submitter pushes its SQEs and
//! enters the kernel once to submit them; a waiter *reaps the ring its request went to itself*
//! (the request's [`Completion`] carries the ring as its [`Driver`]): it enters the kernel
//! waiting for one completion, completes every job it reaps, and returns once its own request
//! is complete. There is no reaper thread and no hand-off: in the common case (a thread
//! submits, then waits for its own request) an I/O costs two `io_uring_enter` calls and one
//! sleep in the kernel (one call when the thread waits at once: the synchronous
//! `read_page`/`write_page` submit and wait in one `io_uring_enter`), where the single-ring
//! engine ([`super::uring`]) adds an eventfd poke, the reaper's wake-up and a futex wake of
//! the waiter. What remains per I/O is the sleep and wake-up of its thread
//! (docs/performance.md, "Why the probe's writes trailed fio"). The kernel runs a request's completion
//! work in the task that submitted it (plain ring setup, so it interrupts that task if needed),
//! so a waiter on another thread's ring still sees the completion arrive.
//!
//! Bounds: at most [`RING_ENTRIES`] requests in flight per ring (the completion queue holds
//! twice as many, so it cannot overflow); a submitter whose ring is full reaps it first.
//!
//! Shutdown (drop): every ring is reaped until nothing is in flight, then the rings close.
//! Completions hold their ring weakly, so a ticket kept past the device keeps nothing open.
//!
//! Lock order: a ring's mutex, then a completion's (when completing a job); the rings list's
//! mutex is a leaf. A ring's mutex is held across its `io_uring_enter` (the waiter holding it
//! blocks only while a request of that ring is in flight, whose completion wakes it).

use std::cell::RefCell;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use io_uring::{IoUring, opcode, types};
use parking_lot::Mutex;

use super::{FileShared, Job};
use crate::device::IoOp;
use crate::device::ticket::{Completion, Driver};

/// Submission entries per ring (and the in-flight bound per ring).
pub const RING_ENTRIES: u32 = 64;
/// Rings per device at most; further threads share them.
pub const MAX_RINGS: usize = 128;
/// Attempts of an `io_uring_enter` that fails with EINTR, EAGAIN or EBUSY before backing off.
const ENTER_RETRIES: usize = 1000;

/// Numbers engines, so a thread finds its ring of each device.
static NEXT_ENGINE: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's ring per engine (engine id, ring); dead entries are pruned on lookup.
    static MY_RINGS: RefCell<Vec<(u64, Weak<Ring>)>> = const { RefCell::new(Vec::new()) };
}

/// One ring and what is in flight on it.
pub struct Ring {
    state: Mutex<RingState>,
    shared: Arc<FileShared>,
}

struct RingState {
    ring: IoUring,
    /// Requests submitted and not yet reaped.
    in_flight: usize,
    /// The file as the ring addresses it (fixed file 0, or the raw descriptor).
    fd: FileRef,
}

#[derive(Clone, Copy)]
enum FileRef {
    Fixed,
    Raw(i32),
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("in_flight", &self.state.lock().in_flight)
            .finish_non_exhaustive()
    }
}

impl Ring {
    /// A ring over the file; registers it as fixed file 0 when `fixed_file` and the kernel
    /// allows (a plain descriptor otherwise).
    fn new(shared: &Arc<FileShared>, fixed_file: bool) -> std::io::Result<Self> {
        let ring = IoUring::new(RING_ENTRIES)?;
        if ring.params().sq_entries() != RING_ENTRIES {
            return Err(std::io::Error::other(format!(
                "io_uring gave {} entries instead of {RING_ENTRIES}",
                ring.params().sq_entries()
            )));
        }
        let raw = shared.file.as_raw_fd();
        let fd = if fixed_file && ring.submitter().register_files(&[raw]).is_ok() {
            FileRef::Fixed
        } else {
            FileRef::Raw(raw)
        };
        Ok(Ring {
            state: Mutex::new(RingState {
                ring,
                in_flight: 0,
                fd,
            }),
            shared: Arc::clone(shared),
        })
    }

    /// Pushes and submits the jobs, reaping first whenever the ring is full. With `wait_one`
    /// the last `io_uring_enter` also waits for a completion (of any job on this ring) and
    /// reaps what arrived: one system call for a thread that waits for its request next.
    fn submit(&self, jobs: Vec<Job>, wait_one: bool) {
        let mut jobs = jobs.into_iter().peekable();
        let mut state = self.state.lock();
        // Bounded: each turn pushes at least one job (a full ring is reaped first, and a
        // reap of a full ring waits for at least one completion).
        while jobs.peek().is_some() {
            if state.in_flight >= RING_ENTRIES as usize {
                self.reap(&mut state, true);
                continue;
            }
            let room = RING_ENTRIES as usize - state.in_flight;
            let fd = state.fd;
            let mut pushed = 0;
            {
                // SAFETY: the queue is only touched under the ring's mutex.
                let mut queue = unsafe { state.ring.submission_shared() };
                for job in jobs.by_ref().take(room) {
                    let entry = entry_for(fd, self.shared.offset(job.page), &job);
                    let raw = Box::into_raw(Box::new(job));
                    let entry = entry.user_data(raw as u64);
                    // SAFETY: the buffer stays valid until completion (submit contract); the
                    // boxed job lives until a reap takes it back. `room` guarantees space.
                    if unsafe { queue.push(&entry) }.is_err() {
                        // SAFETY: the kernel never saw the entry: the box is still ours.
                        let job = unsafe { Box::from_raw(raw) };
                        self.shared.finish(
                            &job,
                            Err(std::io::Error::other("io_uring submission queue full")),
                        );
                        continue;
                    }
                    pushed += 1;
                }
            }
            state.in_flight += pushed;
            let wait = wait_one && jobs.peek().is_none() && state.in_flight > 0;
            // A failed submit leaves the entries queued; the next enter (any waiter's) takes them.
            if enter(&state.ring, usize::from(wait)) && wait {
                self.reap(&mut state, false);
            }
        }
    }

    /// Completes every job whose completion has arrived; with `block`, first waits in the kernel
    /// for at least one (only when something is in flight). Returns how many it completed.
    fn reap(&self, state: &mut RingState, block: bool) -> usize {
        if block && state.in_flight > 0 && !enter(&state.ring, 1) {
            // A persistent enter failure: don't spin hot; completions still arrive.
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut completed = 0;
        // SAFETY: the completion queue is only touched under the ring's mutex.
        for cqe in unsafe { state.ring.completion_shared() } {
            // SAFETY: every user_data is a Box<Job> leaked by `submit`, reaped once.
            let job = unsafe { Box::from_raw(cqe.user_data() as *mut Job) };
            let result = cqe.result();
            let moved = if result < 0 {
                Err(std::io::Error::from_raw_os_error(-result))
            } else {
                Ok(result as usize)
            };
            self.shared.finish(&job, moved);
            completed += 1;
        }
        state.in_flight -= completed;
        completed
    }

    /// Reaps until nothing is in flight (shutdown).
    fn drain(&self) {
        let mut state = self.state.lock();
        while state.in_flight > 0 {
            self.reap(&mut state, true);
        }
    }
}

impl Driver for Ring {
    fn drive(&self, completion: &Completion) {
        // Bounded: every blocking reap ends with at least one completion of this ring, and the
        // awaited request is one of the finitely many in flight on it.
        while !completion.has_result() {
            let mut state = self.state.lock();
            if completion.has_result() {
                return;
            }
            self.reap(&mut state, false);
            if completion.has_result() {
                return;
            }
            self.reap(&mut state, true);
        }
    }

    fn poll(&self) {
        if let Some(mut state) = self.state.try_lock() {
            self.reap(&mut state, false);
        }
    }
}

/// Builds the SQE of a job (its `user_data` is set by the caller).
fn entry_for(fd: FileRef, offset: u64, job: &Job) -> io_uring::squeue::Entry {
    let len = u32::try_from(job.buf.len()).unwrap_or(u32::MAX);
    let ptr = job.buf.as_ptr();
    // Fused requests never reach the engine (the device rejects them); a read is harmless.
    let write = matches!(job.op, IoOp::Write);
    match (fd, write) {
        (FileRef::Fixed, true) => opcode::Write::new(types::Fixed(0), ptr, len)
            .offset(offset)
            .build(),
        (FileRef::Fixed, false) => opcode::Read::new(types::Fixed(0), ptr, len)
            .offset(offset)
            .build(),
        (FileRef::Raw(raw), true) => opcode::Write::new(types::Fd(raw), ptr, len)
            .offset(offset)
            .build(),
        (FileRef::Raw(raw), false) => opcode::Read::new(types::Fd(raw), ptr, len)
            .offset(offset)
            .build(),
    }
}

/// `io_uring_enter`: submits what is queued and waits for `want` completions; retries
/// EINTR/EAGAIN/EBUSY up to [`ENTER_RETRIES`] times. Returns false if it still failed.
fn enter(ring: &IoUring, want: usize) -> bool {
    for _ in 0..ENTER_RETRIES {
        match ring.submit_and_wait(want) {
            Ok(_) => return true,
            Err(err)
                if matches!(
                    err.raw_os_error(),
                    Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                ) =>
            {
                std::thread::yield_now();
            }
            Err(_) => return false,
        }
    }
    false
}

/// The engine: the device's rings.
pub struct RingsEngine {
    id: u64,
    shared: Arc<FileShared>,
    rings: Mutex<Vec<Arc<Ring>>>,
    fixed_file: bool,
    /// Round robin over the rings for threads beyond [`MAX_RINGS`].
    next_shared: AtomicU64,
}

impl std::fmt::Debug for RingsEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingsEngine")
            .field("rings", &self.rings.lock().len())
            .field("fixed_file", &self.fixed_file)
            .finish_non_exhaustive()
    }
}

impl RingsEngine {
    /// The engine, with its first ring made now (so that an unavailable io_uring is found at
    /// open); `fixed_file` registers the file in each ring.
    ///
    /// # Errors
    /// The OS error when no ring can be created (no io_uring, seccomp, memlock limit).
    pub fn new(shared: &Arc<FileShared>, fixed_file: bool) -> std::io::Result<Self> {
        let first = Arc::new(Ring::new(shared, fixed_file)?);
        Ok(RingsEngine {
            id: NEXT_ENGINE.fetch_add(1, Ordering::Relaxed),
            shared: Arc::clone(shared),
            rings: Mutex::new(vec![first]),
            fixed_file,
            next_shared: AtomicU64::new(0),
        })
    }

    /// The calling thread's ring: its own, made on its first submission (the first thread
    /// takes the ring made at open), or a shared one past [`MAX_RINGS`] or when a new ring
    /// cannot be made.
    pub fn ring(&self) -> Arc<Ring> {
        let mine = MY_RINGS.with(|rings| {
            let mut rings = rings.borrow_mut();
            rings.retain(|(_, ring)| ring.strong_count() > 0);
            rings
                .iter()
                .find(|(engine, _)| *engine == self.id)
                .and_then(|(_, ring)| ring.upgrade())
        });
        if let Some(ring) = mine {
            return ring;
        }
        let ring = self.assign();
        MY_RINGS.with(|rings| rings.borrow_mut().push((self.id, Arc::downgrade(&ring))));
        ring
    }

    fn assign(&self) -> Arc<Ring> {
        let mut rings = self.rings.lock();
        let claimed = self.next_shared.fetch_add(1, Ordering::Relaxed) as usize;
        if claimed == 0 {
            // The first thread takes the ring made at open.
            return Arc::clone(&rings[0]);
        }
        if rings.len() < MAX_RINGS
            && let Ok(ring) = Ring::new(&self.shared, self.fixed_file)
        {
            let ring = Arc::new(ring);
            rings.push(Arc::clone(&ring));
            return ring;
        }
        Arc::clone(&rings[claimed % rings.len()])
    }

    /// Submits the jobs on `ring` (the calling thread's, from [`RingsEngine::ring`]; their
    /// completions name it as their driver).
    pub fn submit(ring: &Ring, jobs: Vec<Job>) {
        if !jobs.is_empty() {
            ring.submit(jobs, false);
        }
    }

    /// Submits one job on `ring` and waits for a completion in the same `io_uring_enter`
    /// (the synchronous `read_page`/`write_page`: one system call per I/O instead of two);
    /// the caller then waits on the job's completion, which is usually complete already.
    pub fn submit_and_wait(ring: &Ring, job: Job) {
        ring.submit(vec![job], true);
    }

    /// Rings made so far.
    #[must_use]
    pub fn ring_count(&self) -> usize {
        self.rings.lock().len()
    }
}

impl Drop for RingsEngine {
    fn drop(&mut self) {
        for ring in self.rings.lock().iter() {
            ring.drain();
        }
    }
}
