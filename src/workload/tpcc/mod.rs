//! TPC-C (specification revision 5.11) on the transactional key-value interface.
//!
//! - [`schema`]: the nine tables, their primary keys, the customer-by-last-name index and
//!   the orders-by-customer index, as trees of big-endian keys and binary rows.
//! - [`load`](mod@load): the population of clause 4.3.3.1 (cardinalities and value
//!   distributions per warehouse), through `bulk_load`.
//! - [`txn`]: the five transactions of clauses 2.4-2.8 with their input generation.
//! - [`mix`]: the transaction mix, its parser and the read/write-ratio presets.
//! - [`check`]: consistency conditions 1-4 (clause 3.3.2).
//! - [`random`]: NURand, the C constants and the random strings.
//!
//! As in the papers' driver (tpcc-mysql): no keying or think time; each transaction draws its
//! home warehouse uniformly from 1..W unless [`TpccConfig::bind_warehouse`] binds client `t`
//! to warehouse `t mod W + 1` (and its Stock-Level district to `(t / W) mod 10 + 1`), as the
//! specification's terminals are; Delivery runs inline over the ten districts in one
//! transaction; conflicts are retried up to [`TpccConfig::max_attempts`] and counted.
//!
//! [`TpccScale`] can shrink ITEM and CUSTOMER for tests; anything but [`TpccScale::SPEC`] is
//! not the specification and is labelled so.
//!
//! Shared state between clients: the skipped-delivery counter (atomic). No locks.

pub mod check;
pub mod load;
pub mod mix;
pub mod random;
pub mod schema;
pub mod txn;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use check::check_consistency;
pub use mix::TpccMix;

use crate::error::{Error, Result};
use crate::kv::KvEngine;
use crate::workload::record::{
    CheckReport, LoadProgress, LoadReport, RecordWorker, RecordWorkload,
};

/// The five transaction types, in the order of [`TXN_TYPE_NAMES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxnType {
    /// New-Order (2.4): read-write, 10 items on average.
    NewOrder = 0,
    /// Payment (2.5): read-write.
    Payment = 1,
    /// Order-Status (2.6): read-only.
    OrderStatus = 2,
    /// Delivery (2.7): read-write, ten districts.
    Delivery = 3,
    /// Stock-Level (2.8): read-only, about 200 stock rows.
    StockLevel = 4,
}

impl TxnType {
    /// Every type, in index order.
    pub const ALL: [TxnType; 5] = [
        TxnType::NewOrder,
        TxnType::Payment,
        TxnType::OrderStatus,
        TxnType::Delivery,
        TxnType::StockLevel,
    ];

    /// The type's name as reported.
    #[must_use]
    pub fn name(self) -> &'static str {
        TXN_TYPE_NAMES[self as usize]
    }
}

/// Names of the transaction types, indexed by [`TxnType`] (and by `TxnOutcome::txn_type`).
pub const TXN_TYPE_NAMES: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// Table sizes that depend on the scale (everything else is fixed by the specification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TpccScale {
    /// ITEM rows, and STOCK rows per warehouse (specification: 100,000).
    pub items: u32,
    /// CUSTOMER rows per district, also ORDER rows per district and HISTORY rows per district
    /// (specification: 3,000).
    pub customers_per_district: u32,
}

impl TpccScale {
    /// The specification's cardinalities.
    pub const SPEC: TpccScale = TpccScale {
        items: 100_000,
        customers_per_district: 3_000,
    };

    /// A reduced scale for tests (NOT the specification): `items` in 100..=100,000,
    /// `customers_per_district` a multiple of 10 in 30..=3,000.
    ///
    /// # Errors
    /// [`Error::Config`] outside those ranges.
    pub fn reduced(items: u32, customers_per_district: u32) -> Result<TpccScale> {
        let scale = TpccScale {
            items,
            customers_per_district,
        };
        scale.validate()?;
        Ok(scale)
    }

