//! Measurements for docs/workloads.md, not assertions about speed: TPC-C load size and time
//! per warehouse, the CPU time of each transaction type and of `check` on the reference
//! engine (one thread, so no lock waits). Ignored in the normal suite; run with
//! `cargo test --release --test suite tpcc_measurements:: -- --ignored --nocapture --test-threads 1`.

use std::time::{Duration, Instant};

use flashbuf::kv::MemoryKv;
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::tpcc::{TXN_TYPE_NAMES, Tpcc, TpccConfig};

#[test]
#[ignore = "measurement (about 15 s)"]
fn load_and_check_per_warehouse() {
    let warehouses = 4;
    let kv = MemoryKv::new();
    let tpcc = Tpcc::new(TpccConfig::new(warehouses)).unwrap();
    let report = tpcc.load(&kv, &mut |_| {}).unwrap();
    let per = f64::from(warehouses);
    eprintln!(
        "TPC-C load, {warehouses} warehouses, in {:?}",
        report.elapsed
    );
    for t in &report.tables {
        eprintln!(
            "{:<22} {:>10.0} rows/W {:>13.0} key+value bytes/W",
            t.name,
            t.rows as f64 / per,
            (t.key_bytes + t.value_bytes) as f64 / per
        );
    }
    eprintln!(
        "per warehouse: {:.0} rows, {:.1} MB, {:.2} s",
        report.rows() as f64 / per,
        report.bytes() as f64 / per / 1e6,
        report.elapsed.as_secs_f64() / per
    );
    let started = Instant::now();
    let check = tpcc.check(&kv).unwrap();
    eprintln!(
        "check: {} rows in {:?}",
        check.rows_scanned,
        started.elapsed()
    );
    assert!(check.is_consistent());
}

#[test]
#[ignore = "measurement (about 10 s)"]
fn cpu_time_per_transaction_type() {
    let kv = MemoryKv::new();
    let tpcc = Tpcc::new(TpccConfig::new(1)).unwrap();
    tpcc.load(&kv, &mut |_| {}).unwrap();
    let mut worker = tpcc.worker(0);
    let mut time = [Duration::ZERO; 5];
    let mut count = [0u32; 5];
    for _ in 0..50_000 {
        let started = Instant::now();
        let outcome = worker.run_one(&kv).unwrap();
        time[outcome.txn_type] += started.elapsed();
        count[outcome.txn_type] += 1;
    }
    for ((name, t), n) in TXN_TYPE_NAMES.iter().zip(time).zip(count) {
        eprintln!(
            "{name:<13} {n:>6} txns, mean {:>8.1} us",
            t.as_secs_f64() * 1e6 / f64::from(n)
        );
    }
    let total: Duration = time.iter().sum();
    eprintln!("all: mean {:.1} us", total.as_secs_f64() * 1e6 / 50_000.0);
    let started = Instant::now();
    let check = tpcc.check(&kv).unwrap();
    eprintln!(
        "check after the run: {} rows in {:?}",
        check.rows_scanned,
        started.elapsed()
    );
    assert!(check.is_consistent(), "{check}");
}
