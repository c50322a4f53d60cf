//! The shuttle models, linked as one test binary (`--features shuttle` only: without it the
//! binary is empty). `pool`: the pool's real code under random schedules; `pin`: the hit
//! path's pin/claim protocol; `lock`: the record lock manager. One binary lets the harness
//! keep both cores busy across the three instead of running them one after another.
//!
//! Run: `cargo test --release --features shuttle --test shuttle` (one model: add its module as
//! a filter, e.g. `pin::`).

#![cfg(feature = "shuttle")]

mod lock;
mod pin;
mod pool;
