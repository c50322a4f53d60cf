//! Recovery is idempotent under repeated crashes (issue 18; the invariants are in
//! `src/db/recovery.rs` and `docs/recovery.md`): take one crash image, crash its recovery at
//! *every* operation of the data device in turn, and at every operation of the log device
//! (both devices crash at that instant; the writes that recovery had not synced are torn
//! (a sector prefix, or any subset), dropped, or each at random, i.e. reordered), then recover
//! cleanly: the database must open, pass the image's per-commit oracle, and hold exactly the
//! commits the clean recovery of the image itself finds (a crash during recovery loses none).
//!
//! - `a_page_newer_than_its_log_*` (the regression tests) build issue 18's image from one
//!   client thread with fixed values and no timed background work: page 27 got its page image
//!   logged, then a transaction in flight held the redo point, page 27 changed four more times
//!   and was written and synced, so its log records after the redo point are all older than
//!   the page and its image lies before the redo point. Before the fix, recovery replayed the
//!   older batches over the newer page (its known LSN was lowered to the end of the first,
//!   skipped, batch), evicted it with an older LSN, and a torn write of it left every later
//!   open failing with `page 27 is corrupt: checksum ...; no later page image in the log
//!   repairs it`.
//! - `recovery_crashed_anywhere_leaves_a_recoverable_database` (normal suite): a sample of the
//!   sweep over crash images of real multi-threaded runs.
//! - `exhaustive_recovery_crash_sweep` (ignored; minutes): the issue images and crash images of
//!   both workloads for every preset, both torn-page protections and both
//!   `flush_log_at_trx_commit` modes 0 and 1, every crash point, every fate:
//!   `cargo test --release --test suite recovery_crash_sweep::exhaustive -- --ignored --nocapture`
//!   (`FLASHBUF_SWEEP_RUNS=n` runs per preset, default 4; `SWEEP_LOG=1` prints each image;
//!   `SWEEP_ONLY=bank|kv` keeps one workload).
//!
//! The workloads: the page-level bank of `crash_campaign.rs` (its oracle: per thread a marker
//! counts the commits, the balances are exactly their replay), in most runs with one more thread
//! holding the redo point back as a long transaction does (what makes issue 18's condition
//! common: without it, sweeps of 64 images found nothing before the fix; with it, 1 bank image
//! of 16 failed); and the key-value store (B+-tree mini-transactions, loser rollback), whose
//! oracle is a sliding window of keys per thread. A run's own crash image varies with thread
//! timing; the sweep over one image is deterministic but for the pool's cleaner thread (which
//! runs when a backend wakes it), so its counts vary slightly from run to run.

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

/// A crash image: the data and the log device.
type Images = (Arc<MemoryDevice>, Arc<MemoryDevice>);

/// A fresh copy of `device`'s contents (as a shared device).
fn copy(device: &MemoryDevice) -> SharedDevice {
    let (from, pages) = (device.store(), device.store().pages());
    let to = MemoryDevice::new(from.page_size(), pages).unwrap();
    let mut page_buf = vec![0u8; from.page_size()];
    for page in 0..pages {
        from.read(page, &mut page_buf).unwrap();
        if page_buf.iter().any(|&b| b != 0) {
            to.store().write(page, &page_buf).unwrap();
        }
    }
    Arc::new(to)
}

fn memory(pages: u64) -> Arc<MemoryDevice> {
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

/// Which device a crash point counts the operations of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Crashing {
    Data,
    Log,
}

/// What a recovery crashed at one point left.
struct CrashedRecovery {
    /// The images after the crash.
    devices: Images,
    /// Whether it crashed before finishing (false: it opened the database within the
    /// operations allowed).
    crashed: bool,
    /// Writes and syncs of the data and the log device before the crash: two crash points of
    /// one recovery with the same counts and the same seed leave the same images (reads change
    /// nothing and draw nothing from the seeded generator, and recovery issues its operations
    /// in the same order every time, but for the pool's background writers).
    state: [u64; 4],
}

