//! InnoDB's doublewrite buffer (MySQL 5.7 `buf0dblwr.cc`; docs/algorithms.md section 1b), the
//! `doublewrite` torn-page protection: a page is written to the doublewrite area and synced
//! before it is written in place, so after a crash a torn in-place write is restored from its
//! copy, and a torn copy leaves the in-place page untouched.
//!
//! The area is 2 x 64 pages of the data device: [`SINGLE_SLOTS`] (8) slots for single-page
//! flushes and [`BATCH_SLOTS`] (120, `srv_doublewrite_batch_size`) for batches
//! (`docs/datafile-format.md` places it).
//!
//! - **Batch** (page cleaner, LRU-C flusher, TWB, checkpoint flushing): one batch at a time (the
//!   next waits for the previous: `batch_running`); up to 120 pages are written to the batch
//!   slots as one sequential submission, the area is synced (InnoDB fsyncs the system
//!   tablespace), the pages are written in place concurrently, each reported as it completes,
//!   and when the last completes the data file is synced (`buf_dblwr_sync_datafiles`). Only
//!   then may the next batch reuse the slots.
//! - **Single page** (a read stall's `buf_flush_single_page_from_LRU`, the RW victim): take one
//!   of the 8 single-page slots, waiting while all are taken; write the page to it
//!   synchronously, sync the area, write it in place synchronously, sync the data file; the
//!   slot is released after the in-place write and its sync.
//!
//! Syncs go through one [`SyncGate`] per file, as InnoDB's `fil_flush` serializes flushes per
//! file: the area's gate (the system tablespace) and the data file's gate. A sync of the area
//! and a sync of the data file may run at once on the device; two syncs of one file never do,
//! and a sync that started after a caller's writes completed covers them. A failed sync of
//! either is sticky for both (siblings: the device may have dropped both files' writes).
//!
//! With `O_DIRECT_NO_FSYNC` every sync is skipped, as InnoDB skips them (`fil_buffering_disabled`
//! covers the system tablespace too); the copies then protect nothing across a power loss on a
//! drive with a volatile cache, which is InnoDB's behaviour too.
//!
//! Recovery ([`restore_torn_pages`]): before the redo log is replayed, every valid copy in the
//! area (checksum and page id verify) is compared with its in-place page; a page that does not
//! verify is restored from the newest valid copy (highest page LSN) at or past the checkpoint's
//! redo point. A copy below the redo point is stale: the write it protected was synced before
//! that checkpoint, and the page may have been written since without a copy (the fused RW
//! command's `unsynced-victim`); restoring it would silently drop the changes between the copy
//! and the redo point, so such a page is left torn and recovery names it.
//!
//! **After a failed sync** (sticky; Linux keeps unsynced writes pending or drops them, see
//! [`SyncGate`]) the in-place writes of the batch or single page whose data-file sync failed
//! are not known durable, and may tear at a crash: their copies are the only intact images.
//! So the slots they occupy are *retired*, never reused (the batch area is retired whole), and
//! no copy is written once a sync of the device has failed: every later write is refused with
//! the sticky failure before it touches the area. (InnoDB aborts on a failed fsync, so its area
//! is never written again either.) Before this rule a batch released its slots after a failed
//! sync and the next batch overwrote the copies of pages whose writes then tore at the crash.
//!
//! Lock order: `batch_running` → either gate (the gates are leaves, never held together);
//! `single` is a leaf. No list mutex is ever held here.

use std::sync::Arc;
use std::time::Instant;

use crate::core::write_path::{
    PageWrite, SyncGate, WriteKind, WritePath, WritePathStats, write_in_place,
};
use crate::device::{AlignedBuf, IoBuffer, IoRequest, SharedDevice};
use crate::error::{DeviceError, PageId, Result};
use crate::sync::{AtomicU64, Condvar, Mutex, Ordering};

