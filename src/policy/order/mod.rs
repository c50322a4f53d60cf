//! Replacement orders (docs/architecture.md's first decision), implementing
//! [`crate::core::order::ReplacementOrder`]: the LRU family on the core's intrusive list
//! ([`lru_family`]: InnoDB's midpoint LRU, LRU, CFLRU, LRU-WSR) and PostgreSQL's Clock Sweep
//! ([`clock`]).

pub mod clock;
pub mod lru_family;

pub use clock::ClockSweep;
pub use lru_family::{Cflru, Lru, LruWsr, MidpointLru};
