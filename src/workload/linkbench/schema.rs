//! LinkBench's MySQL schema as key-value trees.
//!
//! | tree | key (big-endian) | value | MySQL |
//! |------|------------------|-------|-------|
//! | `linkbench.node` | id u64 | [`Node`] | `nodetable`, PRIMARY KEY (id) |
//! | `linkbench.link` | link_type u64, id1 u64, id2 u64 | [`Link`] | `linktable`, PRIMARY KEY (link_type, id1, id2) |
//! | `linkbench.link_by_time` | id1, link_type, visibility u8, time u64, id2 | version, data | `linktable` KEY `id1_type` (id1, link_type, visibility, time, id2, version, data) |
//! | `linkbench.count` | id u64, link_type u64 | [`LinkCount`] | `counttable`, PRIMARY KEY (id, link_type) |
//!
//! `link_by_time` is the covering secondary index `get_link_list` reads newest first; it is
//! kept in step with `link` by every write. Decoders check lengths and report a malformed row
//! as [`crate::Error::InvalidArgument`].

use crate::error::Result;
use crate::kv::{KvEngine, TreeId};
use crate::workload::record::{RowReader, RowWriter};

/// LinkBench's `VISIBILITY_HIDDEN`.
pub const VISIBILITY_HIDDEN: u8 = 0;
/// LinkBench's `VISIBILITY_DEFAULT`.
pub const VISIBILITY_DEFAULT: u8 = 1;
/// LinkBench's `DEFAULT_LINK_TYPE`; types are this plus 0..link_type_count.
pub const DEFAULT_LINK_TYPE: u64 = 123_456_789;
/// LinkBench's `DEFAULT_NODE_TYPE`.
pub const DEFAULT_NODE_TYPE: u32 = 2048;
/// LinkBench's `MAX_LINK_DATA` (`data varchar(255)`).
pub const LINK_DATA_MAX: usize = 255;

/// The trees of a LinkBench database.
#[derive(Debug, Clone, Copy)]
pub struct Trees {
    /// Nodes.
    pub node: TreeId,
    /// Links by primary key.
    pub link: TreeId,
    /// Links by (id1, link_type, visibility, time, id2).
    pub link_by_time: TreeId,
    /// Visible-link counts per (id1, link_type).
    pub count: TreeId,
}

/// Tree names, in load order.
pub const TREE_NAMES: [&str; 4] = [
    "linkbench.node",
    "linkbench.link",
    "linkbench.link_by_time",
    "linkbench.count",
];

impl Trees {
    /// Opens (creating if needed) the trees.
    ///
    /// # Errors
    /// The engine's.
    pub fn open(engine: &dyn KvEngine) -> Result<Trees> {
        let [node, link, link_by_time, count] = TREE_NAMES;
        Ok(Trees {
            node: engine.open_tree(node)?,
            link: engine.open_tree(link)?,
            link_by_time: engine.open_tree(link_by_time)?,
            count: engine.open_tree(count)?,
        })
    }
}

/// Node key.
#[must_use]
pub fn node_key(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

/// The id in a node key.
#[must_use]
pub fn node_id_of_key(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.get(..8)?.try_into().ok()?))
}

/// Link primary key.
#[must_use]
pub fn link_key(link_type: u64, id1: u64, id2: u64) -> [u8; 24] {
    let mut key = [0u8; 24];
    key[..8].copy_from_slice(&link_type.to_be_bytes());
    key[8..16].copy_from_slice(&id1.to_be_bytes());
    key[16..].copy_from_slice(&id2.to_be_bytes());
    key
}

/// Prefix of (id1, link_type)'s index entries with `visibility`.
#[must_use]
pub fn link_by_time_prefix(id1: u64, link_type: u64, visibility: u8) -> [u8; 17] {
    let mut key = [0u8; 17];
    key[..8].copy_from_slice(&id1.to_be_bytes());
    key[8..16].copy_from_slice(&link_type.to_be_bytes());
    key[16] = visibility;
    key
}

/// Index key.
#[must_use]
pub fn link_by_time_key(id1: u64, link_type: u64, visibility: u8, time: u64, id2: u64) -> [u8; 33] {
    let mut key = [0u8; 33];
    key[..17].copy_from_slice(&link_by_time_prefix(id1, link_type, visibility));
    key[17..25].copy_from_slice(&time.to_be_bytes());
    key[25..].copy_from_slice(&id2.to_be_bytes());
    key
}

/// Count key.
#[must_use]
pub fn count_key(id1: u64, link_type: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&id1.to_be_bytes());
    key[8..].copy_from_slice(&link_type.to_be_bytes());
    key
}

fn be_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// A link: its key columns and its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Source node.
    pub id1: u64,
    /// Destination id.
    pub id2: u64,
    /// Link type.
    pub link_type: u64,
    /// `VISIBILITY_DEFAULT` or `VISIBILITY_HIDDEN`.
    pub visibility: u8,
    /// Payload, at most 255 bytes.
    pub data: Vec<u8>,
    /// Milliseconds since the epoch.
    pub time: u64,
    /// Version.
    pub version: u32,
}

impl Link {
    /// Primary key.
    #[must_use]
    pub fn key(&self) -> [u8; 24] {
        link_key(self.link_type, self.id1, self.id2)
    }

