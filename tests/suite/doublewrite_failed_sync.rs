//! A failed data-file sync must not free the doublewrite copies it should have made redundant.
//!
//! The crash campaign's seed 1126 (`crash_campaign_doublewrite8`, about 1 point in 2,000 runs
//! under load) found it: a batch's copies were written and synced, its in-place writes
//! completed, and the data file's sync failed. The in-place writes were then not durable (they
//! stayed pending, or completed after a failing sync began), but the batch released its segment;
//! the next batch overwrote the copies; the crash tore the in-place write, and recovery found
//! the page corrupt with no copy to restore it from.
//!
//! Each test below makes that sequence happen deterministically on a fault-injecting device,
//! for the 5.7 doublewrite (batch and single-page slots) and the 8.0 one: the failed sync is
//! the data file's, it keeps the pending writes pending, a second write comes after it, and the
//! crash tears every unsynced write. The page must come back from its copy.

use std::sync::Arc;

use flashbuf::core::write_path::{PageWrite, SyncGate, WriteKind, WritePath};
use flashbuf::device::fault::{FaultConfig, FaultDevice, UnsyncedOnCrash};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::region::RegionDevice;
use flashbuf::device::{AlignedBuf, SharedDevice};
use flashbuf::engine::innodb::doublewrite::{
    AREA_PAGES, Doublewrite, DoublewriteArea, restore_torn_pages,
};
use flashbuf::engine::innodb::doublewrite8::Doublewrite8;

const PAGE: usize = 4096;
const DATA_PAGES: u64 = 64;
/// The page whose in-place write the failed sync leaves pending, and the one written after it.
const TORN: u64 = 5;
const NEXT: u64 = 6;
const TORN_LSN: u64 = 1_000;

/// The area's and the data file's views of one fault-injecting device.
fn views(device: &Arc<FaultDevice>) -> (DoublewriteArea, Arc<SyncGate>) {
    let whole: SharedDevice = device.clone();
    let area: SharedDevice =
        Arc::new(RegionDevice::new(Arc::clone(&whole), 0, AREA_PAGES as u64).unwrap());
    let data: SharedDevice =
        Arc::new(RegionDevice::new(whole, AREA_PAGES as u64, DATA_PAGES).unwrap());
    (
        DoublewriteArea {
            device: area,
            first_page: 0,
        },
        Arc::new(SyncGate::new(data)),
    )
}

/// A device whose sync number `failing` (1-based) fails and keeps its pending writes pending,
/// and whose crash tears every unsynced write.
fn device(failing: u64) -> Arc<FaultDevice> {
    let config = FaultConfig {
        fail_syncs: vec![failing],
        unsynced_on_crash: UnsyncedOnCrash::TearAll,
        ..FaultConfig::default()
    };
    let memory: SharedDevice =
        Arc::new(MemoryDevice::new(PAGE, AREA_PAGES as u64 + DATA_PAGES).unwrap());
    Arc::new(FaultDevice::new_zeroed(memory, config).unwrap())
}

fn stamped(page: u64, lsn: u64) -> AlignedBuf {
    let mut buf = AlignedBuf::new(PAGE);
    buf.as_mut_slice()[100..PAGE - 100].fill(page as u8 + 1);
    flashbuf::page::stamp(buf.as_mut_slice(), page, lsn);
    buf
}

/// Writes `page` through `path` as `kind`; returns whether the call succeeded and what it
/// reported for the page.
fn write(path: &dyn WritePath, page: u64, lsn: u64, kind: WriteKind) -> (bool, Option<bool>) {
    let mut buf = stamped(page, lsn);
    let writes = [PageWrite {
        page,
        buf: buf.io_buffer(),
    }];
    let mut reported = None;
    let result = path.write(&writes, kind, &mut |_, result| {
        reported = Some(result.is_ok());
    });
    (result.is_ok(), reported)
}

/// The sequence of the module docs on `path`, whose data-file sync of the first write is sync
/// number `failing` of the device; then the crash, and the restore from the area.
fn torn_page_comes_back(
    make: impl FnOnce(DoublewriteArea, Arc<SyncGate>) -> Box<dyn WritePath>,
    kind: WriteKind,
    failing: u64,
) {
    let device = device(failing);
    let (area, gate) = views(&device);
    let path = make(area, gate);
    let (ok, reported) = write(path.as_ref(), TORN, TORN_LSN, kind);
    assert_eq!(
        reported,
        Some(true),
        "the in-place write of page {TORN} completed"
    );
    assert!(!ok, "the data file's sync (sync {failing}) failed");
    // The next write must not touch the area: the copy of page TORN is the only intact image.
    let (ok, _) = write(path.as_ref(), NEXT, TORN_LSN + 1, kind);
    assert!(!ok, "a write after a failed sync is refused (sticky)");

    let image: SharedDevice = Arc::new(device.crash().unwrap());
    let (area, gate) = (
        DoublewriteArea {
            device: Arc::new(RegionDevice::new(Arc::clone(&image), 0, AREA_PAGES as u64).unwrap()),
            first_page: 0,
        },
        Arc::new(RegionDevice::new(image, AREA_PAGES as u64, DATA_PAGES).unwrap()) as SharedDevice,
    );
    let mut current = AlignedBuf::new(PAGE);
    gate.read_page(TORN, &mut current).unwrap();
    assert!(
        flashbuf::page::verify(current.as_slice(), TORN).is_err(),
        "the crash tore the pending in-place write of page {TORN}"
    );
    let report = restore_torn_pages(&area, &gate, 0, &|bytes, page| {
        flashbuf::page::verify(bytes, page).is_ok()
    })
    .unwrap();
    assert_eq!(
        report.restored, 1,
        "page {TORN} restored from its copy ({report:?})"
    );
    gate.read_page(TORN, &mut current).unwrap();
    assert_eq!(
        flashbuf::page::verify(current.as_slice(), TORN).unwrap(),
        TORN_LSN,
        "page {TORN} holds the write whose sync failed"
    );
}

fn doublewrite57(area: DoublewriteArea, gate: Arc<SyncGate>) -> Box<dyn WritePath> {
    Box::new(Doublewrite::new(area, gate, true))
}

/// The 8.0 doublewrite with segments of `pages` pages.
fn doublewrite8(pages: usize) -> impl FnOnce(DoublewriteArea, Arc<SyncGate>) -> Box<dyn WritePath> {
    move |area, gate| Box::new(Doublewrite8::new(area, gate, true, pages))
}

// Sync 1 is the area's (the copies), sync 2 the data file's.

#[test]
fn a_batch_whose_data_sync_failed_keeps_its_copies_57() {
    torn_page_comes_back(doublewrite57, WriteKind::Batch, 2);
}

#[test]
fn a_single_page_whose_data_sync_failed_keeps_its_slot_57() {
    torn_page_comes_back(doublewrite57, WriteKind::Single, 2);
}

#[test]
fn a_wave_whose_data_sync_failed_keeps_its_segments_8() {
    for pages in [1, 2, 16] {
        torn_page_comes_back(doublewrite8(pages), WriteKind::Batch, 2);
    }
}

#[test]
fn a_single_page_whose_data_sync_failed_keeps_its_slot_8() {
    torn_page_comes_back(doublewrite8(16), WriteKind::Single, 2);
}
