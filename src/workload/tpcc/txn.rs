//! The five TPC-C transactions (specification 5.11, clauses 2.4-2.8) and their inputs.
//!
//! A [`TpccWorker`] draws a type from the mix, generates its input outside the transaction
//! (so a retry after a conflict replays the same input), and runs the body with
//! [`run_txn`]. Input rules:
//! - home warehouse: uniform in 1..W per transaction, or the client's bound warehouse;
//! - New-Order (2.4.1): D_ID uniform [1..10], C_ID = NURand(1023, 1, 3000), 5-15 lines,
//!   OL_I_ID = NURand(8191, 1, 100000), quantity [1..10], each line's supplier a remote
//!   warehouse with probability 1% (when W > 1), and in 1% of the transactions the last
//!   line's item is unused (100,001), so the transaction rolls back by design;
//! - Payment (2.5.1): D_ID uniform, 85% home customer, 15% a remote warehouse's (random
//!   district), 60% of customers selected by last name NURand(255, 0, 999), amount
//!   [1.00..5,000.00];
//! - Order-Status (2.6.1): D_ID uniform, 60% by last name;
//! - Delivery (2.7.1): O_CARRIER_ID uniform [1..10], all ten districts in one transaction;
//! - Stock-Level (2.8.1): threshold uniform [10..20]; D_ID uniform, or fixed per bound
//!   client.
//!
//! A customer selected by last name is the one at position ceil(n/2) of the n customers
//! with that name sorted by C_FIRST (2.5.2.2). The C constants come from [`NurandConstants`]
//! chosen per seed against the load's C_LAST constant (read from `tpcc.meta` on the first
//! call), so every client of one run uses the same C values.
//!
//! Loops are bounded by the rows they read: at most 15 order lines per order, 300 order
//! lines for Stock-Level, `customers_per_district` name-index entries.
//!
//! Rows are decoded borrowed from the values the engine returns and written through the
//! client's reused buffers (`Scratch`); scans visit rows in place. Owned data is built only
//! for the columns a transaction writes from scratch (C_DATA, H_DATA).

use std::io::Write as _;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rand::Rng;
use rand::rngs::SmallRng;

use super::random::{A_C_ID, A_C_LAST, A_OL_I_ID, LastName, NurandConstants, last_name_of, nurand};
use super::random::{has_original, other_warehouse};
use super::schema::{
    Customer, DISTRICTS_PER_WAREHOUSE, District, History, Item, META_KEY, Meta, Order, OrderLine,
    Stock, StoredOrderLine, Trees, Warehouse, customer_id_of_name_key, customer_key,
    customer_name_prefix, district_key, history_key, item_key, order_customer_key,
    order_customer_prefix, order_id_of_customer_key, order_id_of_key, order_key, order_line_key,
    stock_key, warehouse_key,
};
use super::{Shared, TxnType, now_micros};
use crate::error::{Error, Result};
use crate::kv::{Direction, KvEngine, KvTxn, TreeId};
use crate::workload::record::{RecordWorker, TxnEnd, TxnOutcome, run_txn, seeded_rng};

/// Most order lines an order has.
const ORDER_LINES_MAX: usize = 15;
/// Orders Stock-Level examines.
const STOCK_LEVEL_ORDERS: u32 = 20;
/// Label of the run-constant stream (shared by every client of a seed).
const RUN_CONSTANTS_STREAM: u64 = 0xc0;
/// Label of the client streams.
const CLIENT_STREAM: u64 = 0xc1;
/// C_DATA's maximum length.
const CUSTOMER_DATA_MAX: usize = 500;

/// How a transaction picks its customer.
#[derive(Debug, Clone)]
enum CustomerSelector {
    ById(u32),
    ByLastName(LastName),
}

#[derive(Debug, Clone, Copy, Default)]
struct LineInput {
    item: u32,
    supply_warehouse: u16,
    quantity: u8,
}

/// A New-Order's input, its lines inline (no allocation per transaction).
#[derive(Debug, Clone)]
struct NewOrderInput {
    warehouse: u16,
    district: u8,
    customer: u32,
    lines: [LineInput; ORDER_LINES_MAX],
    line_count: usize,
}

impl NewOrderInput {
    fn lines(&self) -> &[LineInput] {
        &self.lines[..self.line_count]
    }
}

#[derive(Debug, Clone)]
struct PaymentInput {
    warehouse: u16,
    district: u8,
    customer_warehouse: u16,
    customer_district: u8,
    customer: CustomerSelector,
    amount_cents: i64,
}

