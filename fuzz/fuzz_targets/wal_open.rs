//! `Wal::open` over damaged and arbitrary log-device images.
//!
//! Input byte 0 picks the mode. `0xff`: the rest is a raw device image (repeated to fill the
//! device): open must not panic, and a success must be self-consistent. Otherwise the rest is a
//! list of mutations (bit flips, zeroed ranges) of a log with known records (60 records, each
//! flushed, a checkpoint in the middle): open must not panic; a success must return a prefix of
//! the known records and be idempotent; and damage that the log can prove (in records after the
//! checkpoint's redo LSN, before the start of the last flush, with the last flush's first page
//! header intact) must be a `CorruptLog` error, never a silent short log.

#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use flashbuf::Error;
use flashbuf::wal::{LogRecord, Wal, WalConfig};
use fuzz_support::{
    PAGE, apply, device_from, first_changed_lsn, header_unchanged, mutations, snapshot,
};
use libfuzzer_sys::fuzz_target;

const RING_PAGES: u64 = 24;

struct Base {
    config: WalConfig,
    image: Vec<u8>,
    /// (record, start, end) from the checkpoint's redo LSN on.
    records: Vec<(LogRecord, u64, u64)>,
    redo_lsn: u64,
    last_flush_start: u64,
}

fn config() -> WalConfig {
    WalConfig {
        log_size: (RING_PAGES + 2) * PAGE as u64,
        page_size: PAGE,
        buffer_size: 4 * PAGE,
        full_timeout: Duration::from_millis(100),
    }
}

fn base() -> &'static Base {
    static BASE: OnceLock<Base> = OnceLock::new();
    BASE.get_or_init(|| {
        let config = config();
        let device = std::sync::Arc::new(
            flashbuf::device::memory::MemoryDevice::new(PAGE, RING_PAGES + 2).unwrap(),
        );
        let wal = Wal::create(device.clone(), config.clone()).unwrap();
        let mut all = Vec::new();
        let mut last_flush_start = 0;
        for id in 0..60u64 {
            let record = if id % 3 == 2 {
                LogRecord::Commit { txn: id }
            } else {
                LogRecord::PageRedo {
                    txn: id,
                    page: id,
                    offset: 64,
                    bytes: vec![(id as u8) | 1; (id as usize * 37) % 500 + 1],
                }
            };
            last_flush_start = wal.durable_lsn();
            let range = wal.append_range(std::slice::from_ref(&record)).unwrap();
            all.push((record, range.start, range.end));
            wal.flush_to(range.end).unwrap();
            if id == 30 {
                let redo = all[20].1;
                wal.write_checkpoint(redo).unwrap();
                let end = wal.current_lsn();
                // The checkpoint appended its own record; recovery will find it.
                let start = all.last().unwrap().2;
                all.push((LogRecord::Checkpoint { redo_lsn: redo }, start, end));
            }
        }
        drop(wal);
        let redo_lsn = all[20].1;
        let records = all.into_iter().filter(|r| r.1 >= redo_lsn).collect();
        Base {
            config,
            image: snapshot(&device),
            records,
            redo_lsn,
            last_flush_start,
        }
    })
}

fn raw(input: &[u8]) {
    let base = base();
    let mut image = vec![0u8; base.image.len()];
    if !input.is_empty() {
        for (index, byte) in image.iter_mut().enumerate() {
            *byte = input[index % input.len()];
        }
    }
    let device = device_from(&image);
    if let Ok((_, recovery)) = Wal::open(device, base.config.clone()) {
        assert!(recovery.proven_durable_lsn <= recovery.end_lsn);
        assert!(
            recovery
                .records
                .iter()
                .all(|r| r.start < r.end && r.end <= recovery.end_lsn)
        );
    }
}

fn damaged(input: &[u8]) {
    let base = base();
    let mut image = base.image.clone();
    let list = mutations(input, image.len(), 16);
    apply(&mut image, &list);
    let (first, slots_changed) = first_changed_lsn(&base.image, &image);
    let device = device_from(&image);
    let proof_page = base.last_flush_start / PAGE as u64;
    let provable = !slots_changed
        && first.is_some_and(|lsn| lsn >= base.redo_lsn && lsn < base.last_flush_start)
        && header_unchanged(&base.image, &image, proof_page);
    // `FUZZ_REPORT=1` prints each input's class (to count what a corpus exercises).
    let report = std::env::var_os("FUZZ_REPORT").is_some();
    match Wal::open(device.clone(), base.config.clone()) {
        Ok((wal, recovery)) => {
            if report {
                eprintln!("CLASS provable={provable} outcome=ok");
            }
            assert!(
                !provable,
                "damage at LSN {first:?} before the last flush ({}) opened silently: {} of {} \
                 records, stop {:?}",
                base.last_flush_start,
                recovery.records.len(),
                base.records.len(),
                recovery.stop
            );
            let got: Vec<_> = recovery
                .records
                .iter()
                .map(|r| (r.record.clone(), r.start, r.end))
                .collect();
            if !slots_changed {
                assert!(got.len() <= base.records.len());
                assert_eq!(&got[..], &base.records[..got.len()], "a prefix");
            }
            drop(wal);
            let (_, again) = Wal::open(device, base.config.clone()).expect("reopen");
            assert_eq!(again.records.len(), recovery.records.len(), "idempotent");
            assert_eq!(again.end_lsn, recovery.end_lsn);
        }
        Err(Error::CorruptLog { .. } | Error::Format { .. } | Error::Config(_)) => {
            if report {
                eprintln!("CLASS provable={provable} outcome=error");
            }
        }
        Err(other) => panic!("unexpected error kind: {other}"),
    }
}

fuzz_target!(|input: &[u8]| {
    match input.split_first() {
        Some((0xff, rest)) => raw(rest),
        Some((_, rest)) => damaged(rest),
        None => {}
    }
});
