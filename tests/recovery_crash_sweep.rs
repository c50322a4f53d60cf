//! Recovery is idempotent under repeated crashes (issue 18): one crash image, recovery crashed
//! at *every* data-device operation in turn (the unsynced writes of that run torn, dropped or
//! reordered), then a clean recovery, which must open the database and pass the per-commit
//! oracle.
//!
//! - `a_page_newer_than_its_log_*` (normal suite) build, deterministically, the image of
//!   issue 18: page 27 was written and synced after its last change, its log records lie past
//!   the redo point (another transaction held the checkpoint back), and its page image lies
//!   before it. Recovery must leave page 27 alone; before the fix it re-applied the older
//!   batches over the newer page and wrote it back, and a torn write of it left the database
//!   unopenable (`page 27 is corrupt ...; no later page image in the log repairs it`).
//!
//! The per-commit oracle of each image is exact: every committed byte is checked.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use flashbuf::datafile::DATA_START;
use flashbuf::db::{Database, DatabaseConfig};
use flashbuf::device::SharedDevice;
use flashbuf::device::fault::{CrashSwitch, FaultConfig, FaultDevice, TearMode, UnsyncedOnCrash};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::kv::{Direction, FULL_RANGE, KvEngine};
use flashbuf::pool::{PoolConfig, Scheme, TornPageProtection};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const PAGE: usize = 4096;
const SECTOR: usize = 512;
const LOG_PAGES: u64 = 256;

/// A fresh copy of `device`'s contents.
fn copy(device: &SharedDevice) -> SharedDevice {
    let wrapper = FaultDevice::new(Arc::clone(device), FaultConfig::default()).unwrap();
    Arc::new(wrapper.crash().unwrap())
}

fn memory(pages: u64) -> SharedDevice {
    Arc::new(MemoryDevice::new(PAGE, pages).unwrap())
}

/// What happens to the writes a crashed recovery had not synced.
#[derive(Debug, Clone, Copy)]
struct Fate {
    unsynced: UnsyncedOnCrash,
    tear: TearMode,
}

const FATES: [Fate; 4] = [
    Fate {
        unsynced: UnsyncedOnCrash::TearAll,
        tear: TearMode::Prefix,
    },
    Fate {
        unsynced: UnsyncedOnCrash::TearAll,
        tear: TearMode::Sectors,
    },
    Fate {
        unsynced: UnsyncedOnCrash::DropAll,
        tear: TearMode::Prefix,
    },
    Fate {
        unsynced: UnsyncedOnCrash::Random,
        tear: TearMode::Mixed,
    },
];

/// The images a recovery crashed at data-device operation `ops` leaves, and whether it crashed
/// before finishing (false: it opened the database within `ops` operations).
fn crash_recovery_at(
    images: &(SharedDevice, SharedDevice),
    ops: u64,
    fate: Fate,
    seed: u64,
    open: &OpenFn,
) -> ((SharedDevice, SharedDevice), bool) {
    let switch = CrashSwitch::new();
    let fault = |seed, crash_after_ops| FaultConfig {
        seed,
        crash_after_ops,
        unsynced_on_crash: fate.unsynced,
        tear_mode: fate.tear,
        crash_switch: Some(Arc::clone(&switch)),
        ..FaultConfig::default()
    };
    let data = Arc::new(FaultDevice::new(copy(&images.0), fault(seed, Some(ops))).unwrap());
    let log = Arc::new(FaultDevice::new(copy(&images.1), fault(seed ^ 0x106, None)).unwrap());
    let opened = open(
        Arc::clone(&data) as SharedDevice,
        Arc::clone(&log) as SharedDevice,
    );
    let crashed = data.counters().crashed;
    if let Ok(abandon) = opened {
        abandon();
    }
    switch.trip();
    let after: (SharedDevice, SharedDevice) = (
        Arc::new(data.crash().unwrap()),
        Arc::new(log.crash().unwrap()),
    );
    (after, crashed)
}

/// Totals of a sweep.
#[derive(Debug, Default, Clone, Copy)]
struct SweepTotals {
    images: u64,
    crash_points: u64,
    torn_repaired: u64,
    unopenable: u64,
    oracle_failures: u64,
    lost_commits: u64,
    commits_checked: u64,
}

