//! MySQL 8.0's doublewrite (8.0.20 on, WL#5655; `docs/policies.md`, "doublewrite8"), the
//! `doublewrite8` torn-page protection: the same guarantee as the 5.7 doublewrite
//! ([`super::doublewrite`]): a page's copy is durable before its in-place write starts, but
//! batches no longer queue behind one global batch. The area is cut into *segments* of
//! `doublewrite_pages` pages (`innodb_doublewrite_pages`) and single-page slots; a batch is cut
//! into segment-sized groups, each written through a free segment of its own, so batches of
//! different flushing threads (the page cleaner's workers, the LRU-C flusher, the TWB) write
//! and sync their copies in parallel.
//!
//! **Layout** ([`Layout`]; `docs/datafile-format.md` draws it): the 128 pages of the data
//! file's doublewrite area, read as MySQL 8.0's two doublewrite files:
//!
//! ```text
//! area page   MySQL 8.0 counterpart          contents
//! 0 .. 64     the flush-list file (#ib_*_0)  64 / P batch segments of P pages
//! 64 .. 96    the LRU file (#ib_*_1)         32 / P batch segments of P pages
//! 96 .. 128   the LRU file's single slots    32 single-page slots
//! ```
//!
//! `P` (`doublewrite_pages`) is a power of two from 1 to 32 (default 16: 6 segments). Each file
//! is synced through a [`SyncGate`] of its own (8.0's files are files of their own), a sibling
//! of the data file's gate.
//!
//! - **Batch** (at most `write_batch_pages`, 120 by default, as the 5.7 path): cut into groups
//!   of `P` pages, written in *waves*: take as many free segments as there are groups left, up
//!   to half the segments (at least one, waiting while all are taken), so that another thread
//!   always finds one free; write every group's copies into its segment (one submission, each
//!   group sequential), sync the files used, write the wave's pages in place concurrently (each
//!   reported as it completes), sync the data file, release the segments (8.0 returns a segment
//!   to its queue after `fil_flush_file_spaces`, when its batch's last page completes). A wave
//!   stands for the batches 8.0's instances have in flight at once (each instance one).
//! - **Single page** (a read stall's single-page flush, the fused RW command's victim): take a
//!   free single-page slot (waiting while all 32 are taken), write the copy, sync the LRU
//!   file, write in place, sync the data file, release the slot (8.0's `sync_page_flush`).
//!
//! Differences from MySQL 8.0 (all in `docs/policies.md`): 8.0 keeps one doublewrite instance
//! per buffer-pool instance and list (LRU, flush list), each collecting pages into a buffer of
//! `P` pages and taking a segment of its list's file when full, its in-place writes completing
//! asynchronously while the flushing thread goes on; here the core hands over batches already
//! formed and waits for them, so a batch's groups go out together in a wave, and every group
//! takes any free segment of either file (the core does not say which list a batch came from). 8.0 has 512 single-page slots; the area holds 32. 8.0
//! skips the segment's fsync under `O_DIRECT`; here it is skipped only under
//! `O_DIRECT_NO_FSYNC`, as the 5.7 path does, since without it a drive with a volatile cache
//! may lose the copy of a page whose in-place write then tears.
//!
//! Recovery is the 5.7 path's [`super::doublewrite::restore_torn_pages`]: it scans all 128
//! area pages whatever their layout, so copies written under either protection repair torn
//! pages (the newest valid copy at or past the checkpoint's redo point wins).
//!
//! After a failed sync the segments and slots whose in-place writes it should have made durable
//! are retired, and no copy is written any more, as in the 5.7 path (see its module docs,
//! "After a failed sync").
//!
//! Lock order: `segments` and `singles` are leaves (never held across I/O or together); the
//! gates are leaves.

use std::sync::Arc;
use std::time::Instant;

use crate::core::write_path::{
    PageWrite, SyncGate, WriteKind, WritePath, WritePathStats, write_in_place,
};
use crate::device::{IoBuffer, IoRequest, SharedDevice};
use crate::engine::innodb::doublewrite::{AREA_PAGES, AreaRouting, DoublewriteArea};
use crate::error::{DeviceError, PageId};
use crate::sync::{AtomicU64, Condvar, Mutex, Ordering};

