//! The write mechanism every path uses: a batch of frames whose `IO_WRITE` state the caller has
//! claimed is handed to the write path in chunks of at most its `max_batch` pages (the bounded
//! burst: issue 9 item 5); each chunk, when its turn comes, is latched, made WAL-safe (the log
//! flushed to the chunk's newest modification), stamped (page LSN and checksum), downgraded to
//! a shared latch (readers go on, writers wait) and written, and each page is marked clean as
//! its write completes.
//!
//! Also here: writing every dirty page (`flush_all`), synchronous recoverability writes
//! (`preflush`) and oldest-first flush-list flushing (`flush_oldest`), which all schemes share.
//!
//! Lock order: called with no list mutex held (latches are taken blocking only when asked).

use std::time::{Duration, Instant};

use crate::core::frame::{FrameId, IO_WRITE, NO_PAGE};
use crate::core::instance::Instance;
use crate::core::pool::Core;
use crate::core::write_path::{PageWrite, WriteKind};
use crate::error::{DeviceError, Error, Result};
use crate::page::Lsn;
use crate::sync::Ordering;

/// Rounds of `preflush` (each writes what is dirty below the limit at its start).
const PREFLUSH_ROUNDS: usize = 16;

impl Core {
    /// Writes the claimed frames. Returns the frames written (clean now, unlatched, `IO_WRITE`
    /// still claimed: the caller evicts or releases them). Frames that were not dirty or could
    /// not be latched (with `blocking_latch` false) are released and left out.
    ///
    /// # Errors
    /// The WAL flush or a write failed: the pool is poisoned, every claimed frame released.
    #[allow(clippy::needless_pass_by_value)] // the claims are handed over with the list
    pub fn write_frames(
        &self,
        claimed: Vec<FrameId>,
        kind: WriteKind,
        blocking_latch: bool,
    ) -> Result<Vec<FrameId>> {
        let mut written = Vec::with_capacity(claimed.len());
        let result =
            self.write_frames_then(&claimed, kind, blocking_latch, &mut |id| written.push(id));
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

    /// As [`Core::write_frames`], but hands each frame to `on_written` as soon as its own write
    /// completes (clean, unlatched, `IO_WRITE` still claimed: `on_written` must release it), so
    /// a flusher can return frames to the free list while the rest of a large batch is still in
    /// flight.
    ///
    /// # Errors
    /// As [`Core::write_frames`]; frames already handed to `on_written` stay handed.
    pub fn write_frames_then(
        &self,
        claimed: &[FrameId],
        kind: WriteKind,
        blocking_latch: bool,
        on_written: &mut dyn FnMut(FrameId),
    ) -> Result<()> {
        self.write_frames_until(claimed, kind, blocking_latch, &|| false, on_written)
    }

    /// As [`Core::write_frames_then`], but asks `stop` before each chunk after the first and,
    /// when it says so, gives the frames not yet written back (claims released, still dirty)
    /// and returns `Ok`: how a background flusher ends a large batch when the pool shuts
    /// down instead of writing it all first.
    ///
    /// # Errors
    /// As [`Core::write_frames_then`].
    pub fn write_frames_until(
        &self,
        claimed: &[FrameId],
        kind: WriteKind,
        blocking_latch: bool,
        stop: &dyn Fn() -> bool,
        on_written: &mut dyn FnMut(FrameId),
    ) -> Result<()> {
        self.counters
            .max_flush_batch
            .fetch_max(claimed.len() as u64, Ordering::Relaxed);
        let chunk = self.parts.write_path.max_batch().max(1);
        let mut parts = claimed.chunks(chunk);
        // Each chunk is latched, made WAL-safe and stamped only when its turn comes (InnoDB
        // io-fixes a page when it enters a doublewrite batch): a page waiting in a later chunk
        // stays writable, so a large batch does not hold hot pages for its whole duration.
        let give_back = |rest: &[FrameId]| {
            for &id in rest {
                self.frame(id).release_io(IO_WRITE);
            }
        };
        let mut first = true;
        // Bound: one pass over the chunks.
        while let Some(part) = parts.next() {
            if !std::mem::take(&mut first) && stop() {
                give_back(part);
                parts.by_ref().for_each(give_back);
                return Ok(());
            }
            if let Err(err) = self.write_part(part.to_vec(), kind, blocking_latch, on_written) {
                // After a failure nothing more is written: give the rest back, still dirty.
                parts.by_ref().for_each(give_back);
                return Err(err);
            }
        }
        Ok(())
    }

    /// Latches, WAL-flushes, stamps and writes one chunk of claimed frames.
    fn write_part(
        &self,
        claimed: Vec<FrameId>,
        kind: WriteKind,
        blocking_latch: bool,
        on_written: &mut dyn FnMut(FrameId),
    ) -> Result<()> {
        let latched = self.latch_for_write(claimed, blocking_latch);
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
        for &id in &latched {
            let frame = self.frame(id);
            let page = frame.page_id();
            let lsn = frame.newest_modification.load(Ordering::Acquire);
            // SAFETY: latched exclusive by us.
            crate::page::stamp(unsafe { self.frame_bytes_mut(id) }, page, lsn);
            // SAFETY: latched exclusive by us; readers may share it during the write.
            unsafe { frame.downgrade() };
        }
        self.write_chunk(&latched, kind, on_written)
    }

    /// Latches each claimed frame exclusive (blocking or not) and keeps those that are still
    /// worth writing; releases the others.
    fn latch_for_write(&self, claimed: Vec<FrameId>, blocking_latch: bool) -> Vec<FrameId> {
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
            let held_busy = got
                && page != NO_PAGE
                && self
                    .parts
                    .miss
                    .held_write_in_flight(self, self.instance_of_frame(id), page);
            if got && !held_busy && frame.is_dirty() && page != NO_PAGE {
                latched.push(id);
                continue;
            }
            if got {
                // SAFETY: taken just above.
                unsafe { frame.unlatch_exclusive() };
            }
            frame.release_io(IO_WRITE);
        }
        latched
    }