/// Single-page slots (InnoDB 5.7: 2 x 64 - 120).
pub const SINGLE_SLOTS: usize = 8;
/// Batch slots (`srv_doublewrite_batch_size`).
pub const BATCH_SLOTS: usize = 120;
/// Pages of the doublewrite area.
pub const AREA_PAGES: usize = SINGLE_SLOTS + BATCH_SLOTS;
/// Bound on the waits for a single-page slot (each at most 50 ms real time).
const MAX_SLOT_WAITS: usize = 1 << 20;

/// Where the doublewrite area lives (InnoDB: in the system tablespace, a file of its own).
#[derive(Debug, Clone)]
pub struct DoublewriteArea {
    /// The device holding the area (the database's whole data device).
    pub device: SharedDevice,
    /// Its first page on that device (single-page slots first, then batch slots).
    pub first_page: u64,
}

impl DoublewriteArea {
    fn single_slot_page(&self, slot: usize) -> u64 {
        assert!(slot < SINGLE_SLOTS);
        self.first_page + slot as u64
    }

    fn batch_slot_page(&self, slot: usize) -> u64 {
        assert!(slot < BATCH_SLOTS);
        self.first_page + (SINGLE_SLOTS + slot) as u64
    }
}

/// What the two layouts of the area ([`Doublewrite`] and the 8.0-style
/// [`Doublewrite8`](super::doublewrite8::Doublewrite8)) share: how a [`WritePath::write`] call is
/// routed, and how a single-page write ends (the in-place write synced before its slot is freed).
pub(super) trait AreaRouting: WritePath {
    /// Whether the flush method syncs (`O_DIRECT` with fsyncs).
    fn fsync(&self) -> bool;
    /// The data file's gate (in-place writes are counted and synced there).
    fn data_gate(&self) -> &SyncGate;
    /// Whether background batches go through the area (`true`, InnoDB).
    fn batches_through_area(&self) -> bool;
    /// A batch through the area: copies, their sync, the in-place writes, their sync.
    fn write_batch(
        &self,
        pages: &[PageWrite],
        done: &mut dyn FnMut(usize, std::result::Result<(), DeviceError>),
    ) -> std::result::Result<(), DeviceError>;
    /// Frees single-page slot `slot` (taken by [`WritePath::before_single`]).
    fn release_single(&self, slot: usize);
    /// Leaves single-page slot `slot` taken for good (its data-file sync failed) and wakes the
    /// threads waiting for a slot, to see the failure.
    fn retire_single(&self, slot: usize);

    /// Syncs the file behind `gate` when the flush method asks for syncs.
    fn sync_if_asked(&self, gate: &SyncGate) -> std::result::Result<(), DeviceError> {
        if self.fsync() {
            gate.sync()?;
        }
        Ok(())
    }

    /// The sticky failure of a sync of the device, if any: once one failed, no copy may be
    /// written (a retired slot's copy may be the only intact image of its page; see the module
    /// docs).
    fn refuse_after_failed_sync(&self) -> std::result::Result<(), DeviceError> {
        self.data_gate().failure().map_or(Ok(()), Err)
    }

    /// Ends a single-page write whose in-place write completed: the data file is synced before
    /// the slot's copy may be overwritten. If that sync fails the slot is retired (never freed):
    /// the in-place write is not known durable and may tear at a crash.
    fn finish_single(&self, slot: usize) -> std::result::Result<(), DeviceError> {
        let synced = self.sync_if_asked(self.data_gate());
        if synced.is_ok() {
            self.release_single(slot);
        } else {
            self.retire_single(slot);
        }
        synced
    }

    /// One page through a single-page slot, then in place.
    fn write_single(
        &self,
        write: &PageWrite,
        done: &mut dyn FnMut(usize, std::result::Result<(), DeviceError>),
    ) -> std::result::Result<(), DeviceError> {
        let slot = self.before_single(write.page, write.buf)?;
        // SAFETY: the page stays latched until its completion is reported.
        unsafe { write_in_place(self.data_gate(), std::slice::from_ref(write), done) };
        self.finish_single(slot)
    }

