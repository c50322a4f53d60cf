//! The fault-injecting wrapper: crash images keep exactly the synced writes, torn pages fail
//! verification, injected errors reach the caller, and everything replays from the seed.

use std::sync::Arc;

use flashbuf::DeviceError;
use flashbuf::device::fault::{FaultConfig, FaultDevice, UnsyncedOnCrash};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, Device, SharedDevice};
use flashbuf::page;

const PAGE: usize = 4096;
const PAGES: u64 = 32;

fn fresh(config: FaultConfig) -> FaultDevice {
    let inner: SharedDevice = Arc::new(MemoryDevice::new(PAGE, PAGES).unwrap());
    FaultDevice::new_zeroed(inner, config).unwrap()
}

/// A formatted page whose payload is non-zero everywhere (so any tear changes it).
fn stamped(page_id: u64, lsn: u64) -> AlignedBuf {
    let mut buf = AlignedBuf::new(PAGE);
    for (index, byte) in page::payload_mut(buf.as_mut_slice()).iter_mut().enumerate() {
        *byte = (index as u64 + lsn * 7 + page_id) as u8 | 1;
    }
    page::stamp(buf.as_mut_slice(), page_id, lsn);
    buf
}

fn lsn_in(device: &dyn Device, page_id: u64) -> flashbuf::Result<u64> {
    let mut buf = AlignedBuf::new(PAGE);
    device.read_page(page_id, &mut buf)?;
    page::verify(buf.as_slice(), page_id)
}

/// Pages 0..8 written at LSN 1 and synced; pages 4..12 rewritten at LSN 2, not synced.
fn synced_then_unsynced(device: &FaultDevice) {
    for p in 0..8 {
        device.write_page(p, &stamped(p, 1)).unwrap();
    }
    device.sync().unwrap();
    for p in 4..12 {
        device.write_page(p, &stamped(p, 2)).unwrap();
    }
    for p in 0..12 {
        let expected = if p < 4 { 1 } else { 2 };
        assert_eq!(
            lsn_in(device, p).unwrap(),
            expected,
            "live device sees every write"
        );
    }
}

#[test]
fn crash_image_keeps_exactly_the_synced_writes() {
    let device = fresh(FaultConfig::default());
    synced_then_unsynced(&device);
    let image = device.crash().unwrap();
    for p in 0..PAGES {
        let expected = if p < 8 { 1 } else { 0 };
        assert_eq!(lsn_in(&image, p).unwrap(), expected, "page {p}");
    }
    let mut buf = AlignedBuf::new(PAGE);
    assert_eq!(device.read_page(0, &mut buf), Err(DeviceError::Crashed));
    assert_eq!(device.write_page(0, &buf), Err(DeviceError::Crashed));
    assert_eq!(device.sync(), Err(DeviceError::Crashed));
    let counters = device.counters();
    assert!(counters.crashed);
    assert_eq!(counters.refused_after_crash, 3);
}

#[test]
fn apply_all_keeps_the_unsynced_writes_too() {
    let device = fresh(FaultConfig {
        unsynced_on_crash: UnsyncedOnCrash::ApplyAll,
        ..FaultConfig::default()
    });
    synced_then_unsynced(&device);
    let image = device.crash().unwrap();
    for p in 0..12 {
        let expected = if p < 4 { 1 } else { 2 };
        assert_eq!(lsn_in(&image, p).unwrap(), expected, "page {p}");
    }
}

#[test]
fn torn_pages_at_a_crash_fail_verification() {
    let device = fresh(FaultConfig {
        seed: 11,
        unsynced_on_crash: UnsyncedOnCrash::TearAll,
        ..FaultConfig::default()
    });
    synced_then_unsynced(&device);
    let image = device.crash().unwrap();
    for p in 0..4 {
        assert_eq!(lsn_in(&image, p).unwrap(), 1, "synced page {p} intact");
    }
    for p in 4..12 {
        assert!(
            matches!(lsn_in(&image, p), Err(flashbuf::Error::CorruptPage { .. })),
            "torn page {p} must not verify"
        );
    }
}

#[test]
fn a_torn_write_at_run_time_reports_success_but_fails_verification() {
    let device = fresh(FaultConfig {
        seed: 3,
        torn_writes: vec![2],
        ..FaultConfig::default()
    });
    device.write_page(1, &stamped(1, 1)).unwrap();
    device.write_page(1, &stamped(1, 2)).unwrap();
    assert!(
        lsn_in(&device, 1).is_err(),
        "the torn image is on the medium"
    );
    assert_eq!(device.counters().torn_writes, 1);
    device.sync().unwrap();
    let image = device.crash().unwrap();
    assert!(lsn_in(&image, 1).is_err(), "and it is what became durable");
}