    /// Writes one chunk (stamped, latched shared) through the write path.
    fn write_chunk(
        &self,
        part: &[FrameId],
        kind: WriteKind,
        on_written: &mut dyn FnMut(FrameId),
    ) -> Result<()> {
        let pages: Vec<PageWrite> = part
            .iter()
            .map(|&id| PageWrite {
                page: self.frame(id).page_id(),
                buf: self.frame_buffer(id),
            })
            .collect();
        self.counters.flush_batches.fetch_add(1, Ordering::Relaxed);
        let mut reported = vec![false; part.len()];
        let mut page_error: Option<DeviceError> = None;
        let path_result = self
            .parts
            .write_path
            .write(&pages, kind, &mut |index, result| {
                let Some(&id) = part.get(index) else {
                    return;
                };
                reported[index] = true;
                let frame = self.frame(id);
                if result.is_ok() {
                    self.note_written(
                        frame.page_id(),
                        frame.newest_modification.load(Ordering::Acquire),
                    );
                    let mut flush = self.instance_of_frame(id).lock_flush();
                    flush.remove(&self.frames, id);
                }
                // SAFETY: downgraded to shared before the write.
                unsafe { frame.unlatch_shared() };
                match result {
                    Ok(()) => on_written(id),
                    Err(err) => {
                        self.poison(&err);
                        page_error.get_or_insert(err);
                        frame.release_io(IO_WRITE);
                    }
                }
            });
        for (index, &id) in part.iter().enumerate() {
            if !reported[index] {
                self.give_back_shared(id);
            }
        }
        if let Err(err) = path_result {
            self.poison(&err);
            return Err(Error::Device(err));
        }
        page_error.map_or(Ok(()), |err| Err(Error::Device(err)))
    }

