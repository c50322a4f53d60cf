//! flashbuf: a database buffer manager for flash SSDs.
//!
//! It implements LRU-C (Lee, An, Lee, PVLDB 16(9), 2023) and, in the same framework, the schemes
//! it is measured against: the InnoDB-style baseline, CF-LRU, WAR, the fused RW command, ACE and
//! three flush-rate controllers. See `architecture.md` for the design space; each folder below
//! is one decision of that table.
//!
//! Layers, bottom up: [`device`] (real files, RAM, emulated flash SSD/HDD, fault injection),
//! [`pool`] (frames, page table, latches, lists, miss path, write-back), [`wal`] (redo log,
//! checkpoints, recovery), [`workload`] and [`bench`] (the tool).

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
pub mod db;
pub mod device;
pub mod error;
pub mod kv;
pub mod miss;
pub mod page;
pub mod pool;
pub mod replacement;
pub mod txn;
pub mod wal;
pub mod workload;
pub mod writeback;

pub use error::{DeviceError, Error, PageId, Result};
