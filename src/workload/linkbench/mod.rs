//! LinkBench (Armstrong et al., SIGMOD 2013; facebookarchive/linkbench) on the key-value
//! interface: the social-graph workload of the LRU-C paper's Figure 7b.
//!
//! Tables as LinkBench's MySQL schema ([`schema`]): nodes, links with their `id1_type`
//! index, and the per-(id1, link_type) count table. The load gives each of `nodes` nodes a
//! payload (log-normal size, median 128 bytes) and `out_degree(id1)` links per node split
//! over `link_type_count` (2) types, to id2 = id1 + j, with log-normal payloads (median 8
//! bytes) and times spread over the last 2^32 ms, plus their count rows.
//!
//! The request mix is LinkBench's `config/FBWorkload.properties` (percent):
//!
//! | op | share | LinkBench |
//! |----|-------|-----------|
//! | add_link | 8.9886601 | `addlink` (id2 new with p 0.95) |
//! | delete_link | 2.9907664 | `deletelink`: hide, decrement the count |
//! | update_link | 8.0122125 | `updatelink`: upsert an existing link (p 0.9) |
//! | count_link | 4.8863567 | `countlink` |
//! | multiget_link | 0.5261142 | `getlink`: 1-127 id2s, geometric p 0.382 |
//! | get_link_list | 50.7119145 | `getlinklist`: visible links newest first, at most 10,000 |
//! | add_node | 2.5732789 | `addnode`: the next id |
//! | update_node | 7.366437 | `updatenode` |
//! | delete_node | 1.0115914 | `deletenode` |
//! | get_node | 12.9326683 | `getnode` |
//!
//! Ids are skewed as LinkBench configures them: link reads Zipf(0.8) and link writes
//! Zipf(0.741) over the node ids, 99.5% (reads) and 95% (writes) of them through a
//! permutation unrelated to the out-degree and the rest through the degree permutation (so
//! popular ids have many links); node reads Zipf(0.625), node updates Zipf(0.606), node
//! deletes uniform. Each operation is one transaction, retried on conflict up to
//! `max_attempts`; add_link, update_link and delete_link keep the link row, its index entry
//! and the count row in step, as LinkStoreMysql's transactions do.
//!
//! Where this port simplifies LinkBench:
//! - the out-degree comes from a power law (45% of the nodes without links, a Pareto tail
//!   with index 1.15 for the rest, at most 10^6 links; mean about 3.5 at 10^6 nodes) instead
//!   of the empirical distribution in `config/Distribution.dat` (mean 4.1);
//! - payloads are random printable bytes, not the motif generator's compressible data;
//!   node payloads are capped at `node_data_max` (1 KiB, LinkBench allows 1 MiB);
//! - the Zipf zeta is computed (exact head, integral tail) instead of LinkBench's empirical
//!   approximation; the id shufflers are Feistel permutations, not `InvertibleShuffler`;
//! - the link count is split evenly over the types (LinkBench's `calcLinkCount` miscounts
//!   the remainder);
//! - `get_link_list`'s history queries (0.3% of the lists that hit the 10,000 limit fetch
//!   older links) are not issued; no request-rate limit, warm-up or think time.
//!
//! Shared between clients: the next node id (atomic). No locks.

pub mod distributions;
pub mod ops;
pub mod schema;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use rand::Rng;

use distributions::{Permutation, Zipf, log_normal, out_degree};
use schema::{
    DEFAULT_LINK_TYPE, DEFAULT_NODE_TYPE, LINK_DATA_MAX, Link, LinkCount, Node, TREE_NAMES, Trees,
    VISIBILITY_DEFAULT, count_key, link_by_time_prefix, node_key,
};

use crate::error::{Error, Result};
use crate::kv::{Direction, KvEngine};
use crate::workload::record::{
    CheckReport, LoadProgress, LoadReport, RecordWorker, RecordWorkload, TableLoader, Weights,
    scan_prefix_batches, seeded_rng,
};

/// The operations, in the order of their shares and of `TxnOutcome::txn_type`.
pub const OP_NAMES: [&str; 10] = [
    "add_link",
    "delete_link",
    "update_link",
    "count_link",
    "multiget_link",
    "get_link_list",
    "add_node",
    "update_node",
    "delete_node",
    "get_node",
];

/// LinkBench's default request mix (`FBWorkload.properties`), in [`OP_NAMES`] order.
pub const FB_WORKLOAD_SHARES: [f64; 10] = [
    8.988_660_1,
    2.990_766_4,
    8.012_212_5,
    4.886_356_7,
    0.526_114_2,
    50.711_914_5,
    2.573_278_9,
    7.366_437,
    1.011_591_4,
    12.932_668_3,
];