/// Pages of the flush-list file (the first half of the area).
pub const FLUSH_LIST_FILE_PAGES: usize = AREA_PAGES / 2;
/// Single-page slots, at the end of the LRU file.
pub const SINGLE_SLOTS: usize = 32;
/// Pages of the LRU file given to batch segments.
pub const LRU_BATCH_PAGES: usize = AREA_PAGES - FLUSH_LIST_FILE_PAGES - SINGLE_SLOTS;
/// Default segment size (`innodb_doublewrite_pages`).
pub const DEFAULT_SEGMENT_PAGES: usize = 16;
/// Largest segment size (a segment fits the LRU file's batch part).
pub const MAX_SEGMENT_PAGES: usize = LRU_BATCH_PAGES;
/// Bound on the waits for a segment or slot (each at most 50 ms real time).
const MAX_WAITS: usize = 1 << 20;

/// The two doublewrite files of MySQL 8.0, as halves of the area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum DoublewriteFile {
    /// `#ib_<page size>_0.dblwr`: flush-list batches in 8.0.
    FlushList = 0,
    /// `#ib_<page size>_1.dblwr`: LRU batches and the single-page slots in 8.0.
    Lru = 1,
}

/// A batch segment: where it starts in the area and which file holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// First area page.
    pub first_page: u64,
    /// The file.
    pub file: DoublewriteFile,
}

/// The area cut into segments of `segment_pages` pages and single-page slots (see the module
/// docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Pages per batch segment (`innodb_doublewrite_pages`).
    pub segment_pages: usize,
    /// The batch segments, flush-list file first.
    pub segments: Vec<Segment>,
    /// Area pages of the single-page slots.
    pub single_slots: Vec<u64>,
}

impl Layout {
    /// Whether `segment_pages` is a segment size the area can be cut into.
    #[must_use]
    pub fn valid_segment_pages(segment_pages: usize) -> bool {
        segment_pages.is_power_of_two() && segment_pages <= MAX_SEGMENT_PAGES
    }

    /// The layout for segments of `segment_pages` pages.
    ///
    /// # Panics
    /// If `segment_pages` is not [`Layout::valid_segment_pages`] (the config validates it).
    #[must_use]
    pub fn new(segment_pages: usize) -> Layout {
        assert!(
            Self::valid_segment_pages(segment_pages),
            "segment size validated by the config"
        );
        let cut = |file, start: usize, pages: usize| {
            (0..pages / segment_pages).map(move |index| Segment {
                first_page: (start + index * segment_pages) as u64,
                file,
            })
        };
        let segments = cut(DoublewriteFile::FlushList, 0, FLUSH_LIST_FILE_PAGES)
            .chain(cut(
                DoublewriteFile::Lru,
                FLUSH_LIST_FILE_PAGES,
                LRU_BATCH_PAGES,
            ))
            .collect();
        let singles_start = FLUSH_LIST_FILE_PAGES + LRU_BATCH_PAGES;
        Layout {
            segment_pages,
            segments,
            single_slots: (singles_start..singles_start + SINGLE_SLOTS)
                .map(|page| page as u64)
                .collect(),
        }
    }
}

/// Free/taken flags of a set of segments or slots, with a condvar to wait for a release.
#[derive(Debug)]
struct FreeSet {
    taken: Mutex<Vec<bool>>,
    freed: Condvar,
    waits: AtomicU64,
    wait_ns: AtomicU64,
}

impl FreeSet {
    fn new(count: usize) -> Self {
        FreeSet {
            taken: Mutex::new(vec![false; count]),
            freed: Condvar::new(),
            waits: AtomicU64::new(0),
            wait_ns: AtomicU64::new(0),
        }
    }

