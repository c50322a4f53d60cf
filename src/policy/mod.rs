//! The design-space decisions of docs/architecture.md's table, one folder each; every part
//! implements an interface of `crate::core` and depends on the core only (never the reverse).
//!
//! | decision | folder | parts |
//! |---|---|---|
//! | replacement order | [`order`] | midpoint LRU (InnoDB), LRU, Clock Sweep, CFLRU, LRU-WSR |
//! | miss path | [`miss`] | RAW, LRU-C pointer, WAR, RW, PostgreSQL backend write, ACE |
//! | write-back | [`writeback`] | InnoDB page cleaner (LRU tail or LRU-C dirty region) |
//! | flush-rate control | [`flushrate`] | MySQL fixed, Percona 5.6, self-tuning |
//! | read-ahead | [`prefetch`] | sequential (stream table), history-based |
//!
//! The list-concurrency decision (one LRU mutex or LRU-M / LRU-D) is a flag of the LRU-C miss
//! path. Compositions are built in `crate::engine::compose`.

pub mod flushrate;
pub mod miss;
pub mod order;
pub mod prefetch;
pub mod writeback;
