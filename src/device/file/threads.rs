//! The thread-pool engine of the file device: the fallback where io_uring is unavailable.
//!
//! A bounded crossbeam queue of [`QUEUE_CAPACITY`] jobs feeds [`WORKERS`] threads, each doing one
//! positioned `pread`/`pwrite` at a time, so at most `WORKERS` requests are in the kernel and at
//! most `QUEUE_CAPACITY` wait; a submitter blocks while the queue is full.
//!
//! Shutdown: dropping the engine closes the queue; workers finish every queued job (a closed
//! crossbeam channel still delivers what it holds) and exit, and the drop joins them.
//! No locks besides the channel's own.

use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

use super::{FileShared, Job};
use crate::device::IoOp;
use crate::error::{Error, Result};

/// Worker threads per device (the most requests this engine keeps in the kernel at once).
pub const WORKERS: usize = 64;
/// Jobs waiting for a worker before submitters block.
pub const QUEUE_CAPACITY: usize = 256;

/// The pool. Dropping it drains the queue and joins the workers.
#[derive(Debug)]
pub struct ThreadEngine {
    sender: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl ThreadEngine {
    /// Starts the workers.
    ///
    /// # Errors
    /// [`Error::Io`] when a thread cannot be spawned.
    pub fn new(shared: &Arc<FileShared>) -> Result<Self> {
        let (sender, receiver) = crossbeam_channel::bounded(QUEUE_CAPACITY);
        let mut engine = ThreadEngine {
            sender: Some(sender),
            workers: Vec::with_capacity(WORKERS),
        };
        for index in 0..WORKERS {
            let receiver = receiver.clone();
            let shared = Arc::clone(shared);
            let worker = std::thread::Builder::new()
                .name(format!("flashbuf-file-io-{index}"))
                .stack_size(64 * 1024)
                .spawn(move || work(&shared, &receiver))
                .map_err(|err| Error::io("spawning a file I/O thread", err))?;
            // On an early return the engine's drop closes the queue and joins these.
            engine.workers.push(worker);
        }
        Ok(engine)
    }

    /// Queues the jobs, blocking while the queue is full.
    pub fn submit(&self, jobs: Vec<Job>) {
        for job in jobs {
            let Some(sender) = &self.sender else {
                fail_closed(&job);
                continue;
            };
            // `send` fails only when every worker is gone; the job comes back in the error.
            if let Err(err) = sender.send(job) {
                fail_closed(&err.0);
            }
        }
    }
}

fn fail_closed(job: &Job) {
    job.completion.complete(Err(crate::error::DeviceError::Io {
        page: Some(job.page),
        kind: std::io::ErrorKind::BrokenPipe,
        message: "the file device's I/O threads have stopped".into(),
    }));
}

/// A worker: runs jobs until the queue is closed and empty.
fn work(shared: &FileShared, receiver: &Receiver<Job>) {
    while let Ok(job) = receiver.recv() {
        run(shared, &job);
    }
}

/// Moves one page with a positioned read or write (`*_exact_at` retries short transfers and
/// EINTR; each retry moves at least one byte, so the retries are bounded by the page size).
fn run(shared: &FileShared, job: &Job) {
    let offset = shared.offset(job.page);
    let moved = match job.op {
        IoOp::Read => {
            // SAFETY: the submit contract keeps the buffer valid and ours until completion.
            let buf = unsafe { job.buf.as_mut_slice() };
            shared.file.read_exact_at(buf, offset).map(|()| buf.len())
        }
        IoOp::Write => {
            // SAFETY: as above; a write only reads the buffer.
            let buf = unsafe { job.buf.as_slice() };
            shared.file.write_all_at(buf, offset).map(|()| buf.len())
        }
        IoOp::FusedReadWrite { .. } => Err(std::io::Error::from(std::io::ErrorKind::Unsupported)),
    };
    shared.finish(job, moved);
}

impl Drop for ThreadEngine {
    fn drop(&mut self) {
        // Closing the queue lets each worker finish what is queued, then exit.
        drop(self.sender.take());
        for worker in self.workers.drain(..) {
            // A worker that panicked has nothing left to clean up; its jobs' tickets were
            // completed or will report the closed queue.
            let _ = worker.join();
        }
    }
}
