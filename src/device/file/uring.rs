//! The io_uring engine of the file device.
//!
//! One ring of [`RING_ENTRIES`] submission entries (the completion queue is twice as large, the
//! kernel default). Submitters first take slots from a counter bounded by `RING_ENTRIES - 1`
//! (waiting on a condvar while the ring is full), push their SQEs under the short submission
//! mutex, and poke the reaper through an eventfd if it may be asleep. Because at most
//! `RING_ENTRIES - 1` requests are in flight (plus the reaper's one eventfd read), the
//! submission queue always has room and the completion queue can never overflow.
//!
//! The reaper thread creates the ring and is its only caller of `io_uring_enter` (the ring is set
//! up single-issuer with deferred completion work where the kernel allows): it submits what is
//! queued, waits for completions, completes each job's [`Completion`](crate::device::Completion) and returns its slot.
//! Keeping every
//! submission on the reaper matters for speed: the kernel runs a request's completion work in
//! the task that submitted it, so submissions from the many caller threads would have each
//! caller interrupted (out of its wait) to post its own completion before the reaper could see
//! it; with one submitter the completions arrive in the reaper, in batches. The reaper keeps one
//! read of the eventfd armed (`user_data` `WAKE`), which completes when a submitter pokes it.
//! A job travels as a boxed pointer in its SQE's `user_data` (never `WAKE`).
//!
//! Shutdown (drop): wait until no slot is taken, raise `stopping`, poke; the reaper stops once
//! its eventfd read has completed (so the kernel holds no pointer to its buffer) and no slot is
//! taken, and the drop joins it.
//!
//! Lock order: `Slots::taken` and the submission mutex are never held together; neither is held
//! across a system call.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use io_uring::{IoUring, opcode, types};
use parking_lot::{Condvar, Mutex};

use super::{FileShared, Job};
use crate::device::IoOp;

/// Submission queue entries per ring; one is kept for the reaper's eventfd read, the rest bound
/// the in-flight requests per device.
pub const RING_ENTRIES: u32 = 256;
/// `user_data` of the reaper's eventfd read (job pointers are never 1: they are aligned).
const WAKE: u64 = 1;
/// Attempts of an `io_uring_enter` that fails with EINTR, EAGAIN or EBUSY before giving up.
const ENTER_RETRIES: usize = 1000;

/// The in-flight bound: a counting semaphore of ring slots.
#[derive(Debug)]
struct Slots {
    taken: Mutex<usize>,
    freed: Condvar,
    capacity: usize,
}

impl Slots {
    /// Takes between 1 and `wanted` slots, waiting while none is free; returns how many.
    fn acquire(&self, wanted: usize) -> usize {
        assert!(wanted > 0, "acquire at least one slot");
        let mut taken = self.taken.lock();
        // Bounded by the reaper: every wait ends when some in-flight request completes.
        while *taken >= self.capacity {
            self.freed.wait(&mut taken);
        }
        let granted = wanted.min(self.capacity - *taken);
        *taken += granted;
        granted
    }

    fn release(&self, count: usize) {
        let mut taken = self.taken.lock();
        assert!(*taken >= count, "released more slots than taken");
        *taken -= count;
        drop(taken);
        self.freed.notify_all();
    }

    /// Waits until no request is in flight.
    fn wait_idle(&self) {
        let mut taken = self.taken.lock();
        while *taken > 0 {
            self.freed.wait(&mut taken);
        }
    }

    fn idle(&self) -> bool {
        *self.taken.lock() == 0
    }
}

/// The ring and what the submitters and the reaper share about it.
struct UringShared {
    ring: IoUring,
    submit_lock: Mutex<()>,
    wake: OwnedFd,
    stopping: AtomicBool,
    /// Set by the reaper just before it may block in `io_uring_enter`, cleared after; a
    /// submitter pokes only while it is set (see [`UringShared::poke_if_sleeping`]).
    sleeping: AtomicBool,
}