/// Rows per transaction when `check` scans a tree.
const CHECK_BATCH: usize = 4096;
/// Keys of the three id permutations.
const DEGREE_PERMUTATION: u64 = 0xd1;
const UNCORRELATED_PERMUTATION: u64 = 0xd2;
const NODE_PERMUTATION: u64 = 0xd3;

/// A LinkBench run's parameters (LinkBench's property names in the field docs).
#[derive(Debug, Clone, serde::Serialize)]
pub struct LinkBenchConfig {
    /// Nodes loaded (`maxid1 - startid1`; LinkBench's default 10^7, about 10 GB in MySQL).
    pub nodes: u64,
    /// `startid1`.
    pub start_id: u64,
    /// `link_type_count`.
    pub link_type_count: u32,
    /// Operation shares in percent, in [`OP_NAMES`] order.
    pub shares: [f64; 10],
    /// `link_datasize`: median link payload.
    pub link_data_median: f64,
    /// `node_datasize`: median node payload.
    pub node_data_median: f64,
    /// Largest node payload + 1 (LinkBench: 1 MiB; here at most 65,535).
    pub node_data_max: usize,
    /// Sigma of the log-normal payload sizes (LinkBench: 1).
    pub data_sigma: f64,
    /// `read_shape` (and `read_uncorr_shape`).
    pub read_shape: f64,
    /// `read_uncorr_blend` in percent.
    pub read_uncorr_blend: f64,
    /// `write_shape` (and `write_uncorr_shape`).
    pub write_shape: f64,
    /// `write_uncorr_blend` in percent.
    pub write_uncorr_blend: f64,
    /// `node_read_shape`.
    pub node_read_shape: f64,
    /// `node_update_shape`.
    pub node_update_shape: f64,
    /// `link_multiget_dist_prob`.
    pub multiget_p: f64,
    /// `link_multiget_dist_max` (exclusive).
    pub multiget_max: u64,
    /// LinkStore's `DEFAULT_LIMIT` for `get_link_list`.
    pub range_limit: usize,
    /// Share of nodes loaded without links.
    pub zero_degree_share: f64,
    /// Pareto tail index of the out-degree of linked nodes.
    pub degree_tail_index: f64,
    /// Most links a node is loaded with.
    pub degree_max: u64,
    /// Seed of the load and of the clients.
    pub seed: u64,
    /// Attempts per operation before a conflict is returned as an error.
    pub max_attempts: usize,
}

