//! Many threads append and commit concurrently (group commit); every acknowledged record is
//! read back after reopening, in LSN order.

use crate::wal_common;

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

/// One crash during concurrent commits: four threads commit until the device crashes under
/// them; every commit whose flush returned before the crash must be in the recovered log.
/// The crash image is taken atomically by the fault device (durable pages, plus each unsynced
/// page dropped, applied or torn): a page-by-page copy of a live device is not a crash image,
/// as it can hold an old version of a page synced before a later page it also holds, which
/// the log's flush stamps rightly report as corruption.
fn crash_during_commits(seed: u64, after: Duration) -> usize {
    use flashbuf::device::fault::{FaultConfig, FaultDevice, UnsyncedOnCrash};
    let config = config(1024, 16);
    let memory = mem_for(&config);
    let fault = std::sync::Arc::new(
        FaultDevice::new_zeroed(
            memory,
            FaultConfig {
                seed,
                unsynced_on_crash: UnsyncedOnCrash::Random,
                ..FaultConfig::default()
            },
        )
        .unwrap(),
    );
    let wal = Wal::create(fault.clone(), config.clone()).unwrap();
    let acked = parking_lot::Mutex::new(Vec::new());
    let image = std::thread::scope(|scope| {
        for thread in 0..4u64 {
            let (wal, acked) = (&wal, &acked);
            scope.spawn(move || {
                // Bounded: stops at the crash, or after 5 000 commits (about 2 MiB of log).
                for i in 0..5_000u64 {
                    let txn = thread * 1_000_000 + i;
                    let Ok(end) = wal.append(&[record(0, txn, 40), LogRecord::Commit { txn }])
                    else {
                        break;
                    };
                    if wal.flush_to(end).is_err() {
                        break;
                    }
                    acked.lock().push((txn, end));
                }
            });
        }
        std::thread::sleep(after);
        fault.crash().unwrap()
    });
    // Every push followed a flush that returned before the crash (later ones fail).
    let acked = acked.into_inner();
    drop(wal);
    let (_, recovery) = Wal::open(std::sync::Arc::new(image), config).unwrap();
    let found: HashSet<u64> = recovery
        .records
        .iter()
        .filter_map(|r| match r.record {
            LogRecord::Commit { txn } => Some(txn),
            _ => None,
        })
        .collect();
    for (txn, end) in &acked {
        assert!(
            found.contains(txn),
            "commit {txn} (end LSN {end}) acknowledged before the crash is lost (seed {seed}); \
             recovery ends at {} ({:?}), proven durable to {}, {} commits acked",
            recovery.end_lsn,
            recovery.stop,
            recovery.proven_durable_lsn,
            acked.len()
        );
    }
    acked.len()
}

#[test]
fn a_crash_image_taken_during_commits_holds_every_earlier_acknowledged_commit() {
    let mut checked = 0;
    for seed in 0..6u64 {
        checked += crash_during_commits(seed, Duration::from_millis(2 + 3 * seed));
    }
    assert!(
        checked > 0,
        "some commits were acknowledged before the crashes"
    );
}