    /// Takes up to `wanted` free members (at least one, waiting while all are taken).
    fn acquire_up_to(
        &self,
        wanted: usize,
        scale: f64,
        what: &str,
        refuse: &dyn Fn() -> std::result::Result<(), DeviceError>,
    ) -> std::result::Result<Vec<usize>, DeviceError> {
        let first = self.acquire(scale, what, refuse)?;
        let mut held = vec![first];
        let mut taken = self.taken.lock();
        for (index, busy) in taken.iter_mut().enumerate() {
            if held.len() >= wanted {
                break;
            }
            if !*busy {
                *busy = true;
                held.push(index);
            }
        }
        drop(taken);
        held.sort_unstable();
        Ok(held)
    }

    /// Takes a free member, waiting while all are taken; `scale` converts real waits to device
    /// time. Fails with `refuse`'s error as soon as it returns one (checked before each try:
    /// retired members are never freed).
    fn acquire(
        &self,
        scale: f64,
        what: &str,
        refuse: &dyn Fn() -> std::result::Result<(), DeviceError>,
    ) -> std::result::Result<usize, DeviceError> {
        let mut taken = self.taken.lock();
        let mut waited: Option<Instant> = None;
        for _ in 0..MAX_WAITS {
            refuse()?;
            if let Some(index) = taken.iter().position(|busy| !busy) {
                taken[index] = true;
                if let Some(began) = waited {
                    self.wait_ns.fetch_add(
                        (began.elapsed().as_nanos() as f64 / scale) as u64,
                        Ordering::Relaxed,
                    );
                }
                return Ok(index);
            }
            if waited.is_none() {
                waited = Some(Instant::now());
                self.waits.fetch_add(1, Ordering::Relaxed);
            }
            let _ = self
                .freed
                .wait_for(&mut taken, std::time::Duration::from_millis(50));
        }
        Err(DeviceError::Io {
            page: None,
            kind: std::io::ErrorKind::TimedOut,
            message: format!("no doublewrite {what} became free"),
        })
    }

    fn release(&self, index: usize) {
        let mut taken = self.taken.lock();
        assert!(taken[index], "released a free doublewrite segment or slot");
        taken[index] = false;
        drop(taken);
        self.freed.notify_one();
    }

    /// Leaves a taken member taken for good (its copy must stay; see the module docs), and
    /// wakes every waiter to see the failure that retired it.
    fn retire(&self, index: usize) {
        assert!(
            self.taken.lock()[index],
            "retired a free doublewrite segment or slot"
        );
        self.freed.notify_all();
    }
}

/// The MySQL 8.0 doublewrite write path (see the module docs).
#[derive(Debug)]
pub struct Doublewrite8 {
    area: DoublewriteArea,
    layout: Layout,
    /// Syncs of the flush-list file.
    flush_list_gate: Arc<SyncGate>,
    /// Syncs of the LRU file.
    lru_gate: Arc<SyncGate>,
    /// Syncs of the data file.
    data_gate: Arc<SyncGate>,
    fsync: bool,
    /// Batches go through the area too (InnoDB); off: in place, then a sync.
    batches_through_area: bool,
    max_batch: usize,
    segments: FreeSet,
    singles: FreeSet,
    pages: AtomicU64,
    batches: AtomicU64,
}

impl Doublewrite8 {
    /// The 8.0 doublewrite over `area` cut into segments of `segment_pages` pages, writing data
    /// pages in place to `data_gate`'s device; when `fsync` (`O_DIRECT`) each file is synced
    /// through a gate of its own.
    ///
    /// # Panics
    /// If `segment_pages` is not [`Layout::valid_segment_pages`] (the config validates it).
    #[must_use]
    pub fn new(
        area: DoublewriteArea,
        data_gate: Arc<SyncGate>,
        fsync: bool,
        segment_pages: usize,
    ) -> Self {
        let layout = Layout::new(segment_pages);
        Doublewrite8 {
            flush_list_gate: Arc::new(data_gate.sibling(Arc::clone(&area.device))),
            lru_gate: Arc::new(data_gate.sibling(Arc::clone(&area.device))),
            area,
            data_gate,
            fsync,
            batches_through_area: true,
            max_batch: super::doublewrite::BATCH_SLOTS,
            segments: FreeSet::new(layout.segments.len()),
            singles: FreeSet::new(layout.single_slots.len()),
            layout,
            pages: AtomicU64::new(0),
            batches: AtomicU64::new(0),
        }
    }

