//! Replacement order (architecture.md's first design decision). `lru` is InnoDB's LRU list with
//! midpoint insertion, used by every scheme in this crate so far.

pub mod lru;
