//! Round trip of every record type through the log device, reopen idempotence, resuming
//! after reopen, and configuration errors.

use crate::wal_common;

use flashbuf::error::Error;
use flashbuf::wal::{LogRecord, StopReason, Wal, WalConfig};
use wal_common::{PAGE, config, mem_for, record, shared};

#[test]
fn every_record_type_round_trips_through_reopen() {
    let config = config(64, 16);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    let written = vec![
        LogRecord::PageRedo {
            txn: 1,
            page: 7,
            offset: 100,
            bytes: b"hello".to_vec(),
        },
        // A full 16 KiB page image spans five 4 KiB log pages.
        LogRecord::FullPageImage {
            txn: 1,
            page: 7,
            image: (0..16_384).map(|i| (i % 253) as u8).collect(),
        },
        LogRecord::PageRedo {
            txn: 2,
            page: 8,
            offset: 0,
            bytes: Vec::new(),
        },
        LogRecord::Commit { txn: 1 },
        LogRecord::Checkpoint { redo_lsn: 32 },
    ];
    let mut ranges = Vec::new();
    for record in &written {
        ranges.push(wal.append_range(std::slice::from_ref(record)).unwrap());
    }
    for pair in ranges.windows(2) {
        assert_eq!(
            pair[0].end, pair[1].start,
            "end LSN is the next record's start"
        );
    }
    let end = wal.current_lsn();
    assert_eq!(end, ranges.last().unwrap().end);
    wal.flush_to(end).unwrap();
    assert_eq!(wal.durable_lsn(), end);
    drop(wal);

    for _ in 0..2 {
        let (_wal, recovery) = Wal::open(shared(&device), config.clone()).unwrap();
        let got: Vec<_> = recovery.records.iter().map(|r| r.record.clone()).collect();
        assert_eq!(got, written);
        for (recovered, range) in recovery.records.iter().zip(&ranges) {
            assert_eq!((recovered.start, recovered.end), (range.start, range.end));
        }
        assert_eq!(recovery.end_lsn, end);
        assert!(matches!(recovery.stop, StopReason::Record(_)));
    }
}

#[test]
fn a_reopened_log_resumes_at_its_end_and_keeps_old_records() {
    let config = config(64, 8);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    let mut expected = Vec::new();
    for id in 0..50 {
        let r = record(id as u8, id, 300);
        wal.append(std::slice::from_ref(&r)).unwrap();
        expected.push(r);
    }
    wal.close().unwrap();
    for round in 0..3u64 {
        let (wal, recovery) = Wal::open(shared(&device), config.clone()).unwrap();
        let got: Vec<_> = recovery.records.into_iter().map(|r| r.record).collect();
        assert_eq!(got, expected, "round {round}");
        assert_eq!(wal.current_lsn(), recovery.end_lsn);
        for id in 0..7 {
            let r = record(id as u8, 1000 * (round + 1) + id, 500);
            wal.append(std::slice::from_ref(&r)).unwrap();
            expected.push(r);
        }
        // An unflushed append is lost with the "crash" (drop without close).
        let lost = record(2, 99_999, 10);
        wal.flush_to(wal.current_lsn()).unwrap();
        wal.append(&[lost]).unwrap();
        drop(wal);
    }
}

#[test]
fn open_or_create_formats_a_blank_device_once() {
    let config = config(16, 4);
    let device = mem_for(&config);
    let (wal, recovery) = Wal::open_or_create(shared(&device), config.clone()).unwrap();
    assert!(recovery.records.is_empty());
    wal.append(&[LogRecord::Commit { txn: 5 }]).unwrap();
    wal.close().unwrap();
    let (_wal, recovery) = Wal::open_or_create(shared(&device), config).unwrap();
    assert_eq!(recovery.records.len(), 1);
}

#[test]
fn bad_configurations_and_devices_are_config_errors() {
    let config = config(16, 4);
    let device = mem_for(&config);
    assert!(matches!(
        Wal::open(shared(&device), config.clone()),
        Err(Error::Format {
            problem: flashbuf::error::FormatProblem::Blank,
            ..
        })
    ));
    let too_big = WalConfig {
        log_size: config.log_size * 2,
        ..config.clone()
    };
    assert!(matches!(
        Wal::create(shared(&device), too_big),
        Err(Error::Config(_))
    ));
    let other_page = WalConfig {
        page_size: 2 * PAGE,
        log_size: 20 * 2 * PAGE as u64,
        ..config.clone()
    };
    assert!(matches!(
        Wal::create(shared(&device), other_page),
        Err(Error::Config(_))
    ));
    // A log formatted with one ring size does not open with another.
    Wal::create(shared(&device), config.clone()).unwrap();
    let smaller = WalConfig {
        log_size: config.log_size - 4 * PAGE as u64,
        ..config.clone()
    };
    assert!(matches!(
        Wal::open(shared(&device), smaller),
        Err(Error::Config(_))
    ));
    // Oversized and empty appends are refused without touching the log.
    let (wal, _) = Wal::open(shared(&device), config).unwrap();
    let huge = record(1, 1, wal.max_record_len());
    assert!(matches!(
        wal.append(&[huge]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(wal.append(&[]), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        wal.write_checkpoint(3),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn the_log_id_is_the_checkpoint_slots_id() {
    let config = config(16, 4);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    let id = wal.log_id();
    assert_eq!(id % 2, 1, "log ids are odd (never 0)");
    drop(wal);
    let (wal, recovery) = Wal::open(shared(&device), config).unwrap();
    assert_eq!(wal.log_id(), id);
    assert_eq!(recovery.checkpoint.log_id, id);
}