    /// Primary row.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        RowWriter::with_capacity(16 + self.data.len())
            .u8(self.visibility)
            .u64(self.time)
            .u32(self.version)
            .var8(&self.data)
            .finish()
    }

    /// Index key.
    #[must_use]
    pub fn index_key(&self) -> [u8; 33] {
        link_by_time_key(
            self.id1,
            self.link_type,
            self.visibility,
            self.time,
            self.id2,
        )
    }

    /// Index value (the covered columns).
    #[must_use]
    pub fn index_value(&self) -> Vec<u8> {
        RowWriter::with_capacity(8 + self.data.len())
            .u32(self.version)
            .var8(&self.data)
            .finish()
    }

    /// A link from its primary key and row.
    ///
    /// # Errors
    /// A malformed key or row.
    pub fn decode(key: &[u8], bytes: &[u8]) -> Result<Link> {
        let bad_key = || {
            crate::error::Error::InvalidArgument(format!("malformed LinkBench link key {key:02x?}"))
        };
        if key.len() != 24 {
            return Err(bad_key());
        }
        let mut row = RowReader::new("LinkBench link", bytes);
        let link = Link {
            link_type: be_u64(key, 0).ok_or_else(bad_key)?,
            id1: be_u64(key, 8).ok_or_else(bad_key)?,
            id2: be_u64(key, 16).ok_or_else(bad_key)?,
            visibility: row.u8()?,
            time: row.u64()?,
            version: row.u32()?,
            data: row.var8()?.to_vec(),
        };
        row.end()?;
        Ok(link)
    }

    /// A link from an index key and value.
    ///
    /// # Errors
    /// A malformed key or value.
    pub fn decode_index(key: &[u8], bytes: &[u8]) -> Result<Link> {
        let bad_key = || {
            crate::error::Error::InvalidArgument(format!(
                "malformed LinkBench link_by_time key {key:02x?}"
            ))
        };
        if key.len() != 33 {
            return Err(bad_key());
        }
        let mut row = RowReader::new("LinkBench link_by_time", bytes);
        let link = Link {
            id1: be_u64(key, 0).ok_or_else(bad_key)?,
            link_type: be_u64(key, 8).ok_or_else(bad_key)?,
            visibility: key[16],
            time: be_u64(key, 17).ok_or_else(bad_key)?,
            id2: be_u64(key, 25).ok_or_else(bad_key)?,
            version: row.u32()?,
            data: row.var8()?.to_vec(),
        };
        row.end()?;
        Ok(link)
    }
}

/// A node row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Node type.
    pub node_type: u32,
    /// Version.
    pub version: u64,
    /// Seconds since the epoch.
    pub time: u32,
    /// Payload.
    pub data: Vec<u8>,
}

impl Node {
    /// Bytes of the stored value of a node with `data_len` bytes of payload.
    #[must_use]
    pub fn encoded_len(data_len: usize) -> usize {
        18 + data_len
    }

    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        RowWriter::with_capacity(Node::encoded_len(self.data.len()))
            .u32(self.node_type)
            .u64(self.version)
            .u32(self.time)
            .var16(&self.data)
            .finish()
    }

    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &[u8]) -> Result<Node> {
        let mut row = RowReader::new("LinkBench node", bytes);
        let node = Node {
            node_type: row.u32()?,
            version: row.u64()?,
            time: row.u32()?,
            data: row.var16()?.to_vec(),
        };
        row.end()?;
        Ok(node)
    }
}

/// A count row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkCount {
    /// Visible links of (id, link_type).
    pub count: u64,
    /// Milliseconds since the epoch of the last change.
    pub time: u64,
    /// Changes since the row was created.
    pub version: u64,
}

impl LinkCount {
    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        RowWriter::with_capacity(24)
            .u64(self.count)
            .u64(self.time)
            .u64(self.version)
            .finish()
    }

    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &[u8]) -> Result<LinkCount> {
        let mut row = RowReader::new("LinkBench count", bytes);
        let count = LinkCount {
            count: row.u64()?,
            time: row.u64()?,
            version: row.u64()?,
        };
        row.end()?;
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_round_trip_through_both_trees() {
        let link = Link {
            id1: 5,
            id2: 9,
            link_type: DEFAULT_LINK_TYPE + 1,
            visibility: VISIBILITY_DEFAULT,
            data: b"payload".to_vec(),
            time: 1_700_000_000_000,
            version: 3,
        };
        assert_eq!(Link::decode(&link.key(), &link.encode()).unwrap(), link);
        assert_eq!(
            Link::decode_index(&link.index_key(), &link.index_value()).unwrap(),
            link
        );
        assert!(
            link.index_key()
                .starts_with(&link_by_time_prefix(5, link.link_type, 1))
        );
        assert!(Link::decode(&link.key()[..20], &link.encode()).is_err());
    }

    #[test]
    fn encoded_len_is_the_length_of_the_encoding() {
        for len in [0, 1, 1023] {
            let node = Node {
                node_type: 7,
                version: 1,
                time: 2,
                data: vec![b'x'; len],
            };
            assert_eq!(node.encode().len(), Node::encoded_len(len));
        }
    }

    #[test]
    fn index_orders_by_time_within_a_list() {
        let older = link_by_time_key(1, 2, 1, 100, 99);
        let newer = link_by_time_key(1, 2, 1, 200, 1);
        let hidden = link_by_time_key(1, 2, 0, 300, 1);
        assert!(hidden < older && older < newer);
    }
}
