//! LinkBench's ten request types (`LinkBenchRequest.oneRequest`) and their LinkStoreMysql
//! semantics, each one transaction:
//! - add_link / update_link: upsert the link; a new visible link, or a hidden one made
//!   visible, adds 1 to its count row (creating it with count 1); an existing one gets the
//!   new data, time and version; the index entry moves with the time and visibility.
//! - delete_link: a visible link becomes hidden (not expunged, LinkBench's default) and its
//!   count drops by one (never below 0; a missing count row is created with 0).
//! - count_link: the count row (0 when missing).
//! - multiget_link: point reads of 1-127 links of one (id1, link_type).
//! - get_link_list: the visible links of (id1, link_type) newest first, at most
//!   `range_limit`.
//! - add_node (next id), update_node (version 2, new payload, if present), delete_node,
//!   get_node.
//!
//! id2 choice (`ID2Chooser.chooseForOp`): id1 + uniform [0, ceil(loaded links / p)) with
//! p = 0.05 for adds (mostly new links), 0.9 for updates and deletes, 0.5 for multigets.

use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rand::Rng;
use rand::rngs::SmallRng;

use super::distributions::{Permutation, Zipf, geometric};
use super::schema::{
    DEFAULT_LINK_TYPE, DEFAULT_NODE_TYPE, Link, LinkCount, Node, Trees, VISIBILITY_DEFAULT,
    VISIBILITY_HIDDEN, count_key, link_by_time_prefix, link_key, node_id_of_key, node_key,
};
use super::{Shared, now_millis};
use crate::error::Result;
use crate::kv::{Direction, KvEngine, KvTxn, TreeId};
use crate::workload::record::{RecordWorker, TxnEnd, TxnOutcome, run_txn, seeded_rng};

/// Probability that an added link already exists (`ID2Chooser.P_ADD_EXIST`).
const P_ADD_EXIST: f64 = 0.05;
/// For updates (`P_UPDATE_EXIST`).
const P_UPDATE_EXIST: f64 = 0.9;
/// For deletes (`P_DELETE_EXIST`).
const P_DELETE_EXIST: f64 = 0.9;
/// For multigets (`P_GET_EXIST`).
const P_GET_EXIST: f64 = 0.5;
/// Draws for a distinct id2 in a multiget (`ID2Chooser.MAX_UNIQ_ITERS`).
const UNIQUE_ID2_DRAWS: usize = 100;

/// The operations, indexed as `OP_NAMES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    AddLink,
    DeleteLink,
    UpdateLink,
    CountLink,
    MultigetLink,
    GetLinkList,
    AddNode,
    UpdateNode,
    DeleteNode,
    GetNode,
}

const OPS: [Op; 10] = [
    Op::AddLink,
    Op::DeleteLink,
    Op::UpdateLink,
    Op::CountLink,
    Op::MultigetLink,
    Op::GetLinkList,
    Op::AddNode,
    Op::UpdateNode,
    Op::DeleteNode,
    Op::GetNode,
];

/// One LinkBench client.
pub struct LinkBenchWorker {
    shared: Arc<Shared>,
    rng: SmallRng,
    trees: Option<Trees>,
    /// The operation the last `run_one` drew (for abort attribution).
    last_type: Option<usize>,
}

impl LinkBenchWorker {
    pub(super) fn new(shared: Arc<Shared>, thread: usize) -> LinkBenchWorker {
        let rng = seeded_rng(shared.config.seed, &[0xc1, thread as u64]);
        LinkBenchWorker {
            shared,
            rng,
            trees: None,
            last_type: None,
        }
    }

    /// Opens the trees and moves the node counter past the largest node id stored (nodes
    /// added by an earlier run of the same image).
    fn prepare(&mut self, engine: &dyn KvEngine) -> Result<Trees> {
        if let Some(trees) = self.trees {
            return Ok(trees);
        }
        let trees = Trees::open(engine)?;
        let mut txn = engine.begin()?;
        let mut largest = None;
        txn.scan(
            trees.node,
            crate::kv::FULL_RANGE,
            Direction::Backward,
            1,
            &mut |key, _| {
                largest = node_id_of_key(key);
                false
            },
        )?;
        txn.commit()?;
        if let Some(largest) = largest {
            self.shared
                .next_node
                .fetch_max(largest + 1, Ordering::Relaxed);
        }
        self.trees = Some(trees);
        Ok(trees)
    }