// ----- the deterministic image of issue 18 (page-level transactions) -----

const ISSUE_PAGES: u64 = 48;
const ISSUE_PAGE: u64 = 27;

fn issue_config(protection: TornPageProtection) -> DatabaseConfig {
    let mut pool = PoolConfig::for_scheme(Scheme::PgClock, 16);
    pool.torn_page_protection = Some(protection);
    // No background writes: the run is the same every time.
    pool.bgwriter_delay_ms = 3_600_000;
    pool.cleaner_period_ms = 3_600_000;
    DatabaseConfig {
        pool,
        wal: WalConfig {
            log_size: LOG_PAGES * PAGE as u64,
            page_size: PAGE,
            buffer_size: 32 * 1024,
            full_timeout: Duration::from_secs(5),
        },
        checkpoint_period_ms: 3_600_000,
        flush_log_at_trx_commit: 0,
        log_flush_period_ms: 3_600_000,
        data_pages: Some(ISSUE_PAGES),
    }
}

/// The committed bytes: (page, offset) -> value.
type Model = BTreeMap<(u64, usize), u64>;

/// One transaction: `value + sector` at byte 64 of every sector of `page` (so that two versions
/// of a page differ in every sector, and every torn write of it is a real tear).
fn update(db: &Database, model: &mut Model, page: u64, value: u64) {
    let mut tx = db.begin();
    tx.lock(&[page]).unwrap();
    for sector in 0..PAGE / SECTOR {
        let (offset, value) = (sector * SECTOR + 64, value + sector as u64);
        tx.update(page, offset, &value.to_le_bytes()).unwrap();
        model.insert((page, offset), value);
    }
    tx.commit().unwrap();
}

/// Builds the image of issue 18 (see the module docs) and the model of its committed bytes.
fn issue_image(protection: TornPageProtection) -> ((SharedDevice, SharedDevice), Model) {
    let config = issue_config(protection);
    let data = memory(DATA_START + ISSUE_PAGES);
    let log = memory(LOG_PAGES);
    let (db, _) = Database::open(Arc::clone(&data), Arc::clone(&log), &config).unwrap();
    let mut model = Model::new();
    // The first change of page 27 since it was clean: its image is logged here, before the
    // redo point the checkpoint below takes.
    update(&db, &mut model, ISSUE_PAGE, 1);
    // A transaction in flight holds the redo point here.
    let held = db.register_in_flight();
    let others: Vec<u64> = (0..ISSUE_PAGES).filter(|&p| p != ISSUE_PAGE).collect();
    for round in 1..5u64 {
        update(&db, &mut model, ISSUE_PAGE, 100 * round);
        // Pinned while other pages go through the pool, page 27 stays cached and dirty here;
        // recovery, which replays the same changes unpinned, evicts it between its batches.
        let pin = db.pool().read(ISSUE_PAGE).unwrap();
        for &page in others.iter().cycle().skip(round as usize * 11).take(20) {
            update(&db, &mut model, page, page * 1000 + round * 10);
        }
        drop(pin);
    }
    // Page 27 is written and synced: it carries the LSN of its last change, newer than the
    // end of every other batch of it.
    db.pool().flush_all().unwrap();
    // Changes recovery has to redo (each page's first logs its image), with evictions.
    for &page in others.iter().take(30) {
        update(&db, &mut model, page, page * 1000 + 99);
    }
    db.checkpoint().unwrap();
    assert_eq!(db.wal().checkpoint_lsn(), held, "the checkpoint stops at the held LSN");
    db.wal().flush_to(db.wal().current_lsn()).unwrap();
    db.abandon();
    ((data, log), model)
}

fn check_model(db: &Database, model: &Model) -> Result<(), String> {
    for page in 0..ISSUE_PAGES {
        db.pool()
            .read(page)
            .map_err(|err| format!("page {page} unreadable after recovery: {err}"))?;
    }
    for (&(page, offset), &value) in model {
        let guard = db.pool().read(page).map_err(|e| e.to_string())?;
        let found = u64::from_le_bytes(guard.data()[offset..offset + 8].try_into().unwrap());
        if found != value {
            return Err(format!(
                "page {page} offset {offset}: {found}, committed {value}"
            ));
        }
    }
    Ok(())
}

