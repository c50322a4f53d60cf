//! Write-back (architecture.md's third design decision): who writes which dirty pages, how many
//! at once.
//!
//! - [`batch`]: the one write mechanism every path uses: latch, WAL rule, stamp, submit the
//!   whole batch at once (many I/Os in flight), mark clean.
//! - [`cleaner`]: the background thread: InnoDB's page cleaner (LRU tail flush + adaptive
//!   flush-list flushing) for the RAW family, LRU-C's flusher (fixed batch or dynamic batch of
//!   the whole dirty region) plus checkpoint flushing for the LRU-C family, and WAR's TWB writes.
//! - [`adaptive`]: InnoDB's adaptive flushing arithmetic.

pub mod adaptive;
pub mod batch;
pub mod cleaner;
