//! Crash consistency of TPC-C (issue 11 item 7): a reduced-scale TPC-C database (one
//! warehouse, `TpccScale::reduced(200, 30)`: NOT the specification's cardinalities) is loaded
//! once into an unbound in-memory image (the bench's image path: clean close, page LSNs reset),
//! then for each seed the image is copied onto a fault-injecting data device, bound to a fresh
//! fault-injecting log, and TPC-C transactions of the standard mix run on a small pool until
//! the seeded crash point (on the data or the log device; unsynced writes dropped, applied at
//! random or torn). In a third of the runs recovery itself crashes once more. After recovery:
//! TPC-C consistency conditions 1-4 (clause 3.3.2) hold and the B+-tree check is clean.
//!
//! Schemes rotate through LRU-C, vanilla InnoDB, WAR and basic LRU-C; even seeds protect torn
//! pages with page images in the log, odd seeds with the doublewrite. 120 crash points run in
//! the normal suite; `TPCC_CRASH_SEEDS=N` runs N instead (e.g. a longer campaign:
//! `TPCC_CRASH_SEEDS=2000 cargo test --release --test suite tpcc_crash:: -- --nocapture`).

use crate::crash_common;

use std::sync::Arc;
use std::time::Duration;

use flashbuf::bench::driver::RecordSpec;
use flashbuf::bench::image::Image;
use flashbuf::datafile::DATA_START;
use flashbuf::device::SharedDevice;
use flashbuf::device::fault::{FaultConfig, FaultDevice, UnsyncedOnCrash};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::engine::TornPageProtection;
use flashbuf::pool::{PoolConfig, Scheme};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::tpcc::{Tpcc, TpccConfig, TpccScale};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const PAGE: usize = 4096;
const LOG_PAGES: u64 = 512;
const FRAMES: usize = 24;
const SEEDS: u64 = 120;
const TXNS_MAX: usize = 120;

const SCHEMES: [Scheme; 4] = [
    Scheme::LruC,
    Scheme::Vanilla,
    Scheme::War,
    Scheme::LruCBasic,
];

fn tpcc_config() -> TpccConfig {
    let mut config = TpccConfig::new(1);
    config.scale = TpccScale::reduced(200, 30).unwrap();
    config.max_attempts = 3;
    config
}

fn kv_config(scheme: Scheme, images: bool) -> KvConfig {
    let mut pool = PoolConfig::for_scheme(scheme, FRAMES);
    pool.torn_page_protection = Some(if images {
        TornPageProtection::PageImages
    } else {
        TornPageProtection::Doublewrite
    });
    pool.lru_scan_depth = 4;
    pool.cleaner_period_ms = 2;
    let mut config = KvConfig::new(FRAMES);
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

/// The image on a fresh fault device (its contents durable).
fn data_device(image: &Image, config: FaultConfig) -> Arc<FaultDevice> {
    let inner: SharedDevice =
        Arc::new(MemoryDevice::new(PAGE, DATA_START + image.capacity_pages).unwrap());
    image.copy_to(&inner).unwrap();
    Arc::new(FaultDevice::new(inner, config).unwrap())
}

/// What one crash run saw.
struct Outcome {
    committed: usize,
    crashed_mid_run: bool,
}

fn one_crash(seed: u64, image: &Image) -> Outcome {
    let mut rng = SmallRng::seed_from_u64(seed);
    let scheme = SCHEMES[(seed % 4) as usize];
    let images = seed.is_multiple_of(2);
    let fates = [
        UnsyncedOnCrash::DropAll,
        UnsyncedOnCrash::Random,
        UnsyncedOnCrash::TearAll,
    ];
    let crash_data = rng.gen_bool(0.5);
    let crash_at = if crash_data {
        rng.gen_range(1..400)
    } else {
        rng.gen_range(1..600)
    };
    let data_fate = fates[rng.gen_range(0..fates.len())];
    let log_fate = fates[rng.gen_range(0..fates.len())];
    let data = data_device(
        image,
        crash_common::fault(seed, crash_data.then_some(crash_at), data_fate),
    );
    let log = Arc::new(
        FaultDevice::new_zeroed(
            Arc::new(MemoryDevice::new(PAGE, LOG_PAGES).unwrap()),
            crash_common::fault(seed ^ 0x5555, (!crash_data).then_some(crash_at), log_fate),
        )
        .unwrap(),
    );
    let tpcc = Tpcc::new(tpcc_config()).unwrap();
    let mut committed = 0;
    if let Ok((kv, _)) = KvStore::open(
        Arc::clone(&data) as SharedDevice,
        Arc::clone(&log) as SharedDevice,
        &kv_config(scheme, images),
    ) {
        let mut worker = tpcc.worker(seed as usize);
        // Bound: TXNS_MAX transactions, or the first error (the crash).
        for _ in 0..TXNS_MAX {
            if worker.run_one(&kv).is_err() {
                break;
            }
            committed += 1;
        }
        kv.abandon(); // the crash: nothing more is written
    }
    let crashed_mid_run = data.counters().crashed || log.counters().crashed;
    let (data_image, log_image) =
        crash_common::crash_images(seed, &mut rng, &data, &log, &kv_config(scheme, images));
    let what = format!(
        "seed {seed} ({scheme:?}, {}, crash on {} after {crash_at} ops, fates {data_fate:?}/\
         {log_fate:?})",
        if images { "page images" } else { "doublewrite" },
        if crash_data { "data" } else { "log" }
    );
    let (kv, _) = KvStore::open(data_image, log_image, &kv_config(scheme, images))
        .unwrap_or_else(|e| panic!("{what}: recovery failed: {e}"));
    let trees = kv.check().unwrap();
    assert!(trees.is_ok(), "{what}: tree check: {:?}", trees.problems);
    let report = tpcc.check(&kv).unwrap();
    assert!(report.is_consistent(), "{what}: {report}");
    assert_eq!(report.conditions.len(), 4);
    kv.close().unwrap();
    Outcome {
        committed,
        crashed_mid_run,
    }
}

#[test]
fn tpcc_stays_consistent_across_seeded_crashes() {
    let spec = RecordSpec::Tpcc(tpcc_config());
    let image = Image::build(&spec, PAGE, &mut |_| {}).unwrap();
    let seeds = std::env::var("TPCC_CRASH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEEDS);
    let (mut mid_run, mut committed) = (0, 0);
    for seed in 0..seeds {
        let outcome = one_crash(seed, &image);
        mid_run += usize::from(outcome.crashed_mid_run);
        committed += outcome.committed;
    }
    eprintln!(
        "{seeds} crash points ({} loaded pages): {mid_run} crashed mid-run, {committed} \
         transactions completed before the crashes",
        image.loaded_pages
    );
    assert!(
        mid_run as u64 >= seeds / 2,
        "most runs must crash mid-run, not after: {mid_run} of {seeds}"
    );
}
