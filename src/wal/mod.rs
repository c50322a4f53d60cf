//! Write-ahead redo log, checkpoints and recovery (issue 5).
//!
//! - [`record`]: typed log records and their CRC32C framing.
//! - [`layout`]: configuration, LSN arithmetic, log page headers, checkpoint slots.
//! - [`log`]: the writer: concurrent append, group commit, checkpoints, poisoning, open.
//! - [`reader`]: recovery scan from the newest checkpoint to the end of the valid log.
//! - [`probe`]: a log's own settings and whether it holds changes to recover, read without
//!   writing (what `flashbuf check` needs whatever settings the log was made with).
//! - [`margins`]: InnoDB's log margins (docs/algorithms.md section 1) for the buffer pool.
//!
//! LSNs are byte positions in the infinite log stream, log page headers included; the LSN of
//! an append is the position just past its last record. The byte-level format is drawn in
//! `docs/wal-format.md`. Not here (the lead's, on top of this API): the transaction layer and
//! applying `PageRedo`/`FullPageImage` records to data pages during recovery.

pub(crate) mod crc;
pub mod layout;
pub mod log;
pub mod margins;
pub mod probe;
pub mod reader;
pub mod record;

pub use layout::{CheckpointSlot, Geometry, WalConfig};
pub use log::{LsnRange, Wal, WalStats};
pub use margins::{AgeState, AgeZone, LogMargins};
pub use reader::{LogDeviceContent, RecoveredRecord, Recovery, StopReason, inspect};
pub use record::{EncodedBatch, LogRecord, OpaqueKind, TxnId};
