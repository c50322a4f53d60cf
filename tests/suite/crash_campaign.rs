//! The crash campaign (issue 8): seeded crash points through the fault-injecting devices, every
//! preset in rotation (`rw` included), checked by a per-commit oracle. Any failure names its
//! seed; `replay_one_seed` (ignored) replays one: `CAMPAIGN_SEED=1234 cargo test --release
//! --test suite crash_campaign::replay_one_seed -- --ignored --nocapture`.
//!
//! Each point:
//! - 1 to 3 client threads; thread `t` owns 48 accounts on 6 pages, one per 512-byte sector
//!   (so torn writes that keep or lose any sector matter), and a marker page holding how many of
//!   its transactions committed. Transaction `k` of thread `t` moves a seeded amount between two
//!   of its accounts and sets the marker to `k + 1`, all in one transaction.
//! - Both devices carry one crash switch: the crash comes at a seeded number of commits, on both
//!   devices at the same instant, while the threads run (or, in some points, at a seeded
//!   operation count on one device). Unsynced writes are dropped, applied or torn (prefix or any
//!   subset of sectors) at random; some points have data syncs fail and lose their writes
//!   (Linux after a failed fsync), some have random read and write errors.
//! - Recovery runs on the crash images; in a third of the points it crashes too (both devices at
//!   a seeded operation), and recovery runs again on what that left.
//! - The oracle, per thread: the marker `m` is at least the acknowledged commits and at most the
//!   attempted ones (with `flush_log_at_trx_commit = 1`; with 0 only the upper bound), and the 48
//!   balances equal exactly the replay of transactions `0..m` (no partial or extra effect).
//!   Every page verifies, the pool's invariants hold.
//!
//! The normal suite runs 1000 points and requires torn pages to have been repaired (restored
//! from the doublewrite or a page image) at least once, adding up to 3,000 more points when a
//! loaded host's timing left none torn (`campaign_covering`); `crash_campaign_doublewrite8`
//! runs 1500 more with MySQL 8.0's segmented doublewrite forced and requires restores from its
//! area;
//! `crash_campaign_long` and `crash_campaign_doublewrite8_long` (ignored) run 20,000 each.
//! `CAMPAIGN_PROTECTION=doublewrite8` makes
//! `replay_one_seed` replay a point of the doublewrite8 campaign.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use flashbuf::datafile::DATA_START;
use flashbuf::db::{Database, DatabaseConfig, RecoveryReport};
use flashbuf::device::SharedDevice;
use flashbuf::device::fault::{CrashSwitch, FaultConfig, FaultDevice, TearMode, UnsyncedOnCrash};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::pool::{PoolConfig, Scheme, TornPageProtection};
use flashbuf::wal::WalConfig;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const PAGE: usize = 4096;
const SECTOR: usize = 512;
const SLOTS: u64 = (PAGE / SECTOR) as u64;
const MAX_THREADS: u64 = 3;
const PAGES_PER_THREAD: u64 = 6;
const ACCOUNTS_PER_THREAD: u64 = PAGES_PER_THREAD * SLOTS;
const MARKER_BASE: u64 = MAX_THREADS * PAGES_PER_THREAD;
const DATA_PAGES: u64 = MARKER_BASE + MAX_THREADS;
const LOG_PAGES: u64 = 64;
/// Bound on a thread's transactions in one point.
const MAX_TXNS: u64 = 400;

fn account_page(thread: u64, account: u64) -> u64 {
    thread * PAGES_PER_THREAD + account / SLOTS
}

/// Byte offset of an account: one account per sector, past the page header in sector 0.
fn account_offset(account: u64) -> usize {
    (account % SLOTS) as usize * SECTOR + 64
}

fn marker_page(thread: u64) -> u64 {
    MARKER_BASE + thread
}

/// The marker sits in the last sector, so losing it and keeping the first sectors matters.
const MARKER_OFFSET: usize = PAGE - 64;

/// Transaction `k` of thread `t` in point `seed`: (from, to, amount).
fn plan(seed: u64, thread: u64, k: u64) -> (u64, u64, i64) {
    let mut rng = SmallRng::seed_from_u64(seed ^ (thread << 40) ^ (k << 8) ^ 0x5eed);
    let from = rng.gen_range(0..ACCOUNTS_PER_THREAD);
    let to = rng.gen_range(0..ACCOUNTS_PER_THREAD);
    (from, to, rng.gen_range(1..1000))
}

