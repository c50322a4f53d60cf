//! Crash recovery of the transactional B+-tree on the fault-injecting device: a bank-transfer
//! workload (each transfer also inserts a history record; some transfers are aborted on
//! purpose; every tenth transaction moves old history records to an archive tree, deleting
//! them, so leaves merge and empty ones go), a crash at a seeded random point on the data or
//! the log device (unsynced writes dropped, applied or torn), in a third of the runs a second
//! crash during recovery, then recovery and these checks:
//!
//! - `check` finds every tree intact (checksums, order, bounds, links, free space, no leaks);
//! - the accounts are all there or (setup not committed) none, and sum to the initial total;
//! - the balances equal the initial ones plus exactly the transfers whose history record
//!   survived (history and archive together): no partial transaction is visible;
//! - every acknowledged commit's record survived; no aborted transfer's record exists.
//!
//! Even seeds protect torn pages with page images in the log, odd seeds with the doublewrite.
//! The normal run covers 1000 crash points; `crash_campaign` (ignored) runs 10000 more:
//! `cargo test --release --test suite txn_crash::crash_campaign -- --ignored`.

use crate::crash_common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use flashbuf::device::SharedDevice;
use flashbuf::device::fault::{FaultDevice, UnsyncedOnCrash};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::engine::TornPageProtection;
use flashbuf::kv::{Direction, FULL_RANGE, KvEngine};
use flashbuf::pool::{PoolConfig, Scheme};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const PAGE: usize = 4096;
const DATA_PAGES: u64 = 256;
const LOG_PAGES: u64 = 96;
const ACCOUNTS: u32 = 48;
const INITIAL: i64 = 1000;

