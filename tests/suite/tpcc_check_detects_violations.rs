//! The TPC-C consistency check reports each broken condition (3.3.2.1-3.3.2.4) with the
//! warehouse and district and the disagreeing values, and a loaded database passes.

use flashbuf::kv::{KvEngine, MemoryKv};
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::tpcc::check::{CONDITION_1, CONDITION_2, CONDITION_3, CONDITION_4};
use flashbuf::workload::tpcc::schema::{District, Trees, district_key, order_key, order_line_key};
use flashbuf::workload::tpcc::{Tpcc, TpccConfig, TpccScale, check_consistency};

/// Two warehouses at a reduced (non-specification) scale.
fn loaded() -> (MemoryKv, Trees) {
    let mut config = TpccConfig::new(2);
    config.scale = TpccScale::reduced(1000, 300).unwrap();
    let kv = MemoryKv::new();
    Tpcc::new(config).unwrap().load(&kv, &mut |_| {}).unwrap();
    let trees = Trees::open(&kv).unwrap();
    (kv, trees)
}

fn edit_district(kv: &MemoryKv, trees: &Trees, w: u16, d: u8, edit: impl Fn(&mut District<&[u8]>)) {
    let mut txn = kv.begin().unwrap();
    let key = district_key(w, d);
    let stored = txn.get(trees.district, &key).unwrap().unwrap();
    let mut district = District::decode(&stored).unwrap();
    edit(&mut district);
    txn.put(trees.district, &key, &district.encode()).unwrap();
    txn.commit().unwrap();
}

fn delete(kv: &MemoryKv, tree: u32, key: &[u8]) {
    let mut txn = kv.begin().unwrap();
    assert!(txn.delete(tree, key).unwrap());
    txn.commit().unwrap();
}

#[test]
fn a_loaded_database_is_consistent() {
    let (kv, _) = loaded();
    let report = check_consistency(&kv).unwrap();
    assert!(report.is_consistent(), "{report}");
    // 2 warehouses x (1 + 10) rows, 20 districts x (1 + 300 orders + 90 new orders + lines).
    assert!(report.rows_scanned > 20 * (1 + 300 + 90 + 5 * 300));
}

#[test]
fn condition_1_district_ytd_out_of_step() {
    let (kv, trees) = loaded();
    edit_district(&kv, &trees, 2, 7, |d| d.ytd += 1);
    let report = check_consistency(&kv).unwrap();
    assert_eq!(report.violations_total, 1, "{report}");
    let v = &report.violations[0];
    assert_eq!(v.condition, CONDITION_1);
    assert_eq!(v.location, "warehouse 2");
    assert_eq!(v.detail, "W_YTD = 300000.00, sum(D_YTD) = 300000.01");
}

#[test]
fn condition_2_next_order_id_ahead_of_the_orders() {
    let (kv, trees) = loaded();
    edit_district(&kv, &trees, 1, 3, |d| d.next_o_id += 5);
    let report = check_consistency(&kv).unwrap();
    assert!(report.violates("3.3.2.2"), "{report}");
    assert!(!report.violates("3.3.2.1") && !report.violates("3.3.2.3"));
    let v = &report.violations[0];
    assert_eq!(v.condition, CONDITION_2);
    assert_eq!(v.location, "warehouse 1, district 3");
    assert!(v.detail.contains("D_NEXT_O_ID - 1 = 305"), "{}", v.detail);
}

#[test]
fn condition_3_hole_in_new_order() {
    let (kv, trees) = loaded();
    // NEW-ORDER holds orders 211..=300 per district at this scale; remove one in the middle.
    delete(&kv, trees.new_order, &order_key(2, 10, 250));
    let report = check_consistency(&kv).unwrap();
    assert_eq!(report.violations_total, 1, "{report}");
    let v = &report.violations[0];
    assert_eq!(v.condition, CONDITION_3);
    assert_eq!(v.location, "warehouse 2, district 10");
    assert!(
        v.detail.ends_with("= 90, NEW-ORDER rows = 89"),
        "{}",
        v.detail
    );
}

#[test]
fn condition_4_missing_order_line() {
    let (kv, trees) = loaded();
    delete(&kv, trees.order_line, &order_line_key(1, 1, 17, 1));
    let report = check_consistency(&kv).unwrap();
    assert_eq!(report.violations_total, 1, "{report}");
    assert_eq!(report.violations[0].condition, CONDITION_4);
    assert_eq!(report.violations[0].location, "warehouse 1, district 1");
}

#[test]
fn a_database_without_tpcc_metadata_is_an_error() {
    let kv = MemoryKv::new();
    let err = check_consistency(&kv).unwrap_err();
    assert!(err.to_string().contains("not a TPC-C database"), "{err}");
}