impl UringShared {
    /// Creates the ring (single issuer, completion work deferred to the issuer's wait, where
    /// the kernel offers it; a plain ring otherwise) and the eventfd. Call on the reaper.
    fn new() -> std::io::Result<Self> {
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(RING_ENTRIES)
            .or_else(|_| IoUring::new(RING_ENTRIES))?;
        if ring.params().sq_entries() != RING_ENTRIES {
            return Err(std::io::Error::other(format!(
                "io_uring gave {} entries instead of {RING_ENTRIES}",
                ring.params().sq_entries()
            )));
        }
        // SAFETY: plain syscall; the result is checked before use.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(UringShared {
            ring,
            submit_lock: Mutex::new(()),
            // SAFETY: `raw` is a fresh descriptor nobody else owns.
            wake: unsafe { OwnedFd::from_raw_fd(raw) },
            stopping: AtomicBool::new(false),
            sleeping: AtomicBool::new(true),
        })
    }

    /// Called after pushing SQEs: wakes the reaper only if it may be blocked in the kernel.
    /// A Dekker handshake with [`reap`]: the submitter publishes its SQEs then reads `sleeping`;
    /// the reaper sets `sleeping` then reads the SQ tail (inside `submit_and_wait`); with a
    /// SeqCst fence on each side, at least one of them sees the other's write, so either the
    /// reaper submits the new SQEs itself or it gets poked. Skipping needless pokes saves the
    /// reaper an eventfd completion and re-arm per request when it is busy.
    fn poke_if_sleeping(&self) {
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) {
            self.poke();
        }
    }

    /// Wakes the reaper (its armed eventfd read completes).
    fn poke(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 to our eventfd. A failure (counter overflow,
        // impossible in practice) leaves the counter non-zero, which wakes the reaper anyway.
        let _ = unsafe {
            libc::write(
                self.wake.as_raw_fd(),
                std::ptr::from_ref(&one).cast(),
                std::mem::size_of::<u64>(),
            )
        };
    }

    /// Queues the reaper's eventfd read into `buf`; returns whether it was queued.
    ///
    /// # Safety
    /// `buf` must stay valid until the read's completion is reaped.
    unsafe fn arm_wake(&self, buf: *mut u64) -> bool {
        let entry = opcode::Read::new(
            types::Fd(self.wake.as_raw_fd()),
            buf.cast(),
            std::mem::size_of::<u64>() as u32,
        )
        .build()
        .user_data(WAKE);
        let _guard = self.submit_lock.lock();
        // SAFETY: queue access under `submit_lock`; the caller keeps `buf` alive.
        unsafe { self.ring.submission_shared().push(&entry).is_ok() }
    }
}

/// The ring, its slots and its reaper.
pub struct UringEngine {
    ring: Arc<UringShared>,
    slots: Arc<Slots>,
    shared: Arc<FileShared>,
    reaper: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for UringEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringEngine")
            .field("entries", &RING_ENTRIES)
            .field("in_flight", &*self.slots.taken.lock())
            .finish_non_exhaustive()
    }
}

impl UringEngine {
    /// Creates the ring and its eventfd and starts the reaper.
    ///
    /// # Errors
    /// The OS error when the ring cannot be created (no io_uring, seccomp, memlock limit), the
    /// eventfd cannot be made or the reaper cannot be spawned.
    pub fn new(shared: &Arc<FileShared>) -> std::io::Result<Self> {
        let slots = Arc::new(Slots {
            taken: Mutex::new(0),
            freed: Condvar::new(),
            capacity: RING_ENTRIES as usize - 1,
        });
        // The reaper creates the ring, so that it is the ring's single issuer; it hands the
        // shared part back (or the error) through this channel of one message.
        let (sender, receiver) = crossbeam_channel::bounded(1);
        let reaper = {
            let slots = Arc::clone(&slots);
            let shared = Arc::clone(shared);
            std::thread::Builder::new()
                .name("flashbuf-uring-reaper".into())
                .spawn(move || match UringShared::new() {
                    Ok(ring) => {
                        let ring = Arc::new(ring);
                        if sender.send(Ok(Arc::clone(&ring))).is_ok() {
                            reap(&ring, &slots, &shared);
                        }
                    }
                    Err(err) => {
                        let _ = sender.send(Err(err));
                    }
                })?
        };
        let ring = receiver
            .recv()
            .map_err(|_| std::io::Error::other("the io_uring reaper died while starting"))
            .and_then(|built| built);
        let ring = match ring {
            Ok(ring) => ring,
            Err(err) => {
                let _ = reaper.join();
                return Err(err);
            }
        };
        Ok(UringEngine {
            ring,
            slots,
            shared: Arc::clone(shared),
            reaper: Some(reaper),
        })
    }

    /// Submits the jobs, in chunks as large as the free ring slots allow.
    pub fn submit(&self, jobs: Vec<Job>) {
        let mut jobs = jobs.into_iter().peekable();
        // Bounded: each turn submits at least one job.
        while jobs.peek().is_some() {
            let granted = self.slots.acquire(jobs.len());
            let chunk: Vec<Job> = jobs.by_ref().take(granted).collect();
            assert_eq!(chunk.len(), granted, "slots match the chunk");
            self.push(chunk);
            self.ring.poke_if_sleeping();
        }
    }