    /// [`WritePath::write`]: a single page through its slot; a batch through the area, or in
    /// place and then synced when batches bypass it.
    fn route_write(
        &self,
        pages: &[PageWrite],
        kind: WriteKind,
        done: &mut dyn FnMut(usize, std::result::Result<(), DeviceError>),
    ) -> std::result::Result<(), DeviceError> {
        match (kind, pages) {
            (WriteKind::Single, [one]) => self.write_single(one, done),
            _ if self.batches_through_area() => self.write_batch(pages, done),
            _ => {
                // SAFETY: the WritePath contract: buffers stay valid until reported.
                unsafe { write_in_place(self.data_gate(), pages, done) };
                self.sync_if_asked(self.data_gate())
            }
        }
    }
}

/// The doublewrite write path (see the module docs).
#[derive(Debug)]
pub struct Doublewrite {
    area: DoublewriteArea,
    /// Syncs of the area's file (its writes are counted here).
    area_gate: Arc<SyncGate>,
    /// Syncs of the data file (in-place writes are counted here).
    data_gate: Arc<SyncGate>,
    fsync: bool,
    /// Batches go through the area too (InnoDB); off: in place, then a sync.
    batches_through_area: bool,
    /// Largest batch a call takes (`BATCH_SLOTS` when batches use the area).
    max_batch: usize,
    /// Held while a batch runs; `true` once the batch area is retired (a batch's data-file
    /// sync failed: its copies must stay).
    batch_running: Mutex<bool>,
    single: Mutex<[bool; SINGLE_SLOTS]>,
    single_freed: Condvar,
    pages: AtomicU64,
    batches: AtomicU64,
    slot_waits: AtomicU64,
    slot_wait_ns: AtomicU64,
}

impl Doublewrite {
    /// The doublewrite over `area`, writing data pages in place to `data_gate`'s device; when
    /// `fsync` (InnoDB's `O_DIRECT`) the area is synced through a gate of its own and the data
    /// file through `data_gate` (one gate per file, as `fil_flush`).
    #[must_use]
    pub fn new(area: DoublewriteArea, data_gate: Arc<SyncGate>, fsync: bool) -> Self {
        Doublewrite {
            area_gate: Arc::new(data_gate.sibling(Arc::clone(&area.device))),
            area,
            data_gate,
            fsync,
            batches_through_area: true,
            max_batch: BATCH_SLOTS,
            batch_running: Mutex::new(false),
            single: Mutex::new([false; SINGLE_SLOTS]),
            single_freed: Condvar::new(),
            pages: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            slot_waits: AtomicU64::new(0),
            slot_wait_ns: AtomicU64::new(0),
        }
    }

    /// Whether background batches go through the area (`true`, InnoDB) or are written in place
    /// and synced, up to `max_batch` pages at a time (the drill-down of issue 9 isolates the
    /// single-page doublewrite this way).
    #[must_use]
    pub fn with_batches(mut self, through_area: bool, max_batch: usize) -> Self {
        self.batches_through_area = through_area;
        self.max_batch = if through_area {
            BATCH_SLOTS
        } else {
            max_batch.max(1)
        };
        self
    }

    /// Takes a free single-page slot, waiting while all are taken; refuses once a sync of the
    /// device has failed (retired slots are never freed).
    fn acquire_slot(&self) -> std::result::Result<usize, DeviceError> {
        let mut slots = self.single.lock();
        let mut waited: Option<Instant> = None;
        for _ in 0..MAX_SLOT_WAITS {
            self.refuse_after_failed_sync()?;
            if let Some(slot) = slots.iter().position(|taken| !taken) {
                slots[slot] = true;
                if let Some(began) = waited {
                    let scale = self.area.device.info().time_scale.max(f64::MIN_POSITIVE);
                    self.slot_wait_ns.fetch_add(
                        (began.elapsed().as_nanos() as f64 / scale) as u64,
                        Ordering::Relaxed,
                    );
                }
                return Ok(slot);
            }
            if waited.is_none() {
                waited = Some(Instant::now());
                self.slot_waits.fetch_add(1, Ordering::Relaxed);
            }
            let _ = self
                .single_freed
                .wait_for(&mut slots, std::time::Duration::from_millis(50));
        }
        Err(DeviceError::Io {
            page: None,
            kind: std::io::ErrorKind::TimedOut,
            message: "no single-page doublewrite slot became free".into(),
        })
    }

