//! LinkBench (placeholder while building).
