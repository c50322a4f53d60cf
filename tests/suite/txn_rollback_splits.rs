//! Rollback of large transactions on the B+-tree: inserts that split leaves (and inner
//! nodes), updates that change value lengths, updates in place (logged as patches, undone by
//! patches), deletes that merge and remove leaves, then an abort. Mini-transactions keep only the byte ranges they change for their own rollback
//! (`src/btree/rollback.rs`); transactions roll back from logical undo entries
//! (`src/txn/undo.rs`). These tests check the whole chain:
//!
//! - an abort restores the exact logical contents (every key and value), the trees check
//!   clean, and a restart sees the same;
//! - a crash of the log device in the middle of the rollback (seeded points; in a third of
//!   the runs a second crash during recovery) recovers to the committed contents, and so
//!   does a crash of the data device there.

use crate::crash_common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flashbuf::device::SharedDevice;
use flashbuf::device::fault::{FaultConfig, FaultDevice, UnsyncedOnCrash};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::engine::TornPageProtection;
use flashbuf::kv::{Direction, FULL_RANGE, KvEngine, TreeId};
use flashbuf::pool::{PoolConfig, Scheme};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const PAGE: usize = 4096;
const DATA_PAGES: u64 = 2048;
const LOG_PAGES: u64 = 2048;
/// Committed rows: even keys below `2 * ROWS`.
const ROWS: u32 = 1500;

fn config(images: bool) -> KvConfig {
    let mut pool = PoolConfig::for_scheme(Scheme::LruC, 48);
    pool.torn_page_protection = Some(if images {
        TornPageProtection::PageImages
    } else {
        TornPageProtection::Doublewrite
    });
    pool.cleaner_period_ms = 2;
    let mut config = KvConfig::new(48);
    config.database.pool = pool;
    config.database.wal = WalConfig {
        log_size: LOG_PAGES * PAGE as u64,
        page_size: PAGE,
        buffer_size: 64 * 1024,
        full_timeout: Duration::from_secs(2),
    };
    config.database.checkpoint_period_ms = 5;
    config.lock_timeout = Duration::from_millis(500);
    config
}

fn key(n: u32) -> Vec<u8> {
    format!("row{n:07}").into_bytes()
}

fn value(rng: &mut SmallRng, max: usize) -> Vec<u8> {
    let len = rng.gen_range(0..max);
    let fill = rng.r#gen::<u8>();
    vec![fill; len]
}

fn all_pairs(kv: &KvStore, tree: TreeId) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut txn = kv.begin().unwrap();
    let mut pairs = BTreeMap::new();
    txn.scan(
        tree,
        FULL_RANGE,
        Direction::Forward,
        usize::MAX,
        &mut |k, v| {
            pairs.insert(k.to_vec(), v.to_vec());
            true
        },
    )
    .unwrap();
    txn.commit().unwrap();
    pairs
}

/// Commits the rows of two trees (the second gets every third key).
fn setup(kv: &KvStore, rng: &mut SmallRng) -> flashbuf::Result<[TreeId; 2]> {
    let trees = [kv.open_tree("rows")?, kv.open_tree("other")?];
    let mut txn = kv.begin()?;
    for n in 0..ROWS {
        txn.put(trees[0], &key(2 * n), &value(rng, 200))?;
        if n % 3 == 0 {
            txn.put(trees[1], &key(2 * n), &value(rng, 100))?;
        }
    }
    txn.commit()?;
    Ok(trees)
}

/// The changes of the transaction that is rolled back: new keys with large values (splits),
/// updates to other lengths (of committed and of its own rows), deletes of a run of committed
/// rows (merges, empty leaves removed) and of some of its own inserts.
fn big_changes(
    txn: &mut dyn flashbuf::kv::KvTxn,
    trees: [TreeId; 2],
    rng: &mut SmallRng,
) -> flashbuf::Result<()> {
    for n in 0..ROWS {
        if n % 2 == 0 {
            txn.put(trees[0], &key(2 * n + 1), &value(rng, 600))?;
        }
        if n % 5 == 0 {
            txn.put(trees[0], &key(2 * n), &value(rng, 400))?;
        }
        if n % 7 == 0 {
            txn.put(trees[1], &key(2 * n + 1), &value(rng, 300))?;
        }
    }
    // Updates in place: the same length, one byte changed (a `Patch` and a patched undo
    // entry), some rows twice.
    for n in (0..ROWS).step_by(11).chain((0..ROWS).step_by(33)) {
        if let Some(mut row) = txn.get(trees[0], &key(2 * n))?
            && !row.is_empty()
        {
            let at = rng.gen_range(0..row.len());
            row[at] ^= 0x5a;
            txn.put(trees[0], &key(2 * n), &row)?;
        }
    }
    for n in 300..900 {
        txn.delete(trees[0], &key(2 * n))?;
    }
    for n in (0..ROWS).step_by(8) {
        txn.delete(trees[0], &key(2 * n + 1))?;
        txn.put(trees[1], &key(2 * n + 1), &value(rng, 50))?;
    }
    for n in (0..ROWS).step_by(3) {
        txn.delete(trees[1], &key(2 * n))?;
    }
    Ok(())
}

