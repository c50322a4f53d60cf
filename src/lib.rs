//! flashbuf: a database buffer manager for flash SSDs.
//!
//! It implements LRU-C (Lee, An, Lee, PVLDB 16(9), 2023) and, in the same framework, the schemes
//! it is measured against: the InnoDB-style baseline (tuned and with InnoDB's defaults), the
//! InnoDB-emulated CF-LRU, WAR, the fused RW command, PostgreSQL's Clock Sweep, LRU, CFLRU and
//! LRU-WSR with backend writes and the bgwriter, and ACE over each of them; with three flush-rate
//! controllers (MySQL's fixed, Percona's, self-tuning) and two prefetchers (`seq`, `history`) as
//! composition parts (`flashbuf schemes` lists the presets and the parts they are composed of). See
//! `docs/architecture.md` for the design space.
//!
//! Layers, bottom up: [`device`] (real files, RAM, emulated flash SSD/HDD/cloud volume, fault
//! injection, the probe), [`core`] (frames, page table, latches, instances and lists: the pool,
//! which knows no policy), [`policy`] (the policy parts), [`engine`] (compositions and presets,
//! the pool configuration, InnoDB's doublewrite, PostgreSQL's bgwriter), [`pool`] (the public
//! API of the pool), [`wal`] (redo log and checkpoints), [`datafile`] (the data-file layout),
//! [`db`] (transactions and crash recovery), [`workload`] and [`mod@bench`] (the `flashbuf` tool).
//! Above the pool: [`btree`] (B+-trees over pool pages, mini-transactions) and [`txn`]
//! (transactions with key locks, the [`kv::KvEngine`] implementation).
//!
//! **Closing.** [`db::Database::close`], [`txn::KvStore::close`] and
//! [`pool::BufferPool::close`] stop the background threads, write every dirty page back and
//! return the first error. Dropping one without `close()` does the same but can only print the
//! error to stderr; `abandon()` stops without writing anything (what a crash leaves).
//!
//! # Example: pages and transactions on two devices
//!
//! ```
//! use std::sync::Arc;
//! use flashbuf::datafile::DATA_START;
//! use flashbuf::db::{Database, DatabaseConfig};
//! use flashbuf::device::{SharedDevice, memory::MemoryDevice};
//! use flashbuf::page::PAGE_HEADER_SIZE;
//! use flashbuf::pool::{PoolConfig, Scheme};
//! use flashbuf::wal::WalConfig;
//!
//! # fn main() -> flashbuf::Result<()> {
//! const PAGE: usize = 4096;
//! // The data device (header, doublewrite area, then 256 data pages) and the redo log's device;
//! // `flashbuf::device::open` opens `file:PATH` and `emu:NAME` devices the same way.
//! let data: SharedDevice = Arc::new(MemoryDevice::new(PAGE, DATA_START + 256)?);
//! let log: SharedDevice = Arc::new(MemoryDevice::new(PAGE, 1024)?);
//! let config = DatabaseConfig {
//!     pool: PoolConfig::for_scheme(Scheme::LruC, 64), // 64 frames managed by LRU-C
//!     wal: WalConfig { log_size: 4 << 20, page_size: PAGE, ..WalConfig::default() },
//!     ..DatabaseConfig::default() // commits sync the log (flush_log_at_trx_commit = 1)
//! };
//! let (db, _recovery) = Database::open(Arc::clone(&data), Arc::clone(&log), &config)?;
//! let mut txn = db.begin();
//! txn.lock(&[7])?; // page 7, exclusive until commit
//! txn.update(7, PAGE_HEADER_SIZE, b"hello")?;
//! txn.commit()?; // durable when it returns
//! db.close()?; // writes every page back and takes a final checkpoint
//!
//! let (db, recovery) = Database::open(data, log, &config)?;
//! assert_eq!(recovery.redo_applied, 0); // closed cleanly: nothing to replay
//! let mut txn = db.begin();
//! txn.lock(&[7])?;
//! assert_eq!(&txn.page(7)?[PAGE_HEADER_SIZE..PAGE_HEADER_SIZE + 5], b"hello");
//! txn.commit()?;
//! db.close()?;
//! # Ok(())
//! # }
//! ```
//!
//! # Example: a transactional key-value store in a file
//!
//! ```
//! use flashbuf::kv::{Direction, KvEngine, FULL_RANGE};
//! use flashbuf::txn::{KvConfig, KvStore};
//!
//! # fn main() -> flashbuf::Result<()> {
//! # let dir = tempfile::tempdir_in("target").map_err(|e| flashbuf::Error::io("temp dir", e))?;
//! let path = dir.path().join("shop.db"); // the data file; the log goes to shop.db.log
//! let mut config = KvConfig::new(256); // 256 buffer-pool frames (LRU-C)
//! config.database.wal.log_size = 4 << 20; // a 4 MiB redo log
//! let data = format!("file:{}", path.display());
//! let log = format!("file:{}.log", path.display());
//! // 16 KiB pages, 1024 of them; opening recovers after a crash, creating formats a new file.
//! let (store, _recovery) = KvStore::open_specs(&data, &log, 16 * 1024, 1024, &config)?;
//! let orders = store.open_tree("orders")?;
//!
//! let mut txn = store.begin()?;
//! txn.put(orders, b"order-0001", b"3 apples")?;
//! txn.put(orders, b"order-0002", b"1 pear")?;
//! txn.commit()?; // durable when it returns
//!
//! let mut txn = store.begin()?;
//! let mut newest = Vec::new();
//! txn.scan(orders, FULL_RANGE, Direction::Backward, 1, &mut |key, _value| {
//!     newest = key.to_vec();
//!     true
//! })?;
//! txn.commit()?;
//! assert_eq!(newest, b"order-0002");
//!
//! // The same as a closure: `transact` keeps the transaction off the heap, commits on
//! // `TxnEnd::Commit`, and rolls back on `TxnEnd::Rollback` or when the closure fails.
//! store.transact(&mut |txn| {
//!     txn.put(orders, b"order-0003", b"2 plums")?;
//!     Ok(flashbuf::kv::TxnEnd::Commit)
//! })?;
//!
//! store.close()?; // flushes every page and writes a final checkpoint: no recovery needed
//! # Ok(())
//! # }
//! ```

#![deny(clippy::all, clippy::pedantic)]
#![deny(clippy::unwrap_used, clippy::expect_used)]
#![warn(missing_docs)]
#![allow(
    clippy::module_name_repetitions,
    clippy::missing_panics_doc,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::must_use_candidate,
    clippy::similar_names,
    clippy::doc_markdown
)]

pub mod bench;
pub mod btree;
pub mod cli;
pub mod core;
pub mod datafile;
pub mod db;
pub mod device;
pub mod engine;
pub mod error;
pub mod kv;
pub mod page;
pub mod policy;
pub mod pool;
pub mod reproduce;
mod spare;
pub mod sweep;
pub mod sync;
pub mod txn;
pub mod wal;
pub mod workload;

pub use error::{DeviceError, Error, PageId, Result};

/// The source this flashbuf was built from: the git commit (12 hex digits), with `-dirty` when
/// tracked files differed from it at build time, or `unknown` outside a git checkout. Every
/// results file records it beside [`VERSION`] (`flashbuf_build`).
pub const BUILD: &str = env!("FLASHBUF_BUILD");

/// The crate's version (`CARGO_PKG_VERSION`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The version and the build, as `flashbuf --version` prints them: `0.1.0 (git 0123456789ab)`.
pub const VERSION_AND_BUILD: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (git ",
    env!("FLASHBUF_BUILD"),
    ")"
);