fn read_i64(bytes: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

fn run_txn(db: &Database, seed: u64, thread: u64, k: u64) -> flashbuf::Result<()> {
    let (from, to, amount) = plan(seed, thread, k);
    let (from_page, to_page) = (account_page(thread, from), account_page(thread, to));
    let mut tx = db.begin();
    tx.lock(&[from_page, to_page, marker_page(thread)])?;
    let from_balance = read_i64(tx.page(from_page)?, account_offset(from)) - amount;
    tx.update(from_page, account_offset(from), &from_balance.to_le_bytes())?;
    let to_balance = read_i64(tx.page(to_page)?, account_offset(to)) + amount;
    tx.update(to_page, account_offset(to), &to_balance.to_le_bytes())?;
    tx.update(marker_page(thread), MARKER_OFFSET, &(k + 1).to_le_bytes())?;
    tx.commit().map(|_| ())
}

/// What one point did, for the campaign's totals.
#[derive(Debug, Default, Clone, Copy)]
struct Outcome {
    acknowledged: u64,
    crashed_mid_run: bool,
    torn_repaired: u64,
    recovery_crashed: bool,
    sync_failures: u64,
    io_errors: u64,
    /// Pages restored from the doublewrite area (either layout) by recoveries.
    doublewrite_restored: u64,
}

impl Outcome {
    /// Adds `other`'s counts (not its per-point flags) to these totals.
    fn add_counts(&mut self, other: &Outcome) {
        self.acknowledged += other.acknowledged;
        self.torn_repaired += other.torn_repaired;
        self.doublewrite_restored += other.doublewrite_restored;
        self.io_errors += other.io_errors;
        self.sync_failures += other.sync_failures;
    }
}

fn config(scheme: Scheme, protection: TornPageProtection, mode: u8) -> DatabaseConfig {
    let mut pool = PoolConfig::for_scheme(scheme, 16);
    pool.lru_scan_depth = 4;
    pool.cleaner_period_ms = 2;
    pool.bgwriter_delay_ms = 2;
    pool.torn_page_protection = Some(protection);
    DatabaseConfig {
        pool,
        wal: WalConfig {
            log_size: LOG_PAGES * PAGE as u64,
            page_size: PAGE,
            buffer_size: 32 * 1024,
            full_timeout: Duration::from_secs(5),
        },
        checkpoint_period_ms: 5,
        flush_log_at_trx_commit: mode,
        log_flush_period_ms: 3,
        data_pages: Some(DATA_PAGES),
    }
}

fn fault(seed: u64, rng: &mut SmallRng, switch: &Arc<CrashSwitch>) -> FaultConfig {
    let fates = [
        UnsyncedOnCrash::DropAll,
        UnsyncedOnCrash::ApplyAll,
        UnsyncedOnCrash::TearAll,
        UnsyncedOnCrash::Random,
    ];
    FaultConfig {
        seed,
        unsynced_on_crash: fates[rng.gen_range(0..fates.len())],
        tear_mode: if rng.gen_bool(0.5) {
            TearMode::Prefix
        } else {
            TearMode::Mixed
        },
        crash_switch: Some(Arc::clone(switch)),
        ..FaultConfig::default()
    }
}

fn memory(pages: u64) -> SharedDevice {
    Arc::new(MemoryDevice::new(PAGE, pages).unwrap())
}

/// Opens the database on crash images; in some points crashes recovery too and recovers again.
fn recover(
    data: SharedDevice,
    log: SharedDevice,
    config: &DatabaseConfig,
    rng: &mut SmallRng,
    seed: u64,
    outcome: &mut Outcome,
) -> Result<(Database, RecoveryReport), String> {
    let (data, log) = if rng.gen_bool(1.0 / 3.0) {
        let switch = CrashSwitch::new();
        let crash_at = rng.gen_range(1..400);
        let data_fault = FaultConfig {
            crash_after_ops: Some(crash_at),
            ..fault(seed ^ 0xda7a, rng, &switch)
        };
        let log_fault = fault(seed ^ 0x106, rng, &switch);
        let data = Arc::new(FaultDevice::new(data, data_fault).map_err(|e| e.to_string())?);
        let log = Arc::new(FaultDevice::new(log, log_fault).map_err(|e| e.to_string())?);
        match Database::open(
            Arc::clone(&data) as SharedDevice,
            Arc::clone(&log) as SharedDevice,
            config,
        ) {
            Ok((db, report)) => {
                outcome.torn_repaired +=
                    (report.torn_pages_repaired + report.doublewrite_restored) as u64;
                db.abandon();
            }
            Err(_) => outcome.recovery_crashed = data.counters().crashed,
        }
        switch.trip();
        (
            Arc::new(data.crash().map_err(|e| e.to_string())?) as SharedDevice,
            Arc::new(log.crash().map_err(|e| e.to_string())?) as SharedDevice,
        )
    } else {
        (data, log)
    };
    Database::open(data, log, config).map_err(|err| format!("recovery failed: {err}"))
}

/// Runs one crash point; returns what happened, or a description of the violated property.
/// The seed chooses the torn-page protection (the doublewrite or page images) unless `forced`
/// names one (the seed's other choices unchanged); with `doublewrite8` the segment size rotates
/// with the seed over 16 (the default), 2 and 4 pages, with batches of 16, 4 and 4 pages.
fn one_point_with(seed: u64, forced: Option<TornPageProtection>) -> Result<Outcome, String> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let presets = Scheme::presets();
    let scheme = presets[(seed % presets.len() as u64) as usize];
    let drawn = if rng.gen_bool(0.5) {
        TornPageProtection::Doublewrite
    } else {
        TornPageProtection::PageImages
    };
    let protection = forced.unwrap_or(drawn);
    let mode = if rng.gen_bool(0.9) { 1 } else { 0 };
    let threads = rng.gen_range(1..=MAX_THREADS);
    let mut config = config(scheme, protection, mode);
    if protection == TornPageProtection::Doublewrite8 {
        // Segment sizes 16 (the default), 2 and 4, and batches of one segment or spread over
        // two, so that the 16-frame pools make many batches (each a window for a torn write).
        let rotation = (seed % 3) as usize;
        config.pool.doublewrite_pages = [0, 2, 4][rotation];
        config.pool.write_batch_pages = [16, 4, 4][rotation];
    }
    if std::env::var_os("CAMPAIGN_SEED").is_some() {
        eprintln!(
            "seed {seed}: {} with {protection:?}, flush_log_at_trx_commit {mode}, {threads} \
             thread(s)",
            scheme.name()
        );
    }
    let switch = CrashSwitch::new();
    let mut data_fault = fault(seed, &mut rng, &switch);
    let mut log_fault = fault(seed ^ 0x5555, &mut rng, &switch);
    let failing_syncs = rng.gen_bool(0.1);
    if failing_syncs {
        data_fault.sync_error_rate = 0.05;
        data_fault.sync_failure_loses_pending = true;
    }
    let io_errors = rng.gen_bool(0.1);
    if io_errors {
        data_fault.read_error_rate = 0.002;
        data_fault.write_error_rate = 0.002;
    }
    let crash_after_commits = if rng.gen_bool(0.8) {
        rng.gen_range(1..200)
    } else {
        // A crash at an operation count on one device instead.
        let at = Some(rng.gen_range(1..600));
        if rng.gen_bool(0.5) {
            data_fault.crash_after_ops = at;
        } else {
            log_fault.crash_after_ops = at;
        }
        u64::MAX
    };
    let data =
        Arc::new(FaultDevice::new_zeroed(memory(DATA_START + DATA_PAGES), data_fault).unwrap());
    let log = Arc::new(FaultDevice::new_zeroed(memory(LOG_PAGES), log_fault).unwrap());
    let acknowledged: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let attempted: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let mut outcome = Outcome::default();
    let opened = Database::open(
        Arc::clone(&data) as SharedDevice,
        Arc::clone(&log) as SharedDevice,
        &config,
    );
    if let Ok((db, _)) = opened {
        let commits = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            for thread in 0..threads {
                let (db, commits, stop, switch) = (&db, &commits, &stop, &switch);
                let (acknowledged, attempted) =
                    (&acknowledged[thread as usize], &attempted[thread as usize]);
                scope.spawn(move || {
                    for k in 0..MAX_TXNS {
                        if stop.load(Ordering::Acquire) {
                            break;
                        }
                        attempted.store(k + 1, Ordering::Release);
                        if run_txn(db, seed, thread, k).is_err() {
                            break;
                        }
                        acknowledged.store(k + 1, Ordering::Release);
                        if commits.fetch_add(1, Ordering::AcqRel) + 1 >= crash_after_commits {
                            switch.trip();
                            stop.store(true, Ordering::Release);
                        }
                    }
                });
            }
        });
        db.abandon(); // the crash: nothing more is written
    }
    switch.trip();
    outcome.crashed_mid_run = true;
    outcome.sync_failures = u64::from(failing_syncs);
    outcome.io_errors = data.counters().injected_errors;
    let data_image: SharedDevice = Arc::new(data.crash().map_err(|e| e.to_string())?);
    let log_image: SharedDevice = Arc::new(log.crash().map_err(|e| e.to_string())?);
    let (db, report) = recover(data_image, log_image, &config, &mut rng, seed, &mut outcome)?;
    outcome.torn_repaired += (report.torn_pages_repaired + report.doublewrite_restored) as u64;
    outcome.doublewrite_restored += report.doublewrite_restored as u64;
    check_oracle(&db, seed, threads, mode, &acknowledged, &attempted).map_err(|why| {
        if std::env::var_os("CAMPAIGN_SEED").is_some() {
            format!("{why}\n  recovery: {report:?}")
        } else {
            why
        }
    })?;
    for page in 0..DATA_PAGES {
        db.pool()
            .read(page)
            .map_err(|err| format!("page {page} unreadable after recovery: {err}"))?;
    }
    db.pool().check_invariants()?;
    outcome.acknowledged = acknowledged.iter().map(|a| a.load(Ordering::Acquire)).sum();
    db.close()
        .map_err(|err| format!("close after recovery: {err}"))?;
    Ok(outcome)
}