impl CrashedRecovery {
    /// Whether the images are the ones recovery started from.
    fn unchanged(&self) -> bool {
        self.state[0] == 0 && self.state[2] == 0
    }
}

/// The images a recovery crashed at operation `ops` of one device leaves (both devices crash
/// at that instant).
fn crash_recovery_at(
    images: &Images,
    (device, ops): (Crashing, u64),
    fate: Fate,
    seed: u64,
    open: &OpenFn,
) -> CrashedRecovery {
    let switch = CrashSwitch::new();
    let fault = |seed, crashing| FaultConfig {
        seed,
        crash_after_ops: (crashing == device).then_some(ops),
        unsynced_on_crash: fate.unsynced,
        tear_mode: fate.tear,
        crash_switch: Some(Arc::clone(&switch)),
        ..FaultConfig::default()
    };
    let data = Arc::new(FaultDevice::new(copy(&images.0), fault(seed, Crashing::Data)).unwrap());
    let log =
        Arc::new(FaultDevice::new(copy(&images.1), fault(seed ^ 0x106, Crashing::Log)).unwrap());
    let opened = open(
        Arc::clone(&data) as SharedDevice,
        Arc::clone(&log) as SharedDevice,
    );
    let crashed = match device {
        Crashing::Data => data.counters().crashed,
        Crashing::Log => log.counters().crashed,
    };
    let (on_data, on_log) = (data.counters(), log.counters());
    let state = [on_data.writes, on_data.syncs, on_log.writes, on_log.syncs];
    if let Ok(abandon) = opened {
        abandon();
    }
    switch.trip();
    CrashedRecovery {
        devices: (
            Arc::new(data.crash().unwrap()),
            Arc::new(log.crash().unwrap()),
        ),
        crashed,
        state,
    }
}

/// Totals of a sweep.
#[derive(Debug, Default, Clone, Copy)]
struct SweepTotals {
    images: u64,
    /// Crash points: every operation of the data or the log device, under every fate (those
    /// before recovery's first write are identical to the crash image itself and are skipped
    /// after a bisection finds the first write).
    crash_points: u64,
    /// Crash points whose images were recovered and checked: the others leave the images of
    /// the crash image itself or of the point before (see [`CrashedRecovery::state`]).
    distinct_images_checked: u64,
    torn_repaired: u64,
    unopenable: u64,
    oracle_failures: u64,
    lost_commits: u64,
    commits_checked: u64,
}

// ----- the image of issue 18 (page-level transactions) -----

const ISSUE_PAGES: u64 = 48;
const ISSUE_PAGE: u64 = 27;