/// Buffers a client reuses across its transactions, so that the steady state allocates
/// nothing for row values it writes or rows it collects (each grows to its largest use once).
#[derive(Debug, Default)]
struct Scratch {
    /// The encoded row of the next `put`.
    row: Vec<u8>,
    /// C_DATA rebuilt by a Payment to a bad-credit customer.
    customer_data: Vec<u8>,
    /// H_DATA of a Payment.
    history_data: Vec<u8>,
    /// C_IDs of the customers with the selected last name, by C_FIRST.
    customer_ids: Vec<u32>,
    /// The lines of the order a Delivery delivers: (OL_NUMBER, row).
    order_lines: Vec<(u8, StoredOrderLine)>,
    /// The items Stock-Level examines.
    items: Vec<u32>,
    /// The stored values of the rows a transaction reads (`KvTxn::get_into`), one buffer per
    /// row it keeps decoded at the same time.
    values: RowValues,
}

/// The stored values a transaction reads rows into (see [`Scratch`]).
#[derive(Debug, Default)]
struct RowValues {
    warehouse: Vec<u8>,
    district: Vec<u8>,
    customer: Vec<u8>,
    order: Vec<u8>,
    item: Vec<u8>,
    stock: Vec<u8>,
}

/// What the first call learns about the database.
#[derive(Debug, Clone, Copy)]
struct RunState {
    trees: Trees,
    meta: Meta,
    constants: NurandConstants,
}

/// One TPC-C client (see the module docs).
pub struct TpccWorker {
    shared: Arc<Shared>,
    thread: usize,
    rng: SmallRng,
    history_sequence: u64,
    run: Option<RunState>,
    /// The type the last `run_one` drew (for abort attribution).
    last_type: Option<usize>,
    scratch: Scratch,
}

impl TpccWorker {
    pub(super) fn new(shared: Arc<Shared>, thread: usize) -> TpccWorker {
        let rng = seeded_rng(shared.config.seed, &[CLIENT_STREAM, thread as u64]);
        TpccWorker {
            shared,
            thread,
            rng,
            history_sequence: 0,
            run: None,
            last_type: None,
            scratch: Scratch::default(),
        }
    }

    /// Reads `tpcc.meta`, checks it against the configuration, derives the C constants.
    fn prepare(&mut self, engine: &dyn KvEngine) -> Result<RunState> {
        if let Some(run) = self.run {
            return Ok(run);
        }
        let trees = Trees::open(engine)?;
        let meta = read_meta(engine, &trees)?;
        let config = &self.shared.config;
        if meta.warehouses != config.warehouses
            || meta.items != config.scale.items
            || meta.customers_per_district != config.scale.customers_per_district
        {
            return Err(Error::Config(format!(
                "the TPC-C database holds {} warehouses, {} items, {} customers per district; \
                 the configuration says {}, {}, {}",
                meta.warehouses,
                meta.items,
                meta.customers_per_district,
                config.warehouses,
                config.scale.items,
                config.scale.customers_per_district
            )));
        }
        let mut constants_rng = seeded_rng(config.seed, &[RUN_CONSTANTS_STREAM]);
        let constants = NurandConstants::for_run(&mut constants_rng, meta.c_last_load)?;
        let run = RunState {
            trees,
            meta,
            constants,
        };
        self.run = Some(run);
        Ok(run)
    }

    fn home_warehouse(&mut self, meta: &Meta) -> u16 {
        if self.shared.config.bind_warehouse {
            (self.thread % usize::from(meta.warehouses)) as u16 + 1
        } else {
            self.rng.gen_range(1..=meta.warehouses)
        }
    }

    fn customer_selector(&mut self, run: &RunState) -> CustomerSelector {
        if self.rng.gen_range(1..=100) <= 60 {
            let names = run.meta.customers_per_district / 3;
            let number = nurand(&mut self.rng, A_C_LAST, run.constants.c_last, 0, names - 1);
            CustomerSelector::ByLastName(last_name_of(number))
        } else {
            CustomerSelector::ById(self.customer_id(run))
        }
    }

    fn customer_id(&mut self, run: &RunState) -> u32 {
        let customers = run.meta.customers_per_district;
        nurand(&mut self.rng, A_C_ID, run.constants.c_id, 1, customers)
    }

