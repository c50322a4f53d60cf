//! The TPC-C loader at one warehouse and specification scale: every table has clause
//! 4.3.3.1's cardinality and value distributions (10% "ORIGINAL", 10% "BC", the first 1,000
//! C_LAST in order, orders 2,101..3,000 undelivered and in NEW-ORDER, one order per
//! customer...), and the secondary indexes match their tables.
//!
//! `cargo test --release --test suite tpcc_load_cardinalities:: -- --nocapture` prints the load's
//! rows and bytes per table (the figures in docs/workloads.md).

use std::collections::HashMap;

use flashbuf::kv::{FULL_RANGE, KvEngine, MemoryKv};
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::tpcc::random::{has_original, last_name};
use flashbuf::workload::tpcc::schema::{
    Customer, District, Item, Order, OrderLine, Stock, Trees, Warehouse, customer_name_key,
    order_customer_key,
};
use flashbuf::workload::tpcc::{Tpcc, TpccConfig};

fn rows(kv: &MemoryKv, tree: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut txn = kv.begin().unwrap();
    let mut out = Vec::new();
    txn.scan(
        tree,
        FULL_RANGE,
        flashbuf::kv::Direction::Forward,
        usize::MAX,
        &mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            true
        },
    )
    .unwrap();
    out
}

fn be32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes(bytes.try_into().unwrap())
}