/// Crashes recovery of the issue-18 image at every data-device operation under every fate,
/// recovers cleanly, and checks the model.
fn sweep_issue_image(protection: TornPageProtection) -> (SweepTotals, Vec<String>) {
    let config = issue_config(protection);
    let (images, model) = issue_image(protection);
    let open_config = config.clone();
    let open = move |data, log| -> Result<Box<dyn FnOnce()>, String> {
        let (db, _) = Database::open(data, log, &open_config).map_err(|e| e.to_string())?;
        Ok(Box::new(move || db.abandon()))
    };
    let mut totals = SweepTotals {
        images: 1,
        ..SweepTotals::default()
    };
    let mut failures = Vec::new();
    for (index, fate) in FATES.iter().enumerate() {
        for ops in 1.. {
            let (after, crashed) = crash_recovery_at(&images, ops, *fate, ops, &open);
            if !crashed {
                break;
            }
            totals.crash_points += 1;
            match Database::open(after.0, after.1, &config) {
                Ok((db, report)) => {
                    totals.torn_repaired +=
                        (report.torn_pages_repaired + report.doublewrite_restored) as u64;
                    if let Err(why) = check_model(&db, &model) {
                        totals.oracle_failures += 1;
                        failures.push(format!("fate {index} ({fate:?}), crash at op {ops}: {why}"));
                    }
                    totals.commits_checked += model.len() as u64;
                    db.close().unwrap();
                }
                Err(err) => {
                    totals.unopenable += 1;
                    failures.push(format!(
                        "fate {index} ({fate:?}), recovery crashed at data op {ops}: the next \
                         open fails: {err}"
                    ));
                }
            }
        }
    }
    (totals, failures)
}

fn assert_sweep(name: &str, totals: SweepTotals, failures: &[String]) {
    eprintln!("{name}: {totals:?}");
    assert!(
        failures.is_empty(),
        "{name}: {} of {} crash points failed:\n{}",
        failures.len(),
        totals.crash_points,
        failures.join("\n")
    );
    assert!(totals.crash_points > 100, "{name}: {totals:?}");
}

#[test]
fn a_page_newer_than_its_log_survives_recovery_crashes_with_page_images() {
    let (totals, failures) = sweep_issue_image(TornPageProtection::PageImages);
    assert_sweep("page images", totals, &failures);
    assert!(totals.torn_repaired > 0, "no tear was repaired: {totals:?}");
}

#[test]
fn a_page_newer_than_its_log_survives_recovery_crashes_with_the_doublewrite() {
    let (totals, failures) = sweep_issue_image(TornPageProtection::Doublewrite);
    assert_sweep("doublewrite", totals, &failures);
    assert!(totals.torn_repaired > 0, "no tear was repaired: {totals:?}");
}

// ----- the sweep over crash images of real runs -----

/// A clean recovery of an image passed its oracle: what it saw.
struct Recovered {
    /// Per thread, how many of its transactions are in the database (compared with the
    /// recovery of the crash image itself: a crash during recovery must not change them).
    committed: Vec<u64>,
    torn_repaired: u64,
}

/// Opens a database on two devices (recovering it) and returns how to abandon it.
type OpenFn = dyn Fn(SharedDevice, SharedDevice) -> Result<Box<dyn FnOnce()>, String>;
/// Recovers two devices cleanly and checks the oracle.
type CheckFn = dyn Fn(SharedDevice, SharedDevice) -> Result<Recovered, String>;

/// A crash image of a run, with how to open and check it.
struct CrashImage {
    name: String,
    devices: (SharedDevice, SharedDevice),
    open: Box<OpenFn>,
    check: Box<CheckFn>,
}

