//! Throughput of the transactional B+-tree: random point lookups and random inserts per second
//! (each one transaction: begin, get or put, commit) with 1, 2 and 64 threads,
//!
//! - on `mem` and on `emu:ssd-a` with the pool at 10% of the data pages (misses go to the
//!   device; emulated figures are in device time),
//! - in memory with the pool holding everything, side by side with redb (in-memory backend):
//!   the ratios flashbuf / redb for random lookups and random inserts.
//!
//! The redo log is on `mem` in every case (commits flush it, but the flush costs no device
//! time), so the figures measure the tree, the locks, the pool and the data device. Keys are
//! 16 bytes, values 100 bytes, 16 KiB pages; the tree is bulk-loaded first.
//!
//! Run: `cargo bench --bench btree` (about two minutes); `BTREE_BENCH_SECONDS=1` shortens each
//! point, `BTREE_BENCH_KEYS=N` changes the data size (default 1,000,000 keys on `mem`, a fifth
//! of it on `emu:ssd-a`). Results and their interpretation: docs/btree-format.md, "Results".

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use flashbuf::kv::{KvEngine, TreeId};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const PAGE: usize = 16 * 1024;
const VALUE: usize = 100;
const THREADS: [usize; 3] = [1, 2, 64];

fn seconds() -> f64 {
    std::env::var("BTREE_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0)
}

fn keys_wanted(default: u64) -> u64 {
    std::env::var("BTREE_BENCH_KEYS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Loaded keys are the even numbers below `2 * keys`; inserts use odd numbers.
fn key(n: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(b"userkey:");
    key[8..].copy_from_slice(&n.to_be_bytes());
    key
}

fn value(n: u64) -> Vec<u8> {
    vec![(n % 251) as u8; VALUE]
}

/// Runs `op` on `threads` threads for the configured time; returns operations per real second.
fn measure(threads: usize, op: &(dyn Fn(&mut SmallRng) + Sync)) -> f64 {
    let done = AtomicU64::new(0);
    let duration = Duration::from_secs_f64(seconds());
    let start = Instant::now();
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let done = &done;
            scope.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(thread as u64 * 7919 + 1);
                let mut count = 0u64;
                while start.elapsed() < duration {
                    for _ in 0..16 {
                        op(&mut rng);
                    }
                    count += 16;
                }
                done.fetch_add(count, Ordering::Relaxed);
            });
        }
    });
    done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}

struct Flashbuf {
    kv: KvStore,
    tree: TreeId,
    keys: u64,
    time_scale: f64,
}

fn open_flashbuf(device: &str, keys: u64, pool_pct: u64) -> Flashbuf {
    // Leaves at ~94% fill hold about 16 KiB * 0.94 / 126 bytes = 120 pairs.
    let data_pages = keys / 100 * 2 + 4096;
    let frames = ((keys / 120) * pool_pct / 100).max(64) as usize;
    let mut config = KvConfig::new(frames);
    config.database.wal = WalConfig {
        log_size: 512 << 20,
        page_size: 4096,
        buffer_size: 8 << 20,
        full_timeout: Duration::from_secs(30),
    };
    config.database.pool.verify_checksums = true;
    let (kv, _) = KvStore::open_specs(device, "mem", PAGE, data_pages, &config).unwrap();
    let tree = kv.open_tree("bench").unwrap();
    let start = Instant::now();
    let loaded = kv
        .bulk_load(
            tree,
            &mut (0..keys).map(|n| (key(2 * n).to_vec(), value(n))),
        )
        .unwrap();
    assert_eq!(loaded, keys);
    let time_scale = kv.trees().database().pool().device().info().time_scale;
    // Warm the pool (a scan reads every leaf once; a 10% pool keeps the last ones).
    kv.trees()
        .scan(
            tree,
            std::ops::Bound::Unbounded,
            flashbuf::kv::Direction::Forward,
            &mut |_, _| flashbuf::btree::Visit::Continue,
        )
        .unwrap();
    eprintln!(
        "  loaded {keys} keys into {device} in {:.1} s; pool {frames} frames ({pool_pct}% of the leaves)",
        start.elapsed().as_secs_f64()
    );
    Flashbuf {
        kv,
        tree,
        keys,
        time_scale,
    }
}

impl Flashbuf {
    fn lookup(&self, rng: &mut SmallRng) {
        let n = rng.gen_range(0..self.keys);
        let mut txn = self.kv.begin().unwrap();
        let found = txn.get(self.tree, &key(2 * n)).unwrap();
        assert!(found.is_some());
        txn.commit().unwrap();
    }

