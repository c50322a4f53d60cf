//! Fault-injecting device wrapper. Being written: see issue 2.