    /// An id from a Zipf through one of two permutations: `uncorrelated` with probability
    /// `blend_percent`, the degree permutation otherwise.
    fn skewed_id(&mut self, zipf: Zipf, uncorrelated: Permutation, blend_percent: f64) -> u64 {
        let rank = zipf.sample(&mut self.rng);
        let permutation = if self.rng.r#gen::<f64>() * 100.0 < blend_percent {
            uncorrelated
        } else {
            self.shared.degree_permutation
        };
        self.shared.config.start_id + permutation.map(rank)
    }

    fn link_read_id(&mut self) -> u64 {
        let s = Arc::clone(&self.shared);
        self.skewed_id(
            s.read_zipf,
            s.uncorrelated_permutation,
            s.config.read_uncorr_blend,
        )
    }

    fn link_write_id(&mut self) -> u64 {
        let s = Arc::clone(&self.shared);
        self.skewed_id(
            s.write_zipf,
            s.uncorrelated_permutation,
            s.config.write_uncorr_blend,
        )
    }

    fn node_id(&mut self, zipf: Zipf) -> u64 {
        let rank = zipf.sample(&mut self.rng);
        self.shared.config.start_id + self.shared.node_permutation.map(rank)
    }

    fn link_type(&mut self) -> u64 {
        DEFAULT_LINK_TYPE + u64::from(self.rng.gen_range(0..self.shared.config.link_type_count))
    }

    /// The range id2 is drawn from so that it exists with probability about `p_exist`.
    fn id2_range(&self, id1: u64, link_type: u64, p_exist: f64) -> u64 {
        let loaded = self.shared.link_count(id1, link_type);
        ((loaded as f64 / p_exist).ceil() as u64).max(1)
    }

    fn id2_for(&mut self, id1: u64, link_type: u64, p_exist: f64) -> u64 {
        let range = self.id2_range(id1, link_type, p_exist);
        id1 + self.rng.gen_range(0..range)
    }

    fn new_link(&mut self, p_exist: f64) -> Link {
        let id1 = self.link_write_id();
        let link_type = self.link_type();
        let id2 = self.id2_for(id1, link_type, p_exist);
        Link {
            id1,
            id2,
            link_type,
            visibility: VISIBILITY_DEFAULT,
            data: self.shared.link_data(&mut self.rng),
            time: now_millis(),
            version: 0,
        }
    }

    /// `chooseMultipleForOp`: `count` distinct id2s (or the first `count` when the range is
    /// that small).
    fn id2s_for(&mut self, id1: u64, link_type: u64, count: u64) -> Vec<u64> {
        let range = self.id2_range(id1, link_type, P_GET_EXIST);
        if range <= count {
            return (0..count).map(|i| id1 + i).collect();
        }
        let mut id2s = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let mut id2 = id1 + self.rng.gen_range(0..range);
            for _ in 0..UNIQUE_ID2_DRAWS {
                if !id2s.contains(&id2) {
                    break;
                }
                id2 = id1 + self.rng.gen_range(0..range);
            }
            id2s.push(id2);
        }
        id2s
    }

    fn run(&mut self, op: Op, engine: &dyn KvEngine, trees: &Trees) -> Result<usize> {
        let attempts = self.shared.config.max_attempts;
        let commit = |value: Result<()>| value.map(|()| ((), TxnEnd::Commit));
        let retries = match op {
            Op::AddLink | Op::UpdateLink => {
                let p = if op == Op::AddLink {
                    P_ADD_EXIST
                } else {
                    P_UPDATE_EXIST
                };
                let link = self.new_link(p);
                run_txn(engine, attempts, |txn| {
                    commit(add_link(txn, trees, &link).map(|_| ()))
                })?
                .2
            }
            Op::DeleteLink => {
                let id1 = self.link_write_id();
                let link_type = self.link_type();
                let id2 = self.id2_for(id1, link_type, P_DELETE_EXIST);
                let now = now_millis();
                run_txn(engine, attempts, |txn| {
                    commit(delete_link(txn, trees, id1, link_type, id2, now))
                })?
                .2
            }
            Op::CountLink => {
                let (id1, link_type) = (self.link_read_id(), self.link_type());
                run_txn(engine, attempts, |txn| {
                    commit(count_links(txn, trees, id1, link_type).map(|_| ()))
                })?
                .2
            }
            Op::MultigetLink => {
                let (id1, link_type) = (self.link_read_id(), self.link_type());
                let c = &self.shared.config;
                let count = geometric(&mut self.rng, c.multiget_p, 1, c.multiget_max);
                let id2s = self.id2s_for(id1, link_type, count);
                run_txn(engine, attempts, |txn| {
                    commit(multiget(txn, trees.link, id1, link_type, &id2s).map(|_| ()))
                })?
                .2
            }
            Op::GetLinkList => {
                let (id1, link_type) = (self.link_read_id(), self.link_type());
                let limit = self.shared.config.range_limit;
                run_txn(engine, attempts, |txn| {
                    commit(link_list(txn, trees, id1, link_type, limit).map(|_| ()))
                })?
                .2
            }
            Op::AddNode | Op::UpdateNode => self.write_node(op, engine, trees)?,
            Op::DeleteNode => {
                let c = &self.shared.config;
                let id = c.start_id + self.rng.gen_range(0..c.nodes);
                run_txn(engine, attempts, |txn| {
                    commit(txn.delete(trees.node, &node_key(id)).map(|_| ()))
                })?
                .2
            }
            Op::GetNode => {
                let id = self.node_id(self.shared.node_read_zipf);
                run_txn(engine, attempts, |txn| {
                    let node = txn.get(trees.node, &node_key(id))?;
                    commit(
                        node.map(|bytes| Node::decode(&bytes))
                            .transpose()
                            .map(|_| ()),
                    )
                })?
                .2
            }
        };
        Ok(retries)
    }

    fn write_node(&mut self, op: Op, engine: &dyn KvEngine, trees: &Trees) -> Result<usize> {
        let attempts = self.shared.config.max_attempts;
        let node = Node {
            node_type: DEFAULT_NODE_TYPE,
            version: if op == Op::AddNode { 1 } else { 2 },
            time: (now_millis() / 1000) as u32,
            data: self.shared.node_data(&mut self.rng),
        };
        let row = node.encode();
        if op == Op::AddNode {
            let id = self.shared.next_node.fetch_add(1, Ordering::Relaxed);
            let key = node_key(id);
            return Ok(run_txn(engine, attempts, |txn| {
                txn.put(trees.node, &key, &row)
                    .map(|()| ((), TxnEnd::Commit))
            })?
            .2);
        }
        let key = node_key(self.node_id(self.shared.node_update_zipf));
        Ok(run_txn(engine, attempts, |txn| {
            // MySQL's UPDATE ... WHERE id = ? AND type = ?: nothing when the node is gone.
            if txn.get(trees.node, &key)?.is_some() {
                txn.put(trees.node, &key, &row)?;
            }
            Ok(((), TxnEnd::Commit))
        })?
        .2)
    }
}