fn issue_config(protection: TornPageProtection) -> DatabaseConfig {
    let mut pool = PoolConfig::for_scheme(Scheme::PgClock, 16);
    pool.torn_page_protection = Some(protection);
    // Background writes only when a backend wakes the cleaner.
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

/// Builds the image of issue 18 (see the module docs): the devices, the model of the
/// committed bytes, and the number of commits.
fn issue_image(protection: TornPageProtection) -> (Images, Model, u64) {
    let config = issue_config(protection);
    let data = memory(DATA_START + ISSUE_PAGES);
    let log = memory(LOG_PAGES);
    let (db, _) = Database::open(
        Arc::clone(&data) as SharedDevice,
        Arc::clone(&log) as SharedDevice,
        &config,
    )
    .unwrap();
    let mut model = Model::new();
    let mut commits = 0;
    let mut update = |db: &Database, page, value| {
        update(db, &mut model, page, value);
        commits += 1;
    };
    // The first change of page 27 since it was clean: its image is logged here, before the
    // redo point the checkpoint below takes.
    update(&db, ISSUE_PAGE, 1);
    // A transaction in flight holds the redo point here.
    let held = db.register_in_flight();
    let others: Vec<u64> = (0..ISSUE_PAGES).filter(|&p| p != ISSUE_PAGE).collect();
    for round in 1..5u64 {
        update(&db, ISSUE_PAGE, 100 * round);
        // Pinned while other pages go through the pool, page 27 stays cached and dirty here;
        // recovery, which replays the same changes unpinned, evicts it between its batches.
        let pin = db.pool().read(ISSUE_PAGE).unwrap();
        for &page in others.iter().cycle().skip(round as usize * 11).take(20) {
            update(&db, page, page * 1000 + round * 10);
        }
        drop(pin);
    }
    // Page 27 is written and synced: it carries the LSN of its last change, newer than the
    // end of every other batch of it.
    db.pool().flush_all().unwrap();
    // Changes recovery has to redo (each page's first logs its image), with evictions.
    for &page in others.iter().take(30) {
        update(&db, page, page * 1000 + 99);
    }
    db.checkpoint().unwrap();
    assert_eq!(
        db.wal().checkpoint_lsn(),
        held,
        "the checkpoint stops at the held LSN"
    );
    db.wal().flush_to(db.wal().current_lsn()).unwrap();
    db.abandon();
    ((data, log), model, commits)
}

/// Every page reads and holds exactly the committed bytes.
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
    db.pool().check_invariants()
}

/// The image of issue 18 as a sweep's crash image (every commit was made durable).
fn issue_crash_image(protection: TornPageProtection) -> CrashImage {
    let config = issue_config(protection);
    let (devices, model, commits) = issue_image(protection);
    let open_config = config.clone();
    CrashImage {
        name: format!("issue 18 image ({})", protection.name()),
        devices,
        open: Box::new(move |data, log| {
            let (db, _) = Database::open(data, log, &open_config).map_err(|e| e.to_string())?;
            Ok(Box::new(move || db.abandon()))
        }),
        check: Box::new(move |data, log| {
            let (db, report) =
                Database::open(data, log, &config).map_err(|e| format!("open: {e}"))?;
            check_model(&db, &model)?;
            db.close()
                .map_err(|e| format!("close after recovery: {e}"))?;
            Ok(Recovered {
                committed: vec![commits],
                torn_repaired: (report.torn_pages_repaired + report.doublewrite_restored) as u64,
            })
        }),
    }
}

/// The regression test of issue 18: recovery of its image crashed at every operation of
/// either device, its unsynced writes torn (a prefix, or any sectors) or each at random.
fn sweep_issue_image(protection: TornPageProtection) {
    let fates = [FATES[0], FATES[1], FATES[3]];
    let totals = sweep_images([issue_crash_image(protection)].into_iter(), &fates);
    assert!(totals.crash_points > 100, "{totals:?}");
    assert!(totals.torn_repaired > 0, "no tear was repaired: {totals:?}");
}

#[test]
fn a_page_newer_than_its_log_survives_recovery_crashes_with_page_images() {
    sweep_issue_image(TornPageProtection::PageImages);
}

#[test]
fn a_page_newer_than_its_log_survives_recovery_crashes_with_the_doublewrite() {
    sweep_issue_image(TornPageProtection::Doublewrite);
}

#[test]
fn a_page_newer_than_its_log_survives_recovery_crashes_with_doublewrite8() {
    sweep_issue_image(TornPageProtection::Doublewrite8);
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
    devices: Images,
    open: Box<OpenFn>,
    check: Box<CheckFn>,
}