    fn release_slot(&self, slot: usize) {
        let mut slots = self.single.lock();
        assert!(slots[slot], "released a free doublewrite slot");
        slots[slot] = false;
        drop(slots);
        self.single_freed.notify_one();
    }

    /// Writes `buf` to area page `page` and waits.
    fn write_copy(&self, page: u64, buf: IoBuffer) -> std::result::Result<(), DeviceError> {
        let request = IoRequest::write(page, buf);
        // SAFETY: the caller keeps `buf` latched (or owned) until the copy completes; we wait.
        let tickets = unsafe { self.area.device.submit(vec![request]) };
        crate::device::ticket::wait_all(tickets)?;
        self.area_gate.write_completed();
        Ok(())
    }
}

impl AreaRouting for Doublewrite {
    fn fsync(&self) -> bool {
        self.fsync
    }

    fn data_gate(&self) -> &SyncGate {
        &self.data_gate
    }

    fn batches_through_area(&self) -> bool {
        self.batches_through_area
    }

    fn release_single(&self, slot: usize) {
        self.release_slot(slot);
    }

    fn retire_single(&self, slot: usize) {
        assert!(self.single.lock()[slot], "retired a free doublewrite slot");
        self.single_freed.notify_all();
    }

    fn write_batch(
        &self,
        pages: &[PageWrite],
        done: &mut dyn FnMut(usize, std::result::Result<(), DeviceError>),
    ) -> std::result::Result<(), DeviceError> {
        assert!(
            pages.len() <= BATCH_SLOTS,
            "the core chunks batches to the area"
        );
        let mut area_retired = self.batch_running.lock();
        self.refuse_after_failed_sync()?;
        if *area_retired {
            // Retired by a sync that failed without a sticky failure (a gate that gave up
            // waiting): its copies must stay all the same.
            return Err(DeviceError::Io {
                page: None,
                kind: std::io::ErrorKind::Other,
                message: "the doublewrite batch area is retired: a data-file sync failed".into(),
            });
        }
        let copies = pages
            .iter()
            .enumerate()
            .map(|(slot, write)| IoRequest::write(self.area.batch_slot_page(slot), write.buf))
            .collect();
        // SAFETY: the pages stay latched until their in-place writes are reported below.
        let tickets = unsafe { self.area.device.submit(copies) };
        crate::device::ticket::wait_all(tickets)?;
        for _ in pages {
            self.area_gate.write_completed();
        }
        self.pages.fetch_add(pages.len() as u64, Ordering::Relaxed);
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.sync_if_asked(&self.area_gate)?;
        // SAFETY: as above.
        unsafe { write_in_place(&self.data_gate, pages, done) };
        // The slots may be reused only once the in-place writes are durable; never if that
        // sync fails (see the module docs).
        let synced = self.sync_if_asked(&self.data_gate);
        *area_retired = synced.is_err();
        synced
    }
}

