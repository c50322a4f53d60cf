//! The buffer pool (issue 3). Being written.

pub mod config;
pub mod stats;

pub use config::Scheme;
pub use stats::{MutexStats, PoolStats};