#[test]
fn aborts_across_splits_and_merges_restore_the_exact_contents() {
    let data: SharedDevice = Arc::new(MemoryDevice::new(PAGE, DATA_PAGES).unwrap());
    let log: SharedDevice = Arc::new(MemoryDevice::new(PAGE, LOG_PAGES).unwrap());
    let (kv, _) = KvStore::open(Arc::clone(&data), Arc::clone(&log), &config(true)).unwrap();
    let mut rng = SmallRng::seed_from_u64(7);
    let trees = setup(&kv, &mut rng).unwrap();
    let committed = [all_pairs(&kv, trees[0]), all_pairs(&kv, trees[1])];
    assert_eq!(committed[0].len(), ROWS as usize);
    let pages_before = kv.check().unwrap().into_result().unwrap().high_water;
    for round in 0..3 {
        let mut txn = kv.begin().unwrap();
        big_changes(txn.as_mut(), trees, &mut rng).unwrap();
        // The changes are there before the abort (and made the tree grow).
        let mut seen = 0;
        txn.scan(
            trees[0],
            FULL_RANGE,
            Direction::Forward,
            usize::MAX,
            &mut |_, _| {
                seen += 1;
                true
            },
        )
        .unwrap();
        assert_ne!(seen, ROWS as usize, "round {round}");
        txn.abort().unwrap();
        let report = kv.check().unwrap().into_result().unwrap();
        assert!(
            report.high_water > pages_before + 20,
            "round {round}: the transaction must split leaves ({} -> {} pages)",
            pages_before,
            report.high_water
        );
        for (tree, expected) in trees.iter().zip(&committed) {
            assert!(
                all_pairs(&kv, *tree) == *expected,
                "round {round}: tree {tree} differs after the abort"
            );
        }
    }
    kv.close().unwrap();
    let (kv, recovery) = KvStore::open(data, log, &config(true)).unwrap();
    assert_eq!(recovery.losers_rolled_back, 0);
    kv.check().unwrap().into_result().unwrap();
    for (tree, expected) in trees.iter().zip(&committed) {
        assert!(
            all_pairs(&kv, *tree) == *expected,
            "tree {tree} after a restart"
        );
    }
    kv.close().unwrap();
}

/// Devices of one run: the crash (if any) after `crash_at` operations of the log device
/// (`crash_data`: of the data device).
fn devices(seed: u64, crash_data: bool, crash_at: Option<u64>) -> (FaultDevice, FaultDevice) {
    let fate = [
        UnsyncedOnCrash::DropAll,
        UnsyncedOnCrash::Random,
        UnsyncedOnCrash::TearAll,
    ][(seed % 3) as usize];
    let data = FaultDevice::new_zeroed(
        Arc::new(MemoryDevice::new(PAGE, DATA_PAGES).unwrap()),
        crash_common::fault(seed, crash_at.filter(|_| crash_data), fate),
    )
    .unwrap();
    let log = FaultDevice::new_zeroed(
        Arc::new(MemoryDevice::new(PAGE, LOG_PAGES).unwrap()),
        crash_common::fault(seed ^ 0x5555, crash_at.filter(|_| !crash_data), fate),
    )
    .unwrap();
    (data, log)
}

/// What a run saw of the device that crashes.
struct Run {
    /// Its operation count when the abort started.
    started: u64,
    /// Its operation count after the abort.
    ended: u64,
    /// The setup committed (a crash point chosen by the dry run came later).
    setup_committed: bool,
    /// The device crashed before the abort started.
    crashed_before: bool,
}

