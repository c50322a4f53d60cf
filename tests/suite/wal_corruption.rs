//! Recovery under damaged logs: random truncation points and bit flips. Recovery never
//! panics; it either reports `CorruptLog` (only when the damage lies before a flush stamp the
//! undamaged log carried: the log was provably durable there) or returns a prefix of what was
//! written (at least every record before the damage), is idempotent, and the log resumes
//! cleanly over the garbage tail.

use crate::wal_common;

use flashbuf::Error;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, Device};
use flashbuf::wal::{LogRecord, Wal, WalConfig};
use proptest::prelude::*;
use wal_common::{PAGE, config, mem_for, record, shared};

const RING_PAGES: u64 = 24;

/// Writes `sizes.len()` records, flushing after those marked, then everything; returns them
/// with their (start, end) LSNs.
fn write_log(
    config: &WalConfig,
    device: &std::sync::Arc<MemoryDevice>,
    sizes: &[(u8, usize, bool)],
) -> Vec<(LogRecord, u64, u64)> {
    let wal = Wal::create(shared(device), config.clone()).unwrap();
    let mut written = Vec::new();
    for (id, &(kind, size, flush)) in sizes.iter().enumerate() {
        let r = record(kind, id as u64 + 1, size);
        let range = wal.append_range(std::slice::from_ref(&r)).unwrap();
        written.push((r, range.start, range.end));
        if flush {
            wal.flush_to(range.end).unwrap();
        }
    }
    wal.close().unwrap();
    written
}

/// Device byte position of an LSN (the log never wraps in these tests).
fn device_offset(lsn: u64) -> usize {
    assert!(lsn < RING_PAGES * PAGE as u64);
    2 * PAGE + lsn as usize
}

fn edit(device: &MemoryDevice, offset: usize, f: impl FnOnce(&mut [u8])) {
    let page = (offset / PAGE) as u64;
    let mut buf = AlignedBuf::new(PAGE);
    device.read_page(page, &mut buf).unwrap();
    f(&mut buf.as_mut_slice()[offset % PAGE..]);
    device.write_page(page, &buf).unwrap();
}

/// The largest flush stamp of the undamaged log (read through a copy, which recovery rewrites).
fn largest_stamp(config: &WalConfig, device: &MemoryDevice) -> u64 {
    let copy = wal_common::device_from(&wal_common::snapshot(device));
    let (_, recovery) = Wal::open(shared(&copy), config.clone()).unwrap();
    recovery.proven_durable_lsn
}

/// Opens; a `CorruptLog` must be provable (`intact_before` below the largest stamp the
/// undamaged log had); otherwise checks the prefix property and idempotence, appends one
/// record over the tail and checks it is found after the recovered prefix.
fn check_recovery(
    config: &WalConfig,
    device: &std::sync::Arc<MemoryDevice>,
    written: &[(LogRecord, u64, u64)],
    intact_before: u64,
    stamp_before_damage: u64,
) -> Result<(), TestCaseError> {
    let (wal, recovery) = match Wal::open(shared(device), config.clone()) {
        Ok(opened) => opened,
        Err(Error::CorruptLog { offset, reason }) => {
            prop_assert!(
                intact_before < stamp_before_damage,
                "corruption reported at {} ({}) although the damage at {} is past every stamp {}",
                offset,
                reason,
                intact_before,
                stamp_before_damage
            );
            return Ok(());
        }
        Err(other) => return Err(TestCaseError::fail(format!("unexpected error {other}"))),
    };
    let got: Vec<_> = recovery
        .records
        .iter()
        .map(|r| (r.record.clone(), r.start, r.end))
        .collect();
    prop_assert!(got.len() <= written.len());
    prop_assert_eq!(
        &got[..],
        &written[..got.len()],
        "recovered records are a prefix"
    );
    let must_have = written.iter().filter(|w| w.2 <= intact_before).count();
    prop_assert!(
        got.len() >= must_have,
        "lost records before the damage: {} < {}",
        got.len(),
        must_have
    );
    drop(wal);
    let (wal, again) = Wal::open(shared(device), config.clone()).unwrap();
    prop_assert_eq!(again.records.len(), got.len(), "idempotent");
    prop_assert_eq!(again.end_lsn, recovery.end_lsn);
    let marker = LogRecord::Commit { txn: 0xdead_beef };
    let end = wal.append(std::slice::from_ref(&marker)).unwrap();
    wal.close().unwrap();
    let (_, after) = Wal::open(shared(device), config.clone()).unwrap();
    prop_assert_eq!(after.records.len(), got.len() + 1);
    prop_assert_eq!(
        after.records.last().map(|r| (&r.record, r.end)),
        Some((&marker, end))
    );
    Ok(())
}

