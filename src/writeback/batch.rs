//! The write mechanism: a batch of frames whose `IO_WRITE` state the caller has claimed is
//! latched, made WAL-safe (log flushed to the batch's newest modification), stamped (page LSN
//! and checksum), downgraded to a shared latch (readers go on, writers wait), submitted as one
//! batch, and marked clean as writes complete.
//!
//! Lock order: called with no list mutex held (latches are taken blocking when asked).

use std::sync::atomic::Ordering;

use crate::device::IoRequest;
use crate::error::{Error, Result};
use crate::pool::PoolInner;
use crate::pool::frame::{FrameId, IO_WRITE, NO_PAGE};

impl PoolInner {
    /// Writes the claimed frames. Returns the frames written (clean now, unlatched, `IO_WRITE`
    /// still claimed: the caller evicts or releases them). Frames that were not dirty or could
    /// not be latched (with `blocking_latch` false) are released and left out.
    ///
    /// # Errors
    /// The WAL flush or a write failed: the pool is poisoned, every claimed frame released.
    pub(crate) fn write_frames(
        &self,
        claimed: Vec<FrameId>,
        blocking_latch: bool,
    ) -> Result<Vec<FrameId>> {
        let mut written = Vec::with_capacity(claimed.len());
        let result = self.write_frames_then(claimed, blocking_latch, &mut |id| written.push(id));
        match result {
            Ok(()) => Ok(written),
            Err(err) => {
                for id in written {
                    self.frame(id).release_io(IO_WRITE);
                }
                Err(err)
            }
        }
    }

    /// As [`PoolInner::write_frames`], but hands each frame to `on_written` as soon as its own
    /// write completes (clean, unlatched, `IO_WRITE` still claimed: `on_written` must release
    /// it), so a flusher can return frames to the free list while the rest of a large batch is
    /// still in flight.
    ///
    /// # Errors
    /// As [`PoolInner::write_frames`]; frames already handed to `on_written` stay handed.
    pub(crate) fn write_frames_then(
        &self,
        claimed: Vec<FrameId>,
        blocking_latch: bool,
        on_written: &mut dyn FnMut(FrameId),
    ) -> Result<()> {
        let mut latched = Vec::with_capacity(claimed.len());
        for id in claimed {
            let frame = self.frame(id);
            debug_assert_eq!(frame.io_state(), IO_WRITE);
            let got = if blocking_latch {
                frame.latch_exclusive();
                true
            } else {
                frame.try_latch_exclusive()
            };
            let page = frame.page_id();
            let twb_busy = got
                && self
                    .twb
                    .as_ref()
                    .is_some_and(|twb| twb.in_flight(self, page));
            if got && !twb_busy && frame.is_dirty() && page != NO_PAGE {
                latched.push(id);
                continue;
            }
            if got {
                // SAFETY: taken just above.
                unsafe { frame.unlatch_exclusive() };
            }
            frame.release_io(IO_WRITE);
        }
        if latched.is_empty() {
            return Ok(());
        }
        let newest = latched
            .iter()
            .map(|&id| self.frame(id).newest_modification.load(Ordering::Acquire))
            .max()
            .unwrap_or(0);
        if let Err(err) = self.log.flush_to(newest) {
            self.release_latched(&latched);
            return Err(err);
        }
        let mut requests = Vec::with_capacity(latched.len());
        for &id in &latched {
            let frame = self.frame(id);
            let page = frame.page_id();
            let lsn = frame.newest_modification.load(Ordering::Acquire);
            // SAFETY: latched exclusive by us.
            crate::page::stamp(unsafe { self.frame_bytes_mut(id) }, page, lsn);
            // SAFETY: latched exclusive by us; readers may share it during the write.
            unsafe { frame.downgrade() };
            requests.push(IoRequest::write(page, self.frame_buffer(id)));
        }
        self.counters.flush_batches.fetch_add(1, Ordering::Relaxed);
        self.counters
            .max_flush_batch
            .fetch_max(latched.len() as u64, Ordering::Relaxed);
        // SAFETY: each frame stays latched (shared) until its ticket completes below, so its
        // bytes stay valid and unmodified.
        let tickets = unsafe { self.device.submit(requests) };
        let mut first_error = None;
        for (id, ticket) in latched.into_iter().zip(tickets) {
            let frame = self.frame(id);
            let result = ticket.wait();
            if result.is_ok() {
                let mut flush = self.mutexes.flush.lock(&self.flush);
                flush.remove(&self.frames, id);
            }
            // SAFETY: downgraded to shared above.
            unsafe { frame.unlatch_shared() };
            match result {
                Ok(()) => on_written(id),
                Err(err) => {
                    self.poison(&err);
                    first_error.get_or_insert(err);
                    frame.release_io(IO_WRITE);
                }
            }
        }
        first_error.map_or(Ok(()), |err| Err(Error::Device(err)))
    }

    fn release_latched(&self, latched: &[FrameId]) {
        for &id in latched {
            let frame = self.frame(id);
            // SAFETY: latched exclusive by `write_frames`.
            unsafe { frame.unlatch_exclusive() };
            frame.release_io(IO_WRITE);
        }
    }

    /// Claims `IO_WRITE` on every dirty frame of `candidates` that is idle.
    pub(crate) fn claim_for_write(
        &self,
        candidates: impl IntoIterator<Item = FrameId>,
    ) -> Vec<FrameId> {
        candidates
            .into_iter()
            .filter(|&id| {
                let frame = self.frame(id);
                frame.is_dirty() && frame.try_claim_io(IO_WRITE)
            })
            .collect()
    }

    /// Writes every dirty page, empties WAR's TWB, and syncs the device.
    pub(crate) fn flush_all(&self) -> Result<()> {
        self.check_poisoned()?;
        // Bound: a deadline. Each round writes every dirty page it can claim; pages another
        // thread is writing (or re-dirtied meanwhile) are caught by a later round; when a round
        // makes no progress it waits briefly for the other writer.
        let deadline = std::time::Instant::now()
            + self
                .device_ms(60_000)
                .max(std::time::Duration::from_mins(1));
        loop {
            let dirty: Vec<FrameId> = {
                let flush = self.mutexes.flush.lock(&self.flush);
                flush.oldest(&self.frames, usize::MAX, crate::page::Lsn::MAX)
            };
            let twb_empty = self.twb.as_ref().is_none_or(|twb| twb.occupancy(self) == 0);
            if dirty.is_empty() && twb_empty {
                break;
            }
            self.check_poisoned()?;
            if std::time::Instant::now() >= deadline {
                return Err(Error::InvalidArgument(format!(
                    "flush_all: {} pages still dirty after the deadline (pages latched by a \
                     caller cannot be written)",
                    dirty.len()
                )));
            }
            let claimed = self.claim_for_write(dirty);
            let written = self.write_frames(claimed, true)?;
            self.counters
                .flush_list_flushes
                .fetch_add(written.len() as u64, Ordering::Relaxed);
            let progress = !written.is_empty();
            for id in written {
                self.frame(id).release_io(IO_WRITE);
            }
            let twb_written = match &self.twb {
                Some(twb) => twb.write_out(self)?,
                None => 0,
            };
            if !progress && twb_written == 0 {
                std::thread::sleep(std::time::Duration::from_micros(100));
            }
        }
        self.device.sync().map_err(|err| {
            self.poison(&err);
            Error::Device(err)
        })
    }
}