/// Runs setup, the big transaction and its abort.
fn run(seed: u64, data: &Arc<FaultDevice>, log: &Arc<FaultDevice>, crash_data: bool) -> Run {
    let device = if crash_data { data } else { log };
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut outcome = Run {
        started: 0,
        ended: 0,
        setup_committed: false,
        crashed_before: true,
    };
    let Ok((kv, _)) = KvStore::open(
        Arc::clone(data) as SharedDevice,
        Arc::clone(log) as SharedDevice,
        &config(seed.is_multiple_of(2)),
    ) else {
        return outcome;
    };
    let Ok(trees) = setup(&kv, &mut rng) else {
        kv.abandon();
        return outcome;
    };
    outcome.setup_committed = true;
    let mut txn = kv.begin().unwrap();
    let changed = big_changes(txn.as_mut(), trees, &mut rng);
    outcome.started = device.counters().ops;
    outcome.crashed_before = device.counters().crashed || changed.is_err();
    // A crash inside the rollback makes it fail (the log is poisoned): the transaction is
    // then a loser for recovery.
    match changed {
        Ok(()) => {
            let _ = txn.abort();
        }
        Err(_) => drop(txn),
    }
    outcome.ended = device.counters().ops;
    kv.abandon();
    outcome
}

#[test]
fn a_log_crash_during_a_rollback_recovers_the_committed_contents() {
    crash_during_rollback(36, false);
}

/// The same with the crash on the data device. The rollback then fails on a read of the
/// crashed device while the log still works, so checkpoints keep running: this reproduced the
/// bug of a failed rollback withdrawing its transaction's in-flight bound (a checkpoint then
/// passed the loser's forward undo entries and recovery undid nothing; docs/recovery.md).
#[test]
fn a_data_crash_during_a_rollback_recovers_the_committed_contents() {
    crash_during_rollback(36, true);
}

fn crash_during_rollback(runs: u64, crash_data: bool) {
    let mut mid_rollback = 0;
    for seed in 0..runs {
        // A dry run finds the rollback's operations on the device that will crash.
        let (data, log) = devices(seed, crash_data, None);
        let (data, log) = (Arc::new(data), Arc::new(log));
        let dry = run(seed, &data, &log, crash_data);
        let (started, ended) = (dry.started, dry.ended);
        assert!(
            dry.setup_committed && !dry.crashed_before && ended > started + 2,
            "seed {seed}: the dry run rolls back with writes ({started}..{ended})"
        );
        let mut rng = SmallRng::seed_from_u64(seed ^ 0xC0FFEE);
        let crash_at = rng.gen_range(started + 1..ended);
        let (data, log) = devices(seed, crash_data, Some(crash_at));
        let (data, log) = (Arc::new(data), Arc::new(log));
        let crashed_run = run(seed, &data, &log, crash_data);
        let crashed = data.counters().crashed || log.counters().crashed;
        if crashed && !crashed_run.crashed_before {
            mid_rollback += 1;
        }
        let config = config(seed.is_multiple_of(2));
        let (data_image, log_image) =
            crash_common::crash_images(seed, &mut rng, &data, &log, &config);
        let (kv, recovery) = KvStore::open(data_image, log_image, &config)
            .unwrap_or_else(|e| panic!("seed {seed}: recovery failed: {e}"));
        kv.check()
            .unwrap()
            .into_result()
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        // The committed setup, exactly (the same seed draws the same values).
        let expected_kv = {
            let fresh: SharedDevice = Arc::new(MemoryDevice::new(PAGE, DATA_PAGES).unwrap());
            let fresh_log: SharedDevice = Arc::new(MemoryDevice::new(PAGE, LOG_PAGES).unwrap());
            let (fresh, _) = KvStore::open(fresh, fresh_log, &config).unwrap();
            setup(&fresh, &mut SmallRng::seed_from_u64(seed)).unwrap();
            fresh
        };
        let trees = [
            kv.open_tree("rows").unwrap(),
            kv.open_tree("other").unwrap(),
        ];
        let expected_trees = [
            expected_kv.open_tree("rows").unwrap(),
            expected_kv.open_tree("other").unwrap(),
        ];
        for (tree, expected) in trees.iter().zip(expected_trees) {
            if !crashed_run.setup_committed {
                // The crash came early (timing differs from the dry run): nothing or all of
                // the setup, never a part.
                let pairs = all_pairs(&kv, *tree);
                assert!(pairs.is_empty() || pairs == all_pairs(&expected_kv, expected));
                continue;
            }
            let got = all_pairs(&kv, *tree);
            let want = all_pairs(&expected_kv, expected);
            assert!(
                got == want,
                "seed {seed}: tree {tree} is not the committed one after recovery \
                 (crash at {crash_at} of {started}..{ended}, {} losers rolled back)",
                recovery.losers_rolled_back
            );
        }
        expected_kv.close().unwrap();
        kv.close().unwrap();
    }
    assert!(
        mid_rollback >= runs / 2,
        "most crashes must land inside the rollback: {mid_rollback} of {runs}"
    );
}

