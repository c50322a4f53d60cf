//! YCSB (placeholder while building).