impl WritePath for Doublewrite {
    fn name(&self) -> &'static str {
        "doublewrite"
    }

    fn write(
        &self,
        pages: &[PageWrite],
        kind: WriteKind,
        done: &mut dyn FnMut(usize, std::result::Result<(), DeviceError>),
    ) -> std::result::Result<(), DeviceError> {
        self.route_write(pages, kind, done)
    }

    fn before_single(
        &self,
        _page: PageId,
        buf: IoBuffer,
    ) -> std::result::Result<usize, DeviceError> {
        let slot = self.acquire_slot()?;
        let copied = self
            .write_copy(self.area.single_slot_page(slot), buf)
            .and_then(|()| self.sync_if_asked(&self.area_gate));
        match copied {
            Ok(()) => {
                self.pages.fetch_add(1, Ordering::Relaxed);
                Ok(slot)
            }
            Err(err) => {
                self.release_slot(slot);
                Err(err)
            }
        }
    }

    fn after_single(&self, slot: usize) -> std::result::Result<(), DeviceError> {
        // The caller's own in-place write (the fused command) has completed: count it first.
        self.data_gate.write_completed();
        self.finish_single(slot)
    }

    fn count_unprotected_write(&self) {
        self.data_gate.write_completed();
    }

    fn sync(&self) -> std::result::Result<(), DeviceError> {
        // Checkpoints need the data pages durable; copies in the area only matter until then.
        self.data_gate.sync()
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn is_doublewrite(&self) -> bool {
        true
    }

    fn stats(&self) -> WritePathStats {
        let mut stats = WritePathStats {
            doublewrite_pages: self.pages.load(Ordering::Relaxed),
            doublewrite_batches: self.batches.load(Ordering::Relaxed),
            doublewrite_slot_waits: self.slot_waits.load(Ordering::Relaxed),
            doublewrite_slot_wait_ms: self.slot_wait_ns.load(Ordering::Relaxed) as f64 / 1e6,
            ..WritePathStats::default()
        };
        self.area_gate.fill_stats(&mut stats);
        self.data_gate.fill_stats(&mut stats);
        stats
    }
}

/// What [`restore_torn_pages`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct RestoreReport {
    /// Valid page copies found in the area.
    pub copies: usize,
    /// In-place pages that did not verify and were restored from a copy.
    pub restored: usize,
}

/// Restores, from the doublewrite area, every data page whose in-place image does not verify
/// (see the module docs); syncs if it wrote anything. `data` is the pool's view of the data
/// pages (page ids as stamped in the copies); `is_intact(bytes, page)` is the database's check
/// of an in-place page (checksum, page id, not all zeros below the high-water mark); copies
/// with a page LSN below `redo_lsn` (the checkpoint's redo point) are stale and ignored.
///
/// # Errors
/// Device errors.
pub fn restore_torn_pages(
    area: &DoublewriteArea,
    data: &SharedDevice,
    redo_lsn: u64,
    is_intact: &dyn Fn(&[u8], PageId) -> bool,
) -> Result<RestoreReport> {
    let page_size = area.device.info().page_size;
    let pages = data.info().pages;
    let mut best: std::collections::HashMap<PageId, (u64, Vec<u8>)> =
        std::collections::HashMap::new();
    let mut buf = AlignedBuf::new(page_size);
    for offset in 0..AREA_PAGES as u64 {
        area.device.read_page(area.first_page + offset, &mut buf)?;
        let bytes = buf.as_slice();
        let Some(page) = crate::page::stamped_page_id(bytes) else {
            continue;
        };
        if page >= pages {
            continue;
        }
        let Ok(lsn) = crate::page::verify(bytes, page) else {
            continue;
        };
        if lsn < redo_lsn {
            continue;
        }
        if best.get(&page).is_none_or(|(held, _)| lsn > *held) {
            best.insert(page, (lsn, bytes.to_vec()));
        }
    }
    let mut report = RestoreReport {
        copies: best.len(),
        restored: 0,
    };
    let mut current = AlignedBuf::new(page_size);
    for (page, (_, copy)) in best {
        data.read_page(page, &mut current)?;
        if is_intact(current.as_slice(), page) {
            continue;
        }
        current.as_mut_slice().copy_from_slice(&copy);
        data.write_page(page, &current)?;
        report.restored += 1;
    }
    if report.restored > 0 {
        data.sync()?;
    }
    Ok(report)
}
