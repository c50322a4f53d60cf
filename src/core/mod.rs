//! The buffer pool core (docs/architecture.md): frames, the page table, page latches and pins, pool
//! instances with their lists, the hit and miss flow, the write mechanism and the counters.
//!
//! The core calls each design-space decision through a small interface and knows none of the
//! implementations (which live in `crate::policy`; `crate::engine` composes them):
//! [`order::ReplacementOrder`], [`parts::MissPath`], [`parts::Writeback`],
//! [`parts::Prefetcher`] and [`write_path::WritePath`].
//!
//! Files: `pool.rs` (the [`pool::Core`] and the public [`pool::BufferPool`]), `instance.rs`,
//! `frame.rs`, `arena.rs` (the frames' page memory), `page_table.rs`, `lru_list.rs` (the intrusive list the LRU orders and the side
//! list use), `flush_list.rs`, `guard.rs`, `io.rs` (writes, flush-all, recoverability writes),
//! `redo.rs` (what the pool needs from the log), `stats.rs`, `invariants.rs`.

pub mod arena;
pub mod flush_list;
pub mod frame;
mod guard;
mod host_cpu;
pub mod instance;
pub(crate) mod invariants;
mod io;
pub mod lru_batch;
pub mod lru_list;
pub mod optimistic;
pub mod order;
pub mod page_table;
pub mod parts;
pub mod pool;
pub mod redo;
pub mod stats;
pub mod tail_profile;
pub mod write_path;

pub use guard::{PageReadGuard, PageWriteGuard};
pub use optimistic::{OptimisticRead, PageView};
pub use pool::{BufferPool, Core, CoreConfig, LatchMode, Parts, Scanner};
pub use redo::{NullLog, RedoLog};
pub use stats::{MutexStats, PoolStats, WaitHistogram};