fn check_oracle(
    db: &Database,
    seed: u64,
    threads: u64,
    mode: u8,
    acknowledged: &[AtomicU64],
    attempted: &[AtomicU64],
) -> Result<(), String> {
    for thread in 0..threads {
        let marker = {
            let guard = db
                .pool()
                .read(marker_page(thread))
                .map_err(|e| e.to_string())?;
            read_i64(guard.data(), MARKER_OFFSET) as u64
        };
        let acked = acknowledged[thread as usize].load(Ordering::Acquire);
        let tried = attempted[thread as usize].load(Ordering::Acquire);
        if mode == 1 && marker < acked {
            return Err(format!(
                "thread {thread}: {acked} commits acknowledged, {marker} recovered (lost)"
            ));
        }
        if marker > tried {
            return Err(format!(
                "thread {thread}: {marker} commits recovered, only {tried} attempted"
            ));
        }
        let mut expected = vec![0i64; ACCOUNTS_PER_THREAD as usize];
        for k in 0..marker {
            let (from, to, amount) = plan(seed, thread, k);
            expected[from as usize] -= amount;
            expected[to as usize] += amount;
        }
        for account in 0..ACCOUNTS_PER_THREAD {
            let guard = db
                .pool()
                .read(account_page(thread, account))
                .map_err(|e| e.to_string())?;
            let found = read_i64(guard.data(), account_offset(account));
            if found != expected[account as usize] {
                return Err(format!(
                    "thread {thread} account {account}: balance {found}, the first {marker} \
                     transactions give {} (a partial or lost transaction)",
                    expected[account as usize]
                ));
            }
        }
    }
    Ok(())
}

