//! The io_uring engine of the file device.
//!
//! One ring of [`RING_ENTRIES`] submission entries (the completion queue is twice as large, the
//! kernel default). Submitters first take slots from a counter bounded by `RING_ENTRIES` (waiting
//! on a condvar while the ring is full), then push their SQEs under the short submission mutex and
//! call `io_uring_enter` after releasing it. Because at most `RING_ENTRIES` requests are ever in
//! flight, the submission queue always has room and the completion queue can never overflow.
//!
//! One reaper thread waits for completions, completes each job's [`Completion`] and returns its
//! slot. A job travels as a boxed pointer in the SQE's `user_data` (never 0); `user_data` 0 is
//! the NOP that tells the reaper to stop.
//!
//! Shutdown (drop): wait until no slot is taken, submit the stop NOP, join the reaper.
//!
//! Lock order: `Slots::taken` is never held while taking the submission mutex or vice versa
//! (each is released before the other is taken).

use std::sync::Arc;
use std::thread::JoinHandle;

use io_uring::{IoUring, opcode, types};
use parking_lot::{Condvar, Mutex};

use super::{FileShared, Job};
use crate::device::IoOp;

/// Submission queue entries per ring: the bound on in-flight requests per device.
pub const RING_ENTRIES: u32 = 256;
/// `user_data` of the NOP that stops the reaper.
const STOP: u64 = 0;
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
}

/// The ring, its submission mutex and its reaper.
pub struct UringEngine {
    ring: Arc<IoUring>,
    submit_lock: Mutex<()>,
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
    /// Creates the ring and starts the reaper.
    ///
    /// # Errors
    /// The OS error when the ring cannot be created (no io_uring, seccomp, memlock limit) or
    /// the reaper cannot be spawned.
    pub fn new(shared: &Arc<FileShared>) -> std::io::Result<Self> {
        let ring = Arc::new(IoUring::new(RING_ENTRIES)?);
        let slots = Arc::new(Slots {
            taken: Mutex::new(0),
            freed: Condvar::new(),
            capacity: ring.params().sq_entries() as usize,
        });
        let reaper = {
            let ring = Arc::clone(&ring);
            let slots = Arc::clone(&slots);
            let shared = Arc::clone(shared);
            std::thread::Builder::new()
                .name("flashbuf-uring-reaper".into())
                .spawn(move || reap(&ring, &slots, &shared))?
        };
        Ok(UringEngine {
            ring,
            submit_lock: Mutex::new(()),
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
            self.push_and_enter(chunk);
        }
    }

    /// Pushes one SQE per job (slots already taken) and tells the kernel.
    fn push_and_enter(&self, chunk: Vec<Job>) {
        let fd = types::Fd(std::os::fd::AsRawFd::as_raw_fd(&self.shared.file));
        let guard = self.submit_lock.lock();
        {
            // SAFETY: only this function touches the submission queue, under `submit_lock`.
            let mut queue = unsafe { self.ring.submission_shared() };
            for job in chunk {
                let entry = entry_for(fd, self.shared.offset(job.page), job);
                // SAFETY: the buffer stays valid until completion (submit contract); the boxed
                // job lives until the reaper takes it back. The slot bound guarantees room.
                if let Err(job) = unsafe { push(&mut queue, entry) } {
                    self.shared
                        .finish(&job, Err(std::io::Error::other("ring full")));
                    self.slots.release(1);
                }
            }
        } // dropping the queue publishes the new tail
        drop(guard);
        // Outside the mutex: the kernel issues the I/O inside this call (for O_DIRECT on most
        // file systems), so holding the mutex here would serialise every submitter behind it.
        // Concurrent enters are safe: each submits whatever tail it sees, at most once.
        enter(&self.ring, 0);
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

/// The reaper: completes jobs until it sees the stop NOP and nothing is in flight.
/// Runs for the engine's lifetime; each turn waits for at least one completion.
fn reap(ring: &IoUring, slots: &Slots, shared: &FileShared) {
    let mut stopping = false;
    loop {
        if !enter(ring, 1) {
            // A persistent enter failure: don't spin hot, keep draining what completes.
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut completed = 0;
        // SAFETY: only the reaper touches the completion queue.
        for cqe in unsafe { ring.completion_shared() } {
            if cqe.user_data() == STOP {
                stopping = true;
                continue;
            }
            // SAFETY: every non-STOP user_data is a Box<Job> leaked by `push`, reaped once.
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
        if stopping && *slots.taken.lock() == 0 {
            return;
        }
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        self.slots.wait_idle();
        let guard = self.submit_lock.lock();
        let stop = opcode::Nop::new().build().user_data(STOP);
        // SAFETY: a NOP carries no buffer; only we touch the queue, under `submit_lock`. No
        // request is in flight, so the queue has room.
        let pushed = unsafe { self.ring.submission_shared().push(&stop).is_ok() };
        let entered = pushed && enter(&self.ring, 0);
        drop(guard);
        // If the stop NOP could not be submitted the reaper cannot be woken; it holds its own
        // ring handle and exits with the process. Nothing is in flight, so no job is lost.
        if let Some(reaper) = self.reaper.take()
            && entered
        {
            let _ = reaper.join();
        }
    }
}