/// Crashes the recovery of `image` at every operation of either device under every fate in
/// `fates`, then recovers cleanly and checks the oracle and that no commit the recovery of the
/// image itself found was lost (once per distinct crash image: see
/// [`CrashedRecovery::state`]).
fn sweep_image(image: &CrashImage, fates: &[Fate], totals: &mut SweepTotals) -> Vec<String> {
    let mut failures = Vec::new();
    let baseline = match (image.check)(copy(&image.devices.0), copy(&image.devices.1)) {
        Ok(baseline) => baseline,
        Err(why) => return vec![format!("{}: the crash image itself: {why}", image.name)],
    };
    totals.images += 1;
    let points = fates
        .iter()
        .enumerate()
        .flat_map(|fate| [(fate, Crashing::Data), (fate, Crashing::Log)]);
    for ((index, fate), device) in points {
        let run = |ops| {
            crash_recovery_at(
                &image.devices,
                (device, ops),
                *fate,
                // One seed per fate: two points that leave the same writes pending tear them the
                // same way, so skipping the second below loses nothing.
                0x5eed ^ index as u64,
                &image.open,
            )
        };
        let first = first_changing_point(&run);
        totals.crash_points += first - 1;
        let mut previous = None;
        for ops in first.. {
            let after = run(ops);
            if !after.crashed {
                break;
            }
            totals.crash_points += 1;
            if after.unchanged() || previous.replace(after.state) == Some(after.state) {
                // The images of the crash image itself (checked above) or of the point before.
                continue;
            }
            totals.distinct_images_checked += 1;
            let point = format!(
                "{}, fate {index} ({fate:?}), recovery crashed at {device:?} op {ops}",
                image.name
            );
            failures.extend(check_point(image, &baseline, after.devices, &point, totals));
        }
    }
    failures
}

/// Recovers the images a crashed recovery left and checks them against the oracle and the
/// clean recovery of the crash image itself (`baseline`); returns the failure, if any.
fn check_point(
    image: &CrashImage,
    baseline: &Recovered,
    devices: Images,
    point: &str,
    totals: &mut SweepTotals,
) -> Option<String> {
    match (image.check)(devices.0, devices.1) {
        Ok(recovered) => {
            totals.torn_repaired += recovered.torn_repaired;
            totals.commits_checked += recovered.committed.iter().sum::<u64>();
            totals.lost_commits += baseline
                .committed
                .iter()
                .zip(&recovered.committed)
                .map(|(base, now)| base.saturating_sub(*now))
                .sum::<u64>();
            (recovered.committed != baseline.committed).then(|| {
                totals.oracle_failures += 1;
                format!(
                    "{point}: recovered {:?} commits per thread, the image itself {:?}",
                    recovered.committed, baseline.committed
                )
            })
        }
        Err(why) if why.starts_with("open: ") => {
            totals.unopenable += 1;
            Some(format!("{point}: the next {why}"))
        }
        Err(why) => {
            totals.oracle_failures += 1;
            Some(format!("{point}: {why}"))
        }
    }
}

/// The first crash point of `run` whose images differ from the ones recovery started from, or
/// at which recovery finishes: a crash before it leaves the crash image itself (checked as the
/// baseline). Found by bisection: once recovery has written, every later crash point has too.
fn first_changing_point(run: &dyn Fn(u64) -> CrashedRecovery) -> u64 {
    let changes = |ops| {
        let after = run(ops);
        !after.crashed || !after.unchanged()
    };
    let mut high = 1;
    while !changes(high) {
        high *= 2;
    }
    // Every point below `low` leaves the images unchanged.
    let mut low = high / 2 + 1;
    while low < high {
        let middle = low + (high - low) / 2;
        if changes(middle) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    high
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
    /// One more thread holds the redo point back over stretches of the run, as a transaction
    /// layer's long transaction does (`Database::register_in_flight`): pages are then written
    /// and synced while their log records stay after the redo point (issue 18's condition).
    hold_redo: bool,
    /// What the crash does to the run's unsynced writes (an index into `FATES`).
    fate: usize,
}

impl RunPlan {
    fn name(&self, workload: &str) -> String {
        format!(
            "{workload} seed {} ({}, {}, flush_log_at_trx_commit = {}, {} threads, crash after \
             {} commits{})",
            self.seed,
            self.scheme.name(),
            self.protection.name(),
            self.flush_log_at_trx_commit,
            self.threads,
            self.crash_after_commits,
            if self.hold_redo {
                ", redo point held"
            } else {
                ""
            }
        )
    }

    /// The fault devices of the run: one crash switch, seeded fates of unsynced writes.
    fn devices(
        &self,
        data_pages: u64,
        log_pages: u64,
    ) -> (Arc<CrashSwitch>, Arc<FaultDevice>, Arc<FaultDevice>) {
        let switch = CrashSwitch::new();
        let fate = FATES[self.fate];
        let fault = |seed| FaultConfig {
            seed,
            unsynced_on_crash: fate.unsynced,
            tear_mode: fate.tear,
            crash_switch: Some(Arc::clone(&switch)),
            ..FaultConfig::default()
        };
        let zeroed =
            |pages, seed| Arc::new(FaultDevice::new_zeroed(memory(pages), fault(seed)).unwrap());
        let (data, log) = (
            zeroed(data_pages, self.seed),
            zeroed(log_pages, self.seed ^ 0x106),
        );
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
            return Err(format!(
                "thread {thread}: {acked} commits acknowledged, {m} recovered (lost)"
            ));
        }
        if m > tried {
            return Err(format!(
                "thread {thread}: {m} commits recovered, only {tried} attempted"
            ));
        }
        Ok(())
    }
}

