//! Many threads append and commit concurrently (group commit); every acknowledged record is
//! read back after reopening, in LSN order.

mod wal_common;

use std::collections::HashSet;
use std::time::Duration;

use flashbuf::wal::{LogRecord, Wal};
use wal_common::{Shim, config, mem_for, record};

fn run(threads: u64, commits: u64, payload: usize, buffer_pages: usize) {
    let config = config(1024, buffer_pages);
    let memory = mem_for(&config);
    let shim = Shim::new(memory.clone(), Duration::from_micros(200));
    let wal = Wal::create(shim.clone(), config.clone()).unwrap();
    let acknowledged: Vec<Vec<(u64, u64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let wal = &wal;
                scope.spawn(move || {
                    let mut acked = Vec::new();
                    for i in 0..commits {
                        let txn = thread * 1_000_000 + i;
                        let redo = record(0, txn, payload);
                        let end = wal.append(&[redo, LogRecord::Commit { txn }]).unwrap();
                        wal.flush_to(end).unwrap();
                        assert!(wal.durable_lsn() >= end);
                        acked.push((txn, end));
                    }
                    acked
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let stats = wal.stats();
    assert_eq!(stats.appends, threads * commits * 2);
    assert_eq!(stats.commits, threads * commits);
    assert!(stats.flushes >= 1 && stats.flushes <= threads * commits);
    assert!(stats.mean_group_size >= 1.0);
    drop(wal);

    let (_, recovery) = Wal::open(memory, config).unwrap();
    let mut committed = HashSet::new();
    let mut previous_end = 0;
    for (index, found) in recovery.records.iter().enumerate() {
        assert!(found.start >= previous_end, "records in LSN order");
        previous_end = found.end;
        if let LogRecord::Commit { txn } = found.record {
            // The redo record of a commit precedes it directly (one append).
            assert_eq!(
                recovery.records[index - 1].record,
                record(0, txn, payload),
                "redo before commit {txn}"
            );
            committed.insert((txn, found.end));
        }
    }
    for (txn, end) in acknowledged.into_iter().flatten() {
        assert!(
            committed.contains(&(txn, end)),
            "acknowledged commit {txn} lost"
        );
    }
}

#[test]
fn concurrent_commits_are_all_recovered() {
    run(8, 150, 100, 16);
}

#[test]
fn a_small_buffer_makes_appenders_flush_and_nothing_is_lost() {
    // Each append is about 3 KiB into a 4-page buffer: appends often find it full.
    run(4, 40, 3000, 4);
}

/// Copies every page of `device` into a new RAM device: a crash image. Pages written during
/// the copy may land in either version (or torn, for a page being copied): a crash allows that.
fn crash_image(
    device: &flashbuf::device::memory::MemoryDevice,
) -> std::sync::Arc<flashbuf::device::memory::MemoryDevice> {
    use flashbuf::device::Device;
    let pages = device.info().pages;
    let image = std::sync::Arc::new(
        flashbuf::device::memory::MemoryDevice::new(wal_common::PAGE, pages).unwrap(),
    );
    let mut buf = vec![0u8; wal_common::PAGE];
    for page in 0..pages {
        device.store().read(page, &mut buf).unwrap();
        image.store().write(page, &buf).unwrap();
    }
    image
}

#[test]
fn a_crash_image_taken_during_commits_holds_every_earlier_acknowledged_commit() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let config = config(1024, 16);
    let memory = mem_for(&config);
    let wal = Wal::create(memory.clone(), config.clone()).unwrap();
    let acked = parking_lot::Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    let images = std::thread::scope(|scope| {
        for thread in 0..4u64 {
            let (wal, acked, stop) = (&wal, &acked, &stop);
            scope.spawn(move || {
                // Bounded: stops when asked, or after 5 000 commits (about 2 MiB of log in all).
                for i in 0..5_000u64 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let txn = thread * 1_000_000 + i;
                    let end = wal
                        .append(&[record(0, txn, 40), LogRecord::Commit { txn }])
                        .unwrap();
                    wal.flush_to(end).unwrap();
                    acked.lock().push(txn);
                }
            });
        }
        let mut images = Vec::new();
        for _ in 0..4 {
            std::thread::sleep(Duration::from_millis(5));
            let before: Vec<u64> = acked.lock().clone();
            images.push((before, crash_image(&memory)));
        }
        stop.store(true, Ordering::Relaxed);
        images
    });
    let mut checked = 0;
    for (before, image) in images {
        checked += before.len();
        let (_, recovery) = Wal::open(image, config.clone()).unwrap();
        let found: HashSet<u64> = recovery
            .records
            .iter()
            .filter_map(|r| match r.record {
                LogRecord::Commit { txn } => Some(txn),
                _ => None,
            })
            .collect();
        for txn in &before {
            assert!(
                found.contains(txn),
                "commit {txn} acknowledged before the crash is lost"
            );
        }
    }
    assert!(
        checked > 0,
        "some commits were acknowledged before the images"
    );
}
