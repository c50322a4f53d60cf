//! TPC-C on the transactional B+-tree: one warehouse at specification scale bulk-loaded into a
//! `KvStore`, 64 clients run the standard mix (conflicts, deadlocks and retries included),
//! then TPC-C's consistency conditions 1-4 hold and every tree checks clean. The ignored
//! `load_per_warehouse` measures load time and database bytes per warehouse into a file:
//! `TPCC_WAREHOUSES=5 cargo test --release --test suite txn_tpcc::load_per_warehouse -- --ignored --nocapture`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use flashbuf::device::SharedDevice;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::tpcc::{TXN_TYPE_NAMES, Tpcc, TpccConfig};

const PAGE: usize = 16 * 1024;

fn config(frames: usize) -> KvConfig {
    let mut config = KvConfig::new(frames);
    config.database.wal = WalConfig {
        log_size: 256 << 20,
        page_size: 4096,
        buffer_size: 4 << 20,
        full_timeout: Duration::from_secs(30),
    };
    config.lock_timeout = Duration::from_secs(2);
    config
}

#[test]
fn sixty_four_clients_keep_the_consistency_conditions() {
    const CLIENTS: usize = 64;
    const TXNS_PER_CLIENT: usize = 25;
    let data: SharedDevice = Arc::new(MemoryDevice::new(PAGE, 16_384).unwrap());
    let log: SharedDevice = Arc::new(MemoryDevice::new(4096, (256 << 20) / 4096).unwrap());
    let (kv, _) = KvStore::open(data, log, &config(2048)).unwrap();
    let tpcc = Tpcc::new(TpccConfig::new(1)).unwrap();
    let started = Instant::now();
    let load = tpcc.load(&kv, &mut |_| {}).unwrap();
    let pages = kv.check().unwrap().high_water;
    eprintln!(
        "load: {} rows, {} MiB of keys and values in {:.1} s; {} pages ({} MiB)",
        load.rows(),
        load.bytes() >> 20,
        started.elapsed().as_secs_f64(),
        pages,
        (pages * PAGE as u64) >> 20
    );
    let before = tpcc.check(&kv).unwrap();
    assert!(before.is_consistent(), "{before}");
    let counts: Vec<AtomicUsize> = (0..5).map(|_| AtomicUsize::new(0)).collect();
    let retries = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for client in 0..CLIENTS {
            let (tpcc, kv, counts, retries) = (&tpcc, &kv, &counts, &retries);
            scope.spawn(move || {
                let mut worker = tpcc.worker(client);
                for _ in 0..TXNS_PER_CLIENT {
                    let outcome = worker.run_one(kv).unwrap();
                    counts[outcome.txn_type].fetch_add(1, Ordering::Relaxed);
                    retries.fetch_add(outcome.retries, Ordering::Relaxed);
                }
            });
        }
    });
    let counts: Vec<usize> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    let stats = kv.lock_stats();
    eprintln!(
        "run: {} transactions in {:.1} s, mix {:?} {counts:?}, {} retries; lock waits {}, \
         deadlocks {}, timeouts {}",
        CLIENTS * TXNS_PER_CLIENT,
        started.elapsed().as_secs_f64(),
        TXN_TYPE_NAMES,
        retries.load(Ordering::Relaxed),
        stats.waits,
        stats.deadlocks,
        stats.timeouts
    );
    assert_eq!(counts.iter().sum::<usize>(), CLIENTS * TXNS_PER_CLIENT);
    let after = tpcc.check(&kv).unwrap();
    assert!(after.is_consistent(), "{after}");
    let report = kv.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    kv.close().unwrap();
}

#[test]
#[ignore = "loads TPCC_WAREHOUSES (default 2) warehouses into a file; run by hand"]
fn load_per_warehouse() {
    let warehouses: u16 = std::env::var("TPCC_WAREHOUSES")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(2);
    let dir = tempfile::Builder::new()
        .prefix("tpcc-load")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let path = dir.path().join("tpcc.db");
    let pages = u64::from(warehouses) * 8_000 + 4096;
    let (kv, _) = KvStore::open_specs(
        &format!("file:{}", path.display()),
        &format!("file:{}.log", path.display()),
        PAGE,
        pages,
        &config(4096),
    )
    .unwrap();
    let tpcc = Tpcc::new(TpccConfig::new(warehouses)).unwrap();
    let started = Instant::now();
    let load = tpcc.load(&kv, &mut |_| {}).unwrap();
    let elapsed = started.elapsed();
    kv.close().unwrap(); // also releases the files' locks
    let (kv, _) = KvStore::open_specs(
        &format!("file:{}", path.display()),
        &format!("file:{}.log", path.display()),
        PAGE,
        pages,
        &config(4096),
    )
    .unwrap();
    let report = kv.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    let bytes = report.high_water * PAGE as u64;
    eprintln!(
        "{warehouses} warehouses: {} rows, {} MiB of keys and values, loaded in {:.1} s \
         ({:.1} s per warehouse); {} pages = {} MiB ({} MiB per warehouse)",
        load.rows(),
        load.bytes() >> 20,
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() / f64::from(warehouses),
        report.high_water,
        bytes >> 20,
        (bytes / u64::from(warehouses)) >> 20
    );
    kv.close().unwrap();
}
