//! LinkBench against the serial reference engine: after the load and after a concurrent run
//! of the default mix, every count row equals its visible links, every index entry matches
//! its link row, and the check reports a count or index broken on purpose.

use flashbuf::kv::{KvEngine, MemoryKv};
use flashbuf::workload::linkbench::schema::{
    DEFAULT_LINK_TYPE, Link, LinkCount, Trees, count_key, link_key,
};
use flashbuf::workload::linkbench::{
    CONDITION_COUNTS, CONDITION_INDEX, CONDITION_ROWS, FB_WORKLOAD_SHARES, LinkBench,
    LinkBenchConfig, OP_NAMES,
};
use flashbuf::workload::record::RecordWorkload;

const NODES: u64 = 5000;
const THREADS: usize = 4;
const OPS_PER_THREAD: usize = 2500;

fn loaded() -> (LinkBench, MemoryKv) {
    let linkbench = LinkBench::new(LinkBenchConfig::new(NODES)).unwrap();
    let kv = MemoryKv::new();
    let report = linkbench.load(&kv, &mut |_| {}).unwrap();
    assert_eq!(report.table("linkbench.node").unwrap().rows, NODES);
    let degrees: u64 = (1..=NODES).map(|id| linkbench.out_degree(id)).sum();
    assert_eq!(report.table("linkbench.link").unwrap().rows, degrees);
    assert_eq!(
        report.table("linkbench.link_by_time").unwrap().rows,
        degrees
    );
    (linkbench, kv)
}

#[test]
fn counts_match_links_after_load_and_run() {
    let (linkbench, kv) = loaded();
    let report = linkbench.check(&kv).unwrap();
    assert!(report.is_consistent(), "{report}");

    let counts = std::sync::Mutex::new([0usize; 10]);
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (linkbench, kv, counts) = (&linkbench, &kv, &counts);
            scope.spawn(move || {
                let mut worker = linkbench.worker(thread);
                let mut mine = [0usize; 10];
                for _ in 0..OPS_PER_THREAD {
                    let outcome = worker.run_one(kv).unwrap();
                    assert_eq!(outcome.retries, 0);
                    mine[outcome.txn_type] += 1;
                }
                let mut all = counts.lock().unwrap();
                for (total, n) in all.iter_mut().zip(mine) {
                    *total += n;
                }
            });
        }
    });
    let counts = counts.into_inner().unwrap();
    let total = (THREADS * OPS_PER_THREAD) as f64;
    for ((count, expected), name) in counts.iter().zip(FB_WORKLOAD_SHARES).zip(OP_NAMES) {
        let share = *count as f64 * 100.0 / total;
        assert!(
            (share - expected).abs() < 1.5,
            "{name}: {share}% vs {expected}%"
        );
    }
    let report = linkbench.check(&kv).unwrap();
    assert!(report.is_consistent(), "{report}");
    let node_tree = kv.open_tree("linkbench.node").unwrap();
    let added = counts[6] as u64;
    assert!(kv.len(node_tree) as u64 <= NODES + added);
    assert!(kv.len(node_tree) as u64 >= NODES + added - counts[8] as u64);
}

/// The first loaded link of some node with links.
fn some_link(linkbench: &LinkBench) -> (u64, u64) {
    let id1 = (1..=NODES)
        .find(|&id| linkbench.out_degree(id) >= 2)
        .unwrap();
    (id1, DEFAULT_LINK_TYPE)
}

#[test]
fn a_wrong_count_is_reported() {
    let (linkbench, kv) = loaded();
    let trees = Trees::open(&kv).unwrap();
    let (id1, link_type) = some_link(&linkbench);
    let mut txn = kv.begin().unwrap();
    let key = count_key(id1, link_type);
    let mut row = LinkCount::decode(&txn.get(trees.count, &key).unwrap().unwrap()).unwrap();
    row.count += 1;
    txn.put(trees.count, &key, &row.encode()).unwrap();
    txn.commit().unwrap();
    let report = linkbench.check(&kv).unwrap();
    assert_eq!(report.violations_total, 1, "{report}");
    assert_eq!(report.violations[0].condition, CONDITION_COUNTS);
    assert_eq!(
        report.violations[0].location,
        format!("id1 {id1}, type {link_type}")
    );
}

#[test]
fn a_link_changed_behind_its_index_is_reported() {
    let (linkbench, kv) = loaded();
    let trees = Trees::open(&kv).unwrap();
    let (id1, link_type) = some_link(&linkbench);
    let key = link_key(link_type, id1, id1);
    let mut txn = kv.begin().unwrap();
    let mut link = Link::decode(&key, &txn.get(trees.link, &key).unwrap().unwrap()).unwrap();
    link.version += 1;
    txn.put(trees.link, &key, &link.encode()).unwrap();
    txn.commit().unwrap();
    let report = linkbench.check(&kv).unwrap();
    assert!(report.violates(CONDITION_INDEX), "{report}");

    let mut txn = kv.begin().unwrap();
    txn.delete(trees.link_by_time, &link.index_key()).unwrap();
    txn.commit().unwrap();
    let report = linkbench.check(&kv).unwrap();
    assert!(report.violates(CONDITION_ROWS), "{report}");
}