    /// Releases a frame latched shared for a write that was not made (it stays dirty).
    fn give_back_shared(&self, id: FrameId) {
        let frame = self.frame(id);
        // SAFETY: downgraded to shared by `write_part`.
        unsafe { frame.unlatch_shared() };
        frame.release_io(IO_WRITE);
    }

    fn release_latched(&self, latched: &[FrameId]) {
        for &id in latched {
            let frame = self.frame(id);
            // SAFETY: latched exclusive by `latch_for_write`.
            unsafe { frame.unlatch_exclusive() };
            frame.release_io(IO_WRITE);
        }
    }

    /// Claims `IO_WRITE` on every dirty frame of `candidates` that is idle. Call with the
    /// candidates' flush list mutex held: a frame leaves the flush list (under that mutex)
    /// before it can be freed, so a frame dirty under the mutex is not free, and the claim
    /// never lands on a frame a miss is about to take from the free list (which asserts that
    /// a free frame has no I/O). Checked outside the mutex, the page could be written and its
    /// frame freed between the dirty check and the claim.
    pub fn claim_for_write(&self, candidates: impl IntoIterator<Item = FrameId>) -> Vec<FrameId> {
        candidates
            .into_iter()
            .filter(|&id| {
                let frame = self.frame(id);
                frame.is_dirty() && frame.try_claim_io(IO_WRITE)
            })
            .collect()
    }

    /// Writes a claimed victim in the calling thread (a synchronous replacement write: the read
    /// stall) through the single-page path; returns whether it was written.
    ///
    /// # Errors
    /// The write failed (the pool is poisoned).
    pub fn write_victim(&self, victim: FrameId) -> Result<bool> {
        let written = self.write_frames(vec![victim], WriteKind::Single, false)?;
        self.counters
            .sync_replacement_writes
            .fetch_add(written.len() as u64, Ordering::Relaxed);
        Ok(!written.is_empty())
    }

    /// InnoDB's `buf_flush_try_neighbors` (`innodb_flush_neighbors`): adds to `claimed` the
    /// cached, dirty, idle pages of the same 64-page extents, claimed for writing.
    pub fn claim_neighbors(&self, claimed: &mut Vec<FrameId>) {
        let extent = crate::core::instance::INSTANCE_EXTENT_PAGES;
        let mut extents: Vec<u64> = claimed
            .iter()
            .map(|&id| self.frame(id).page_id())
            .filter(|&page| page != NO_PAGE)
            .map(|page| page / extent)
            .collect();
        extents.sort_unstable();
        extents.dedup();
        for first in extents.into_iter().map(|e| e * extent) {
            for page in first..(first + extent).min(self.pages) {
                let Some(id) = self.table.lookup(page) else {
                    continue;
                };
                let frame = self.frame(id);
                // Under the flush list's mutex, as in `claim_for_write`: the page may have
                // been written and its frame freed since the lookup.
                let _flush = self.instance_of_frame(id).lock_flush();
                if frame.is_dirty() && !frame.is_pinned() && frame.try_claim_io(IO_WRITE) {
                    claimed.push(id);
                }
            }
        }
    }

    /// Writes up to `pages` of `instance`'s oldest dirty pages below `lsn_limit` as a batch;
    /// they stay cached. Returns pages written.
    ///
    /// # Errors
    /// A write failure (the pool is poisoned).
    pub fn flush_oldest(&self, instance: &Instance, pages: usize, lsn_limit: Lsn) -> Result<u64> {
        self.flush_oldest_ext(instance, pages, lsn_limit, false, &|| false)
    }