#[test]
fn injected_errors_reach_the_caller() {
    let device = fresh(FaultConfig {
        fail_reads: vec![1],
        fail_writes: vec![2],
        fail_syncs: vec![1],
        ..FaultConfig::default()
    });
    let mut buf = AlignedBuf::new(PAGE);
    assert!(matches!(
        device.read_page(0, &mut buf),
        Err(DeviceError::Injected(_))
    ));
    device.write_page(3, &stamped(3, 1)).unwrap();
    assert!(matches!(
        device.write_page(4, &stamped(4, 1)),
        Err(DeviceError::Injected(_))
    ));
    assert_eq!(
        lsn_in(device.inner().as_ref(), 4).unwrap(),
        0,
        "failed write never landed"
    );
    assert!(matches!(device.sync(), Err(DeviceError::Injected(_))));
    let image = device.crash().unwrap();
    assert_eq!(
        lsn_in(&image, 3).unwrap(),
        0,
        "a failed sync made nothing durable"
    );
    let counters = device.counters();
    assert_eq!(counters.injected_errors, 3);
    assert_eq!((counters.reads, counters.writes, counters.syncs), (1, 2, 1));
    assert_eq!(counters.ops, 4);
}

#[test]
fn a_sync_after_a_failed_one_makes_the_writes_durable() {
    let device = fresh(FaultConfig {
        fail_syncs: vec![1],
        ..FaultConfig::default()
    });
    device.write_page(3, &stamped(3, 1)).unwrap();
    assert!(device.sync().is_err());
    device.sync().unwrap();
    let image = device.crash().unwrap();
    assert_eq!(lsn_in(&image, 3).unwrap(), 1);
}

#[test]
fn crash_after_n_ops_refuses_everything_after() {
    let device = fresh(FaultConfig {
        crash_after_ops: Some(5),
        ..FaultConfig::default()
    });
    device.write_page(0, &stamped(0, 1)).unwrap(); // op 1
    device.write_page(1, &stamped(1, 1)).unwrap(); // op 2
    device.sync().unwrap(); // op 3
    device.write_page(2, &stamped(2, 1)).unwrap(); // op 4
    device.write_page(3, &stamped(3, 1)).unwrap(); // op 5
    assert_eq!(device.sync(), Err(DeviceError::Crashed), "op 6");
    assert_eq!(
        device.write_page(4, &stamped(4, 1)),
        Err(DeviceError::Crashed)
    );
    assert!(device.counters().crashed);
    let image = device.crash().unwrap();
    let lsns: Vec<u64> = (0..5).map(|p| lsn_in(&image, p).unwrap()).collect();
    assert_eq!(lsns, vec![1, 1, 0, 0, 0]);
}

/// A seeded run: random errors on every kind, then a random crash image; returns everything
/// observable.
fn seeded_run(seed: u64) -> (Vec<bool>, Vec<Option<u64>>) {
    let device = fresh(FaultConfig {
        seed,
        read_error_rate: 0.2,
        write_error_rate: 0.2,
        sync_error_rate: 0.3,
        unsynced_on_crash: UnsyncedOnCrash::Random,
        ..FaultConfig::default()
    });
    let mut outcomes = Vec::new();
    let mut buf = AlignedBuf::new(PAGE);
    for step in 0..120u64 {
        let page_id = (step * 7) % PAGES;
        let ok = match step % 5 {
            0..=2 => device
                .write_page(page_id, &stamped(page_id, step + 1))
                .is_ok(),
            3 => device.read_page(page_id, &mut buf).is_ok(),
            _ => device.sync().is_ok(),
        };
        outcomes.push(ok);
    }
    let image = device.crash().unwrap();
    let lsns = (0..PAGES).map(|p| lsn_in(&image, p).ok()).collect();
    (outcomes, lsns)
}

#[test]
fn runs_replay_exactly_from_the_seed() {
    let first = seeded_run(42);
    assert_eq!(first, seeded_run(42));
    assert!(first.0.iter().any(|ok| !ok) && first.0.iter().any(|ok| *ok));
    assert_ne!(first, seeded_run(43), "another seed, another run");
}

#[test]
fn wrapping_takes_the_inner_contents_as_durable() {
    let inner = Arc::new(MemoryDevice::new(PAGE, PAGES).unwrap());
    inner.write_page(9, &stamped(9, 5)).unwrap();
    let device = FaultDevice::new(inner, FaultConfig::default()).unwrap();
    device.write_page(9, &stamped(9, 6)).unwrap();
    let image = device.crash().unwrap();
    assert_eq!(lsn_in(&image, 9).unwrap(), 5);
}

#[test]
fn bulk_loads_are_durable_and_not_counted() {
    let device = fresh(FaultConfig {
        fail_writes: vec![1],
        ..FaultConfig::default()
    });
    let mut data = stamped(0, 3).as_slice().to_vec();
    data.extend_from_slice(stamped(1, 3).as_slice());
    device.bulk_load(0, &data).unwrap();
    assert_eq!(device.counters().ops, 0);
    let image = device.crash().unwrap();
    assert_eq!(lsn_in(&image, 1).unwrap(), 3);
}
