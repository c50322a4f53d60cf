//! `bind_warehouse` binds client t to warehouse t mod W + 1: a Payment-only run by client 0
//! of two warehouses adds to warehouse 1's W_YTD only, while unbound clients spread over
//! both. Uses a reduced (non-specification) scale.

use flashbuf::kv::{KvEngine, MemoryKv};
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::tpcc::schema::{Trees, Warehouse, warehouse_key};
use flashbuf::workload::tpcc::{Tpcc, TpccConfig, TpccMix, TpccScale};

fn warehouse_ytd_after(bind: bool) -> [i64; 2] {
    let mut config = TpccConfig::new(2);
    config.scale = TpccScale::reduced(1000, 300).unwrap();
    config.mix = TpccMix::parse("payment=100").unwrap();
    config.bind_warehouse = bind;
    let tpcc = Tpcc::new(config).unwrap();
    let kv = MemoryKv::new();
    tpcc.load(&kv, &mut |_| {}).unwrap();
    let mut client = tpcc.worker(0);
    for _ in 0..200 {
        assert_eq!(client.run_one(&kv).unwrap().txn_type, 1, "payments only");
    }
    assert!(tpcc.check(&kv).unwrap().is_consistent());
    let trees = Trees::open(&kv).unwrap();
    let mut txn = kv.begin().unwrap();
    [1, 2].map(|w| {
        let bytes = txn
            .get(trees.warehouse, &warehouse_key(w))
            .unwrap()
            .unwrap();
        Warehouse::decode(&bytes).unwrap().ytd - 30_000_000
    })
}

#[test]
fn a_bound_client_pays_into_its_warehouse_only() {
    let [first, second] = warehouse_ytd_after(true);
    assert!(first >= 200 * 100, "200 payments of at least 1.00: {first}");
    assert_eq!(second, 0);
}

#[test]
fn unbound_clients_draw_the_home_warehouse_per_transaction() {
    let [first, second] = warehouse_ytd_after(false);
    assert!(first > 0 && second > 0, "{first} {second}");
}