impl RecordWorker for LinkBenchWorker {
    fn run_one(&mut self, engine: &dyn KvEngine) -> Result<TxnOutcome> {
        self.last_type = None;
        let trees = self.prepare(engine)?;
        let index = self.shared.weights.draw(&mut self.rng);
        self.last_type = Some(index);
        let retries = self.run(OPS[index], engine, &trees)?;
        Ok(TxnOutcome {
            txn_type: index,
            retries,
            rolled_back: false,
        })
    }

    fn last_txn_type(&self) -> Option<usize> {
        self.last_type
    }
}

/// Adds `delta` (+1 or -1) to the count of (id1, link_type), creating the row if needed.
fn change_count(
    txn: &mut dyn KvTxn,
    trees: &Trees,
    id1: u64,
    link_type: u64,
    delta: i64,
    now: u64,
) -> Result<()> {
    let key = count_key(id1, link_type);
    let row = match txn.get(trees.count, &key)? {
        None => LinkCount {
            count: u64::from(delta > 0),
            time: now,
            version: 0,
        },
        Some(bytes) => {
            let old = LinkCount::decode(&bytes)?;
            LinkCount {
                count: old.count.saturating_add_signed(delta),
                time: now,
                version: old.version + 1,
            }
        }
    };
    txn.put(trees.count, &key, &row.encode())
}