/// Crashes the recovery of `image` at every data-device operation (step `stride`) under
/// every fate in `fates`, then recovers cleanly and checks the oracle and that no commit the
/// recovery of the image itself found was lost.
fn sweep_image(image: &CrashImage, fates: &[Fate], stride: u64, totals: &mut SweepTotals) -> Vec<String> {
    let mut failures = Vec::new();
    let baseline = match (image.check)(copy(&image.devices.0), copy(&image.devices.1)) {
        Ok(baseline) => baseline,
        Err(why) => return vec![format!("{}: the crash image itself: {why}", image.name)],
    };
    totals.images += 1;
    for (index, fate) in fates.iter().enumerate() {
        for ops in (1..).step_by(stride as usize) {
            let (after, crashed) =
                crash_recovery_at(&image.devices, ops, *fate, ops ^ 0x5eed, &image.open);
            if !crashed {
                break;
            }
            totals.crash_points += 1;
            let point = format!("{}, fate {index} ({fate:?}), recovery crashed at data op {ops}", image.name);
            match (image.check)(after.0, after.1) {
                Ok(recovered) => {
                    totals.torn_repaired += recovered.torn_repaired;
                    totals.commits_checked += recovered.committed.iter().sum::<u64>();
                    let lost: u64 = baseline
                        .committed
                        .iter()
                        .zip(&recovered.committed)
                        .map(|(base, now)| base.saturating_sub(*now))
                        .sum();
                    totals.lost_commits += lost;
                    if recovered.committed != baseline.committed {
                        totals.oracle_failures += 1;
                        failures.push(format!(
                            "{point}: recovered {:?} commits per thread, the image itself {:?}",
                            recovered.committed, baseline.committed
                        ));
                    }
                }
                Err(why) if why.starts_with("open: ") => {
                    totals.unopenable += 1;
                    failures.push(format!("{point}: the next {why}"));
                }
                Err(why) => {
                    totals.oracle_failures += 1;
                    failures.push(format!("{point}: {why}"));
                }
            }
        }
    }
    failures
}

/// How the run before the crash goes.
#[derive(Debug, Clone, Copy)]
struct RunPlan {
    seed: u64,
    scheme: Scheme,
    protection: TornPageProtection,
    flush_log_at_trx_commit: u8,
    threads: u64,
    /// The crash comes after this many commits (all threads together).
    crash_after_commits: u64,
}

impl RunPlan {
    fn name(&self, workload: &str) -> String {
        format!(
            "{workload} seed {} ({}, {}, flush_log_at_trx_commit = {}, {} threads, crash after \
             {} commits)",
            self.seed,
            self.scheme.name(),
            self.protection.name(),
            self.flush_log_at_trx_commit,
            self.threads,
            self.crash_after_commits
        )
    }

    /// The fault devices of the run: one crash switch, seeded fates of unsynced writes.
    fn devices(&self, data_pages: u64, log_pages: u64) -> (Arc<CrashSwitch>, Arc<FaultDevice>, Arc<FaultDevice>) {
        let switch = CrashSwitch::new();
        let fate = FATES[(self.seed % FATES.len() as u64) as usize];
        let fault = |seed| FaultConfig {
            seed,
            unsynced_on_crash: fate.unsynced,
            tear_mode: fate.tear,
            crash_switch: Some(Arc::clone(&switch)),
            ..FaultConfig::default()
        };
        let data = Arc::new(FaultDevice::new_zeroed(memory(data_pages), fault(self.seed)).unwrap());
        let log = Arc::new(FaultDevice::new_zeroed(memory(log_pages), fault(self.seed ^ 0x106)).unwrap());
        (switch, data, log)
    }
}

/// Per thread: commits acknowledged and attempted before the crash.
struct Progress {
    acknowledged: Vec<AtomicU64>,
    attempted: Vec<AtomicU64>,
}

