//! A cost driver for `valgrind --tool=callgrind`: bulk-loads a tree of `KEYS` keys (16-byte keys,
//! 100-byte values, 16 KiB pages) into a pool that holds all of it, then runs `LOOKUPS` random
//! point lookups (each one transaction: begin, get, commit) and `INSERTS` random inserts on
//! the calling thread. Instructions per lookup are the difference of two runs with different
//! `LOOKUPS`, divided by the difference (docs/performance.md, "The B+-tree search").
//!
//! Run: `cargo run --release --example lookup_cost -- KEYS LOOKUPS [INSERTS]`.

use std::time::Duration;

use flashbuf::kv::KvEngine;
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn key(n: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(b"userkey:");
    key[8..].copy_from_slice(&n.to_be_bytes());
    key
}

fn argument(position: usize, name: &str, default: Option<u64>) -> u64 {
    match std::env::args().nth(position) {
        Some(text) => text.parse().unwrap_or_else(|_| {
            eprintln!("lookup_cost: {name} must be a whole number, not {text:?}");
            std::process::exit(2);
        }),
        None => default.unwrap_or_else(|| {
            eprintln!("usage: lookup_cost KEYS LOOKUPS [INSERTS]");
            std::process::exit(2);
        }),
    }
}

fn main() -> flashbuf::error::Result<()> {
    let keys = argument(1, "KEYS", None).max(1);
    let lookups = argument(2, "LOOKUPS", None);
    let inserts = argument(3, "INSERTS", Some(0));
    let data_pages = keys / 100 * 2 + 4096;
    let mut config = KvConfig::new(usize::try_from(data_pages).unwrap_or(usize::MAX).max(64));
    config.database.wal = WalConfig {
        log_size: 512 << 20,
        page_size: 4096,
        buffer_size: 8 << 20,
        full_timeout: Duration::from_secs(30),
    };
    config.database.pool.verify_checksums = true;
    let (kv, _) = KvStore::open_specs("mem", "mem", 16384, data_pages, &config)?;
    let tree = kv.open_tree("bench")?;
    kv.bulk_load(
        tree,
        &mut (0..keys).map(|n| (key(2 * n).to_vec(), vec![(n % 251) as u8; 100])),
    )?;
    let mut rng = SmallRng::seed_from_u64(1);
    let mut found = 0u64;
    for _ in 0..lookups {
        let n = rng.gen_range(0..keys);
        let mut txn = kv.begin()?;
        if txn.get(tree, &key(2 * n))?.is_some() {
            found += 1;
        }
        txn.commit()?;
    }
    for _ in 0..inserts {
        let n = rng.gen_range(0..keys);
        let mut txn = kv.begin()?;
        txn.put(tree, &key(2 * n + 1), &[7u8; 100])?;
        txn.commit()?;
    }
    println!("{found} of {lookups} lookups found their key");
    kv.close()
}