/// Runs `points` seeds from `first`; panics naming every failing seed.
fn campaign(first: u64, points: u64) -> Outcome {
    campaign_with(first, points, None)
}

/// [`campaign`] with every point's protection `forced` (see [`one_point_with`]).
fn campaign_with(first: u64, points: u64, forced: Option<TornPageProtection>) -> Outcome {
    let mut totals = Outcome::default();
    let mut failures = Vec::new();
    let (mut mid_run, mut recovery_crashes) = (0, 0);
    for seed in first..first + points {
        match one_point_with(seed, forced) {
            Ok(outcome) => {
                totals.add_counts(&outcome);
                mid_run += u64::from(outcome.crashed_mid_run);
                recovery_crashes += u64::from(outcome.recovery_crashed);
            }
            Err(why) => failures.push(format!("seed {seed}: {why}")),
        }
    }
    eprintln!(
        "crash campaign: {points} points ({mid_run} crashed mid-run, {recovery_crashes} crashed \
         in recovery, {} with failing syncs, {} injected I/O errors), {} \
         acknowledged commits checked, {} torn pages repaired, every preset",
        totals.sync_failures, totals.io_errors, totals.acknowledged, totals.torn_repaired
    );
    assert!(
        failures.is_empty(),
        "{} of {points} points failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    totals
}

/// Points added, [`TOP_UP_POINTS`] at a time, when a campaign saw no torn page repaired.
const TOP_UP_POINTS: u64 = 500;
/// At most this many points are added.
const MAX_TOP_UP: u64 = 3000;

/// [`campaign_with`] over `points` seeds from `first`; while `covered` says the points did not
/// yet exercise what the campaign must (torn pages repaired), more seeds run after them, each
/// checked by the same oracle, up to [`MAX_TOP_UP`] more. A torn write needs an in-place write
/// still unsynced at the crash, and how many there are depends on the background writers'
/// timing: on a host loaded with three campaigns at once a thousand points repaired 0, 7 or 18
/// torn pages where an idle host repairs 22-38, and 3 of 444 such runs saw none (2026-11-30).
fn campaign_covering(
    first: u64,
    points: u64,
    forced: Option<TornPageProtection>,
    covered: impl Fn(&Outcome) -> bool,
) -> Outcome {
    let mut totals = campaign_with(first, points, forced);
    let mut next = first + points;
    while !covered(&totals) && next < first + points + MAX_TOP_UP {
        eprintln!("crash campaign: not covered yet, {TOP_UP_POINTS} more points from seed {next}");
        totals.add_counts(&campaign_with(next, TOP_UP_POINTS, forced));
        next += TOP_UP_POINTS;
    }
    totals
}

#[test]
fn crash_campaign() {
    let totals = campaign_covering(0, 1000, None, |t| t.torn_repaired > 0);
    assert!(totals.acknowledged > 10_000, "{totals:?}");
    assert!(
        totals.torn_repaired > 0,
        "no torn page was repaired: the campaign does not exercise torn writes ({totals:?})"
    );
}

/// MySQL 8.0's segmented doublewrite under the same crash points: torn pages must be restored
/// from its segments and slots (not only repaired some other way), every oracle holds.
#[test]
fn crash_campaign_doublewrite8() {
    let totals = campaign_covering(0, 1500, Some(TornPageProtection::Doublewrite8), |t| {
        t.doublewrite_restored > 0
    });
    assert!(totals.acknowledged > 15_000, "{totals:?}");
    assert!(
        totals.doublewrite_restored > 0,
        "no torn page was restored from the doublewrite8 area ({totals:?})"
    );
}

#[test]
#[ignore = "20,000 points; about a minute and a half"]
fn crash_campaign_long() {
    campaign(100_000, 20_000);
}

/// [`crash_campaign_doublewrite8`] over 20,000 other seeds (the segmented doublewrite's own
/// long campaign: its rare failure, a segment reused after a failed sync, showed about once in
/// 2,000 points).
#[test]
#[ignore = "20,000 points; about a minute and a half"]
fn crash_campaign_doublewrite8_long() {
    let totals = campaign_with(200_000, 20_000, Some(TornPageProtection::Doublewrite8));
    assert!(totals.doublewrite_restored > 0, "{totals:?}");
}

#[test]
#[ignore = "replays the point in CAMPAIGN_SEED"]
fn replay_one_seed() {
    let seed = std::env::var("CAMPAIGN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // CAMPAIGN_REPEAT=n replays it n times (its threads make some points timing-dependent).
    let repeat: u64 = std::env::var("CAMPAIGN_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let forced = std::env::var("CAMPAIGN_PROTECTION")
        .ok()
        .filter(|name| name == "doublewrite8")
        .map(|_| TornPageProtection::Doublewrite8);
    for _ in 0..repeat {
        eprintln!("{:?}", one_point_with(seed, forced));
    }
}
