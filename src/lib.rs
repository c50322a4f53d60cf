//! flashbuf: a database buffer manager for flash SSDs.
//!
//! It implements LRU-C (Lee, An, Lee, PVLDB 16(9), 2023) and, in the same framework, the schemes
//! it is measured against: the InnoDB-style baseline, CF-LRU, WAR, the fused RW command, ACE and
//! three flush-rate controllers. See `architecture.md` for the design space; each folder below
//! is one decision of that table.
//!
//! Layers, bottom up: [`device`] (real files, RAM, emulated flash SSD/HDD, fault injection),
//! [`core`] (frames, page table, latches, instances and lists: the pool, which knows no
//! policy), [`policy`] (one folder per design decision: replacement order, miss path,
//! write-back, flush rate), [`engine`] (compositions and presets, InnoDB's doublewrite),
//! [`pool`] (the public API), [`wal`] (redo log, checkpoints, recovery), [`db`] (transactions
//! and crash recovery), [`workload`] and [`bench`] (the tool).
//! Above the pool: [`btree`] (B+-trees over pool pages, mini-transactions) and [`txn`]
//! (transactions with key locks, the [`kv::KvEngine`] implementation).
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
pub mod sync;
pub mod txn;
pub mod wal;
pub mod workload;

pub use error::{DeviceError, Error, PageId, Result};
