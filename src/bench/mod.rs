//! The benchmark harness (issue 3). Being written.
