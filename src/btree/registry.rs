//! The open trees of a [`super::TreeStore`], looked up by id on every operation without a lock.
//!
//! The catalog (the meta page, `docs/btree-format.md`) only grows: a tree's entry is appended
//! once and never changed or removed, and ids are the entries' indexes. So the registry is a
//! fixed array of write-once slots, one per entry the meta page can hold, filled at open and
//! by `open_tree`: a lookup is an index and one acquire load, with no shared cache-line write
//! (a `RwLock<Vec<Arc<Tree>>>` read took a reader count and an `Arc` clone per operation, two
//! atomic read-modify-writes on lines every client thread shares; docs/performance.md, "The
//! tree registry").
//!
//! Invariants: slot `i` is set at most once, to the tree with id `i`; slots are set in id
//! order (`open_tree` holds the catalog mutex and appends the next id only), so the set slots
//! are a prefix of the array.

use std::sync::{Arc, OnceLock};

use super::meta::CATALOG_AT;
use super::{Tree, TreeId};
use crate::error::{Error, Result};

/// Bytes of the smallest catalog entry: a 1-byte name length, a 1-byte name, an 8-byte root.
const MIN_ENTRY: usize = 1 + 1 + 8;

/// Write-once slots for the trees of one store.
#[derive(Debug)]
pub(crate) struct TreeRegistry {
    slots: Box<[OnceLock<Arc<Tree>>]>,
}

impl TreeRegistry {
    /// Slots for every entry a meta page of `page_size` bytes can hold.
    pub(crate) fn for_page(page_size: usize) -> Self {
        let capacity = page_size.saturating_sub(CATALOG_AT) / MIN_ENTRY;
        TreeRegistry {
            slots: (0..capacity).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The tree with id `id`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an id no tree has (yet).
    pub(crate) fn get(&self, id: TreeId) -> Result<&Arc<Tree>> {
        self.slots
            .get(id as usize)
            .and_then(OnceLock::get)
            .ok_or_else(|| Error::InvalidArgument(format!("no tree with id {id}")))
    }

    /// Records `tree` under its id, the next one in order.
    ///
    /// # Errors
    /// [`Error::Config`] naming the id if it lies beyond the slots (a catalog larger than its
    /// page can hold), is not the next in order, or was recorded before.
    pub(crate) fn add(&self, tree: Tree) -> Result<()> {
        let id = tree.id;
        let in_order = id == 0 || self.get(id - 1).is_ok();
        let slot = self
            .slots
            .get(id as usize)
            .filter(|_| in_order)
            .ok_or_else(|| Error::Config(format!("catalog entry {id} out of order or range")))?;
        slot.set(Arc::new(tree))
            .map_err(|_| Error::Config(format!("catalog entry {id} recorded twice")))
    }

    /// Every tree, in id order.
    pub(crate) fn all(&self) -> Vec<Arc<Tree>> {
        self.slots
            .iter()
            .map_while(OnceLock::get)
            .cloned()
            .collect()
    }

    /// The tree called `name`, if any.
    pub(crate) fn find(&self, name: &str) -> Option<TreeId> {
        self.slots
            .iter()
            .map_while(OnceLock::get)
            .find(|tree| tree.name == name)
            .map(|tree| tree.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(id: TreeId, name: &str) -> Tree {
        Tree {
            id,
            name: name.to_string(),
            root: 1 + u64::from(id),
            smo: parking_lot::Mutex::new(()),
        }
    }

    #[test]
    fn trees_are_found_by_id_and_name_in_order() {
        let registry = TreeRegistry::for_page(4096);
        assert!(registry.get(0).is_err());
        registry.add(tree(0, "a")).unwrap();
        registry.add(tree(1, "b")).unwrap();
        assert_eq!(registry.get(1).unwrap().name, "b");
        assert_eq!(registry.find("a"), Some(0));
        assert_eq!(registry.find("c"), None);
        let names: Vec<_> = registry.all().iter().map(|t| t.name.clone()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(matches!(registry.get(2), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn out_of_order_duplicate_and_overflowing_ids_are_refused() {
        let registry = TreeRegistry::for_page(4096);
        assert!(registry.add(tree(1, "gap")).is_err());
        registry.add(tree(0, "a")).unwrap();
        assert!(registry.add(tree(0, "again")).is_err());
        assert_eq!(registry.get(0).unwrap().name, "a");
        let capacity = (4096 - CATALOG_AT) / MIN_ENTRY;
        let full = TreeRegistry::for_page(4096);
        for id in 0..capacity as TreeId {
            full.add(tree(id, "t")).unwrap();
        }
        assert!(full.add(tree(capacity as TreeId, "t")).is_err());
    }
}
