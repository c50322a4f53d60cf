//! TPC-C at one warehouse (specification scale) on the serial reference engine: eight clients
//! run a few thousand transactions of the standard mix, then consistency conditions 1-4 hold
//! and every transaction type ran, with the rolled-back New-Orders about 1%.

use std::sync::atomic::{AtomicUsize, Ordering};

use flashbuf::kv::MemoryKv;
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::tpcc::{TXN_TYPE_NAMES, Tpcc, TpccConfig};

const THREADS: usize = 8;
const TXNS_PER_THREAD: usize = 500;

#[test]
fn consistency_conditions_hold_after_a_concurrent_run() {
    let kv = MemoryKv::new();
    let tpcc = Tpcc::new(TpccConfig::new(1)).unwrap();
    let started = std::time::Instant::now();
    let report = tpcc.load(&kv, &mut |_| {}).unwrap();
    eprintln!(
        "load: {} rows, {} bytes in {:?}",
        report.rows(),
        report.bytes(),
        started.elapsed()
    );
    let before = tpcc.check(&kv).unwrap();
    assert!(before.is_consistent(), "{before}");

    let counts: Vec<AtomicUsize> = (0..5).map(|_| AtomicUsize::new(0)).collect();
    let rolled_back = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (tpcc, kv, counts, rolled_back) = (&tpcc, &kv, &counts, &rolled_back);
            scope.spawn(move || {
                let mut worker = tpcc.worker(thread);
                for _ in 0..TXNS_PER_THREAD {
                    let outcome = worker.run_one(kv).unwrap();
                    assert_eq!(outcome.retries, 0, "the serial engine never conflicts");
                    counts[outcome.txn_type].fetch_add(1, Ordering::Relaxed);
                    if outcome.rolled_back {
                        assert_eq!(outcome.txn_type, 0, "only New-Order rolls back");
                        rolled_back.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let counts: Vec<usize> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    eprintln!(
        "mix: {:?} {counts:?}, rolled back {rolled_back:?}",
        TXN_TYPE_NAMES
    );
    assert_eq!(counts.iter().sum::<usize>(), THREADS * TXNS_PER_THREAD);
    assert!(counts.iter().all(|&c| c > 0), "every type ran: {counts:?}");
    let new_orders = counts[0];
    let rolled_back = rolled_back.load(Ordering::Relaxed);
    assert!(
        rolled_back > 0 && rolled_back < new_orders / 20,
        "about 1% of {new_orders}"
    );

    let after = tpcc.check(&kv).unwrap();
    assert!(after.is_consistent(), "{after}");
    assert_eq!(after.conditions.len(), 4);
    assert!(after.rows_scanned > before.rows_scanned);
    assert_eq!(
        tpcc.skipped_deliveries(),
        0,
        "900 undelivered orders per district at load"
    );
}
