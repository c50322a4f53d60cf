//! Checkpoints: slot alternation, fallback from a torn slot, wrap-around of the ring over
//! several laps, the full-log wait, and the margins the pool reads.

use crate::wal_common;

use flashbuf::device::{AlignedBuf, Device};
use flashbuf::error::Error;
use flashbuf::wal::{AgeZone, CheckpointSlot, LogRecord, Wal};
use wal_common::{PAGE, config, mem_for, record, shared};

fn slot_at(device: &dyn Device, page: u64) -> Option<CheckpointSlot> {
    let mut buf = AlignedBuf::new(PAGE);
    device.read_page(page, &mut buf).unwrap();
    CheckpointSlot::decode(buf.as_slice())
}

#[test]
fn checkpoint_slots_alternate_and_a_torn_slot_falls_back() {
    let config = config(32, 4);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    assert_eq!(slot_at(device.as_ref(), 1).map(|s| s.seq), Some(1));
    assert_eq!(slot_at(device.as_ref(), 0), None);

    let first = wal.append(&[record(0, 1, 100)]).unwrap();
    wal.write_checkpoint(first).unwrap();
    let slot0 = slot_at(device.as_ref(), 0).unwrap();
    assert_eq!((slot0.seq, slot0.redo_lsn), (2, first));
    assert!(
        slot0.durable_lsn > first,
        "the checkpoint record was logged and flushed"
    );
    assert!(wal.durable_lsn() >= slot0.durable_lsn);

    let second = wal.append(&[record(2, 2, 0)]).unwrap();
    wal.write_checkpoint(second).unwrap();
    let slot1 = slot_at(device.as_ref(), 1).unwrap();
    assert_eq!((slot1.seq, slot1.redo_lsn), (3, second));
    assert_eq!(slot_at(device.as_ref(), 0), Some(slot0), "older slot kept");
    wal.close().unwrap();

    let (_, recovery) = Wal::open(shared(&device), config.clone()).unwrap();
    assert_eq!(recovery.checkpoint.seq, 3);
    assert_eq!(recovery.records.first().map(|r| r.start), Some(second));

    // Tear the newest slot: recovery uses the other one and scans from its redo LSN.
    let mut buf = AlignedBuf::new(PAGE);
    device.read_page(1, &mut buf).unwrap();
    buf.as_mut_slice()[40] ^= 0x55;
    device.write_page(1, &buf).unwrap();
    let (_, recovery) = Wal::open(shared(&device), config.clone()).unwrap();
    assert_eq!(recovery.checkpoint.seq, 2);
    assert_eq!(recovery.records.first().map(|r| r.start), Some(first));
    assert!(
        recovery
            .records
            .iter()
            .any(|r| r.record == LogRecord::Checkpoint { redo_lsn: second })
    );

    // Both slots torn: a clear error, no panic.
    device.read_page(0, &mut buf).unwrap();
    buf.as_mut_slice()[44] ^= 0x01;
    device.write_page(0, &buf).unwrap();
    assert!(matches!(
        Wal::open(shared(&device), config),
        Err(Error::CorruptLog { .. })
    ));
}

#[test]
fn the_ring_wraps_over_several_laps_and_recovers_after_each() {
    let config = config(16, 4);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    let lap_bytes = 16 * PAGE as u64;
    let mut since_checkpoint: Vec<LogRecord> = Vec::new();
    let mut id = 0u64;
    let mut reopened = 0;
    let mut wal = Some(wal);
    // Bounded: about 6 laps of ~700-byte records.
    while wal.as_ref().unwrap().current_lsn() < 6 * lap_bytes {
        let log = wal.as_ref().unwrap();
        if id.is_multiple_of(20) {
            // Everything so far is "in the data pages": checkpoint at the current end.
            log.write_checkpoint(log.current_lsn()).unwrap();
            since_checkpoint.clear();
        }
        let r = record((id % 3) as u8, id, 600 + (id as usize * 37) % 200);
        log.append(std::slice::from_ref(&r)).unwrap();
        since_checkpoint.push(r);
        id += 1;
        if id.is_multiple_of(45) {
            let end = log.current_lsn();
            log.flush_to(end).unwrap();
            drop(wal.take());
            let (log, recovery) = Wal::open(shared(&device), config.clone()).unwrap();
            let got: Vec<_> = recovery
                .records
                .into_iter()
                .map(|r| r.record)
                .filter(|r| !matches!(r, LogRecord::Checkpoint { .. }))
                .collect();
            assert_eq!(got, since_checkpoint, "after {id} records");
            assert_eq!(recovery.end_lsn, end);
            reopened += 1;
            wal = Some(log);
        }
    }
    assert!(reopened >= 5);
    assert!(
        wal.unwrap().checkpoint_lsn() > 5 * lap_bytes,
        "checkpoints followed the laps"
    );
}

#[test]
fn a_full_log_blocks_then_errors_until_a_checkpoint_frees_it() {
    let config = config(16, 4);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    let mut last = 0;
    let err = loop {
        // Bounded: the ring holds about 60 KiB, each record is about 1 KiB.
        match wal.append(&[record(0, last, 1000)]) {
            Ok(_) => last += 1,
            Err(err) => break err,
        }
        assert!(last < 1000, "the log never filled");
    };
    assert!(matches!(err, Error::LogFull { .. }), "{err}");
    assert!(wal.stats().full_waits > 0);
    let state = wal.checkpoint_age_state(wal.checkpoint_lsn());
    assert_eq!(state.zone, AgeZone::CheckpointRequired);
    assert!(state.checkpoint_age <= wal.capacity());

    // Another thread checkpoints while this one waits: the append completes. The same log
    // filled again, with a timeout no late thread reaches, and the checkpoint is written once
    // the append is seen waiting.
    let mut patient = config;
    patient.full_timeout = crate::poll::LIMIT;
    let device = mem_for(&patient);
    let wal = Wal::create(shared(&device), patient).unwrap();
    for id in 0..last {
        wal.append(&[record(0, id, 1000)]).unwrap();
    }
    std::thread::scope(|scope| {
        scope.spawn(|| {
            crate::poll::until("the append waiting", || wal.stats().full_waits > 0);
            wal.write_checkpoint(wal.current_lsn()).unwrap();
        });
        wal.append(&[record(0, last, 1000)]).unwrap();
    });
    // (Each wake-up that still finds the log full counts as one more wait: the checkpoint's
    // own flush wakes the waiter before the checkpoint frees the ring.)
    assert!(
        wal.stats().full_waits >= 1,
        "the append waited for the checkpoint"
    );
    assert_eq!(
        wal.checkpoint_age_state(0).zone,
        AgeZone::BelowLowWater,
        "fresh checkpoint, nothing dirty"
    );
    let margins = wal.margins();
    assert!(margins.max_checkpoint_age < wal.capacity());
    assert!(margins.adaptive_flushing_lwm < margins.max_modified_age_async);
}