    fn new_order_input(&mut self, run: &RunState) -> NewOrderInput {
        let warehouse = self.home_warehouse(&run.meta);
        let district = self.rng.gen_range(1..=DISTRICTS_PER_WAREHOUSE);
        let customer = self.customer_id(run);
        let line_count = self.rng.gen_range(5..=ORDER_LINES_MAX);
        let rollback = self.rng.gen_range(1..=100) == 1;
        let items = run.meta.items;
        let mut lines = [LineInput::default(); ORDER_LINES_MAX];
        let generated = (0..line_count).map(|n| {
            let item = if rollback && n == line_count - 1 {
                items + 1
            } else {
                nurand(&mut self.rng, A_OL_I_ID, run.constants.ol_i_id, 1, items)
            };
            let remote = self.rng.gen_range(1..=100) == 1;
            let supply_warehouse = if remote {
                other_warehouse(&mut self.rng, warehouse, run.meta.warehouses)
            } else {
                warehouse
            };
            LineInput {
                item,
                supply_warehouse,
                quantity: self.rng.gen_range(1..=10),
            }
        });
        for (slot, line) in lines.iter_mut().zip(generated) {
            *slot = line;
        }
        NewOrderInput {
            warehouse,
            district,
            customer,
            lines,
            line_count,
        }
    }

    fn payment_input(&mut self, run: &RunState) -> PaymentInput {
        let warehouse = self.home_warehouse(&run.meta);
        let district = self.rng.gen_range(1..=DISTRICTS_PER_WAREHOUSE);
        let local = self.rng.gen_range(1..=100) <= 85;
        let (customer_warehouse, customer_district) = if local {
            (warehouse, district)
        } else {
            (
                other_warehouse(&mut self.rng, warehouse, run.meta.warehouses),
                self.rng.gen_range(1..=DISTRICTS_PER_WAREHOUSE),
            )
        };
        PaymentInput {
            warehouse,
            district,
            customer_warehouse,
            customer_district,
            customer: self.customer_selector(run),
            amount_cents: self.rng.gen_range(100..=500_000),
        }
    }

    fn stock_level_district(&mut self, meta: &Meta) -> u8 {
        if self.shared.config.bind_warehouse {
            let per_warehouse = self.thread / usize::from(meta.warehouses);
            (per_warehouse % usize::from(DISTRICTS_PER_WAREHOUSE)) as u8 + 1
        } else {
            self.rng.gen_range(1..=DISTRICTS_PER_WAREHOUSE)
        }
    }

    fn run_new_order(&mut self, engine: &dyn KvEngine, run: &RunState) -> Result<(TxnEnd, usize)> {
        let input = self.new_order_input(run);
        let attempts = self.shared.config.max_attempts;
        let scratch = &mut self.scratch;
        let ((), end, retries) = run_txn(engine, attempts, |txn| {
            new_order(txn, &run.trees, &input, now_micros(), scratch).map(|end| ((), end))
        })?;
        Ok((end, retries))
    }

    fn run_payment(&mut self, engine: &dyn KvEngine, run: &RunState) -> Result<usize> {
        let input = self.payment_input(run);
        let history = history_key(
            input.warehouse,
            input.district,
            self.shared.session,
            self.thread as u32,
            self.history_sequence,
        );
        let attempts = self.shared.config.max_attempts;
        let customers = run.meta.customers_per_district;
        let scratch = &mut self.scratch;
        let ((), _, retries) = run_txn(engine, attempts, |txn| {
            payment(txn, &run.trees, &input, (&history, customers), scratch)
                .map(|()| ((), TxnEnd::Commit))
        })?;
        self.history_sequence += 1;
        Ok(retries)
    }

    fn run_order_status(&mut self, engine: &dyn KvEngine, run: &RunState) -> Result<usize> {
        let warehouse = self.home_warehouse(&run.meta);
        let district = self.rng.gen_range(1..=DISTRICTS_PER_WAREHOUSE);
        let customer = self.customer_selector(run);
        let customers = run.meta.customers_per_district;
        let attempts = self.shared.config.max_attempts;
        let scratch = &mut self.scratch;
        let ((), _, retries) = run_txn(engine, attempts, |txn| {
            let place = (warehouse, district);
            order_status(txn, &run.trees, place, &customer, customers, scratch)
                .map(|()| ((), TxnEnd::Commit))
        })?;
        Ok(retries)
    }