    /// Whether background batches go through the area (`true`, InnoDB) or are written in place
    /// and synced; either way up to `max_batch` pages per call (the bounded burst).
    #[must_use]
    pub fn with_batches(mut self, through_area: bool, max_batch: usize) -> Self {
        self.batches_through_area = through_area;
        self.max_batch = max_batch.max(1);
        self
    }

    /// The layout in use.
    #[must_use]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn gate(&self, file: DoublewriteFile) -> &SyncGate {
        match file {
            DoublewriteFile::FlushList => &self.flush_list_gate,
            DoublewriteFile::Lru => &self.lru_gate,
        }
    }

    fn scale(&self) -> f64 {
        self.area.device.info().time_scale.max(f64::MIN_POSITIVE)
    }

    fn area_device(&self) -> &SharedDevice {
        &self.area.device
    }

    /// Writes `bufs` to consecutive area pages from `first_page` as one submission, waits,
    /// and counts the writes on `gate`.
    fn write_copies(
        &self,
        first_page: u64,
        bufs: impl Iterator<Item = IoBuffer>,
        gate: &SyncGate,
    ) -> std::result::Result<(), DeviceError> {
        let copies: Vec<IoRequest> = bufs
            .enumerate()
            .map(|(offset, buf)| {
                IoRequest::write(self.area.first_page + first_page + offset as u64, buf)
            })
            .collect();
        let count = copies.len();
        // SAFETY: the caller keeps the buffers latched (or owned) until their in-place writes
        // are reported; we wait for the copies here.
        let tickets = unsafe { self.area_device().submit(copies) };
        crate::device::ticket::wait_all(tickets)?;
        for _ in 0..count {
            gate.write_completed();
        }
        self.pages.fetch_add(count as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Segments one call holds at once at most: half of them, rounded up, so that another
    /// flushing thread finds one free while a large batch is written.
    fn wave_cap(&self) -> usize {
        self.layout.segments.len().div_ceil(2)
    }

    /// One wave: every group's copies into its segment (one submission), the doublewrite
    /// files synced, the pages written in place and the data file synced; the segments are
    /// released by the caller after this returns.
    fn write_wave(
        &self,
        held: &[usize],
        groups: &[&[PageWrite]],
        pages: &[PageWrite],
        done: &mut dyn FnMut(usize, std::result::Result<(), DeviceError>),
    ) -> std::result::Result<(), DeviceError> {
        let mut copies = Vec::with_capacity(pages.len());
        let mut per_file = [0usize; 2];
        for (&index, group) in held.iter().zip(groups) {
            let segment = self.layout.segments[index];
            per_file[segment.file as usize] += group.len();
            copies.extend(group.iter().enumerate().map(|(offset, write)| {
                IoRequest::write(
                    self.area.first_page + segment.first_page + offset as u64,
                    write.buf,
                )
            }));
        }
        // SAFETY: the pages stay latched until their in-place writes are reported; we wait
        // for the copies here.
        let tickets = unsafe { self.area_device().submit(copies) };
        crate::device::ticket::wait_all(tickets)?;
        self.pages.fetch_add(pages.len() as u64, Ordering::Relaxed);
        self.batches.fetch_add(held.len() as u64, Ordering::Relaxed);
        for file in [DoublewriteFile::FlushList, DoublewriteFile::Lru] {
            let gate = self.gate(file);
            for _ in 0..per_file[file as usize] {
                gate.write_completed();
            }
            if per_file[file as usize] > 0 {
                self.sync_if_asked(gate)?;
            }
        }
        // SAFETY: the pages stay latched until their in-place writes are reported.
        unsafe { write_in_place(&self.data_gate, pages, done) };
        // The segments may be reused only once the in-place writes are durable.
        self.sync_if_asked(&self.data_gate)
    }
}

impl AreaRouting for Doublewrite8 {
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
        self.singles.release(slot);
    }

    fn retire_single(&self, slot: usize) {
        self.singles.retire(slot);
    }

    /// A batch: cut into segment-sized groups, written in waves of as many free segments as
    /// the cap allows (at least one; see the module docs).
    fn write_batch(
        &self,
        pages: &[PageWrite],
        done: &mut dyn FnMut(usize, std::result::Result<(), DeviceError>),
    ) -> std::result::Result<(), DeviceError> {
        let groups: Vec<&[PageWrite]> = pages.chunks(self.layout.segment_pages).collect();
        let (mut next, mut offset) = (0, 0);
        // Bounded: each wave takes at least one group.
        while next < groups.len() {
            let wanted = (groups.len() - next).min(self.wave_cap());
            let held = self
                .segments
                .acquire_up_to(wanted, self.scale(), "segment", &|| {
                    self.refuse_after_failed_sync()
                })?;
            let wave = &groups[next..next + held.len()];
            let wave_pages: usize = wave.iter().map(|group| group.len()).sum();
            let result = self.write_wave(
                &held,
                wave,
                &pages[offset..offset + wave_pages],
                &mut |index, result| done(offset + index, result),
            );
            // A failed wave's in-place writes are not known durable: its segments are retired.
            for &index in &held {
                if result.is_ok() {
                    self.segments.release(index);
                } else {
                    self.segments.retire(index);
                }
            }
            result?;
            next += held.len();
            offset += wave_pages;
        }
        Ok(())
    }
}

