//! Cost per transaction in memory: heap allocations (a counting global allocator, only in this
//! example) and, under callgrind, instructions. One client thread on `mem` devices with the
//! pool holding the whole database, the redo log on `mem` (commits flush it).
//!
//! - `tpcc`: TPC-C, standard mix, `TXN_COST_WAREHOUSES` warehouses (default 5), specification
//!   scale;
//! - `lookup`: point-lookup transactions (begin, `get_into` a reused buffer, commit) on a
//!   bulk-loaded tree of `TXN_COST_KEYS` keys (default 1,000,000; 16-byte keys, 100-byte
//!   values); `lookup-get`: the same through `get`, which returns a new `Vec`;
//!   `lookup-committed`: auto-commit reads (`KvEngine::get_committed_into`, no transaction).
//!
//! `TXN_COST_PAGE_SIZE` sets the page size (default 16,384; 4,096 is vmcache's).
//!
//! Each mode warms up with `TXN_COST_WARMUP` transactions (default 2,000), then measures
//! `TXN_COST_TXNS` (default 20,000) inside `measured_phase`, printing allocations and bytes
//! allocated per transaction. Allocations of background threads (log writer, page cleaner)
//! during the phase are counted too.
//!
//! ```text
//! cargo run --release --example txn_cost -- tpcc
//! TXN_COST_WARMUP=500 TXN_COST_TXNS=2000 valgrind --tool=callgrind --collect-atstart=no \
//!     --toggle-collect='*measured_phase*' target/release/examples/txn_cost tpcc
//! ```
//!
//! (instructions per transaction: the inclusive count of `measured_phase` over the
//! transactions; only the calling thread collects. Adding `--instr-atstart=no` and running
//! `callgrind_control -i on` once it printed `loaded` makes the load faster.)
//!
//! Where the allocations come from, site by site: `scripts/alloc_sites.py` (DHAT, two runs
//! differenced). The figures and how they were taken: docs/performance.md, "Cost per
//! transaction" and "Allocations per transaction: per-thread spares".

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use flashbuf::kv::{KvEngine, TreeId, TxnEnd};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::tpcc::{Tpcc, TpccConfig};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The system allocator, counting calls and bytes.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The page size, `TXN_COST_PAGE_SIZE` (default 16 KiB; vmcache's is 4 KiB).
fn page_size() -> usize {
    usize::try_from(env_or("TXN_COST_PAGE_SIZE", 16 * 1024)).unwrap_or(16 * 1024)
}

/// `pages` of 16 KiB in pages of `page_size` bytes.
fn scaled(pages: u64, page_size: usize) -> u64 {
    pages * (16 * 1024) / page_size as u64
}

fn env_or(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(text) => text.parse().unwrap_or_else(|_| {
            eprintln!("{name}: not a number: {text}");
            std::process::exit(2)
        }),
        Err(_) => default,
    }
}

fn config(frames: usize) -> KvConfig {
    let mut config = KvConfig::new(frames);
    config.database.wal = WalConfig {
        log_size: 1 << 30,
        page_size: 4096,
        buffer_size: 8 << 20,
        full_timeout: Duration::from_secs(30),
    };
    config
}

/// The redo log's appended bytes so far.
fn log_bytes(kv: &KvStore) -> u64 {
    kv.trees().database().wal().stats().appended_bytes
}

/// Runs `txns` transactions with `one`; prints allocations, bytes allocated and redo log bytes
/// per transaction.
#[inline(never)]
fn measured_phase(kv: &KvStore, txns: u64, one: &mut dyn FnMut()) {
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    let bytes = BYTES.load(Ordering::Relaxed);
    let logged = log_bytes(kv);
    let started = Instant::now();
    for _ in 0..txns {
        one();
    }
    let seconds = started.elapsed().as_secs_f64();
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
    let bytes = BYTES.load(Ordering::Relaxed) - bytes;
    let logged = log_bytes(kv) - logged;
    println!(
        "{txns} transactions in {seconds:.2} s: {:.1} allocations, {:.0} bytes allocated and \
         {:.0} bytes of redo log per transaction",
        allocations as f64 / txns as f64,
        bytes as f64 / txns as f64,
        logged as f64 / txns as f64
    );
}