    fn run_delivery(&mut self, engine: &dyn KvEngine, run: &RunState) -> Result<usize> {
        let warehouse = self.home_warehouse(&run.meta);
        let carrier = self.rng.gen_range(1..=10);
        let attempts = self.shared.config.max_attempts;
        let scratch = &mut self.scratch;
        let (skipped, _, retries) = run_txn(engine, attempts, |txn| {
            delivery(txn, &run.trees, (warehouse, carrier), now_micros(), scratch)
                .map(|skipped| (skipped, TxnEnd::Commit))
        })?;
        self.shared
            .skipped_deliveries
            .fetch_add(skipped, Ordering::Relaxed);
        Ok(retries)
    }

    fn run_stock_level(&mut self, engine: &dyn KvEngine, run: &RunState) -> Result<usize> {
        let warehouse = self.home_warehouse(&run.meta);
        let district = self.stock_level_district(&run.meta);
        let threshold = self.rng.gen_range(10..=20);
        let attempts = self.shared.config.max_attempts;
        let scratch = &mut self.scratch;
        let (_, _, retries) = run_txn(engine, attempts, |txn| {
            stock_level(txn, &run.trees, (warehouse, district), threshold, scratch)
                .map(|low| (low, TxnEnd::Commit))
        })?;
        Ok(retries)
    }
}

impl RecordWorker for TpccWorker {
    fn run_one(&mut self, engine: &dyn KvEngine) -> Result<TxnOutcome> {
        self.last_type = None;
        let run = self.prepare(engine)?;
        let kind = self.shared.config.mix.draw(&mut self.rng);
        self.last_type = Some(kind as usize);
        let (retries, rolled_back) = match kind {
            TxnType::NewOrder => {
                let (end, retries) = self.run_new_order(engine, &run)?;
                (retries, end == TxnEnd::Rollback)
            }
            TxnType::Payment => (self.run_payment(engine, &run)?, false),
            TxnType::OrderStatus => (self.run_order_status(engine, &run)?, false),
            TxnType::Delivery => (self.run_delivery(engine, &run)?, false),
            TxnType::StockLevel => (self.run_stock_level(engine, &run)?, false),
        };
        Ok(TxnOutcome {
            txn_type: kind as usize,
            retries,
            rolled_back,
        })
    }

    fn last_txn_type(&self) -> Option<usize> {
        self.last_type
    }
}

/// Reads the load's parameters.
///
/// # Errors
/// [`Error::InvalidArgument`] when the database has no TPC-C metadata; engine errors.
pub(super) fn read_meta(engine: &dyn KvEngine, trees: &Trees) -> Result<Meta> {
    let mut txn = engine.begin()?;
    let bytes = txn.get(trees.meta, META_KEY)?;
    txn.commit()?;
    let bytes = bytes.ok_or_else(|| {
        Error::InvalidArgument("not a TPC-C database: tpcc.meta has no config row".into())
    })?;
    Meta::decode(&bytes)
}

fn missing(table: &str, key: &[u8]) -> Error {
    Error::InvalidArgument(format!("TPC-C {table} row {key:02x?} is missing"))
}

/// The stored value of a row the transaction reads, copied into `value` (one of the client's
/// reused buffers); the caller decodes it, borrowing.
fn get_row<'v>(
    txn: &mut dyn KvTxn,
    tree: TreeId,
    table: &str,
    key: &[u8],
    value: &'v mut Vec<u8>,
) -> Result<&'v [u8]> {
    let found = txn.get_into(tree, key, value)?;
    found_row(found, table, key, value)
}

/// As [`get_row`], read committed and without a lock kept (`KvTxn::get_committed_into`), for
/// New-Order's reads of columns no TPC-C transaction ever writes (W_TAX; C_DISCOUNT, C_LAST,
/// C_CREDIT; the ITEM table): a committed read of them returns what any serial order would,
/// so New-Order stays serializable. InnoDB, which the papers ran, serves these plain `SELECT`s
/// as nonlocking consistent reads, so there New-Order does not queue behind Payment's update
/// of the same warehouse and customer rows either. Stock-Level reads its stock rows so too
/// (it needs level 1 isolation only, clause 3.4.0.1).
fn get_row_committed<'v>(
    txn: &mut dyn KvTxn,
    tree: TreeId,
    table: &str,
    key: &[u8],
    value: &'v mut Vec<u8>,
) -> Result<&'v [u8]> {
    let found = txn.get_committed_into(tree, key, value)?;
    found_row(found, table, key, value)
}