#[test]
fn one_warehouse_has_the_specified_rows_and_values() {
    let kv = MemoryKv::new();
    let tpcc = Tpcc::new(TpccConfig::new(1)).unwrap();
    let started = std::time::Instant::now();
    let report = tpcc.load(&kv, &mut |_| {}).unwrap();
    eprintln!("TPC-C load, 1 warehouse, in {:?}:", started.elapsed());
    eprintln!(
        "{:<22} {:>9} {:>11} {:>12} {:>9}",
        "table", "rows", "key bytes", "value bytes", "row avg"
    );
    for t in &report.tables {
        let avg = (t.key_bytes + t.value_bytes) as f64 / t.rows.max(1) as f64;
        eprintln!(
            "{:<22} {:>9} {:>11} {:>12} {:>9.1}",
            t.name, t.rows, t.key_bytes, t.value_bytes, avg
        );
    }
    eprintln!("total {} rows, {} bytes", report.rows(), report.bytes());

    let expected = [
        ("tpcc.item", 100_000),
        ("tpcc.warehouse", 1),
        ("tpcc.district", 10),
        ("tpcc.customer", 30_000),
        ("tpcc.customer_name", 30_000),
        ("tpcc.history", 30_000),
        ("tpcc.order", 30_000),
        ("tpcc.order_customer", 30_000),
        ("tpcc.new_order", 9_000),
        ("tpcc.stock", 100_000),
        ("tpcc.meta", 1),
    ];
    for (name, count) in expected {
        assert_eq!(report.table(name).unwrap().rows, count, "{name}");
    }
    let trees = Trees::open(&kv).unwrap();

    // ITEM and STOCK: exactly 10% ORIGINAL, fields in range.
    let items = rows(&kv, trees.item);
    let mut original = 0;
    for (_, value) in &items {
        let item = Item::decode(value).unwrap();
        assert!((1..=10_000).contains(&item.im_id) && (100..=10_000).contains(&item.price));
        assert!((14..=24).contains(&item.name.len()) && (26..=50).contains(&item.data.len()));
        original += usize::from(has_original(item.data));
    }
    assert_eq!(original, 10_000);
    let stock = rows(&kv, trees.stock);
    let original = stock
        .iter()
        .map(|(_, v)| Stock::decode(v).unwrap())
        .inspect(|s| assert!((10..=100).contains(&s.quantity) && s.ytd == 0 && s.order_cnt == 0))
        .filter(|s| has_original(s.data))
        .count();
    assert_eq!(original, 10_000);

    // WAREHOUSE and DISTRICT.
    let warehouses = rows(&kv, trees.warehouse);
    let warehouse = Warehouse::decode(&warehouses[0].1).unwrap();
    assert_eq!(warehouse.ytd, 30_000_000);
    assert!(warehouse.tax <= 2000 && warehouse.address.zip.ends_with(b"11111"));
    for (_, value) in rows(&kv, trees.district) {
        let district = District::decode(&value).unwrap();
        assert_eq!((district.ytd, district.next_o_id), (3_000_000, 3001));
    }

    // CUSTOMER: 10% BC per district, C_LAST rule, constants; the name index matches.
    let customers = rows(&kv, trees.customer);
    let mut bad_credit: HashMap<u8, u32> = HashMap::new();
    let mut name_keys = Vec::new();
    for (key, value) in &customers {
        let (d, c) = (key[2], be32(&key[3..7]));
        let customer = Customer::decode(value).unwrap();
        if c <= 1000 {
            assert_eq!(customer.last, last_name(c - 1).as_bytes());
        }
        assert_eq!(customer.middle, b"OE");
        assert_eq!(
            (customer.balance, customer.ytd_payment, customer.payment_cnt),
            (-1000, 1000, 1)
        );
        assert_eq!((customer.credit_lim, customer.delivery_cnt), (5_000_000, 0));
        assert!(customer.discount <= 5000 && (300..=500).contains(&customer.data.len()));
        assert!(customer.phone.iter().all(u8::is_ascii_digit));
        *bad_credit.entry(d).or_default() += u32::from(customer.credit == b"BC");
        name_keys.push(customer_name_key(1, d, customer.last, customer.first, c).to_vec());
    }
    assert!(bad_credit.values().all(|&n| n == 300), "{bad_credit:?}");
    name_keys.sort();
    let index: Vec<Vec<u8>> = rows(&kv, trees.customer_name)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(index, name_keys);

    // ORDER: one per customer per district, carrier set below 2,101, lines 5..=15.
    let orders = rows(&kv, trees.order);
    let mut customers_with_orders: HashMap<u8, Vec<u32>> = HashMap::new();
    let mut order_keys = Vec::new();
    let mut lines_expected: HashMap<(u8, u32), u8> = HashMap::new();
    for (key, value) in &orders {
        let (d, o) = (key[2], be32(&key[3..7]));
        let order = Order::decode(value).unwrap();
        assert_eq!(order.carrier_id == 0, o >= 2101, "order {o}");
        assert!((5..=15).contains(&order.ol_cnt) && order.all_local);
        customers_with_orders.entry(d).or_default().push(order.c_id);
        order_keys.push(order_customer_key(1, d, order.c_id, o).to_vec());
        lines_expected.insert((d, o), order.ol_cnt);
    }
    for ids in customers_with_orders.values_mut() {
        ids.sort_unstable();
        assert_eq!(*ids, (1..=3000).collect::<Vec<_>>());
    }
    order_keys.sort();
    let index: Vec<Vec<u8>> = rows(&kv, trees.order_customer)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(index, order_keys);

    // NEW-ORDER: 2,101..=3,000 per district.
    let new_orders = rows(&kv, trees.new_order);
    assert!(
        new_orders
            .iter()
            .all(|(k, _)| (2101..=3000).contains(&be32(&k[3..7])))
    );

    // ORDER-LINE: O_OL_CNT lines per order; delivered lines amount 0, others not delivered.
    let lines = rows(&kv, trees.order_line);
    let mut lines_seen: HashMap<(u8, u32), u8> = HashMap::new();
    for (key, value) in &lines {
        let (d, o) = (key[2], be32(&key[3..7]));
        let line = OrderLine::decode(value).unwrap();
        assert_eq!(line.delivery_d == 0, o >= 2101);
        assert_eq!(line.amount == 0, o < 2101);
        assert!((1..=100_000).contains(&line.i_id) && line.quantity == 5 && line.supply_w_id == 1);
        *lines_seen.entry((d, o)).or_default() += 1;
    }
    assert_eq!(lines_seen, lines_expected);
    assert_eq!(
        report.table("tpcc.order_line").unwrap().rows,
        lines.len() as u64
    );
}
