//! Write-back (docs/architecture.md's third decision): what the background cleaner writes each
//! round, implementing [`crate::core::parts::Writeback`]. [`innodb::PageCleaner`] is InnoDB's page
//! cleaner, whose LRU part is InnoDB's tail flush or LRU-C's dirty-region flush (fixed or
//! dynamic batch) and whose amounts come from a flush-rate controller.

pub mod innodb;
pub mod pg;