    /// Checks the ranges of [`TpccScale::reduced`].
    ///
    /// # Errors
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        if !(100..=100_000).contains(&self.items) {
            return Err(Error::Config(format!(
                "TPC-C items {} outside 100..=100000",
                self.items
            )));
        }
        let c = self.customers_per_district;
        if !(30..=3000).contains(&c) || !c.is_multiple_of(10) {
            return Err(Error::Config(format!(
                "TPC-C customers per district {c}: want a multiple of 10 in 30..=3000"
            )));
        }
        Ok(())
    }

    /// Whether this is the specification's scale.
    #[must_use]
    pub fn is_spec(&self) -> bool {
        *self == TpccScale::SPEC
    }

    /// ORDER rows per district at load (= customers: each customer has one order).
    #[must_use]
    pub fn orders_per_district(&self) -> u32 {
        self.customers_per_district
    }

    /// NEW-ORDER rows per district at load (900 of 3,000: the newest 30%).
    #[must_use]
    pub fn new_orders_per_district(&self) -> u32 {
        self.customers_per_district * 3 / 10
    }

    /// The first undelivered order at load (2,101 at specification scale).
    #[must_use]
    pub fn first_undelivered_order(&self) -> u32 {
        self.orders_per_district() - self.new_orders_per_district() + 1
    }

    /// Distinct C_LAST numbers (1,000 at specification scale: customers / 3).
    #[must_use]
    pub fn last_names(&self) -> u32 {
        self.customers_per_district / 3
    }
}

/// Everything a TPC-C run is configured with.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TpccConfig {
    /// W, the number of warehouses (1..=65,535).
    pub warehouses: u16,
    /// The transaction mix.
    pub mix: TpccMix,
    /// Bind client `t` to warehouse `t mod W + 1` instead of drawing one per transaction.
    pub bind_warehouse: bool,
    /// Table sizes ([`TpccScale::SPEC`] unless testing).
    pub scale: TpccScale,
    /// Seed of the load and of the clients' random streams.
    pub seed: u64,
    /// Attempts per transaction before a conflict is returned as an error.
    pub max_attempts: usize,
}

impl TpccConfig {
    /// The specification's defaults for `warehouses` warehouses: standard mix, unbound
    /// clients, full scale.
    #[must_use]
    pub fn new(warehouses: u16) -> TpccConfig {
        TpccConfig {
            warehouses,
            mix: TpccMix::standard(),
            bind_warehouse: false,
            scale: TpccScale::SPEC,
            seed: 0x7c_c5_11,
            max_attempts: 100,
        }
    }

    /// Checks the configuration.
    ///
    /// # Errors
    /// [`Error::Config`] naming the bad field.
    pub fn validate(&self) -> Result<()> {
        if self.warehouses == 0 {
            return Err(Error::Config("TPC-C needs at least one warehouse".into()));
        }
        if self.max_attempts == 0 {
            return Err(Error::Config("max_attempts must be at least 1".into()));
        }
        self.scale.validate()
    }
}

/// State the clients share.
#[derive(Debug)]
struct Shared {
    config: TpccConfig,
    /// Distinguishes this run's HISTORY keys from the load's (0) and other runs'.
    session: u64,
    /// Districts Delivery found without a NEW-ORDER row (clause 2.7.4.2 asks to report them).
    skipped_deliveries: AtomicU64,
}

/// The TPC-C workload.
#[derive(Debug, Clone)]
pub struct Tpcc {
    shared: Arc<Shared>,
}

impl Tpcc {
    /// A workload with `config`.
    ///
    /// # Errors
    /// An invalid configuration.
    pub fn new(config: TpccConfig) -> Result<Tpcc> {
        config.validate()?;
        let session = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_micros() as u64)
            .max(1);
        Ok(Tpcc {
            shared: Arc::new(Shared {
                config,
                session,
                skipped_deliveries: AtomicU64::new(0),
            }),
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &TpccConfig {
        &self.shared.config
    }

    /// Districts Delivery skipped so far because they had no undelivered order.
    #[must_use]
    pub fn skipped_deliveries(&self) -> u64 {
        self.shared.skipped_deliveries.load(Ordering::Relaxed)
    }
}

impl RecordWorkload for Tpcc {
    fn name(&self) -> &'static str {
        "tpcc"
    }

    fn txn_types(&self) -> &[&'static str] {
        &TXN_TYPE_NAMES
    }

    fn load(
        &self,
        engine: &dyn KvEngine,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<LoadReport> {
        load::load(&self.shared.config, engine, progress)
    }

    fn worker(&self, thread: usize) -> Box<dyn RecordWorker> {
        Box::new(txn::TpccWorker::new(Arc::clone(&self.shared), thread))
    }

    fn check(&self, engine: &dyn KvEngine) -> Result<CheckReport> {
        check_consistency(engine)
    }
}

/// Microseconds since the epoch (dates in rows).
fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}