    /// Pushes one SQE per job (slots already taken) under the submission mutex.
    fn push(&self, chunk: Vec<Job>) {
        let fd = types::Fd(self.shared.file.as_raw_fd());
        let _guard = self.ring.submit_lock.lock();
        // SAFETY: the submission queue is only touched under `submit_lock`.
        let mut queue = unsafe { self.ring.ring.submission_shared() };
        for job in chunk {
            let entry = entry_for(fd, self.shared.offset(job.page), job);
            // SAFETY: the buffer stays valid until completion (submit contract); the boxed
            // job lives until the reaper takes it back. The slot bound guarantees room.
            if let Err(job) = unsafe { push(&mut queue, entry) } {
                self.shared.finish(
                    &job,
                    Err(std::io::Error::other("io_uring submission queue full")),
                );
                self.slots.release(1);
            }
        }
        // Dropping the queue (before the guard) publishes the new tail.
    }
}

/// Builds the SQE of a job; the job itself moves into `user_data`.
fn entry_for(fd: types::Fd, offset: u64, job: Job) -> (io_uring::squeue::Entry, Box<Job>) {
    let len = u32::try_from(job.buf.len()).unwrap_or(u32::MAX);
    let entry = match job.op {
        IoOp::Write => opcode::Write::new(fd, job.buf.as_ptr(), len)
            .offset(offset)
            .build(),
        // Fused requests never reach the engine (the device rejects them); a read is harmless.
        IoOp::Read | IoOp::FusedReadWrite { .. } => opcode::Read::new(fd, job.buf.as_ptr(), len)
            .offset(offset)
            .build(),
    };
    (entry, Box::new(job))
}

/// Pushes an entry carrying `job`; gives the job back if the queue is full.
///
/// # Safety
/// The entry's buffer must stay valid until its completion is reaped.
unsafe fn push(
    queue: &mut io_uring::SubmissionQueue<'_>,
    (entry, job): (io_uring::squeue::Entry, Box<Job>),
) -> Result<(), Box<Job>> {
    let raw = Box::into_raw(job);
    let entry = entry.user_data(raw as u64);
    // SAFETY: forwarded to the caller.
    match unsafe { queue.push(&entry) } {
        Ok(()) => Ok(()),
        // SAFETY: the kernel never saw the entry, so we still own the box.
        Err(_) => Err(unsafe { Box::from_raw(raw) }),
    }
}

/// `io_uring_enter`: submits whatever is queued and waits for `want` completions; retries
/// EINTR/EAGAIN/EBUSY up to [`ENTER_RETRIES`] times. Returns false if it still failed (the
/// entries stay queued and go in with the next enter).
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

/// The reaper: submits queued SQEs, completes jobs, re-arms its eventfd read; stops when
/// `stopping` is raised, no slot is taken and its read is not armed. Runs for the engine's
/// lifetime; each turn waits for at least one completion (the armed read guarantees one comes
/// whenever a submitter pokes).
fn reap(ring: &UringShared, slots: &Slots, shared: &FileShared) {
    // The eventfd read's target; no read is armed when this function returns.
    let mut wake_buf: Box<u64> = Box::new(0);
    let wake_ptr: *mut u64 = &raw mut *wake_buf;
    // SAFETY: `wake_buf` outlives every armed read (see the exit condition).
    let mut armed = unsafe { ring.arm_wake(wake_ptr) };
    loop {
        ring.sleeping.store(true, Ordering::SeqCst);
        std::sync::atomic::fence(Ordering::SeqCst);
        let entered = enter(&ring.ring, 1);
        ring.sleeping.store(false, Ordering::SeqCst);
        if !entered {
            // A persistent enter failure: don't spin hot, keep draining what completes.
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut completed = 0;
        // SAFETY: only the reaper touches the completion queue.
        for cqe in unsafe { ring.ring.completion_shared() } {
            if cqe.user_data() == WAKE {
                armed = false;
                continue;
            }
            // SAFETY: every other user_data is a Box<Job> leaked by `push`, reaped once.
            let job = unsafe { Box::from_raw(cqe.user_data() as *mut Job) };
            let result = cqe.result();
            let moved = if result < 0 {
                Err(std::io::Error::from_raw_os_error(-result))
            } else {
                Ok(result as usize)
            };
            shared.finish(&job, moved);
            completed += 1;
        }
        if completed > 0 {
            slots.release(completed);
        }
        let stopping = ring.stopping.load(Ordering::Acquire);
        if !armed && !stopping {
            // SAFETY: as above.
            armed = unsafe { ring.arm_wake(wake_ptr) };
        }
        if stopping && !armed && slots.idle() {
            drop(wake_buf);
            return;
        }
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        self.slots.wait_idle();
        self.ring.stopping.store(true, Ordering::Release);
        // Completes the reaper's armed read (if any); the reaper then sees `stopping`.
        self.ring.poke();
        if let Some(reaper) = self.reaper.take() {
            // A reaper that panicked has nothing left to clean up: nothing is in flight.
            let _ = reaper.join();
        }
    }
}
