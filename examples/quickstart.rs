//! The README's library example: one page updated in a transaction on a database whose data
//! and redo log are in memory, durable when the commit returns. The same code is the crate
//! docs' first example, which `cargo test` runs.
//!
//! `cargo run --release --example quickstart`

use flashbuf::datafile::DATA_START;
use flashbuf::db::{Database, DatabaseConfig};
use flashbuf::device::{SharedDevice, memory::MemoryDevice};
use flashbuf::page::PAGE_HEADER_SIZE;
use flashbuf::pool::{PoolConfig, Scheme};
use flashbuf::wal::WalConfig;
use std::sync::Arc;

fn main() -> flashbuf::Result<()> {
    const PAGE: usize = 4096;
    // The data device (header, doublewrite area, then 256 data pages) and the redo log's device;
    // `flashbuf::device::open` opens `file:PATH` and `emu:NAME` devices the same way.
    let data: SharedDevice = Arc::new(MemoryDevice::new(PAGE, DATA_START + 256)?);
    let log: SharedDevice = Arc::new(MemoryDevice::new(PAGE, 1024)?);
    let config = DatabaseConfig {
        pool: PoolConfig::for_scheme(Scheme::LruC, 64), // 64 frames managed by LRU-C
        wal: WalConfig {
            log_size: 4 << 20,
            page_size: PAGE,
            ..WalConfig::default()
        },
        ..DatabaseConfig::default() // commits sync the log (flush_log_at_trx_commit = 1)
    };
    let (db, _recovery) = Database::open(Arc::clone(&data), Arc::clone(&log), &config)?;
    let mut txn = db.begin();
    txn.lock(&[7])?; // page 7, exclusive until commit
    txn.update(7, PAGE_HEADER_SIZE, b"hello")?;
    txn.commit()?; // durable when it returns
    db.close()?; // writes every page back and takes a final checkpoint
    Ok(())
}