/// The root of the data-crash failure, deterministically: a rollback that fails on a read
/// error (which does not poison the pool) while the log works leaves a loser without an abort
/// record, and an explicit checkpoint right after it must not move the redo point past the
/// loser's forward undo entries (it did, when the failed rollback withdrew the transaction's
/// in-flight bound: recovery then saw only compensations and undid nothing).
#[test]
fn a_checkpoint_after_a_failed_rollback_keeps_the_losers_undo() {
    let seed = 4;
    let open = |fail_reads: Vec<u64>| {
        let data = Arc::new(
            FaultDevice::new_zeroed(
                Arc::new(MemoryDevice::new(PAGE, DATA_PAGES).unwrap()),
                FaultConfig {
                    fail_reads,
                    ..FaultConfig::default()
                },
            )
            .unwrap(),
        );
        let log = Arc::new(
            FaultDevice::new_zeroed(
                Arc::new(MemoryDevice::new(PAGE, LOG_PAGES).unwrap()),
                FaultConfig::default(),
            )
            .unwrap(),
        );
        (data, log)
    };
    let run = |data: &Arc<FaultDevice>, log: &Arc<FaultDevice>| {
        let (kv, _) = KvStore::open(
            Arc::clone(data) as SharedDevice,
            Arc::clone(log) as SharedDevice,
            &config(true),
        )
        .unwrap();
        let mut rng = SmallRng::seed_from_u64(seed);
        let trees = setup(&kv, &mut rng).unwrap();
        let mut txn = kv.begin().unwrap();
        big_changes(txn.as_mut(), trees, &mut rng).unwrap();
        let started = data.counters().reads;
        let aborted = txn.abort();
        let ended = data.counters().reads;
        (kv, aborted, started, ended)
    };
    // A dry run counts the rollback's reads of the data device.
    let (data, log) = open(Vec::new());
    let (kv, aborted, started, ended) = run(&data, &log);
    aborted.unwrap();
    kv.close().unwrap();
    assert!(
        ended > started + 10,
        "the rollback reads pages ({started}..{ended})"
    );
    // Every read from the middle of the rollback on fails.
    let first_failure = started + (ended - started) / 2;
    let (data, log) = open((first_failure..first_failure + 1_000_000).collect());
    let (kv, aborted, _, _) = run(&data, &log);
    assert!(aborted.is_err(), "the rollback must fail on a read");
    // The pool is not poisoned by a failed read: the checkpoint succeeds.
    kv.trees().database().checkpoint().unwrap();
    kv.abandon();
    let data_image: SharedDevice = Arc::new(data.crash().unwrap());
    let log_image: SharedDevice = Arc::new(log.crash().unwrap());
    let (kv, recovery) = KvStore::open(data_image, log_image, &config(true)).unwrap();
    assert_eq!(recovery.losers_rolled_back, 1);
    assert!(
        recovery.undo_applied > 0,
        "the loser's forward entries were scanned"
    );
    kv.check().unwrap().into_result().unwrap();
    let expected_kv = {
        let fresh: SharedDevice = Arc::new(MemoryDevice::new(PAGE, DATA_PAGES).unwrap());
        let fresh_log: SharedDevice = Arc::new(MemoryDevice::new(PAGE, LOG_PAGES).unwrap());
        let (fresh, _) = KvStore::open(fresh, fresh_log, &config(true)).unwrap();
        setup(&fresh, &mut SmallRng::seed_from_u64(seed)).unwrap();
        fresh
    };
    for name in ["rows", "other"] {
        let got = all_pairs(&kv, kv.open_tree(name).unwrap());
        let want = all_pairs(&expected_kv, expected_kv.open_tree(name).unwrap());
        assert!(
            got == want,
            "tree {name} is not the committed one after recovery"
        );
    }
    expected_kv.close().unwrap();
    kv.close().unwrap();
}