    fn insert(&self, rng: &mut SmallRng) {
        // Random odd keys between the loaded ones (new, or an update when drawn again).
        let n = rng.gen_range(0..self.keys);
        let mut txn = self.kv.begin().unwrap();
        txn.put(self.tree, &key(2 * n + 1), &value(n)).unwrap();
        txn.commit().unwrap();
    }
}

struct Redb {
    db: redb::Database,
    keys: u64,
}

const TABLE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("bench");

fn open_redb(keys: u64) -> Redb {
    let db = redb::Database::builder()
        .create_with_backend(redb::backends::InMemoryBackend::new())
        .unwrap();
    let start = Instant::now();
    let mut n = 0;
    while n < keys {
        let txn = db.begin_write().unwrap();
        {
            let mut table = txn.open_table(TABLE).unwrap();
            for i in n..(n + 100_000).min(keys) {
                table.insert(&key(2 * i)[..], &value(i)[..]).unwrap();
            }
        }
        txn.commit().unwrap();
        n += 100_000;
    }
    eprintln!(
        "  loaded {keys} keys into redb (in memory) in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    Redb { db, keys }
}

impl Redb {
    fn lookup(&self, rng: &mut SmallRng) {
        use redb::ReadableDatabase as _;
        let n = rng.gen_range(0..self.keys);
        let txn = self.db.begin_read().unwrap();
        let table = txn.open_table(TABLE).unwrap();
        assert!(table.get(&key(2 * n)[..]).unwrap().is_some());
    }

    fn insert(&self, rng: &mut SmallRng) {
        let n = rng.gen_range(0..self.keys);
        let txn = self.db.begin_write().unwrap();
        {
            let mut table = txn.open_table(TABLE).unwrap();
            table.insert(&key(2 * n + 1)[..], &value(n)[..]).unwrap();
        }
        txn.commit().unwrap();
    }
}

fn row(label: &str, threads: usize, lookups: f64, inserts: f64) {
    println!("| {label:<34} | {threads:>7} | {lookups:>12.0} | {inserts:>12.0} |");
}

fn flashbuf_rows(label: &str, bench: &Flashbuf) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for threads in THREADS {
        let lookups = measure(threads, &|rng| bench.lookup(rng)) * bench.time_scale;
        let inserts = measure(threads, &|rng| bench.insert(rng)) * bench.time_scale;
        row(label, threads, lookups, inserts);
        out.push((lookups, inserts));
    }
    let report = bench.kv.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    let stats = bench.kv.trees().database().pool().stats();
    eprintln!(
        "  pool: {} hits, {} misses ({:.1}% hit ratio)",
        stats.hits,
        stats.misses,
        100.0 * stats.hits as f64 / (stats.hits + stats.misses).max(1) as f64
    );
    out
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is understood.
    let keys = keys_wanted(1_000_000);
    // For a profiler: one operation kind, one thread, `mem` with a 10% pool
    // (`BTREE_BENCH_PROFILE=lookups` or `inserts`, e.g. under `perf record -g`).
    if let Ok(kind) = std::env::var("BTREE_BENCH_PROFILE") {
        let bench = open_flashbuf("mem", keys, 10);
        let rate = if kind == "inserts" {
            measure(1, &|rng| bench.insert(rng))
        } else {
            measure(1, &|rng| bench.lookup(rng))
        };
        println!("{kind}: {rate:.0}/s");
        return;
    }
    println!(
        "| {:<34} | {:>7} | {:>12} | {:>12} |",
        "engine, device, pool", "threads", "lookups/s", "inserts/s"
    );
    println!("|{:-<36}|{:-<9}|{:-<14}|{:-<14}|", "", "", "", "");
    let mem = open_flashbuf("mem", keys, 10);
    flashbuf_rows("flashbuf, mem, pool 10%", &mem);
    drop(mem);
    let emu = open_flashbuf("emu:ssd-a", keys / 5, 10);
    flashbuf_rows("flashbuf, emu:ssd-a (device time), 10%", &emu);
    drop(emu);
    let all = open_flashbuf("mem", keys, 110);
    let ours = flashbuf_rows("flashbuf, mem, pool 100%", &all);
    drop(all);
    let redb = open_redb(keys);
    let mut ratios = Vec::new();
    for (index, threads) in THREADS.into_iter().enumerate() {
        let lookups = measure(threads, &|rng| redb.lookup(rng));
        let inserts = measure(threads, &|rng| redb.insert(rng));
        row("redb 4.6, in memory", threads, lookups, inserts);
        ratios.push((threads, ours[index].0 / lookups, ours[index].1 / inserts));
    }
    println!();
    println!("| threads | lookups flashbuf/redb | inserts flashbuf/redb |");
    println!("|---------|-----------------------|-----------------------|");
    for (threads, lookups, inserts) in ratios {
        println!("| {threads:>7} | {lookups:>21.2} | {inserts:>21.2} |");
    }
}
