//! Torn writes of log pages: a torn rewrite of the partial last page keeps the records that
//! were already durable, and records of a tail that recovery discarded never come back after
//! a torn write in the next incarnation of the log (CRC chaining + clean tail on open).

use crate::wal_common;

use flashbuf::device::{AlignedBuf, Device};
use flashbuf::wal::{LogRecord, Wal};
use wal_common::{PAGE, config, mem_for, record, shared};

const SECTOR: usize = 512;

fn read(device: &dyn Device, page: u64) -> AlignedBuf {
    let mut buf = AlignedBuf::new(PAGE);
    device.read_page(page, &mut buf).unwrap();
    buf
}

/// Writes `new` over `page`, except the sectors where `keep_old` is true (a torn write).
fn tear(device: &dyn Device, page: u64, old: &AlignedBuf, keep_old: impl Fn(usize) -> bool) {
    let mut image = read(device, page);
    for sector in 0..PAGE / SECTOR {
        if keep_old(sector) {
            let range = sector * SECTOR..(sector + 1) * SECTOR;
            image.as_mut_slice()[range.clone()].copy_from_slice(&old.as_slice()[range]);
        }
    }
    device.write_page(page, &image).unwrap();
}

#[test]
fn a_torn_rewrite_of_the_partial_page_keeps_durable_records() {
    let patterns: [fn(usize) -> bool; 4] = [
        |s| s >= 2,     // only the first sectors landed
        |s| s < 4,      // only the last sectors landed
        |s| s % 2 == 0, // every other sector
        |_| true,       // nothing landed
    ];
    for (index, keep_old) in patterns.iter().enumerate() {
        let config = config(32, 8);
        let device = mem_for(&config);
        let wal = Wal::create(shared(&device), config.clone()).unwrap();
        let durable: Vec<_> = (0..5).map(|id| record(0, id, 150)).collect();
        let end = wal.append(&durable).unwrap();
        wal.flush_to(end).unwrap();
        let page = 2 + wal.geometry().page_of(end);
        let before = read(device.as_ref(), page);
        let more: Vec<_> = (10..16).map(|id| record(2, id, 0)).collect();
        wal.append(&more).unwrap();
        wal.close().unwrap();
        tear(device.as_ref(), page, &before, keep_old);
        let (_, recovery) = Wal::open(shared(&device), config).unwrap();
        let got: Vec<_> = recovery.records.into_iter().map(|r| r.record).collect();
        assert!(got.len() >= durable.len(), "pattern {index}");
        assert_eq!(&got[..durable.len()], &durable[..], "pattern {index}");
    }
}

#[test]
fn a_discarded_tail_does_not_come_back_after_a_torn_write() {
    let config = config(32, 8);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    let kept: Vec<_> = (0..3).map(|id| record(0, id, 1000)).collect();
    wal.append(&kept).unwrap();
    // r6 crosses into the next page, r7 and r8 follow it there.
    let r6 = record(0, 6, 2000);
    let r6_range = wal.append_range(std::slice::from_ref(&r6)).unwrap();
    let tail: Vec<_> = (7..9).map(|id| record(0, id, 300)).collect();
    wal.append(&tail).unwrap();
    wal.close().unwrap();
    let geometry = config.geometry();
    let next_page = 2 + geometry.page_of(r6_range.end);
    let old_next = read(device.as_ref(), next_page);

    // Damage r6: recovery discards r6, r7, r8 (r7 and r8 are intact on disk).
    let r6_device = 2 * PAGE + (r6_range.start + 40) as usize;
    let mut buf = read(device.as_ref(), (r6_device / PAGE) as u64);
    buf.as_mut_slice()[r6_device % PAGE] ^= 0xff;
    device.write_page((r6_device / PAGE) as u64, &buf).unwrap();
    let (wal, recovery) = Wal::open(shared(&device), config.clone()).unwrap();
    assert_eq!(recovery.records.len(), kept.len());
    assert_eq!(recovery.end_lsn, r6_range.start);

    // A new record of r6's size ends exactly where r7 starts; its page write tears so that
    // the sectors holding r7 and r8 keep their old contents.
    let replacement = record(1, 66, 2000 + 4);
    let new_range = wal
        .append_range(std::slice::from_ref(&replacement))
        .unwrap();
    assert_eq!(new_range.end, r6_range.end, "same length, same end");
    wal.close().unwrap();
    // Torn at byte granularity: everything from the new record's end keeps the old bytes
    // (r7, r8 and what followed them), as a device that tears anywhere could leave it.
    let cut = geometry.offset_in_page(new_range.end);
    let mut image = read(device.as_ref(), next_page);
    image.as_mut_slice()[cut..].copy_from_slice(&old_next.as_slice()[cut..]);
    device.write_page(next_page, &image).unwrap();

    let (_, recovery) = Wal::open(shared(&device), config).unwrap();
    let got: Vec<_> = recovery.records.into_iter().map(|r| r.record).collect();
    let mut expected = kept.clone();
    expected.push(replacement);
    assert_eq!(
        got, expected,
        "r7 and r8 must not chain onto the new record"
    );
}

#[test]
fn a_reformatted_device_shows_nothing_of_the_old_log() {
    let config = config(16, 4);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    wal.append(&[LogRecord::Commit { txn: 1 }]).unwrap();
    wal.close().unwrap();
    Wal::create(shared(&device), config.clone()).unwrap();
    let (_, recovery) = Wal::open(shared(&device), config).unwrap();
    assert!(recovery.records.is_empty());
}
