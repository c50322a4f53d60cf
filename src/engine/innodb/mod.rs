//! InnoDB's host-engine machinery (MySQL 5.7): the doublewrite buffer ([`doublewrite`]), and
//! MySQL 8.0's segmented doublewrite ([`doublewrite8`]) as an alternative. The
//! page cleaner is a write-back policy (`policy::writeback::innodb`); buffer pool instances are
//! part of the core.

pub mod doublewrite;
pub mod doublewrite8;
