//! TPC-C consistency conditions 1-4 (specification 5.11, clause 3.3.2).
//!
//! 1. (3.3.2.1) For each warehouse: W_YTD = sum(D_YTD) over its districts.
//! 2. (3.3.2.2) For each district: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID).
//! 3. (3.3.2.3) For each district: max(NO_O_ID) - min(NO_O_ID) + 1 = the number of NEW-ORDER
//!    rows.
//! 4. (3.3.2.4) For each district: sum(O_OL_CNT) = the number of ORDER-LINE rows.
//!
//! Conditions 2 and 3 on NEW-ORDER apply only while the district has NEW-ORDER rows (after
//! Delivery has emptied it there is no max(NO_O_ID)).
//!
//! Cost: one short read transaction per warehouse (its row and ten district rows) and one per
//! district that scans the district's ORDER, NEW-ORDER and ORDER-LINE rows, so a check reads
//! every ORDER, NEW-ORDER and ORDER-LINE row once (about 330,000 rows per warehouse at load,
//! growing with the run). [`CheckReport::rows_scanned`] says how many. Run it at quiescence.

use std::ops::Bound;

use super::schema::{
    DISTRICTS_PER_WAREHOUSE, District, Order, Trees, Warehouse, district_key, order_id_of_key,
    warehouse_key,
};
use super::txn::{prefix_end, read_meta};
use crate::error::{Error, Result};
use crate::kv::{Direction, KvEngine, KvTxn, TreeId};
use crate::workload::record::CheckReport;

/// Condition 1's name in reports.
pub const CONDITION_1: &str = "3.3.2.1 W_YTD = sum(D_YTD)";
/// Condition 2's name in reports.
pub const CONDITION_2: &str = "3.3.2.2 D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)";
/// Condition 3's name in reports.
pub const CONDITION_3: &str = "3.3.2.3 max(NO_O_ID) - min(NO_O_ID) + 1 = NEW-ORDER rows";
/// Condition 4's name in reports.
pub const CONDITION_4: &str = "3.3.2.4 sum(O_OL_CNT) = ORDER-LINE rows";

/// Scan limit for a district's rows: none beyond the tree itself (a district's rows are
/// finite; the scan ends at the prefix's end).
const DISTRICT_ROWS_MAX: usize = usize::MAX;

/// Checks conditions 1-4 on the TPC-C database in `engine` (its size comes from `tpcc.meta`).
///
/// # Errors
/// A database without TPC-C metadata, malformed rows, engine errors.
pub fn check_consistency(engine: &dyn KvEngine) -> Result<CheckReport> {
    let trees = Trees::open(engine)?;
    let meta = read_meta(engine, &trees)?;
    let mut report = CheckReport {
        conditions: [CONDITION_1, CONDITION_2, CONDITION_3, CONDITION_4]
            .map(String::from)
            .to_vec(),
        ..CheckReport::default()
    };
    for w in 1..=meta.warehouses {
        check_warehouse(engine, &trees, w, &mut report)?;
        for d in 1..=DISTRICTS_PER_WAREHOUSE {
            check_district(engine, &trees, w, d, &mut report)?;
        }
    }
    Ok(report)
}

fn check_warehouse(
    engine: &dyn KvEngine,
    trees: &Trees,
    w: u16,
    report: &mut CheckReport,
) -> Result<()> {
    let mut txn = engine.begin()?;
    let Some(bytes) = txn.get(trees.warehouse, &warehouse_key(w))? else {
        report.violate(
            CONDITION_1,
            format!("warehouse {w}"),
            "WAREHOUSE row missing",
        );
        return Ok(());
    };
    let warehouse_ytd = Warehouse::decode(&bytes)?.ytd;
    let mut districts_ytd = 0i64;
    for d in 1..=DISTRICTS_PER_WAREHOUSE {
        match txn.get(trees.district, &district_key(w, d))? {
            Some(bytes) => districts_ytd += District::decode(&bytes)?.ytd,
            None => report.violate(
                CONDITION_1,
                format!("warehouse {w}, district {d}"),
                "DISTRICT row missing",
            ),
        }
    }
    txn.commit()?;
    report.rows_scanned += 1 + u64::from(DISTRICTS_PER_WAREHOUSE);
    if warehouse_ytd != districts_ytd {
        report.violate(
            CONDITION_1,
            format!("warehouse {w}"),
            format!(
                "W_YTD = {}, sum(D_YTD) = {}",
                cents(warehouse_ytd),
                cents(districts_ytd)
            ),
        );
    }
    Ok(())
}