/// As [`get_row`] for a row the transaction then updates: the exclusive lock at once, as the
/// spec's SQL (`UPDATE ...`, `SELECT ... FOR UPDATE`) and tpcc-mysql take it.
fn get_row_for_update<'v>(
    txn: &mut dyn KvTxn,
    tree: TreeId,
    table: &str,
    key: &[u8],
    value: &'v mut Vec<u8>,
) -> Result<&'v [u8]> {
    let found = txn.get_for_update_into(tree, key, value)?;
    found_row(found, table, key, value)
}

/// The row read into `value`, or the missing-row error when it was not `found`.
fn found_row<'v>(found: bool, table: &str, key: &[u8], value: &'v [u8]) -> Result<&'v [u8]> {
    if found {
        Ok(value)
    } else {
        Err(missing(table, key))
    }
}

/// Visits the pairs of `tree` whose keys start with `prefix`, in `direction`, at most
/// `limit`, until `visit` returns false (the end bound is built on the stack).
fn scan_prefix<const N: usize>(
    txn: &mut dyn KvTxn,
    tree: TreeId,
    prefix: &[u8; N],
    direction: Direction,
    limit: usize,
    visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) -> Result<()> {
    let mut end = *prefix;
    let high = match end.iter().rposition(|&byte| byte < u8::MAX) {
        Some(last) => {
            end[last] += 1;
            Bound::Excluded(&end[..=last])
        }
        None => Bound::Unbounded,
    };
    txn.scan(
        tree,
        (Bound::Included(prefix.as_slice()), high),
        direction,
        limit,
        visit,
    )
}

/// The smallest key greater than every key starting with `prefix` (None if there is none).
#[must_use]
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Resolves a customer selector to a C_ID (by last name: the middle row by C_FIRST).
fn select_customer(
    txn: &mut dyn KvTxn,
    trees: &Trees,
    (warehouse, district): (u16, u8),
    selector: &CustomerSelector,
    customers: u32,
    ids: &mut Vec<u32>,
) -> Result<u32> {
    let last = match selector {
        CustomerSelector::ById(id) => return Ok(*id),
        CustomerSelector::ByLastName(last) => last.as_bytes(),
    };
    ids.clear();
    let mut malformed = false;
    scan_prefix(
        txn,
        trees.customer_name,
        &customer_name_prefix(warehouse, district, last),
        Direction::Forward,
        customers as usize,
        &mut |key, _| {
            let id = customer_id_of_name_key(key);
            if let Some(id) = id {
                ids.push(id);
            }
            malformed = id.is_none();
            !malformed
        },
    )?;
    if malformed {
        return Err(Error::InvalidArgument("malformed customer name key".into()));
    }
    let middle = ids.len().checked_sub(1).map(|n| n / 2);
    middle.and_then(|m| ids.get(m)).copied().ok_or_else(|| {
        Error::InvalidArgument(format!(
            "TPC-C: no customer named {} in warehouse {warehouse} district {district}",
            String::from_utf8_lossy(last)
        ))
    })
}

