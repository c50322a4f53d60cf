//! Read-ahead (docs/architecture.md's fifth decision; ACE section IV's prefetcher): which pages to
//! read with a missed one. Each part implements [`crate::core::parts::Prefetcher`]; the core
//! reads the pages it names with the demand read, in one submission, and puts them at the
//! order's eviction end (`Placement::Prefetched`), so a wrong guess is the first thing evicted.
//!
//! - [`sequential::Sequential`] (`seq`): a bounded stream table (TaP-style): after
//!   `prefetch_trigger` accesses in sequence, a miss reads the next `prefetch_pages` pages.
//! - [`history::History`] (`history`): per page up to three weighted successors learned from
//!   the access stream; a miss reads the successors whose weight reached a threshold.
//!
//! Both keep their state under one mutex of their own, taken on every access (hits included)
//! and never while the caller holds a list mutex of the pool; nothing is taken inside it.

pub mod history;
pub mod sequential;

pub use history::History;
pub use sequential::Sequential;