impl WritePath for Doublewrite8 {
    fn name(&self) -> &'static str {
        "doublewrite8"
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
        let slot = self
            .singles
            .acquire(self.scale(), "single-page slot", &|| {
                self.refuse_after_failed_sync()
            })?;
        let copied = self
            .write_copies(
                self.layout.single_slots[slot],
                std::iter::once(buf),
                &self.lru_gate,
            )
            .and_then(|()| self.sync_if_asked(&self.lru_gate));
        match copied {
            Ok(()) => Ok(slot),
            Err(err) => {
                self.singles.release(slot);
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
            doublewrite_slot_waits: self.singles.waits.load(Ordering::Relaxed)
                + self.segments.waits.load(Ordering::Relaxed),
            doublewrite_slot_wait_ms: (self.singles.wait_ns.load(Ordering::Relaxed)
                + self.segments.wait_ns.load(Ordering::Relaxed))
                as f64
                / 1e6,
            ..WritePathStats::default()
        };
        self.flush_list_gate.fill_stats(&mut stats);
        self.lru_gate.fill_stats(&mut stats);
        self.data_gate.fill_stats(&mut stats);
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_tiles_the_area_without_overlap() {
        for segment_pages in [1, 2, 4, 8, 16, 32] {
            let layout = Layout::new(segment_pages);
            let mut owner = vec![0u32; AREA_PAGES];
            for segment in &layout.segments {
                for page in segment.first_page..segment.first_page + segment_pages as u64 {
                    owner[page as usize] += 1;
                }
                let in_first_half = (segment.first_page as usize) < FLUSH_LIST_FILE_PAGES;
                assert_eq!(
                    in_first_half,
                    segment.file == DoublewriteFile::FlushList,
                    "a segment lies in its file's half"
                );
            }
            for &slot in &layout.single_slots {
                owner[slot as usize] += 1;
            }
            assert!(
                owner.iter().all(|&count| count == 1),
                "segments and slots cover each of the {AREA_PAGES} area pages once \
                 (segment size {segment_pages})"
            );
            assert_eq!(layout.segments.len(), 96 / segment_pages);
            assert_eq!(layout.single_slots.len(), SINGLE_SLOTS);
        }
    }

    #[test]
    fn the_default_layout_is_six_segments_of_sixteen_and_32_slots() {
        let layout = Layout::new(DEFAULT_SEGMENT_PAGES);
        let starts: Vec<u64> = layout.segments.iter().map(|s| s.first_page).collect();
        assert_eq!(starts, vec![0, 16, 32, 48, 64, 80]);
        assert_eq!(
            layout
                .segments
                .iter()
                .filter(|s| s.file == DoublewriteFile::Lru)
                .count(),
            2
        );
        assert_eq!(layout.single_slots.first(), Some(&96));
        assert_eq!(layout.single_slots.last(), Some(&127));
    }

    const PAGE: usize = 4096;

    /// An area device and a data device of `data_pages` pages, both in memory.
    fn devices(data_pages: u64) -> (DoublewriteArea, Arc<SyncGate>) {
        let area: SharedDevice =
            Arc::new(crate::device::memory::MemoryDevice::new(PAGE, AREA_PAGES as u64).unwrap());
        let data: SharedDevice =
            Arc::new(crate::device::memory::MemoryDevice::new(PAGE, data_pages).unwrap());
        (
            DoublewriteArea {
                device: area,
                first_page: 0,
            },
            Arc::new(SyncGate::new(data)),
        )
    }

    fn stamped(page: PageId, lsn: u64) -> crate::device::AlignedBuf {
        let mut buf = crate::device::AlignedBuf::new(PAGE);
        buf.as_mut_slice()[100] = page as u8;
        crate::page::stamp(buf.as_mut_slice(), page, lsn);
        buf
    }

    /// The page id stamped in each area page (`None`: blank).
    fn area_contents(area: &DoublewriteArea) -> Vec<Option<PageId>> {
        let mut buf = crate::device::AlignedBuf::new(PAGE);
        (0..AREA_PAGES as u64)
            .map(|page| {
                area.device.read_page(page, &mut buf).unwrap();
                crate::page::stamped_page_id(buf.as_slice())
            })
            .collect()
    }

    #[test]
    fn concurrent_batches_take_segments_of_their_own_and_singles_take_slots() {
        let (area, data_gate) = devices(64);
        let path = Doublewrite8::new(area.clone(), Arc::clone(&data_gate), true, 4);
        assert_eq!(path.max_batch(), super::super::doublewrite::BATCH_SLOTS);
        // Six threads write a batch of 4 pages each at once: 6 of the 24 segments. Each waits
        // in its first completion (its segment still held) until all six got that far.
        let all_hold = std::sync::Barrier::new(6);
        let mut bufs: Vec<Vec<crate::device::AlignedBuf>> = (0..6u64)
            .map(|t| (0..4u64).map(|i| stamped(t * 4 + i, 10)).collect())
            .collect();
        std::thread::scope(|scope| {
            for (t, batch) in bufs.iter_mut().enumerate() {
                let (path, all_hold) = (&path, &all_hold);
                scope.spawn(move || {
                    let pages: Vec<PageWrite> = batch
                        .iter_mut()
                        .enumerate()
                        .map(|(i, buf)| PageWrite {
                            page: (t * 4 + i) as u64,
                            buf: buf.io_buffer(),
                        })
                        .collect();
                    let mut reported = 0;
                    path.write(&pages, WriteKind::Batch, &mut |index, result| {
                        result.unwrap();
                        if index == 0 {
                            all_hold.wait();
                        }
                        reported += 1;
                    })
                    .unwrap();
                    assert_eq!(reported, 4);
                });
            }
        });
        let mut single = stamped(40, 11);
        let one = [PageWrite {
            page: 40,
            buf: single.io_buffer(),
        }];
        path.write(&one, WriteKind::Single, &mut |_, result| result.unwrap())
            .unwrap();
        let contents = area_contents(&area);
        let layout = Layout::new(4);
        // Every batch's copies sit together in one segment, in order.
        for t in 0..6u64 {
            let first = contents
                .iter()
                .position(|held| *held == Some(t * 4))
                .expect("each batch has its copies in the area") as u64;
            assert!(
                layout.segments.iter().any(|s| s.first_page == first),
                "batch {t} starts a segment"
            );
            for i in 0..4 {
                assert_eq!(contents[(first + i) as usize], Some(t * 4 + i));
            }
        }
        assert_eq!(
            contents[layout.single_slots[0] as usize],
            Some(40),
            "the single page went to the first slot"
        );
        let stats = path.stats();
        assert_eq!(stats.doublewrite_pages, 25);
        assert_eq!(stats.doublewrite_batches, 6);
        assert!(stats.fsyncs >= 3, "copies and data synced: {stats:?}");
        // Every segment and slot was returned.
        assert!(path.segments.taken.lock().iter().all(|busy| !busy));
        assert!(path.singles.taken.lock().iter().all(|busy| !busy));
    }

    #[test]
    fn a_large_batch_is_spread_over_half_the_segments_in_waves() {
        let (area, data_gate) = devices(64);
        let path = Doublewrite8::new(area.clone(), data_gate, true, 8);
        // 12 segments of 8 pages: a call holds at most 6 at once, so 60 pages (8 groups) go in
        // two waves (6 groups, then 2), every page reported once and in order.
        let mut bufs: Vec<crate::device::AlignedBuf> = (0..60u64).map(|p| stamped(p, 30)).collect();
        let pages: Vec<PageWrite> = bufs
            .iter_mut()
            .enumerate()
            .map(|(p, buf)| PageWrite {
                page: p as u64,
                buf: buf.io_buffer(),
            })
            .collect();
        let mut reported = Vec::new();
        path.write(&pages, WriteKind::Batch, &mut |index, result| {
            result.unwrap();
            reported.push(index);
        })
        .unwrap();
        assert_eq!(reported, (0..60).collect::<Vec<_>>());
        let stats = path.stats();
        assert_eq!(stats.doublewrite_pages, 60);
        assert_eq!(stats.doublewrite_batches, 8);
        // The second wave's 2 groups overwrote the first two segments: pages 48..60 there.
        let contents = area_contents(&area);
        assert_eq!(contents[0], Some(48));
        assert_eq!(contents[8], Some(56));
        assert_eq!(contents[11], Some(59));
        assert_eq!(contents[16], Some(16), "the first wave's third group stays");
        assert!(path.segments.taken.lock().iter().all(|busy| !busy));
    }

    #[test]
    fn recovery_restores_a_torn_page_from_a_doublewrite8_copy() {
        let (area, data_gate) = devices(64);
        let data = Arc::clone(data_gate.device());
        let path = Doublewrite8::new(area.clone(), data_gate, true, 16);
        let mut bufs: Vec<crate::device::AlignedBuf> = (0..3u64).map(|p| stamped(p, 20)).collect();
        let pages: Vec<PageWrite> = bufs
            .iter_mut()
            .enumerate()
            .map(|(p, buf)| PageWrite {
                page: p as u64,
                buf: buf.io_buffer(),
            })
            .collect();
        path.write(&pages, WriteKind::Batch, &mut |_, result| result.unwrap())
            .unwrap();
        // Tear page 1 in place: its second half is lost.
        let mut torn = crate::device::AlignedBuf::new(PAGE);
        data.read_page(1, &mut torn).unwrap();
        torn.as_mut_slice()[PAGE / 2..].fill(0xAB);
        data.write_page(1, &torn).unwrap();
        let intact = |bytes: &[u8], page: PageId| crate::page::verify(bytes, page).is_ok();
        // A checkpoint past the copies' LSN makes them stale: nothing is restored.
        let stale =
            super::super::doublewrite::restore_torn_pages(&area, &data, 21, &intact).unwrap();
        assert_eq!(stale.restored, 0);
        let report =
            super::super::doublewrite::restore_torn_pages(&area, &data, 20, &intact).unwrap();
        assert_eq!(report.copies, 3);
        assert_eq!(report.restored, 1);
        let mut back = crate::device::AlignedBuf::new(PAGE);
        data.read_page(1, &mut back).unwrap();
        assert_eq!(back.as_slice(), bufs[1].as_slice());
    }

    #[test]
    fn segment_sizes_outside_the_area_are_refused() {
        for bad in [0, 3, 12, 64, 128] {
            assert!(!Layout::valid_segment_pages(bad), "{bad}");
        }
    }
}