/// Bound on a thread's transactions in one run.
const MAX_TXNS: u64 = 2_000;

// The page-level bank (as `crash_campaign.rs`): thread `t` owns `BANK_PAGES_PER_THREAD` pages of
// accounts, one per sector, and a marker page; transaction `k` moves a seeded amount between two
// of its accounts and sets the marker to `k + 1`.

const BANK_PAGES_PER_THREAD: u64 = 20;
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
    let ((from_page, from_at), (to_page, to_at)) = (
        bank_account_place(thread, from),
        bank_account_place(thread, to),
    );
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
            let guard = db
                .pool()
                .read(BANK_MARKERS + thread)
                .map_err(|e| e.to_string())?;
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

/// Until the crash, holds the redo point for 1-6 ms at a time (see [`RunPlan::hold_redo`]).
fn hold_redo_point(db: &Database, switch: &CrashSwitch, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x401d);
    while !switch.is_tripped() {
        let bound = db.register_in_flight();
        std::thread::sleep(Duration::from_micros(rng.gen_range(1000..6000)));
        db.withdraw_in_flight(bound);
        std::thread::sleep(Duration::from_micros(rng.gen_range(0..2000)));
    }
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
        std::thread::scope(|scope| {
            if plan.hold_redo {
                scope.spawn(|| hold_redo_point(&db, &switch, plan.seed));
            }
            progress.run(&plan, &switch, &|thread, k| {
                bank_txn(&db, plan.seed, thread, k).is_ok()
            });
        });
        db.abandon();
    }
    switch.trip();
    let devices: Images = (
        Arc::new(data.crash().unwrap()),
        Arc::new(log.crash().unwrap()),
    );
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
            db.close()
                .map_err(|e| format!("close after recovery: {e}"))?;
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
const KV_WINDOW: u64 = 120;

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
    .map_err(|e| e.to_string())?;
    txn.commit().map_err(|e| e.to_string())?;
    let mut committed = Vec::new();
    for thread in 0..plan.threads {
        let prefix = format!("t{thread}/").into_bytes();
        let keys: Vec<u64> = pairs
            .keys()
            .filter(|key| key.starts_with(&prefix))
            .map(|key| {
                std::str::from_utf8(&key[prefix.len()..])
                    .unwrap()
                    .parse()
                    .unwrap()
            })
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
            progress.run(&plan, &switch, &|thread, k| {
                kv_txn(&kv, tree, thread, k).is_ok()
            });
        }
        kv.abandon();
    }
    switch.trip();
    let devices: Images = (
        Arc::new(data.crash().unwrap()),
        Arc::new(log.crash().unwrap()),
    );
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
            kv.close()
                .map_err(|e| format!("close after recovery: {e}"))?;
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
        protection: if round.is_multiple_of(2) {
            TornPageProtection::PageImages
        } else {
            TornPageProtection::Doublewrite
        },
        flush_log_at_trx_commit: if (round / 2).is_multiple_of(2) { 0 } else { 1 },
        threads: rng.gen_range(2..=BANK_MAX_THREADS),
        crash_after_commits: rng.gen_range(100..600),
        hold_redo: rng.gen_bool(0.75),
        fate: rng.gen_range(0..FATES.len()),
    }
}

