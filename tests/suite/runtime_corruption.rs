//! Run-time corruption from a lying device (issue 8): torn writes that are not sector prefixes,
//! misdirected writes and lost writes, all reported as successes. No protection can repair
//! them (the device acknowledged the write), but none may be accepted silently: a page whose
//! image on the device differs from what was committed must be reported, by a failed read
//! during the run (checksum, page id, or a stale LSN: the pool remembers what it wrote) or by
//! the scrub afterwards.
//!
//! Each point runs single-threaded transactions on a pool much smaller than the data, so pages
//! are written and read back, then writes everything back and scrubs every page; the oracle is
//! the last value committed to each slot.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flashbuf::datafile::DATA_START;
use flashbuf::db::{Database, DatabaseConfig};
use flashbuf::device::fault::{FaultConfig, FaultDevice, TearMode};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, SharedDevice};
use flashbuf::pool::{PoolConfig, Scheme};
use flashbuf::wal::WalConfig;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const PAGE: usize = 4096;
const DATA_PAGES: u64 = 64;
const SLOTS: u64 = 8;

#[derive(Debug, Default)]
struct Totals {
    injected: u64,
    detected_in_run: u64,
    detected_by_scrub: u64,
    silent: Vec<String>,
}

fn one_point(seed: u64, totals: &mut Totals) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let inner: SharedDevice = Arc::new(MemoryDevice::new(PAGE, DATA_START + DATA_PAGES).unwrap());
    let fault = FaultConfig {
        seed,
        torn_write_rate: 0.01,
        tear_mode: TearMode::Mixed,
        misdirected_write_rate: 0.01,
        lost_write_rate: 0.01,
        ..FaultConfig::default()
    };
    let data = Arc::new(FaultDevice::new_zeroed(inner, fault).unwrap());
    let log: SharedDevice = Arc::new(MemoryDevice::new(PAGE, 128).unwrap());
    let presets = Scheme::presets();
    let mut pool = PoolConfig::for_scheme(presets[(seed % presets.len() as u64) as usize], 16);
    pool.lru_scan_depth = 4;
    let config = DatabaseConfig {
        pool,
        wal: WalConfig {
            log_size: 128 * PAGE as u64,
            page_size: PAGE,
            buffer_size: 32 * 1024,
            full_timeout: Duration::from_secs(5),
        },
        checkpoint_period_ms: 20,
        data_pages: Some(DATA_PAGES),
        ..DatabaseConfig::default()
    };
    let Ok((db, _)) = Database::open(Arc::clone(&data) as SharedDevice, log, &config) else {
        // A fault hit the creation itself (e.g. a misdirected header write): reported.
        totals.detected_in_run += 1;
        return;
    };
    let mut expected: HashMap<(u64, u64), u64> = HashMap::new();
    for n in 1..=600u64 {
        let (page, slot) = (rng.gen_range(0..DATA_PAGES), rng.gen_range(0..SLOTS));
        let mut tx = db.begin();
        let done = tx
            .lock(&[page])
            .and_then(|()| tx.update(page, offset(slot), &n.to_le_bytes()))
            .and_then(|()| tx.commit());
        match done {
            Ok(_) => {
                expected.insert((page, slot), n);
            }
            Err(err) => {
                assert!(
                    matches!(err, flashbuf::Error::CorruptPage { .. }),
                    "seed {seed}: an unexpected error: {err}"
                );
                totals.detected_in_run += 1;
            }
        }
    }
    let _ = db.pool().flush_all();
    let (problems, _) = db.pool().scrub(usize::MAX).unwrap();
    totals.detected_by_scrub += problems.len() as u64;
    let reported: Vec<u64> = problems.iter().filter_map(|p| page_named(p)).collect();
    // Every page whose device image disagrees with the oracle must be among those reported.
    let device = db.datafile().data_device().unwrap();
    let mut buf = AlignedBuf::new(PAGE);
    for page in 0..DATA_PAGES {
        device.read_page(page, &mut buf).unwrap();
        let bytes = buf.as_slice();
        let wrong = (0..SLOTS).any(|slot| {
            let want = expected.get(&(page, slot)).copied().unwrap_or(0);
            u64::from_le_bytes(bytes[offset(slot)..offset(slot) + 8].try_into().unwrap()) != want
        });
        if wrong && !reported.contains(&page) {
            totals.silent.push(format!(
                "seed {seed}: page {page} differs from what was committed and nothing reported it"
            ));
        }
    }
    let counters = data.counters();
    totals.injected += counters.torn_writes + counters.misdirected_writes + counters.lost_writes;
    db.abandon();
}

fn offset(slot: u64) -> usize {
    slot as usize * 512 + 64
}

/// The page a scrub line names (`page N is corrupt: ...`).
fn page_named(problem: &str) -> Option<u64> {
    problem
        .strip_prefix("page ")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[test]
fn torn_misdirected_and_lost_writes_are_never_accepted_silently() {
    let mut totals = Totals::default();
    for seed in 0..120 {
        one_point(seed, &mut totals);
    }
    eprintln!(
        "run-time corruption: {} faults injected (torn, misdirected, lost); {} reported during \
         the runs, {} pages reported by the scrubs; {} silent",
        totals.injected,
        totals.detected_in_run,
        totals.detected_by_scrub,
        totals.silent.len()
    );
    assert!(totals.injected > 50, "{totals:?}");
    assert!(
        totals.silent.is_empty(),
        "silently accepted corruption:\n{}",
        totals.silent.join("\n")
    );
}
