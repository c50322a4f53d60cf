//! InnoDB serializes fsyncs per file (`fil_flush`), not per device: the doublewrite area (in the
//! system tablespace) and the data file are different files, so a sync of the area may run on
//! the device while a sync of the data file is in progress, and two syncs of one file never
//! overlap (the second waits, then syncs what the first did not cover). A failed sync is sticky
//! for both files: the device may have dropped either file's unsynced writes.
//!
//! The device below counts the syncs inside it at once and holds each sync until a second one
//! arrives (or a bound passes), so overlapping syncs show as two in flight.

use std::sync::Arc;
use std::time::{Duration, Instant};

use flashbuf::core::write_path::{SyncGate, WritePath};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::region::RegionDevice;
use flashbuf::device::{
    AlignedBuf, Device, DeviceInfo, DeviceStats, IoRequest, IoTicket, SharedDevice,
};
use flashbuf::engine::innodb::doublewrite::{AREA_PAGES, Doublewrite, DoublewriteArea};
use flashbuf::error::DeviceError;
use parking_lot::{Condvar, Mutex};

const PAGE: usize = 4096;

/// Syncs in flight, the most seen at once, syncs completed; whether syncs still wait for a
/// partner.
#[derive(Debug, Default)]
struct SyncCounts {
    in_flight: usize,
    most: usize,
    done: usize,
    released: bool,
    /// The sync that finds another in flight fails.
    fail_second: bool,
}

#[derive(Debug)]
struct RendezvousDevice {
    inner: MemoryDevice,
    counts: Mutex<SyncCounts>,
    changed: Condvar,
    hold: Duration,
}

impl RendezvousDevice {
    fn new(hold: Duration) -> Arc<Self> {
        Arc::new(RendezvousDevice {
            inner: MemoryDevice::new(PAGE, 1024).unwrap(),
            counts: Mutex::new(SyncCounts::default()),
            changed: Condvar::new(),
            hold,
        })
    }

    /// Later syncs no longer wait for a partner.
    fn release(&self) {
        self.counts.lock().released = true;
        self.changed.notify_all();
    }

    fn counts(&self) -> (usize, usize) {
        let counts = self.counts.lock();
        (counts.most, counts.done)
    }

    /// Waits (bounded) until a sync is inside the device.
    fn wait_for_a_sync(&self) {
        let mut counts = self.counts.lock();
        let deadline = Instant::now() + Duration::from_secs(10);
        while counts.in_flight == 0 && Instant::now() < deadline {
            self.changed.wait_until(&mut counts, deadline);
        }
        assert!(counts.in_flight > 0, "no sync reached the device");
    }
}

impl Device for RendezvousDevice {
    fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }

    unsafe fn submit(&self, batch: Vec<IoRequest>) -> Vec<IoTicket> {
        // SAFETY: forwarded from our caller.
        unsafe { self.inner.submit(batch) }
    }

    fn sync(&self) -> Result<(), DeviceError> {
        let mut counts = self.counts.lock();
        counts.in_flight += 1;
        counts.most = counts.most.max(counts.in_flight);
        let fails = counts.fail_second && counts.in_flight == 2;
        self.changed.notify_all();
        let deadline = Instant::now() + self.hold;
        while counts.most < 2 && !counts.released && Instant::now() < deadline {
            self.changed.wait_until(&mut counts, deadline);
        }
        counts.in_flight -= 1;
        counts.done += 1;
        drop(counts);
        self.changed.notify_all();
        if fails {
            return Err(DeviceError::Injected("sync failed".into()));
        }
        self.inner.sync()
    }

    fn stats(&self) -> DeviceStats {
        self.inner.stats()
    }
}

/// A doublewrite whose area is the first pages of `device` and whose data file is the rest.
fn doublewrite(device: &Arc<RendezvousDevice>) -> Doublewrite {
    let whole: SharedDevice = device.clone();
    let area: SharedDevice =
        Arc::new(RegionDevice::new(Arc::clone(&whole), 0, AREA_PAGES as u64).unwrap());
    let data: SharedDevice =
        Arc::new(RegionDevice::new(Arc::clone(&whole), AREA_PAGES as u64, 512).unwrap());
    let data_gate = Arc::new(SyncGate::new(data));
    Doublewrite::new(
        DoublewriteArea {
            device: area,
            first_page: 0,
        },
        data_gate,
        true,
    )
}

#[test]
fn a_sync_of_the_area_overlaps_a_sync_of_the_data_file() {
    // Each sync waits up to 10 s for a second one: with one gate per device they would run
    // one after the other and never meet.
    let device = RendezvousDevice::new(Duration::from_secs(10));
    let dw = doublewrite(&device);
    let mut page = AlignedBuf::new(PAGE);
    let started = Instant::now();
    std::thread::scope(|scope| {
        let copy = scope.spawn(|| {
            // A read stall's copy: written to a single-page slot of the area, then the area
            // is synced.
            dw.before_single(3, page.io_buffer()).unwrap()
        });
        device.wait_for_a_sync();
        // A checkpoint's sync of the data file while the area's sync is in the device.
        dw.sync().unwrap();
        let slot = copy.join().unwrap();
        device.release();
        // The stall's own in-place write is done: its data-file sync, then the slot is free.
        dw.after_single(slot).unwrap();
    });
    let (most, done) = device.counts();
    assert_eq!(most, 2, "the area's and the data file's syncs overlapped");
    assert!(
        done >= 3,
        "area sync, data sync, and the stall's data sync: {done}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the two syncs met instead of waiting out the hold"
    );
    let stats = dw.stats();
    assert_eq!(stats.fsyncs, done as u64, "both gates' syncs are counted");
}

#[test]
fn two_syncs_of_one_file_never_overlap() {
    let device = RendezvousDevice::new(Duration::from_millis(300));
    let dw = doublewrite(&device);
    std::thread::scope(|scope| {
        let first = scope.spawn(|| dw.sync().unwrap());
        device.wait_for_a_sync();
        // The same file: this one waits for the first to end, then syncs (it wrote nothing, so
        // no sync that started earlier covers it).
        dw.sync().unwrap();
        first.join().unwrap();
    });
    let (most, done) = device.counts();
    assert_eq!(most, 1, "syncs of the data file ran one at a time");
    assert_eq!(done, 2);
}

#[test]
fn a_failed_sync_of_one_file_fails_the_other_files_syncs() {
    let device = RendezvousDevice::new(Duration::from_secs(10));
    device.counts.lock().fail_second = true;
    let dw = doublewrite(&device);
    let mut page = AlignedBuf::new(PAGE);
    std::thread::scope(|scope| {
        let copy = scope.spawn(|| dw.before_single(3, page.io_buffer()));
        device.wait_for_a_sync();
        // The data file's sync fails while the area's is in the device: the device may have
        // dropped the area's copy too, so the area's sync, which the device reports done,
        // must fail as well.
        assert!(dw.sync().is_err(), "the data file's sync failed");
        let copied = copy.join().unwrap();
        assert!(
            copied.is_err(),
            "the area's overlapping sync reports the failure"
        );
    });
    // Sticky for both files.
    device.release();
    assert!(dw.sync().is_err());
    assert!(dw.before_single(4, page.io_buffer()).is_err());
    let (most, _) = device.counts();
    assert_eq!(most, 2);
}
