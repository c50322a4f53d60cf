//! The shuttle models, linked as one test binary (`--features shuttle` only: without it the
//! binary is empty). `pool`: the pool's real code under random schedules; `pin`: the hit
//! path's pin/claim protocol; `lock`: the record lock manager; `committed_read`: the auto-commit
//! read's probe under the leaf latch; `doublewrite`: the doublewrite areas after a failed sync.
//! One binary lets the harness keep both cores busy across them instead of running them one
//! after another.
//!
//! Run: `cargo test --release --features shuttle --test shuttle` (one model: add its module as
//! a filter, e.g. `pin::`).

#![cfg(feature = "shuttle")]

mod committed_read;
mod doublewrite;
mod lock;
mod pin;
mod pool;