/// New-Order (2.4.2). Rolls back (by design) when an item is unused.
fn new_order(
    txn: &mut dyn KvTxn,
    trees: &Trees,
    input: &NewOrderInput,
    now: u64,
    scratch: &mut Scratch,
) -> Result<TxnEnd> {
    let (w, d) = (input.warehouse, input.district);
    let values = &mut scratch.values;
    let warehouse_key = warehouse_key(w);
    let warehouse = get_row_committed(
        txn,
        trees.warehouse,
        "WAREHOUSE",
        &warehouse_key,
        &mut values.warehouse,
    )?;
    let warehouse = Warehouse::decode(warehouse)?;
    let district_key = district_key(w, d);
    let district = get_row_for_update(
        txn,
        trees.district,
        "DISTRICT",
        &district_key,
        &mut values.district,
    )?;
    let mut district = District::decode(district)?;
    let order_id = district.next_o_id;
    district.next_o_id += 1;
    district.encode_into(&mut scratch.row);
    txn.put(trees.district, &district_key, &scratch.row)?;
    let customer_key = customer_key(w, d, input.customer);
    let customer = get_row_committed(
        txn,
        trees.customer,
        "CUSTOMER",
        &customer_key,
        &mut values.customer,
    )?;
    let customer = Customer::decode(customer)?;
    let all_local = input.lines().iter().all(|line| line.supply_warehouse == w);
    let order = Order {
        c_id: input.customer,
        entry_d: now,
        carrier_id: 0,
        ol_cnt: input.line_count as u8,
        all_local,
    };
    let key = order_key(w, d, order_id);
    order.encode_into(&mut scratch.row);
    txn.put(trees.order, &key, &scratch.row)?;
    txn.put(trees.new_order, &key, &[])?;
    txn.put(
        trees.order_customer,
        &order_customer_key(w, d, input.customer, order_id),
        &[],
    )?;
    let mut total_cents: i64 = 0;
    for (line, number) in input.lines().iter().zip(1u8..) {
        if !txn.get_committed_into(trees.item, &item_key(line.item), &mut values.item)? {
            // The 1% of New-Orders with an unused item (2.4.2.3): roll back everything.
            return Ok(TxnEnd::Rollback);
        }
        let item = Item::decode(&values.item)?;
        let stock_key = stock_key(line.supply_warehouse, line.item);
        let stock = get_row_for_update(txn, trees.stock, "STOCK", &stock_key, &mut values.stock)?;
        let mut stock = Stock::decode(stock)?;
        let quantity = u16::from(line.quantity);
        stock.quantity = if stock.quantity >= quantity + 10 {
            stock.quantity - quantity
        } else {
            stock.quantity + 91 - quantity
        };
        stock.ytd += u32::from(line.quantity);
        stock.order_cnt += 1;
        if line.supply_warehouse != w {
            stock.remote_cnt += 1;
        }
        stock.encode_into(&mut scratch.row);
        txn.put(trees.stock, &stock_key, &scratch.row)?;
        let amount = i64::from(line.quantity) * item.price;
        total_cents += amount;
        // Brand/generic is part of the output only (2.4.2.2); computed, not stored.
        let _brand_generic = has_original(item.data) && has_original(stock.data);
        let row = OrderLine {
            i_id: line.item,
            supply_w_id: line.supply_warehouse,
            delivery_d: 0,
            quantity: line.quantity,
            amount,
            dist_info: &stock.dist[usize::from(d) - 1][..],
        };
        row.encode_into(&mut scratch.row);
        txn.put(
            trees.order_line,
            &order_line_key(w, d, order_id, number),
            &scratch.row,
        )?;
    }
    // The total (output only): sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX).
    let rates = (10_000 - i64::from(customer.discount))
        * (10_000 + i64::from(warehouse.tax) + i64::from(district.tax));
    let _total_cents = i128::from(total_cents) * i128::from(rates) / 100_000_000;
    Ok(TxnEnd::Commit)
}

/// Payment (2.5.2).
fn payment(
    txn: &mut dyn KvTxn,
    trees: &Trees,
    input: &PaymentInput,
    (history, customers): (&[u8], u32),
    scratch: &mut Scratch,
) -> Result<()> {
    let (w, d) = (input.warehouse, input.district);
    let values = &mut scratch.values;
    let warehouse_key = warehouse_key(w);
    let warehouse = get_row_for_update(
        txn,
        trees.warehouse,
        "WAREHOUSE",
        &warehouse_key,
        &mut values.warehouse,
    )?;
    let mut warehouse = Warehouse::decode(warehouse)?;
    warehouse.ytd += input.amount_cents;
    warehouse.encode_into(&mut scratch.row);
    txn.put(trees.warehouse, &warehouse_key, &scratch.row)?;
    let district_key = district_key(w, d);
    let district = get_row_for_update(
        txn,
        trees.district,
        "DISTRICT",
        &district_key,
        &mut values.district,
    )?;
    let mut district = District::decode(district)?;
    district.ytd += input.amount_cents;
    district.encode_into(&mut scratch.row);
    txn.put(trees.district, &district_key, &scratch.row)?;
    let (c_w, c_d) = (input.customer_warehouse, input.customer_district);
    let ids = &mut scratch.customer_ids;
    let c_id = select_customer(txn, trees, (c_w, c_d), &input.customer, customers, ids)?;
    let customer_key = customer_key(c_w, c_d, c_id);
    let customer = get_row_for_update(
        txn,
        trees.customer,
        "CUSTOMER",
        &customer_key,
        &mut values.customer,
    )?;
    let mut customer = Customer::decode(customer)?;
    customer.balance -= input.amount_cents;
    customer.ytd_payment += input.amount_cents;
    customer.payment_cnt += 1;
    if customer.credit == b"BC" {
        let amount = input.amount_cents;
        let data = &mut scratch.customer_data;
        data.clear();
        write!(
            data,
            "{c_id} {c_d} {c_w} {d} {w} {}.{:02} ",
            amount / 100,
            amount % 100
        )
        .map_err(|err| Error::Failed(format!("formatting C_DATA: {err}")))?;
        data.extend_from_slice(customer.data);
        data.truncate(CUSTOMER_DATA_MAX);
        customer.data = data;
    }
    customer.encode_into(&mut scratch.row);
    txn.put(trees.customer, &customer_key, &scratch.row)?;
    let h_data = &mut scratch.history_data;
    h_data.clear();
    h_data.extend_from_slice(warehouse.name);
    h_data.extend_from_slice(b"    ");
    h_data.extend_from_slice(district.name);
    let row = History {
        c_id,
        c_d_id: c_d,
        c_w_id: c_w,
        d_id: d,
        w_id: w,
        date: now_micros(),
        amount: input.amount_cents,
        data: h_data.as_slice(),
    };
    row.encode_into(&mut scratch.row);
    txn.put(trees.history, history, &scratch.row)
}