    /// [`Core::flush_oldest`], also writing each page's dirty extent neighbours when
    /// `neighbors` (InnoDB's `innodb_flush_neighbors`), and asking `stop` before each chunk
    /// after the first (as [`Core::write_frames_until`]): a background flusher passes the
    /// pool's shutdown, so a large flush-list batch ends after the chunk in flight and the rest
    /// stays dirty.
    ///
    /// # Errors
    /// A write failure (the pool is poisoned).
    pub fn flush_oldest_ext(
        &self,
        instance: &Instance,
        pages: usize,
        lsn_limit: Lsn,
        neighbors: bool,
        stop: &dyn Fn() -> bool,
    ) -> Result<u64> {
        let mut claimed = {
            let flush = instance.lock_flush();
            self.claim_for_write(flush.oldest(&self.frames, pages, lsn_limit))
        };
        if neighbors {
            self.claim_neighbors(&mut claimed);
        }
        let mut written = 0u64;
        self.write_frames_until(&claimed, WriteKind::Batch, false, stop, &mut |id| {
            written += 1;
            self.frame(id).release_io(IO_WRITE);
        })?;
        Ok(written)
    }

    /// A synchronous recoverability write: every dirty page (and held copy) older than
    /// `lsn_limit`, written by the calling thread. Bound: `PREFLUSH_ROUNDS` rounds, each
    /// writing what is dirty at its start.
    ///
    /// # Errors
    /// A write failure (the pool is poisoned).
    pub fn preflush(&self, lsn_limit: Lsn) -> Result<u64> {
        let mut total = 0;
        for _ in 0..PREFLUSH_ROUNDS {
            let held = self.parts.miss.held_oldest_lsn(self);
            let mut written = 0;
            for instance in &self.instances {
                if held != 0 && held < lsn_limit {
                    written += self.parts.miss.write_held(self, instance)? as u64;
                }
                written += self.flush_oldest(instance, usize::MAX, lsn_limit)?;
            }
            total += written;
            if written == 0 || self.oldest_unflushed_lsn() >= lsn_limit {
                break;
            }
        }
        self.counters
            .sync_recoverability_writes
            .fetch_add(total, Ordering::Relaxed);
        Ok(total)
    }

    /// Writes every dirty page and held copy, then syncs the device.
    ///
    /// # Errors
    /// The first write or sync error (the pool is poisoned); pages that stay latched by a
    /// caller past the deadline.
    pub fn flush_all(&self) -> Result<()> {
        self.check_poisoned()?;
        // Bound: a deadline. Each round writes every dirty page it can claim; pages another
        // thread is writing (or re-dirtied meanwhile) are caught by a later round; when a round
        // makes no progress it waits briefly for the other writer.
        let deadline = Instant::now() + self.device_ms(60_000).max(Duration::from_mins(1));
        loop {
            let mut dirty = 0;
            let mut progress = false;
            for instance in &self.instances {
                let (candidates, claimed) = {
                    let flush = instance.lock_flush();
                    let candidates = flush.oldest(&self.frames, usize::MAX, Lsn::MAX);
                    (candidates.len(), self.claim_for_write(candidates))
                };
                dirty += candidates;
                let written = self.write_frames(claimed, WriteKind::Batch, true)?;
                self.counters
                    .flush_list_flushes
                    .fetch_add(written.len() as u64, Ordering::Relaxed);
                progress |= !written.is_empty();
                for id in written {
                    self.frame(id).release_io(IO_WRITE);
                }
                progress |= self.parts.miss.write_held(self, instance)? > 0;
            }
            if dirty == 0 && self.parts.miss.held_pages(self) == 0 {
                break;
            }
            self.check_poisoned()?;
            if Instant::now() >= deadline {
                return Err(Error::InvalidArgument(format!(
                    "flush_all: {dirty} pages still dirty after the deadline (pages latched by a \
                     caller cannot be written)"
                )));
            }
            if !progress {
                crate::sync::sleep(Duration::from_micros(100));
            }
        }
        self.parts.write_path.sync().map_err(|err| {
            self.poison(&err);
            Error::Poisoned(err)
        })
    }
}
