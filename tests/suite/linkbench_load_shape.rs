//! The LinkBench load's graph: node and link counts, a power-law out-degree (about 45% of
//! the nodes without links, a heavy tail), link payloads of median about 8 bytes, node
//! payloads of median about 128 bytes.
//!
//! `cargo test --release --test suite linkbench_load_shape:: -- --ignored --nocapture` loads 10^6
//! nodes and prints rows and bytes per tree (the figures in docs/workloads.md).

use flashbuf::kv::MemoryKv;
use flashbuf::workload::linkbench::{LinkBench, LinkBenchConfig};
use flashbuf::workload::record::{LoadReport, RecordWorkload};

fn print(report: &LoadReport, nodes: u64) {
    eprintln!("LinkBench load, {nodes} nodes, in {:?}:", report.elapsed);
    for t in &report.tables {
        let avg = (t.key_bytes + t.value_bytes) as f64 / t.rows.max(1) as f64;
        eprintln!(
            "{:<24} {:>10} rows {:>12} key B {:>13} value B {:>7.1} B/row",
            t.name, t.rows, t.key_bytes, t.value_bytes, avg
        );
    }
    eprintln!("total {} rows, {} bytes", report.rows(), report.bytes());
}

#[test]
fn the_graph_has_a_power_law_out_degree() {
    let nodes = 100_000;
    let linkbench = LinkBench::new(LinkBenchConfig::new(nodes)).unwrap();
    let mut degrees: Vec<u64> = (1..=nodes).map(|id| linkbench.out_degree(id)).collect();
    let links: u64 = degrees.iter().sum();
    let without = degrees.iter().filter(|&&d| d == 0).count() as f64 / nodes as f64;
    assert!((without - 0.45).abs() < 0.01, "{without}");
    let mean = links as f64 / nodes as f64;
    assert!((2.5..5.0).contains(&mean), "mean out-degree {mean}");
    degrees.sort_unstable_by(|a, b| b.cmp(a));
    let top_percent: u64 = degrees[..1000].iter().sum();
    assert!(
        top_percent * 4 > links,
        "the top 1% of nodes hold over a quarter of the links"
    );

    let kv = MemoryKv::new();
    let report = linkbench.load(&kv, &mut |_| {}).unwrap();
    print(&report, nodes);
    assert_eq!(report.table("linkbench.link").unwrap().rows, links);
    let linked = degrees.iter().filter(|&&d| d > 0).count() as u64;
    // Each linked node has a count row per type it has links of (2 types, degree >= 1).
    let counts = report.table("linkbench.count").unwrap().rows;
    assert!((linked..=2 * linked).contains(&counts));
    // Median payloads: links about 8 bytes (+13 bytes of row), nodes about 128 (+18).
    let link = report.table("linkbench.link").unwrap();
    let link_value = link.value_bytes as f64 / link.rows as f64;
    assert!((16.0..32.0).contains(&link_value), "{link_value}");
    let node = report.table("linkbench.node").unwrap();
    let node_value = node.value_bytes as f64 / node.rows as f64;
    assert!((140.0..260.0).contains(&node_value), "{node_value}");
}

#[test]
#[ignore = "load-size measurement for docs/workloads.md (about 10 s)"]
fn load_size_per_million_nodes() {
    let nodes = 1_000_000;
    let linkbench = LinkBench::new(LinkBenchConfig::new(nodes)).unwrap();
    let kv = MemoryKv::new();
    let report = linkbench.load(&kv, &mut |_| {}).unwrap();
    print(&report, nodes);
    assert!(linkbench.check(&kv).unwrap().is_consistent());
}
