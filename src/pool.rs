//! The buffer pool's public API in one place: the pool and its guards (from `core`), the
//! configuration, presets and compositions (from `engine`). Library users and the rest of the
//! crate import from here.

pub use crate::core::frame;
pub use crate::core::stats;
pub use crate::core::{
    BufferPool, MutexStats, NullLog, PageReadGuard, PageWriteGuard, PoolStats, RedoLog,
    WaitHistogram,
};
pub use crate::engine::{
    Composition, FlushMethod, HostEngine, MissKind, OrderKind, PoolConfig, Scheme,
    TornPageProtection, WritebackKind,
};
pub use crate::policy::miss::FreeBlockLoop;