/// Order-Status (2.6.2): read-only.
fn order_status(
    txn: &mut dyn KvTxn,
    trees: &Trees,
    (w, d): (u16, u8),
    selector: &CustomerSelector,
    customers: u32,
    scratch: &mut Scratch,
) -> Result<()> {
    let ids = &mut scratch.customer_ids;
    let c_id = select_customer(txn, trees, (w, d), selector, customers, ids)?;
    let values = &mut scratch.values;
    let customer_key = customer_key(w, d, c_id);
    Customer::decode(get_row(
        txn,
        trees.customer,
        "CUSTOMER",
        &customer_key,
        &mut values.customer,
    )?)?;
    let mut newest = None;
    scan_prefix(
        txn,
        trees.order_customer,
        &order_customer_prefix(w, d, c_id),
        Direction::Backward,
        1,
        &mut |key, _| {
            newest = Some(order_id_of_customer_key(key));
            false
        },
    )?;
    let order_id = match newest {
        None => return Ok(()),
        Some(None) => return Err(Error::InvalidArgument("malformed order key".into())),
        Some(Some(order_id)) => order_id,
    };
    let key = order_key(w, d, order_id);
    let order = Order::decode(get_row(txn, trees.order, "ORDER", &key, &mut values.order)?)?;
    let mut lines = 0;
    let mut malformed = None;
    scan_prefix(
        txn,
        trees.order_line,
        &key,
        Direction::Forward,
        ORDER_LINES_MAX,
        &mut |_, value| match OrderLine::decode(value) {
            Ok(_) => {
                lines += 1;
                true
            }
            Err(err) => {
                malformed = Some(err);
                false
            }
        },
    )?;
    if let Some(err) = malformed {
        return Err(err);
    }
    if lines != usize::from(order.ol_cnt) {
        return Err(Error::InvalidArgument(format!(
            "TPC-C order ({w}, {d}, {order_id}) has O_OL_CNT {} but {lines} lines",
            order.ol_cnt
        )));
    }
    Ok(())
}

/// The O_ID of the oldest NEW-ORDER row of district (w, d), if any.
fn oldest_new_order(txn: &mut dyn KvTxn, trees: &Trees, w: u16, d: u8) -> Result<Option<u32>> {
    let mut oldest = None;
    scan_prefix(
        txn,
        trees.new_order,
        &district_key(w, d),
        Direction::Forward,
        1,
        &mut |key, _| {
            oldest = Some(order_id_of_key(key));
            false
        },
    )?;
    match oldest {
        None => Ok(None),
        Some(None) => Err(Error::InvalidArgument("malformed NEW-ORDER key".into())),
        Some(Some(order_id)) => Ok(Some(order_id)),
    }
}

/// Reads the lines of order `key` into `lines` as (OL_NUMBER, row).
fn read_order_lines(
    txn: &mut dyn KvTxn,
    trees: &Trees,
    key: [u8; 7],
    lines: &mut Vec<(u8, StoredOrderLine)>,
) -> Result<()> {
    lines.clear();
    let mut malformed = None;
    scan_prefix(
        txn,
        trees.order_line,
        &key,
        Direction::Forward,
        ORDER_LINES_MAX,
        &mut |line_key, value| {
            let line = OrderLine::decode(value).and_then(|line| {
                let number = line_key
                    .get(key.len())
                    .copied()
                    .ok_or_else(|| Error::InvalidArgument("malformed ORDER-LINE key".into()))?;
                Ok((number, line.to_array()?))
            });
            match line {
                Ok(line) => {
                    lines.push(line);
                    true
                }
                Err(err) => {
                    malformed = Some(err);
                    false
                }
            }
        },
    )?;
    malformed.map_or(Ok(()), Err)
}