impl LinkBenchConfig {
    /// LinkBench's defaults over `nodes` nodes.
    #[must_use]
    pub fn new(nodes: u64) -> LinkBenchConfig {
        LinkBenchConfig {
            nodes,
            start_id: 1,
            link_type_count: 2,
            shares: FB_WORKLOAD_SHARES,
            link_data_median: 8.0,
            node_data_median: 128.0,
            node_data_max: 1024,
            data_sigma: 1.0,
            read_shape: 0.8,
            read_uncorr_blend: 99.5,
            write_shape: 0.741,
            write_uncorr_blend: 95.0,
            node_read_shape: 0.625,
            node_update_shape: 0.606,
            multiget_p: 0.382,
            multiget_max: 128,
            range_limit: 10_000,
            zero_degree_share: 0.45,
            degree_tail_index: 1.15,
            degree_max: 1_000_000,
            seed: 0x11b,
            max_attempts: 100,
        }
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Config`] naming the bad one.
    pub fn validate(&self) -> Result<()> {
        let bad = |why: String| Err(Error::Config(format!("LinkBench: {why}")));
        if self.nodes < 2 || self.start_id == 0 || self.start_id.checked_add(self.nodes).is_none() {
            return bad(format!("nodes {} from id {}", self.nodes, self.start_id));
        }
        if self.link_type_count == 0 {
            return bad("link_type_count must be at least 1".into());
        }
        let shapes = [
            self.read_shape,
            self.write_shape,
            self.node_read_shape,
            self.node_update_shape,
        ];
        if shapes.iter().any(|&s| !(s > 0.0 && s < 1.0)) {
            return bad(format!("Zipf shapes {shapes:?} must lie in (0, 1)"));
        }
        let blends = [self.read_uncorr_blend, self.write_uncorr_blend];
        if blends.iter().any(|b| !(0.0..=100.0).contains(b)) {
            return bad(format!("blends {blends:?} must be percentages"));
        }
        if !(1..=usize::from(u16::MAX)).contains(&self.node_data_max) {
            return bad(format!(
                "node_data_max {} outside 1..=65535",
                self.node_data_max
            ));
        }
        if !(self.multiget_p > 0.0 && self.multiget_p < 1.0) || self.multiget_max < 2 {
            return bad("multiget needs 0 < p < 1 and max >= 2".into());
        }
        if !(0.0..1.0).contains(&self.zero_degree_share) || self.degree_tail_index <= 0.0 {
            return bad("degree needs 0 <= zero share < 1 and a positive tail index".into());
        }
        if self.range_limit == 0 || self.max_attempts == 0 || self.degree_max == 0 {
            return bad("range_limit, max_attempts and degree_max must be positive".into());
        }
        Weights::from_percent(self.shares, &OP_NAMES).map(|_| ())
    }
}

/// What the clients share: the configuration, the distributions, the next node id.
#[derive(Debug)]
struct Shared {
    config: LinkBenchConfig,
    weights: Weights<10>,
    read_zipf: Zipf,
    write_zipf: Zipf,
    node_read_zipf: Zipf,
    node_update_zipf: Zipf,
    degree_permutation: Permutation,
    uncorrelated_permutation: Permutation,
    node_permutation: Permutation,
    next_node: AtomicU64,
}

impl Shared {
    /// Links node `id1` was loaded with, over all types.
    fn out_degree(&self, id1: u64) -> u64 {
        let c = &self.config;
        if id1 < c.start_id || id1 - c.start_id >= c.nodes {
            return 0;
        }
        let rank = self.degree_permutation.unmap(id1 - c.start_id);
        out_degree(
            rank,
            c.nodes,
            c.zero_degree_share,
            c.degree_tail_index,
            c.degree_max,
        )
    }

    /// Links of type `link_type` node `id1` was loaded with (the degree split evenly).
    fn link_count(&self, id1: u64, link_type: u64) -> u64 {
        let types = u64::from(self.config.link_type_count);
        let index = link_type.saturating_sub(DEFAULT_LINK_TYPE);
        let total = self.out_degree(id1);
        total / types + u64::from(index < total % types)
    }

    /// The links of (id1, link_type) as loaded, id2 ascending (deterministic per seed).
    fn loaded_links(&self, id1: u64, link_type: u64, now_ms: u64) -> Vec<Link> {
        let mut rng = seeded_rng(self.config.seed, &[0x11, id1, link_type]);
        (0..self.link_count(id1, link_type))
            .map(|j| Link {
                id1,
                id2: id1 + j,
                link_type,
                visibility: VISIBILITY_DEFAULT,
                data: self.link_data(&mut rng),
                // LinkBench spreads load times over the 2^32 ms before the load.
                time: now_ms.saturating_sub(1 << 32) + rng.gen_range(0..1u64 << 32),
                version: 0,
            })
            .collect()
    }

    fn link_data(&self, rng: &mut impl Rng) -> Vec<u8> {
        let c = &self.config;
        let len = log_normal(rng, c.link_data_median, c.data_sigma, LINK_DATA_MAX + 1);
        printable(rng, len)
    }

    fn node_data(&self, rng: &mut impl Rng) -> Vec<u8> {
        let c = &self.config;
        let len = log_normal(rng, c.node_data_median, c.data_sigma, c.node_data_max);
        printable(rng, len)
    }

    fn link_types(&self) -> impl Iterator<Item = u64> + use<> {
        (0..u64::from(self.config.link_type_count)).map(|i| DEFAULT_LINK_TYPE + i)
    }

    fn node_ids(&self) -> std::ops::Range<u64> {
        self.config.start_id..self.config.start_id + self.config.nodes
    }
}

/// `len` random printable bytes.
fn printable(rng: &mut impl Rng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.gen_range(b' '..=b'~')).collect()
}

fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The LinkBench workload.
#[derive(Debug, Clone)]
pub struct LinkBench {
    shared: Arc<Shared>,
}

impl LinkBench {
    /// A workload with `config`.
    ///
    /// # Errors
    /// An invalid configuration.
    pub fn new(config: LinkBenchConfig) -> Result<LinkBench> {
        config.validate()?;
        let n = config.nodes;
        let shared = Shared {
            weights: Weights::from_percent(config.shares, &OP_NAMES)?,
            read_zipf: Zipf::new(n, config.read_shape),
            write_zipf: Zipf::new(n, config.write_shape),
            node_read_zipf: Zipf::new(n, config.node_read_shape),
            node_update_zipf: Zipf::new(n, config.node_update_shape),
            degree_permutation: Permutation::new(n, config.seed ^ DEGREE_PERMUTATION),
            uncorrelated_permutation: Permutation::new(n, config.seed ^ UNCORRELATED_PERMUTATION),
            node_permutation: Permutation::new(n, config.seed ^ NODE_PERMUTATION),
            next_node: AtomicU64::new(config.start_id + n),
            config,
        };
        Ok(LinkBench {
            shared: Arc::new(shared),
        })
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &LinkBenchConfig {
        &self.shared.config
    }

    /// Links node `id1` is loaded with, over all types.
    #[must_use]
    pub fn out_degree(&self, id1: u64) -> u64 {
        self.shared.out_degree(id1)
    }
}

impl RecordWorkload for LinkBench {
    fn name(&self) -> &'static str {
        "linkbench"
    }

    fn txn_types(&self) -> &[&'static str] {
        &OP_NAMES
    }

    fn load(
        &self,
        engine: &dyn KvEngine,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<LoadReport> {
        let shared = &*self.shared;
        let now_ms = now_millis();
        let now_s = (now_ms / 1000) as u32;
        let mut loader = TableLoader::new(engine, TREE_NAMES.len(), progress);
        let mut node_rng = seeded_rng(shared.config.seed, &[0x10]);
        let nodes = shared.node_ids().map(|id| {
            let node = Node {
                node_type: DEFAULT_NODE_TYPE,
                version: 1,
                time: now_s,
                data: shared.node_data(&mut node_rng),
            };
            (node_key(id).to_vec(), node.encode())
        });
        loader.load(TREE_NAMES[0], nodes)?;
        let links = shared.link_types().flat_map(|link_type| {
            shared.node_ids().flat_map(move |id1| {
                shared
                    .loaded_links(id1, link_type, now_ms)
                    .into_iter()
                    .map(|link| (link.key().to_vec(), link.encode()))
            })
        });
        loader.load(TREE_NAMES[1], links)?;
        let index = shared.node_ids().flat_map(|id1| {
            shared.link_types().flat_map(move |link_type| {
                let mut links = shared.loaded_links(id1, link_type, now_ms);
                links.sort_unstable_by_key(|link| (link.time, link.id2));
                links
                    .into_iter()
                    .map(|link| (link.index_key().to_vec(), link.index_value()))
            })
        });
        loader.load(TREE_NAMES[2], index)?;
        let counts = shared.node_ids().flat_map(|id1| {
            shared.link_types().filter_map(move |link_type| {
                let links = shared.loaded_links(id1, link_type, now_ms);
                let newest = links.iter().map(|link| link.time).max()?;
                let row = LinkCount {
                    count: links.len() as u64,
                    time: newest,
                    version: 0,
                };
                Some((count_key(id1, link_type).to_vec(), row.encode()))
            })
        });
        loader.load(TREE_NAMES[3], counts)?;
        Ok(loader.finish())
    }

    fn worker(&self, thread: usize) -> Box<dyn RecordWorker> {
        Box::new(ops::LinkBenchWorker::new(Arc::clone(&self.shared), thread))
    }

    fn check(&self, engine: &dyn KvEngine) -> Result<CheckReport> {
        check(engine)
    }
}

/// The conditions `check` verifies.
pub const CONDITION_COUNTS: &str = "count = visible links per (id1, link_type)";
/// Index entries match link rows.
pub const CONDITION_INDEX: &str = "index entry = its link row";
/// As many index entries as link rows.
pub const CONDITION_ROWS: &str = "link rows = index entries";
/// Node rows decode.
pub const CONDITION_NODES: &str = "node rows decode";

/// Verifies a LinkBench database: each count row equals the number of visible links of its
/// (id1, link_type) (and no visible link lacks one), every index entry matches its link row,
/// the link and index trees hold as many rows, node rows decode. Cost: every link, index,
/// count and node row is read once, plus one point read per index entry.
///
/// # Errors
/// Malformed rows, engine errors.
pub fn check(engine: &dyn KvEngine) -> Result<CheckReport> {
    let trees = Trees::open(engine)?;
    let mut report = CheckReport {
        conditions: [
            CONDITION_COUNTS,
            CONDITION_INDEX,
            CONDITION_ROWS,
            CONDITION_NODES,
        ]
        .map(String::from)
        .to_vec(),
        ..CheckReport::default()
    };
    let index_rows = check_index(engine, &trees, &mut report)?;
    check_counts(engine, &trees, &mut report)?;
    let link_rows = scan_prefix_batches(engine, trees.link, &[], CHECK_BATCH, &mut |_| Ok(()))?;
    report.rows_scanned += link_rows;
    if link_rows != index_rows {
        report.violate(
            CONDITION_ROWS,
            "linkbench.link",
            format!("{link_rows} link rows, {index_rows} index entries"),
        );
    }
    let nodes = scan_prefix_batches(engine, trees.node, &[], CHECK_BATCH, &mut |batch| {
        batch
            .iter()
            .try_for_each(|(_, value)| Node::decode(value).map(|_| ()))
    })?;
    report.rows_scanned += nodes;
    Ok(report)
}

/// A run of visible index entries of one (id1, link_type).
#[derive(Debug, Default)]
struct VisibleRun {
    list: Option<(u64, u64)>,
    links: u64,
}

/// Walks the index: each entry against its link row; visible entries counted per list and
/// compared with the count rows. Returns the entries seen.
fn check_index(engine: &dyn KvEngine, trees: &Trees, report: &mut CheckReport) -> Result<u64> {
    let mut run = VisibleRun::default();
    let rows = scan_prefix_batches(engine, trees.link_by_time, &[], CHECK_BATCH, &mut |batch| {
        let mut txn = engine.begin()?;
        for (key, value) in batch {
            let entry = Link::decode_index(key, value)?;
            match txn.get(trees.link, &entry.key())? {
                Some(row) if Link::decode(&entry.key(), &row)? == entry => {}
                found => report.violate(
                    CONDITION_INDEX,
                    format!(
                        "id1 {}, type {}, id2 {}",
                        entry.id1, entry.link_type, entry.id2
                    ),
                    format!(
                        "index entry {entry:?}, link row present: {}",
                        found.is_some()
                    ),
                ),
            }
            report.rows_scanned += 1;
            if entry.visibility != VISIBILITY_DEFAULT {
                continue;
            }
            let list = (entry.id1, entry.link_type);
            if run.list != Some(list) {
                close_run(&mut *txn, trees, &run, report)?;
                run = VisibleRun {
                    list: Some(list),
                    links: 0,
                };
            }
            run.links += 1;
        }
        txn.commit()
    })?;
    let mut txn = engine.begin()?;
    close_run(&mut *txn, trees, &run, report)?;
    txn.commit()?;
    Ok(rows)
}

/// Compares a finished run of visible links with its count row.
fn close_run(
    txn: &mut dyn crate::kv::KvTxn,
    trees: &Trees,
    run: &VisibleRun,
    report: &mut CheckReport,
) -> Result<()> {
    let Some((id1, link_type)) = run.list else {
        return Ok(());
    };
    let count = txn
        .get(trees.count, &count_key(id1, link_type))?
        .map(|bytes| LinkCount::decode(&bytes))
        .transpose()?
        .map_or(0, |row| row.count);
    if count != run.links {
        report.violate(
            CONDITION_COUNTS,
            format!("id1 {id1}, type {link_type}"),
            format!("count {count}, visible links {}", run.links),
        );
    }
    Ok(())
}

/// Count rows above zero must have visible links (exact counts were compared by the index
/// walk, which only meets lists with visible links).
fn check_counts(engine: &dyn KvEngine, trees: &Trees, report: &mut CheckReport) -> Result<()> {
    let rows = scan_prefix_batches(engine, trees.count, &[], CHECK_BATCH, &mut |batch| {
        let mut txn = engine.begin()?;
        for (key, value) in batch {
            let count = LinkCount::decode(value)?.count;
            if count == 0 {
                continue;
            }
            let (Some(id1), Some(link_type)) = (
                key.get(..8)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_be_bytes),
                key.get(8..16)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_be_bytes),
            ) else {
                return Err(Error::InvalidArgument(format!(
                    "malformed LinkBench count key {key:02x?}"
                )));
            };
            let prefix = link_by_time_prefix(id1, link_type, VISIBILITY_DEFAULT);
            let mut any = false;
            txn.scan(
                trees.link_by_time,
                (
                    std::ops::Bound::Included(&prefix[..]),
                    std::ops::Bound::Unbounded,
                ),
                Direction::Forward,
                1,
                &mut |key, _| {
                    any = key.starts_with(&prefix);
                    false
                },
            )?;
            if !any {
                report.violate(
                    CONDITION_COUNTS,
                    format!("id1 {id1}, type {link_type}"),
                    format!("count {count}, no visible links"),
                );
            }
        }
        txn.commit()
    })?;
    report.rows_scanned += rows;
    Ok(())
}