/// What one district's scans found.
#[derive(Debug, Default)]
struct DistrictFigures {
    orders: u64,
    max_order: Option<u32>,
    order_lines_expected: u64,
    new_orders: u64,
    min_new_order: Option<u32>,
    max_new_order: Option<u32>,
    order_lines: u64,
}

fn check_district(
    engine: &dyn KvEngine,
    trees: &Trees,
    w: u16,
    d: u8,
    report: &mut CheckReport,
) -> Result<()> {
    let location = format!("warehouse {w}, district {d}");
    let prefix = district_key(w, d);
    let mut txn = engine.begin()?;
    let Some(bytes) = txn.get(trees.district, &prefix)? else {
        report.violate(CONDITION_2, location, "DISTRICT row missing");
        return Ok(());
    };
    let next_o_id = District::decode(&bytes)?.next_o_id;
    let mut figures = DistrictFigures::default();
    scan_prefix(&mut *txn, trees.order, &prefix, &mut |key, value| {
        let order = Order::decode(value)?;
        figures.orders += 1;
        figures.max_order = figures.max_order.max(order_id_of_key(key));
        figures.order_lines_expected += u64::from(order.ol_cnt);
        Ok(())
    })?;
    scan_prefix(&mut *txn, trees.new_order, &prefix, &mut |key, _| {
        let id = order_id_of_key(key).ok_or_else(|| malformed("NEW-ORDER", key))?;
        figures.new_orders += 1;
        figures.min_new_order = Some(figures.min_new_order.map_or(id, |m| m.min(id)));
        figures.max_new_order = figures.max_new_order.max(Some(id));
        Ok(())
    })?;
    scan_prefix(&mut *txn, trees.order_line, &prefix, &mut |_, _| {
        figures.order_lines += 1;
        Ok(())
    })?;
    txn.commit()?;
    report.rows_scanned += 1 + figures.orders + figures.new_orders + figures.order_lines;
    judge_district(&figures, next_o_id, &location, report);
    Ok(())
}

fn judge_district(f: &DistrictFigures, next_o_id: u32, location: &str, report: &mut CheckReport) {
    let last = next_o_id.checked_sub(1);
    if f.max_order != last {
        report.violate(
            CONDITION_2,
            location,
            format!(
                "D_NEXT_O_ID - 1 = {}, max(O_ID) = {}",
                show(last),
                show(f.max_order)
            ),
        );
    }
    if f.max_new_order.is_some() && f.max_new_order != last {
        report.violate(
            CONDITION_2,
            location,
            format!(
                "D_NEXT_O_ID - 1 = {}, max(NO_O_ID) = {}",
                show(last),
                show(f.max_new_order)
            ),
        );
    }
    if let (Some(min), Some(max)) = (f.min_new_order, f.max_new_order) {
        let span = u64::from(max - min) + 1;
        if span != f.new_orders {
            report.violate(
                CONDITION_3,
                location,
                format!(
                    "max(NO_O_ID) - min(NO_O_ID) + 1 = {max} - {min} + 1 = {span}, NEW-ORDER rows = {}",
                    f.new_orders
                ),
            );
        }
    }
    if f.order_lines_expected != f.order_lines {
        report.violate(
            CONDITION_4,
            location,
            format!(
                "sum(O_OL_CNT) = {}, ORDER-LINE rows = {}",
                f.order_lines_expected, f.order_lines
            ),
        );
    }
}

/// What [`scan_prefix`] calls with each pair.
type RowVisitor<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// Visits every pair of `tree` under `prefix` in one scan; stops at the first error.
fn scan_prefix(
    txn: &mut dyn KvTxn,
    tree: TreeId,
    prefix: &[u8],
    visit: &mut RowVisitor<'_>,
) -> Result<()> {
    let end = prefix_end(prefix);
    let high = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    let mut failure = None;
    txn.scan(
        tree,
        (Bound::Included(prefix), high),
        Direction::Forward,
        DISTRICT_ROWS_MAX,
        &mut |key, value| match visit(key, value) {
            Ok(()) => true,
            Err(err) => {
                failure = Some(err);
                false
            }
        },
    )?;
    failure.map_or(Ok(()), Err)
}

fn malformed(table: &str, key: &[u8]) -> Error {
    Error::InvalidArgument(format!("malformed {table} key {key:02x?}"))
}

fn show(value: Option<u32>) -> String {
    value.map_or_else(|| "none".to_string(), |v| v.to_string())
}

fn cents(value: i64) -> String {
    let sign = if value < 0 { "-" } else { "" };
    let abs = value.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}