/// Delivery (2.7.4): the oldest undelivered order of each district. Returns the districts
/// skipped for having none.
fn delivery(
    txn: &mut dyn KvTxn,
    trees: &Trees,
    (w, carrier): (u16, u8),
    now: u64,
    scratch: &mut Scratch,
) -> Result<u64> {
    let mut skipped = 0;
    for d in 1..=DISTRICTS_PER_WAREHOUSE {
        let Some(order_id) = oldest_new_order(txn, trees, w, d)? else {
            skipped += 1;
            continue;
        };
        let key = order_key(w, d, order_id);
        txn.delete(trees.new_order, &key)?;
        let values = &mut scratch.values;
        let order = get_row_for_update(txn, trees.order, "ORDER", &key, &mut values.order)?;
        let mut order = Order::decode(order)?;
        order.carrier_id = carrier;
        order.encode_into(&mut scratch.row);
        txn.put(trees.order, &key, &scratch.row)?;
        read_order_lines(txn, trees, key, &mut scratch.order_lines)?;
        let mut amount_cents = 0;
        for (number, line) in &mut scratch.order_lines {
            line.delivery_d = now;
            amount_cents += line.amount;
            line.encode_into(&mut scratch.row);
            let line_key = order_line_key(w, d, order_id, *number);
            txn.put(trees.order_line, &line_key, &scratch.row)?;
        }
        let customer_key = customer_key(w, d, order.c_id);
        let customer = get_row_for_update(
            txn,
            trees.customer,
            "CUSTOMER",
            &customer_key,
            &mut values.customer,
        )?;
        let mut customer = Customer::decode(customer)?;
        customer.balance += amount_cents;
        customer.delivery_cnt += 1;
        customer.encode_into(&mut scratch.row);
        txn.put(trees.customer, &customer_key, &scratch.row)?;
    }
    Ok(skipped)
}

/// Stock-Level (2.8.2): read-only. Returns the number of low-stock items.
fn stock_level(
    txn: &mut dyn KvTxn,
    trees: &Trees,
    (w, d): (u16, u8),
    threshold: u16,
    scratch: &mut Scratch,
) -> Result<usize> {
    let Scratch { items, values, .. } = scratch;
    let district_key = district_key(w, d);
    let district = get_row(
        txn,
        trees.district,
        "DISTRICT",
        &district_key,
        &mut values.district,
    )?;
    let next = District::decode(district)?.next_o_id;
    let low = order_line_key(w, d, next.saturating_sub(STOCK_LEVEL_ORDERS).max(1), 0);
    let high = order_line_key(w, d, next, 0);
    items.clear();
    let mut malformed = None;
    txn.scan(
        trees.order_line,
        (Bound::Included(&low), Bound::Excluded(&high)),
        Direction::Forward,
        STOCK_LEVEL_ORDERS as usize * ORDER_LINES_MAX,
        &mut |_, value| match OrderLine::decode(value) {
            Ok(line) => {
                items.push(line.i_id);
                true
            }
            Err(err) => {
                malformed = Some(err);
                false
            }
        },
    )?;
    if let Some(err) = malformed {
        return Err(err);
    }
    items.sort_unstable();
    items.dedup();
    let mut low_stock = 0;
    for &item in items.iter() {
        // Level 1 isolation is all Stock-Level needs (clause 3.4.0.1: no dirty reads): the
        // stock rows are read committed, without keeping ~200 shared locks against New-Order's
        // stock updates, as InnoDB's consistent reads do not lock them either.
        let stock = get_row_committed(
            txn,
            trees.stock,
            "STOCK",
            &stock_key(w, item),
            &mut values.stock,
        )?;
        if Stock::quantity_of(stock)? < threshold {
            low_stock += 1;
        }
    }
    Ok(low_stock)
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_ends_are_tight() {
        assert_eq!(prefix_end(&[1, 2]), Some(vec![1, 3]));
        assert_eq!(prefix_end(&[1, 255]), Some(vec![2]));
        assert_eq!(prefix_end(&[255, 255]), None);
    }
}