/// Reads every leaf of every tree once, so that the measured phase runs in memory: the loads
/// leave pages on the device (a bulk load writes them there, a loaded page may be cleaned and
/// evicted), and a first touch during the phase would count a device read and its checksum.
fn warm(kv: &KvStore) {
    let trees = kv.trees();
    for tree in trees.trees() {
        trees
            .scan(
                tree.id,
                std::ops::Bound::Unbounded,
                flashbuf::kv::Direction::Forward,
                &mut |_, _| flashbuf::btree::Visit::Continue,
            )
            .unwrap();
    }
}

fn tpcc(warmup: u64, txns: u64) {
    let warehouses = u16::try_from(env_or("TXN_COST_WAREHOUSES", 5)).unwrap_or(u16::MAX);
    // About 6,000 16 KiB pages per warehouse after the load; room to grow.
    let page = page_size();
    let data_pages = scaled(u64::from(warehouses) * 9_000 + 8_192, page);
    let config = config(data_pages as usize);
    let (kv, _) = KvStore::open_specs("mem", "mem", page, data_pages, &config).unwrap();
    let tpcc = Tpcc::new(TpccConfig::new(warehouses)).unwrap();
    let started = Instant::now();
    let load = tpcc.load(&kv, &mut |_| {}).unwrap();
    warm(&kv);
    eprintln!(
        "loaded {warehouses} warehouses ({} rows) in {:.1} s",
        load.rows(),
        started.elapsed().as_secs_f64()
    );
    let mut worker = tpcc.worker(0);
    for _ in 0..warmup {
        worker.run_one(&kv).unwrap();
    }
    measured_phase(&kv, txns, &mut || {
        worker.run_one(&kv).unwrap();
    });
}

fn key(n: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(b"userkey:");
    key[8..].copy_from_slice(&n.to_be_bytes());
    key
}

/// How a lookup reads its value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    /// `KvTxn::get_into` a reused buffer.
    Into,
    /// `KvTxn::get`, a new `Vec` per lookup.
    Owned,
    /// `KvEngine::get_committed_into`, no transaction.
    AutoCommit,
}

fn lookup(warmup: u64, txns: u64, read: Read) {
    let keys = env_or("TXN_COST_KEYS", 1_000_000);
    let page = page_size();
    let data_pages = scaled(keys / 100 * 2 + 4096, page);
    let config = config(data_pages as usize);
    let (kv, _) = KvStore::open_specs("mem", "mem", page, data_pages, &config).unwrap();
    let tree: TreeId = kv.open_tree("bench").unwrap();
    let mut pairs = (0..keys).map(|n| (key(n).to_vec(), vec![(n % 251) as u8; 100]));
    kv.bulk_load(tree, &mut pairs).unwrap();
    warm(&kv);
    eprintln!("loaded {keys} keys");
    let mut rng = SmallRng::seed_from_u64(1);
    let mut value = Vec::new();
    let mut one = || {
        let n = rng.gen_range(0..keys);
        if read == Read::AutoCommit {
            assert!(kv.get_committed_into(tree, &key(n), &mut value).unwrap());
            return;
        }
        // As the benchmarks run a transaction (`workload::record::run_txn`): on the stack.
        let mut found = false;
        kv.transact(&mut |txn| {
            found = match read {
                Read::Into => txn.get_into(tree, &key(n), &mut value)?,
                Read::Owned => txn.get(tree, &key(n))?.is_some(),
                Read::AutoCommit => unreachable!("handled above"),
            };
            Ok(TxnEnd::Commit)
        })
        .unwrap();
        assert!(found);
    };
    for _ in 0..warmup {
        one();
    }
    measured_phase(&kv, txns, &mut one);
}

fn main() {
    let warmup = env_or("TXN_COST_WARMUP", 2_000);
    let txns = env_or("TXN_COST_TXNS", 20_000).max(1);
    match std::env::args().nth(1).as_deref() {
        Some("tpcc") => tpcc(warmup, txns),
        Some("lookup") => lookup(warmup, txns, Read::Into),
        Some("lookup-get") => lookup(warmup, txns, Read::Owned),
        Some("lookup-committed") => lookup(warmup, txns, Read::AutoCommit),
        _ => {
            eprintln!(
                "usage: txn_cost tpcc|lookup|lookup-get|lookup-committed (see the file's docs for the variables)"
            );
            std::process::exit(2);
        }
    }
}