impl Progress {
    fn new(threads: u64) -> Self {
        Progress {
            acknowledged: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            attempted: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Runs `txn(thread, k)` on every thread until it fails or `crash_after_commits` commits
    /// are made in all, then trips `switch` (the crash).
    fn run(&self, plan: &RunPlan, switch: &CrashSwitch, txn: &(dyn Fn(u64, u64) -> bool + Sync)) {
        let commits = AtomicU64::new(0);
        std::thread::scope(|scope| {
            for thread in 0..plan.threads {
                let commits = &commits;
                scope.spawn(move || {
                    for k in 0..MAX_TXNS {
                        if switch.is_tripped() {
                            break;
                        }
                        self.attempted[thread as usize].store(k + 1, Ordering::Release);
                        if !txn(thread, k) {
                            break;
                        }
                        self.acknowledged[thread as usize].store(k + 1, Ordering::Release);
                        if commits.fetch_add(1, Ordering::AcqRel) + 1 >= plan.crash_after_commits {
                            switch.trip();
                        }
                    }
                });
            }
        });
        switch.trip();
    }

    /// The bounds on thread `thread`'s recovered commit count `m`.
    fn check(&self, thread: u64, mode: u8, m: u64) -> Result<(), String> {
        let acked = self.acknowledged[thread as usize].load(Ordering::Acquire);
        let tried = self.attempted[thread as usize].load(Ordering::Acquire);
        if mode == 1 && m < acked {
            return Err(format!("thread {thread}: {acked} commits acknowledged, {m} recovered (lost)"));
        }
        if m > tried {
            return Err(format!("thread {thread}: {m} commits recovered, only {tried} attempted"));
        }
        Ok(())
    }
}

/// Bound on a thread's transactions in one run.
const MAX_TXNS: u64 = 2_000;

// The page-level bank (as `crash_campaign.rs`): thread `t` owns `BANK_PAGES_PER_THREAD` pages of
// accounts, one per sector, and a marker page; transaction `k` moves a seeded amount between two
// of its accounts and sets the marker to `k + 1`.

const BANK_PAGES_PER_THREAD: u64 = 10;
const BANK_MAX_THREADS: u64 = 3;
const BANK_ACCOUNTS: u64 = BANK_PAGES_PER_THREAD * (PAGE / SECTOR) as u64;
const BANK_MARKERS: u64 = BANK_MAX_THREADS * BANK_PAGES_PER_THREAD;
const BANK_PAGES: u64 = BANK_MARKERS + BANK_MAX_THREADS;
const MARKER_OFFSET: usize = PAGE - 64;

fn bank_account_place(thread: u64, account: u64) -> (u64, usize) {
    let sectors = (PAGE / SECTOR) as u64;
    (
        thread * BANK_PAGES_PER_THREAD + account / sectors,
        (account % sectors) as usize * SECTOR + 64,
    )
}

fn bank_transfer(seed: u64, thread: u64, k: u64) -> (u64, u64, i64) {
    let mut rng = SmallRng::seed_from_u64(seed ^ (thread << 40) ^ (k << 8) ^ 0xba4c);
    (
        rng.gen_range(0..BANK_ACCOUNTS),
        rng.gen_range(0..BANK_ACCOUNTS),
        rng.gen_range(1..1000),
    )
}

fn read_i64(bytes: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

fn bank_txn(db: &Database, seed: u64, thread: u64, k: u64) -> flashbuf::Result<()> {
    let (from, to, amount) = bank_transfer(seed, thread, k);
    let ((from_page, from_at), (to_page, to_at)) =
        (bank_account_place(thread, from), bank_account_place(thread, to));
    let marker = BANK_MARKERS + thread;
    let mut tx = db.begin();
    tx.lock(&[from_page, to_page, marker])?;
    let balance = read_i64(tx.page(from_page)?, from_at) - amount;
    tx.update(from_page, from_at, &balance.to_le_bytes())?;
    let balance = read_i64(tx.page(to_page)?, to_at) + amount;
    tx.update(to_page, to_at, &balance.to_le_bytes())?;
    tx.update(marker, MARKER_OFFSET, &(k + 1).to_le_bytes())?;
    tx.commit().map(|_| ())
}

fn bank_config(plan: &RunPlan) -> DatabaseConfig {
    let mut pool = PoolConfig::for_scheme(plan.scheme, 16);
    pool.lru_scan_depth = 4;
    pool.cleaner_period_ms = 2;
    pool.bgwriter_delay_ms = 2;
    pool.torn_page_protection = Some(plan.protection);
    DatabaseConfig {
        pool,
        wal: WalConfig {
            log_size: LOG_PAGES * PAGE as u64,
            page_size: PAGE,
            buffer_size: 32 * 1024,
            full_timeout: Duration::from_secs(5),
        },
        checkpoint_period_ms: 5,
        flush_log_at_trx_commit: plan.flush_log_at_trx_commit,
        log_flush_period_ms: 3,
        data_pages: Some(BANK_PAGES),
    }
}

/// The oracle of the bank: markers within the commit bounds, balances exactly the replay of
/// the transactions the markers count, every page readable.
fn bank_check(db: &Database, plan: &RunPlan, progress: &Progress) -> Result<Vec<u64>, String> {
    for page in 0..BANK_PAGES {
        db.pool()
            .read(page)
            .map_err(|err| format!("page {page} unreadable after recovery: {err}"))?;
    }
    let mut committed = Vec::new();
    for thread in 0..plan.threads {
        let m = {
            let guard = db.pool().read(BANK_MARKERS + thread).map_err(|e| e.to_string())?;
            read_i64(guard.data(), MARKER_OFFSET) as u64
        };
        progress.check(thread, plan.flush_log_at_trx_commit, m)?;
        let mut expected = vec![0i64; BANK_ACCOUNTS as usize];
        for k in 0..m {
            let (from, to, amount) = bank_transfer(plan.seed, thread, k);
            expected[from as usize] -= amount;
            expected[to as usize] += amount;
        }
        for account in 0..BANK_ACCOUNTS {
            let (page, at) = bank_account_place(thread, account);
            let guard = db.pool().read(page).map_err(|e| e.to_string())?;
            let found = read_i64(guard.data(), at);
            if found != expected[account as usize] {
                return Err(format!(
                    "thread {thread} account {account}: balance {found}, the first {m} \
                     transactions give {} (a partial or lost transaction)",
                    expected[account as usize]
                ));
            }
        }
        committed.push(m);
    }
    db.pool().check_invariants()?;
    Ok(committed)
}

/// Runs the bank until its crash; returns the crash image.
fn bank_image(plan: RunPlan) -> CrashImage {
    let config = bank_config(&plan);
    let (switch, data, log) = plan.devices(DATA_START + BANK_PAGES, LOG_PAGES);
    let progress = Arc::new(Progress::new(plan.threads));
    if let Ok((db, _)) = Database::open(
        Arc::clone(&data) as SharedDevice,
        Arc::clone(&log) as SharedDevice,
        &config,
    ) {
        progress.run(&plan, &switch, &|thread, k| bank_txn(&db, plan.seed, thread, k).is_ok());
        db.abandon();
    }
    switch.trip();
    let devices: (SharedDevice, SharedDevice) =
        (Arc::new(data.crash().unwrap()), Arc::new(log.crash().unwrap()));
    let open_config = config.clone();
    CrashImage {
        name: plan.name("bank"),
        devices,
        open: Box::new(move |data, log| {
            let (db, _) = Database::open(data, log, &open_config).map_err(|e| e.to_string())?;
            Ok(Box::new(move || db.abandon()))
        }),
        check: Box::new(move |data, log| {
            let (db, report) =
                Database::open(data, log, &config).map_err(|e| format!("open: {e}"))?;
            let committed = bank_check(&db, &plan, &progress)?;
            db.close().map_err(|e| format!("close after recovery: {e}"))?;
            Ok(Recovered {
                committed,
                torn_repaired: (report.torn_pages_repaired + report.doublewrite_restored) as u64,
            })
        }),
    }
}

// The key-value store (B+-tree mini-transactions, loser rollback): transaction `k` of thread
// `t` inserts key `t/k` and deletes key `t/(k - KV_WINDOW)`, so after `m` commits the thread's
// keys are exactly `max(0, m - KV_WINDOW)..m` (leaves split and merge as the window moves).

const KV_PAGES: u64 = 256;
const KV_LOG_PAGES: u64 = 256;
const KV_WINDOW: u64 = 24;

fn kv_key(thread: u64, k: u64) -> Vec<u8> {
    format!("t{thread}/{k:06}").into_bytes()
}

fn kv_value(thread: u64, k: u64) -> Vec<u8> {
    let mut value = format!("{thread}:{k}:").into_bytes();
    value.resize(300 + (k % 7) as usize * 40, b'v');
    value
}

fn kv_config(plan: &RunPlan) -> KvConfig {
    let mut pool = PoolConfig::for_scheme(plan.scheme, 16);
    pool.lru_scan_depth = 4;
    pool.cleaner_period_ms = 2;
    pool.bgwriter_delay_ms = 2;
    pool.torn_page_protection = Some(plan.protection);
    let mut config = KvConfig::new(16);
    config.database.pool = pool;
    config.database.wal = WalConfig {
        log_size: KV_LOG_PAGES * PAGE as u64,
        page_size: PAGE,
        buffer_size: 64 * 1024,
        full_timeout: Duration::from_secs(5),
    };
    config.database.checkpoint_period_ms = 5;
    config.database.flush_log_at_trx_commit = plan.flush_log_at_trx_commit;
    config.database.log_flush_period_ms = 3;
    config.lock_timeout = Duration::from_millis(500);
    config
}

fn kv_txn(kv: &KvStore, tree: u32, thread: u64, k: u64) -> flashbuf::Result<()> {
    let mut txn = kv.begin()?;
    txn.put(tree, &kv_key(thread, k), &kv_value(thread, k))?;
    if k >= KV_WINDOW {
        txn.delete(tree, &kv_key(thread, k - KV_WINDOW))?;
    }
    txn.commit()
}

/// The oracle of the store: the tree check is clean; per thread, the keys are exactly the
/// window of some commit count `m` within the commit bounds, with their values.
fn kv_check(kv: &KvStore, plan: &RunPlan, progress: &Progress) -> Result<Vec<u64>, String> {
    let report = kv.check().map_err(|e| e.to_string())?;
    if !report.is_ok() {
        return Err(format!("check: {:?}", report.problems));
    }
    let tree = kv.open_tree("sweep").map_err(|e| e.to_string())?;
    let mut pairs: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut txn = kv.begin().map_err(|e| e.to_string())?;
    txn.scan(tree, FULL_RANGE, Direction::Forward, usize::MAX, &mut |k, v| {
        pairs.insert(k.to_vec(), v.to_vec());
        true
    })
    .map_err(|e| e.to_string())?;
    txn.commit().map_err(|e| e.to_string())?;
    let mut committed = Vec::new();
    for thread in 0..plan.threads {
        let prefix = format!("t{thread}/").into_bytes();
        let keys: Vec<u64> = pairs
            .keys()
            .filter(|key| key.starts_with(&prefix))
            .map(|key| std::str::from_utf8(&key[prefix.len()..]).unwrap().parse().unwrap())
            .collect();
        let m = keys.last().map_or(0, |last| last + 1);
        let window: Vec<u64> = (m.saturating_sub(KV_WINDOW)..m).collect();
        if keys != window {
            return Err(format!(
                "thread {thread}: keys {keys:?}, not the window of {m} commits (a partial or lost \
                 transaction)"
            ));
        }
        for k in window {
            if pairs[&kv_key(thread, k)] != kv_value(thread, k) {
                return Err(format!("thread {thread}: the value of key {k} is wrong"));
            }
        }
        progress.check(thread, plan.flush_log_at_trx_commit, m)?;
        committed.push(m);
    }
    Ok(committed)
}

/// Runs the store until its crash; returns the crash image.
fn kv_image(plan: RunPlan) -> CrashImage {
    let config = kv_config(&plan);
    let (switch, data, log) = plan.devices(KV_PAGES, KV_LOG_PAGES);
    let progress = Arc::new(Progress::new(plan.threads));
    if let Ok((kv, _)) = KvStore::open(
        Arc::clone(&data) as SharedDevice,
        Arc::clone(&log) as SharedDevice,
        &config,
    ) {
        if let Ok(tree) = kv.open_tree("sweep") {
            progress.run(&plan, &switch, &|thread, k| kv_txn(&kv, tree, thread, k).is_ok());
        }
        kv.abandon();
    }
    switch.trip();
    let devices: (SharedDevice, SharedDevice) =
        (Arc::new(data.crash().unwrap()), Arc::new(log.crash().unwrap()));
    let open_config = config.clone();
    CrashImage {
        name: plan.name("kv"),
        devices,
        open: Box::new(move |data, log| {
            let (kv, _) = KvStore::open(data, log, &open_config).map_err(|e| e.to_string())?;
            Ok(Box::new(move || kv.abandon()))
        }),
        check: Box::new(move |data, log| {
            let (kv, recovery) =
                KvStore::open(data, log, &config).map_err(|e| format!("open: {e}"))?;
            let committed = kv_check(&kv, &plan, &progress)?;
            kv.close().map_err(|e| format!("close after recovery: {e}"))?;
            let report = &recovery.database;
            Ok(Recovered {
                committed,
                torn_repaired: (report.torn_pages_repaired + report.doublewrite_restored) as u64,
            })
        }),
    }
}

/// The run of image `n` of a sweep over `schemes`: the schemes rotate, then the protections,
/// then the `flush_log_at_trx_commit` modes (0, the setting of issue 18, and 1).
fn plan_of(n: u64, schemes: &[Scheme]) -> RunPlan {
    let mut rng = SmallRng::seed_from_u64(n ^ 0x18);
    let round = n / schemes.len() as u64;
    RunPlan {
        seed: n,
        scheme: schemes[(n % schemes.len() as u64) as usize],
        protection: if round % 2 == 0 {
            TornPageProtection::PageImages
        } else {
            TornPageProtection::Doublewrite
        },
        flush_log_at_trx_commit: if round / 2 % 2 == 0 { 0 } else { 1 },
        threads: rng.gen_range(2..=BANK_MAX_THREADS),
        crash_after_commits: rng.gen_range(40..240),
    }
}

/// Sweeps the images of runs `first..first + count` of both workloads.
fn sweep_runs(first: u64, count: u64, schemes: &[Scheme], fates: &[Fate], stride: u64) -> SweepTotals {
    let mut totals = SweepTotals::default();
    let mut failures = Vec::new();
    for n in first..first + count {
        let plan = plan_of(n, schemes);
        for image in [bank_image(plan), kv_image(plan)] {
            let before = totals;
            failures.extend(sweep_image(&image, fates, stride, &mut totals));
            if std::env::var_os("SWEEP_LOG").is_some() {
                eprintln!(
                    "{}: {} crash points, {} torn pages repaired",
                    image.name,
                    totals.crash_points - before.crash_points,
                    totals.torn_repaired - before.torn_repaired
                );
            }
        }
    }
    eprintln!("sweep of runs {first}..{}: {totals:?}", first + count);
    assert!(
        failures.is_empty(),
        "{} of {} crash points failed:\n{}",
        failures.len(),
        totals.crash_points,
        failures.join("\n")
    );
    totals
}

/// A sample of the sweep for the normal suite: four images (both protections, both
/// `flush_log_at_trx_commit` modes, pg-clock), every fifth crash point, two fates.
#[test]
fn recovery_crashed_anywhere_leaves_a_recoverable_database() {
    let totals = sweep_runs(0, 4, &[Scheme::PgClock], &[FATES[0], FATES[3]], 5);
    assert_eq!(totals.images, 8, "{totals:?}");
    assert!(totals.crash_points > 200, "{totals:?}");
    assert!(totals.torn_repaired > 0, "{totals:?}");
}

/// The exhaustive sweep: every preset, both protections and modes, every crash point, every
/// fate. `FLASHBUF_EXHAUSTIVE=1 cargo test --release --test recovery_crash_sweep -- --ignored
/// --nocapture` (`FLASHBUF_SWEEP_RUNS=n`: runs per preset, default 4: both protections, both modes; `SWEEP_LOG=1` prints each
/// image).
#[test]
#[ignore = "the exhaustive crash-during-recovery sweep; minutes"]
fn exhaustive_recovery_crash_sweep() {
    if std::env::var_os("FLASHBUF_EXHAUSTIVE").is_none() {
        eprintln!("set FLASHBUF_EXHAUSTIVE=1 to run the exhaustive sweep");
        return;
    }
    let per_scheme: u64 = std::env::var("FLASHBUF_SWEEP_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let presets = Scheme::presets();
    let totals = sweep_runs(0, per_scheme * presets.len() as u64, &presets, &FATES, 1);
    assert_eq!(totals.unopenable + totals.oracle_failures + totals.lost_commits, 0);
}
