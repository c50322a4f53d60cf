//! One bit flipped in log that was synced, after the checkpoint's durable point, is an error
//! (`CorruptLog` naming the stop and the proof), not a silent end of the log that drops
//! acknowledged commits (issue 8, bug 3). Damage confined to the last flush before the crash
//! is the documented window: it cannot be told from a torn write of that flush.

use crate::wal_common;

use flashbuf::Error;
use flashbuf::wal::{Wal, WalConfig};
use wal_common::{config, device_offset, flip, mem_for, record, shared};

const RING_PAGES: u64 = 32;

/// Forty records of about 300 bytes, each committed (flushed) on its own, like acknowledged
/// commits; the log is then closed. Returns the device, the config and each record's range.
fn committed_log() -> (
    std::sync::Arc<flashbuf::device::memory::MemoryDevice>,
    WalConfig,
    Vec<(u64, u64)>,
) {
    let config = config(RING_PAGES, 4);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    let mut ranges = Vec::new();
    for id in 0..40 {
        let range = wal
            .append_range(std::slice::from_ref(&record((id % 2) as u8, id, 300)))
            .unwrap();
        wal.flush_to(range.end).unwrap();
        ranges.push((range.start, range.end));
    }
    wal.close().unwrap();
    (device, config, ranges)
}

fn assert_corrupt(
    config: &WalConfig,
    device: &std::sync::Arc<flashbuf::device::memory::MemoryDevice>,
    what: &str,
) {
    match Wal::open(shared(device), config.clone()) {
        Err(Error::CorruptLog { reason, .. }) => {
            assert!(
                reason.contains("corruption, not a torn tail"),
                "{what}: {reason}"
            );
        }
        Err(other) => panic!("{what}: expected CorruptLog, got {other}"),
        Ok((_, recovery)) => panic!(
            "{what}: opened silently with {} records, stop {:?}",
            recovery.records.len(),
            recovery.stop
        ),
    }
}

#[test]
fn bit_flips_in_synced_log_are_errors() {
    // (record index, byte offset inside the record, bit): CRC field, length, LSN stamp,
    // chain, type, body start, body middle.
    let positions = [
        (0usize, 0u64, 0u8),
        (3, 5, 2),
        (7, 9, 7),
        (12, 17, 1),
        (18, 20, 0),
        (25, 40, 3),
        (33, 150, 6),
        (38, 299, 4),
    ];
    for (index, inside, bit) in positions {
        let (device, config, ranges) = committed_log();
        let (start, _) = ranges[index];
        flip(&device, device_offset(start + inside, RING_PAGES), bit);
        assert_corrupt(&config, &device, &format!("record {index} byte {inside}"));
    }
}

#[test]
fn a_flipped_page_header_in_the_middle_is_an_error() {
    let (device, config, _) = committed_log();
    // Stream page 1's identity (page LSN field).
    flip(&device, device_offset(4096 + 9, RING_PAGES), 0);
    assert_corrupt(&config, &device, "page 1 header");
}

#[test]
fn damage_in_the_last_flush_is_the_documented_window() {
    let (device, config, ranges) = committed_log();
    let (start, _) = ranges[39];
    flip(&device, device_offset(start + 60, RING_PAGES), 1);
    let (_, recovery) = Wal::open(shared(&device), config).unwrap();
    assert_eq!(
        recovery.records.len(),
        39,
        "the last flush's record is taken as torn"
    );
    assert_eq!(recovery.end_lsn, start);
    assert_eq!(
        recovery.proven_durable_lsn, start,
        "proof reaches the start of the last flush"
    );
}

#[test]
fn an_intact_log_proves_its_durable_prefix() {
    let (device, config, ranges) = committed_log();
    let (_, recovery) = Wal::open(shared(&device), config).unwrap();
    assert_eq!(recovery.records.len(), 40);
    // The close flush wrote nothing new, so the newest stamp is the last commit's start.
    assert!(recovery.proven_durable_lsn >= ranges[39].0);
    assert!(recovery.proven_durable_lsn <= recovery.end_lsn);
}

#[test]
fn corruption_after_the_ring_wrapped_is_an_error_too() {
    let ring_pages = 16;
    let config = config(ring_pages, 4);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    let mut ranges = Vec::new();
    // About five laps of the ring, a checkpoint every 20 records keeping the ring free.
    for id in 0..400u64 {
        let range = wal
            .append_range(std::slice::from_ref(&record((id % 2) as u8, id, 700)))
            .unwrap();
        wal.flush_to(range.end).unwrap();
        ranges.push((range.start, range.end));
        if id % 20 == 9 {
            wal.write_checkpoint(ranges[ranges.len() - 3].0).unwrap();
        }
    }
    // The last checkpoint came after record 389: it recorded the log durable to there.
    let checkpoint_durable = ranges[390].0;
    drop(wal);
    assert!(
        ranges.last().unwrap().1 > 4 * ring_pages * 4096,
        "the log wrapped"
    );
    // A record after the newest checkpoint's redo point, before the last flush.
    let (start, _) = ranges[ranges.len() - 4];
    assert!(
        start > checkpoint_durable,
        "past the checkpoint's durable LSN"
    );
    flip(&device, device_offset(start + 30, ring_pages), 5);
    assert_corrupt(&config, &device, "after wrapping");
}