fn config(scheme: Scheme, images: bool) -> KvConfig {
    let mut pool = PoolConfig::for_scheme(scheme, 16);
    // Both torn-page protections: page images in the log, or InnoDB's doublewrite.
    pool.torn_page_protection = Some(if images {
        TornPageProtection::PageImages
    } else {
        TornPageProtection::Doublewrite
    });
    pool.lru_scan_depth = 4;
    pool.cleaner_period_ms = 2;
    let mut config = KvConfig::new(16);
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

fn account(n: u32) -> Vec<u8> {
    format!("acct{n:05}").into_bytes()
}

fn balance_value(balance: i64) -> Vec<u8> {
    let mut value = balance.to_le_bytes().to_vec();
    value.resize(200, b'.');
    value
}

fn balance_of(value: &[u8]) -> i64 {
    i64::from_le_bytes(value[..8].try_into().unwrap())
}

fn history_key(seq: u32) -> Vec<u8> {
    format!("h{seq:08}").into_bytes()
}

/// A history record: from, to, amount, padded so the tree grows several leaves.
fn history_value(from: u32, to: u32, amount: i64) -> Vec<u8> {
    let mut value = Vec::new();
    value.extend_from_slice(&from.to_le_bytes());
    value.extend_from_slice(&to.to_le_bytes());
    value.extend_from_slice(&amount.to_le_bytes());
    value.resize(400, b'#');
    value
}

fn decode_history(value: &[u8]) -> (u32, u32, i64) {
    (
        u32::from_le_bytes(value[0..4].try_into().unwrap()),
        u32::from_le_bytes(value[4..8].try_into().unwrap()),
        i64::from_le_bytes(value[8..16].try_into().unwrap()),
    )
}

/// What the workload knows about its transactions.
#[derive(Default)]
struct Ledger {
    setup_acknowledged: bool,
    acknowledged: BTreeSet<u32>,
    aborted: BTreeSet<u32>,
    /// The log's end right after each acknowledged commit (for diagnostics).
    commit_lsn: BTreeMap<u32, u64>,
}

fn setup(kv: &KvStore) -> flashbuf::Result<(u32, u32, u32)> {
    let accounts = kv.open_tree("accounts")?;
    let history = kv.open_tree("history")?;
    let archive = kv.open_tree("archive")?;
    let mut txn = kv.begin()?;
    for n in 0..ACCOUNTS {
        txn.put(accounts, &account(n), &balance_value(INITIAL))?;
    }
    txn.commit()?;
    Ok((accounts, history, archive))
}

fn transfer(
    kv: &KvStore,
    trees: (u32, u32, u32),
    seq: u32,
    rng: &mut SmallRng,
    abort: bool,
) -> flashbuf::Result<()> {
    let (accounts, history, _) = trees;
    let (from, to) = (rng.gen_range(0..ACCOUNTS), rng.gen_range(0..ACCOUNTS));
    let amount = rng.gen_range(1..50);
    let mut txn = kv.begin()?;
    let from_balance = balance_of(&txn.get(accounts, &account(from))?.unwrap_or_default());
    txn.put(
        accounts,
        &account(from),
        &balance_value(from_balance - amount),
    )?;
    let to_balance = balance_of(&txn.get(accounts, &account(to))?.unwrap_or_default());
    txn.put(accounts, &account(to), &balance_value(to_balance + amount))?;
    txn.put(history, &history_key(seq), &history_value(from, to, amount))?;
    if abort { txn.abort() } else { txn.commit() }
}

/// Moves the five oldest history records to the archive (deletes in history).
fn archive_some(kv: &KvStore, trees: (u32, u32, u32)) -> flashbuf::Result<()> {
    let (_, history, archive) = trees;
    let mut txn = kv.begin()?;
    let mut oldest = Vec::new();
    txn.scan(history, FULL_RANGE, Direction::Forward, 5, &mut |k, v| {
        oldest.push((k.to_vec(), v.to_vec()));
        true
    })?;
    for (key, value) in oldest {
        txn.delete(history, &key)?;
        txn.put(archive, &key, &value)?;
    }
    txn.commit()
}

fn run_workload(kv: &KvStore, rng: &mut SmallRng, ledger: &mut Ledger, max_txns: u32) {
    let Ok(trees) = setup(kv) else { return };
    ledger.setup_acknowledged = true;
    for seq in 0..max_txns {
        let result = if seq % 10 == 9 {
            archive_some(kv, trees)
        } else {
            let abort = rng.gen_bool(0.1);
            let result = transfer(kv, trees, seq, rng, abort);
            if abort && result.is_ok() {
                ledger.aborted.insert(seq);
            } else if result.is_ok() {
                ledger.acknowledged.insert(seq);
                ledger
                    .commit_lsn
                    .insert(seq, kv.trees().database().wal().current_lsn());
            }
            result
        };
        if result.is_err() {
            break;
        }
    }
}

fn all_pairs(kv: &KvStore, tree: u32) -> BTreeMap<Vec<u8>, Vec<u8>> {
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

fn verify(seed: u64, kv: &KvStore, ledger: &Ledger) -> usize {
    let report = kv.check().unwrap();
    assert!(report.is_ok(), "seed {seed}: check: {:?}", report.problems);
    let accounts = kv.open_tree("accounts").unwrap();
    let history = kv.open_tree("history").unwrap();
    let archive = kv.open_tree("archive").unwrap();
    let balances = all_pairs(kv, accounts);
    if balances.is_empty() {
        assert!(
            !ledger.setup_acknowledged,
            "seed {seed}: acknowledged setup lost"
        );
        return 0;
    }
    assert_eq!(
        balances.len(),
        ACCOUNTS as usize,
        "seed {seed}: partial setup"
    );
    let mut records = all_pairs(kv, history);
    let archived = all_pairs(kv, archive);
    for key in archived.keys() {
        assert!(
            !records.contains_key(key),
            "seed {seed}: record in both trees"
        );
    }
    records.extend(archived);
    let mut expected: BTreeMap<Vec<u8>, i64> =
        (0..ACCOUNTS).map(|n| (account(n), INITIAL)).collect();
    let mut present = BTreeSet::new();
    for (key, value) in &records {
        let seq: u32 = std::str::from_utf8(&key[1..]).unwrap().parse().unwrap();
        present.insert(seq);
        let (from, to, amount) = decode_history(value);
        *expected.get_mut(&account(from)).unwrap() -= amount;
        *expected.get_mut(&account(to)).unwrap() += amount;
    }
    let diffs: Vec<(String, i64)> = balances
        .iter()
        .filter(|(key, value)| balance_of(value) != expected[*key])
        .map(|(key, value)| {
            (
                String::from_utf8_lossy(key).into_owned(),
                balance_of(value) - expected[key],
            )
        })
        .collect();
    if !diffs.is_empty() {
        eprintln!("seed {seed}: balance differences (actual - expected): {diffs:?}");
        let present: BTreeSet<u32> = records
            .keys()
            .map(|k| std::str::from_utf8(&k[1..]).unwrap().parse().unwrap())
            .collect();
        let missing: Vec<(u32, u64)> = ledger
            .acknowledged
            .difference(&present)
            .map(|s| (*s, ledger.commit_lsn[s]))
            .collect();
        eprintln!(
            "seed {seed}: {} history records, {} acknowledged; missing (seq, commit end LSN): \
             {missing:?}",
            records.len(),
            ledger.acknowledged.len(),
        );
    }
    for (key, value) in &balances {
        assert_eq!(
            balance_of(value),
            expected[key],
            "seed {seed}: balance of {} is not the sum of the surviving transfers",
            String::from_utf8_lossy(key)
        );
    }
    let total: i64 = balances.values().map(|v| balance_of(v)).sum();
    assert_eq!(
        total,
        INITIAL * i64::from(ACCOUNTS),
        "seed {seed}: money created or lost"
    );
    let lost: Vec<_> = ledger.acknowledged.difference(&present).collect();
    assert!(
        lost.is_empty(),
        "seed {seed}: acknowledged commits lost: {lost:?}"
    );
    let zombies: Vec<_> = ledger.aborted.intersection(&present).collect();
    assert!(
        zombies.is_empty(),
        "seed {seed}: aborted transfers visible: {zombies:?}"
    );
    ledger.acknowledged.len()
}

/// Before the crash: every acknowledged record is in memory (when the pages can still be read).
fn precheck(seed: u64, kv: &KvStore, ledger: &Ledger) {
    let mut present = BTreeSet::new();
    for name in ["history", "archive"] {
        let Ok(tree) = kv.open_tree(name) else { return };
        let result = kv.trees().scan(
            tree,
            std::ops::Bound::Unbounded,
            Direction::Forward,
            &mut |k, _| {
                present.insert(
                    std::str::from_utf8(&k[1..])
                        .unwrap()
                        .parse::<u32>()
                        .unwrap(),
                );
                flashbuf::btree::Visit::Continue
            },
        );
        if result.is_err() {
            return;
        }
    }
    let missing: Vec<_> = ledger.acknowledged.difference(&present).collect();
    assert!(
        missing.is_empty(),
        "seed {seed}: missing before the crash: {missing:?}"
    );
}

/// What one crash run saw.
#[derive(Default)]
struct Outcome {
    verified: usize,
    crashed_mid_run: bool,
    losers: usize,
    torn_repaired: usize,
}

/// One crash run.
fn one_crash(seed: u64, scheme: Scheme, max_txns: u32) -> Outcome {
    let mut rng = SmallRng::seed_from_u64(seed);
    let fates = [
        UnsyncedOnCrash::DropAll,
        UnsyncedOnCrash::Random,
        UnsyncedOnCrash::TearAll,
    ];
    let crash_data = rng.gen_bool(0.5);
    // The data device sees far fewer operations than the log (pages stay cached).
    // `TXN_CRASH_WIDE=1` widens the ranges (data 1..400, log 1..900) so that many runs crash
    // late or not at all. Those runs found that an archive transaction whose delete was logged
    // but whose leaf merge then failed (the data device had crashed, the log had not) left the
    // delete out of its rollback and logged `TxnAbort`: a history record vanished while its
    // transfer's balance updates stayed (fixed in `Transaction::write`; see
    // `txn_delete_rollback_after_failed_merge.rs`). `CRASH_LOG=1` prints each run's recovery
    // summary and a failing run prints the missing records.
    let wide = std::env::var_os("TXN_CRASH_WIDE").is_some();
    let crash_at = match (crash_data, wide) {
        (true, false) => rng.gen_range(1..150),
        (false, false) => rng.gen_range(1..450),
        (true, true) => rng.gen_range(1..400),
        (false, true) => rng.gen_range(1..900),
    };
    let data_fate = fates[rng.gen_range(0..fates.len())];
    let log_fate = fates[rng.gen_range(0..fates.len())];
    let data = Arc::new(
        FaultDevice::new_zeroed(
            Arc::new(MemoryDevice::new(PAGE, DATA_PAGES).unwrap()),
            crash_common::fault(seed, crash_data.then_some(crash_at), data_fate),
        )
        .unwrap(),
    );
    let log = Arc::new(
        FaultDevice::new_zeroed(
            Arc::new(MemoryDevice::new(PAGE, LOG_PAGES).unwrap()),
            crash_common::fault(seed ^ 0x5555, (!crash_data).then_some(crash_at), log_fate),
        )
        .unwrap(),
    );
    let mut ledger = Ledger::default();
    if let Ok((kv, _)) = KvStore::open(
        Arc::clone(&data) as SharedDevice,
        Arc::clone(&log) as SharedDevice,
        &config(scheme, seed.is_multiple_of(2)),
    ) {
        run_workload(&kv, &mut rng, &mut ledger, max_txns);
        let crashed = data.counters().crashed || log.counters().crashed;
        if std::env::var("PRECHECK").is_ok() && !crashed {
            precheck(seed, &kv, &ledger);
        }
        kv.abandon(); // the crash: nothing more is written
    }
    let crashed_mid_run = data.counters().crashed || log.counters().crashed;
    let (data_image, log_image) = crash_common::crash_images(
        seed,
        &mut rng,
        &data,
        &log,
        &config(scheme, seed.is_multiple_of(2)),
    );
    let (kv, recovery) = KvStore::open(
        data_image,
        log_image,
        &config(scheme, seed.is_multiple_of(2)),
    )
    .unwrap_or_else(|e| panic!("seed {seed}: recovery failed: {e}"));
    if std::env::var("DEBUG_SEED").is_ok() || std::env::var("CRASH_LOG").is_ok() {
        let db = &recovery.database;
        eprintln!(
            "seed {seed}: crash_data {crash_data} at {crash_at} fates {data_fate:?}/{log_fate:?}; \
             redo from {} to {}, {} batches, dw copies {} restored {}, torn {}, losers {}",
            db.redo_lsn,
            db.end_lsn,
            db.mtr_batches,
            db.doublewrite_copies,
            db.doublewrite_restored,
            db.torn_pages_repaired,
            recovery.losers_rolled_back
        );
    }
    let verified = verify(seed, &kv, &ledger);
    kv.close().unwrap();
    Outcome {
        verified,
        crashed_mid_run,
        losers: recovery.losers_rolled_back,
        torn_repaired: recovery.database.torn_pages_repaired
            + recovery.database.doublewrite_restored,
    }
}

const SCHEMES: [Scheme; 4] = [
    Scheme::LruC,
    Scheme::Vanilla,
    Scheme::War,
    Scheme::LruCBasic,
];

#[test]
fn a_thousand_crash_points_keep_transactions_atomic_and_durable() {
    let (mut verified, mut mid_run, mut losers, mut torn) = (0, 0, 0, 0);
    for seed in 0..1000u64 {
        let outcome = one_crash(seed, SCHEMES[(seed % 4) as usize], 120);
        verified += outcome.verified;
        mid_run += usize::from(outcome.crashed_mid_run);
        losers += outcome.losers;
        torn += outcome.torn_repaired;
    }
    eprintln!(
        "{mid_run} of 1000 runs crashed mid-run; {verified} acknowledged commits verified; \
         {losers} in-flight transactions rolled back at recovery; {torn} torn pages repaired"
    );
    assert!(
        losers > 20,
        "crashes must catch transactions in flight: {losers}"
    );
    assert!(
        verified > 5000,
        "the crashes must come after real work: {verified} commits"
    );
    assert!(
        mid_run > 800,
        "most runs must crash mid-run: {mid_run} of 1000"
    );
}

/// Replays one seed: `DEBUG_SEED=12 cargo test --release --test suite txn_crash::replay_seed -- --ignored --nocapture`.
#[test]
#[ignore = "replays the seed in DEBUG_SEED"]
fn replay_seed() {
    if let Some(seed) = std::env::var("DEBUG_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        // A seed of the long campaign (1_000_000 + n) replays with the campaign's parameters.
        let outcome = if seed >= 1_000_000 {
            let n = seed - 1_000_000;
            one_crash(seed, Scheme::ALL[(n % 8) as usize], 200)
        } else {
            one_crash(seed, SCHEMES[(seed % 4) as usize], 120)
        };
        eprintln!(
            "seed {seed}: {} verified, crashed mid-run: {}, losers {}, torn {}",
            outcome.verified, outcome.crashed_mid_run, outcome.losers, outcome.torn_repaired
        );
    }
}

#[test]
#[ignore = "long crash campaign; run by hand"]
fn crash_campaign() {
    for seed in 0..10_000u64 {
        one_crash(1_000_000 + seed, Scheme::ALL[(seed % 8) as usize], 200);
    }
}