fn sizes() -> impl Strategy<Value = Vec<(u8, usize, bool)>> {
    prop::collection::vec((0u8..4, 0usize..5000, any::<bool>()), 1..20)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn truncated_tails_recover_a_prefix(sizes in sizes(), cut in 0.0f64..1.0) {
        let config = config(RING_PAGES, 4);
        let device = mem_for(&config);
        let written = write_log(&config, &device, &sizes);
        let stamp = largest_stamp(&config, &device);
        let end = written.last().unwrap().2;
        let cut_lsn = 32 + ((end - 32) as f64 * cut) as u64;
        // Everything from the cut to the end of the ring never reached the device.
        let from = device_offset(cut_lsn);
        let to = (2 + RING_PAGES as usize) * PAGE;
        let mut offset = from;
        while offset < to {
            let len = PAGE - offset % PAGE;
            edit(&device, offset, |bytes| bytes[..len].fill(0));
            offset += len;
        }
        check_recovery(&config, &device, &written, cut_lsn, stamp)?;
    }

    #[test]
    fn bit_flips_recover_a_prefix(
        sizes in sizes(),
        flips in prop::collection::vec((0.0f64..1.0, 0u8..8), 1..4),
    ) {
        let config = config(RING_PAGES, 4);
        let device = mem_for(&config);
        let written = write_log(&config, &device, &sizes);
        let stamp = largest_stamp(&config, &device);
        let end = written.last().unwrap().2;
        let mut first = u64::MAX;
        for (at, bit) in flips {
            let lsn = ((end as f64) * at) as u64;
            first = first.min(lsn);
            edit(&device, device_offset(lsn), |bytes| bytes[0] ^= 1 << bit);
        }
        check_recovery(&config, &device, &written, first, stamp)?;
    }

    #[test]
    fn arbitrary_ring_bytes_never_panic(
        garbage in prop::collection::vec((0usize..(RING_PAGES as usize * PAGE), any::<u8>()), 0..200),
        sizes in sizes(),
    ) {
        let config = config(RING_PAGES, 4);
        let device = mem_for(&config);
        let written = write_log(&config, &device, &sizes);
        for (at, value) in garbage {
            edit(&device, 2 * PAGE + at, |bytes| bytes[0] = value);
        }
        // Damage before the checkpoint's durable LSN is impossible here (the checkpoint is the
        // format-time one), so opening either proves corruption or yields a prefix.
        let recovery = match Wal::open(shared(&device), config.clone()) {
            Ok((_, recovery)) => recovery,
            Err(Error::CorruptLog { .. }) => return Ok(()),
            Err(other) => return Err(TestCaseError::fail(format!("unexpected error {other}"))),
        };
        for (got, want) in recovery.records.iter().zip(&written) {
            prop_assert_eq!(&got.record, &want.0);
        }
    }
}

#[test]
fn garbage_checkpoint_slots_are_errors_not_panics() {
    let config = config(RING_PAGES, 4);
    let device = mem_for(&config);
    write_log(&config, &device, &[(0, 10, true)]);
    let mut buf = AlignedBuf::new(PAGE);
    for value in [0x00u8, 0xff, 0x5a] {
        for page in 0..2 {
            buf.as_mut_slice().fill(value);
            device.write_page(page, &buf).unwrap();
        }
        let result = Wal::open(shared(&device), config.clone());
        if value == 0 {
            assert!(result.is_err(), "blank slots: not formatted");
        } else {
            assert!(result.is_err(), "garbage slots");
        }
    }
}