/// Sweeps the crash images `images` makes, one at a time; panics naming every failed point.
fn sweep_images(images: impl Iterator<Item = CrashImage>, fates: &[Fate]) -> SweepTotals {
    let mut totals = SweepTotals::default();
    let mut failures = Vec::new();
    for image in images {
        let before = totals;
        let found = sweep_image(&image, fates, &mut totals);
        if std::env::var_os("SWEEP_LOG").is_some() {
            eprintln!(
                "{}: {} crash points, {} torn pages repaired, {} failed{}",
                image.name,
                totals.crash_points - before.crash_points,
                totals.torn_repaired - before.torn_repaired,
                found.len(),
                found
                    .first()
                    .map_or(String::new(), |first| format!(", first: {first}"))
            );
        }
        failures.extend(found);
    }
    eprintln!("sweep: {totals:?}");
    assert!(
        failures.is_empty(),
        "{} of {} crash points failed:\n{}",
        failures.len(),
        totals.crash_points,
        failures.join("\n")
    );
    totals
}

/// A sample of the sweep for the normal suite: the bank with page images and
/// `flush_log_at_trx_commit = 0` (issue 18's setting) and the store with the doublewrite and
/// `flush_log_at_trx_commit = 1`, on pg-clock; two fates.
#[test]
fn recovery_crashed_anywhere_leaves_a_recoverable_database() {
    let schemes = [Scheme::PgClock];
    let (bank, kv) = (plan_of(0, &schemes), plan_of(3, &schemes));
    assert_eq!(
        (
            bank.protection,
            bank.flush_log_at_trx_commit,
            kv.protection,
            kv.flush_log_at_trx_commit
        ),
        (
            TornPageProtection::PageImages,
            0,
            TornPageProtection::Doublewrite,
            1
        )
    );
    let images = [bank_image(bank), kv_image(kv)].into_iter();
    let totals = sweep_images(images, &[FATES[0], FATES[3]]);
    assert_eq!(totals.images, 2, "{totals:?}");
    assert!(totals.crash_points > 100, "{totals:?}");
    assert!(totals.torn_repaired > 0, "{totals:?}");
}

/// The exhaustive sweep (see the module docs): the images of issue 18, then both workloads
/// for every preset, both protections, both modes; every crash point, every fate.
#[test]
#[ignore = "the exhaustive crash-during-recovery sweep; minutes"]
fn exhaustive_recovery_crash_sweep() {
    let per_scheme: u64 = std::env::var("FLASHBUF_SWEEP_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let presets = Scheme::presets();
    let only = std::env::var("SWEEP_ONLY").unwrap_or_default();
    let images = (0..per_scheme * presets.len() as u64).flat_map(|n| {
        let plan = plan_of(n, &presets);
        let bank = (only != "kv").then(|| bank_image(plan));
        let kv = (only != "bank").then(|| kv_image(plan));
        bank.into_iter().chain(kv)
    });
    let issue = [
        TornPageProtection::PageImages,
        TornPageProtection::Doublewrite,
    ]
    .into_iter()
    .filter(|_| only.is_empty())
    .map(issue_crash_image);
    let totals = sweep_images(issue.chain(images), &FATES);
    assert_eq!(
        totals.unopenable + totals.oracle_failures + totals.lost_commits,
        0
    );
}