/// LinkStoreMysql.addLink (see the module docs). Returns whether the link existed.
fn add_link(txn: &mut dyn KvTxn, trees: &Trees, link: &Link) -> Result<bool> {
    let key = link.key();
    let old = txn
        .get(trees.link, &key)?
        .map(|bytes| Link::decode(&key, &bytes))
        .transpose()?;
    let delta = match &old {
        None => i64::from(link.visibility == VISIBILITY_DEFAULT),
        Some(old) if old.visibility != link.visibility => {
            if link.visibility == VISIBILITY_DEFAULT {
                1
            } else {
                -1
            }
        }
        Some(_) => 0,
    };
    if let Some(old) = &old {
        txn.delete(trees.link_by_time, &old.index_key())?;
    }
    txn.put(trees.link, &key, &link.encode())?;
    txn.put(trees.link_by_time, &link.index_key(), &link.index_value())?;
    if delta != 0 {
        change_count(txn, trees, link.id1, link.link_type, delta, link.time)?;
    }
    Ok(old.is_some())
}

/// LinkStoreMysql.deleteLink without expunge: a visible link becomes hidden.
fn delete_link(
    txn: &mut dyn KvTxn,
    trees: &Trees,
    id1: u64,
    link_type: u64,
    id2: u64,
    now: u64,
) -> Result<()> {
    let key = link_key(link_type, id1, id2);
    let Some(bytes) = txn.get(trees.link, &key)? else {
        return Ok(());
    };
    let old = Link::decode(&key, &bytes)?;
    if old.visibility == VISIBILITY_HIDDEN {
        return Ok(());
    }
    let hidden = Link {
        visibility: VISIBILITY_HIDDEN,
        ..old.clone()
    };
    txn.delete(trees.link_by_time, &old.index_key())?;
    txn.put(trees.link, &key, &hidden.encode())?;
    txn.put(
        trees.link_by_time,
        &hidden.index_key(),
        &hidden.index_value(),
    )?;
    change_count(txn, trees, id1, link_type, -1, now)
}

/// LinkStoreMysql.countLinks.
fn count_links(txn: &mut dyn KvTxn, trees: &Trees, id1: u64, link_type: u64) -> Result<u64> {
    Ok(txn
        .get(trees.count, &count_key(id1, link_type))?
        .map(|bytes| LinkCount::decode(&bytes))
        .transpose()?
        .map_or(0, |row| row.count))
}

/// LinkStoreMysql.multigetLinks. Returns the links found.
fn multiget(
    txn: &mut dyn KvTxn,
    tree: TreeId,
    id1: u64,
    link_type: u64,
    id2s: &[u64],
) -> Result<usize> {
    let mut found = 0;
    for &id2 in id2s {
        let key = link_key(link_type, id1, id2);
        if let Some(bytes) = txn.get(tree, &key)? {
            Link::decode(&key, &bytes)?;
            found += 1;
        }
    }
    Ok(found)
}

/// LinkStoreMysql.getLinkList: visible links newest first. Returns how many.
fn link_list(
    txn: &mut dyn KvTxn,
    trees: &Trees,
    id1: u64,
    link_type: u64,
    limit: usize,
) -> Result<usize> {
    let prefix = link_by_time_prefix(id1, link_type, VISIBILITY_DEFAULT);
    let mut end = prefix;
    end[16] += 1;
    let mut links = Vec::new();
    let mut malformed = None;
    txn.scan(
        trees.link_by_time,
        (Bound::Included(&prefix[..]), Bound::Excluded(&end[..])),
        Direction::Backward,
        limit,
        &mut |key, value| match Link::decode_index(key, value) {
            Ok(link) => {
                links.push(link);
                true
            }
            Err(err) => {
                malformed = Some(err);
                false
            }
        },
    )?;
    malformed.map_or(Ok(links.len()), Err)
}
