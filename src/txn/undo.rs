//! Undo entries: the body of `Undo` log records (opaque to the log) and the in-memory undo list
//! of a transaction ([`UndoList`]: the same bodies, back to back in one reused buffer).
//!
//! ```text
//! forward entry (kind 1)                       compensation (kind 2)
//!  0 1 kind = 1                                 0 1 kind = 2
//!  1 4 tree id                                  1 4 index of the forward entry undone
//!  5 2 key length k, then k key bytes
//!  . 1 what the key had before:
//!      0 = nothing (the change inserted it)
//!      1 = a value: then 4-byte length n and n bytes
//!      2 = a value of 4-byte length n that the change patched in place: then 4-byte length m
//!          and m bytes, the patch (btree/patch.rs) that turns the new value back into it
//! ```
//!
//! The patched form is InnoDB's update undo record: only the changed fields' old bytes.
//!
//! A forward entry is logged in the same mini-transaction as the row change it undoes (so
//! both or neither survive a crash); a compensation is logged in the mini-transaction that
//! applies the inverse during a rollback (ARIES' compensation log record: redo-only, never
//! undone again). Recovery undoes, newest first, the forward entries of a loser that have no
//! compensation.

use crate::btree::Prior;
use crate::btree::patch;
use crate::error::{Error, Result};
use crate::kv::TreeId;

const FORWARD: u8 = 1;
const COMPENSATION: u8 = 2;

/// One undo entry: put `before` back under `key` (or remove `key` when it was absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoEntry {
    /// The tree.
    pub tree: TreeId,
    /// The key changed.
    pub key: Vec<u8>,
    /// What it had before the change.
    pub before: Before,
}

/// What a key had before a change, as an undo entry keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Before {
    /// Nothing: undoing removes the key.
    Absent,
    /// This value.
    Value(Vec<u8>),
    /// A value of `len` bytes, which the current value becomes by applying `restore`
    /// (`btree/patch.rs`): undoing reads the current value and patches it.
    Patched {
        /// The value's length.
        len: u32,
        /// The patch back to it.
        restore: Vec<u8>,
    },
}

impl Before {
    /// An owned copy of `prior` ([`Before::as_prior`]'s inverse).
    fn from_prior(prior: Prior<'_>) -> Self {
        match prior {
            Prior::Absent => Before::Absent,
            Prior::Value(value) => Before::Value(value.to_vec()),
            Prior::Patched { len, restore } => Before::Patched {
                len: len as u32,
                restore: restore.to_vec(),
            },
        }
    }

    fn as_prior(&self) -> Prior<'_> {
        match self {
            Before::Absent => Prior::Absent,
            Before::Value(value) => Prior::Value(value),
            Before::Patched { len, restore } => Prior::Patched {
                len: *len as usize,
                restore,
            },
        }
    }
}

/// An undo entry borrowed from the bytes it was decoded from (a rollback reads its
/// transaction's list in place).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryRef<'a> {
    /// The tree.
    pub tree: TreeId,
    /// The key changed.
    pub key: &'a [u8],
    /// What it had before the change.
    pub before: Prior<'a>,
}

impl EntryRef<'_> {
    /// An owned copy.
    #[must_use]
    pub fn to_entry(&self) -> UndoEntry {
        UndoEntry {
            tree: self.tree,
            key: self.key.to_vec(),
            before: Before::from_prior(self.before),
        }
    }
}

/// A decoded `Undo` body, borrowing its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordRef<'a> {
    /// A row change's undo information.
    Forward(EntryRef<'a>),
    /// The forward entry with this index was undone.
    Compensation(u32),
}

/// A decoded `Undo` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UndoRecord {
    /// A row change's undo information.
    Forward(UndoEntry),
    /// The forward entry with this index (in the transaction's order) was undone.
    Compensation(u32),
}

impl UndoEntry {
    /// The entry, borrowed.
    #[must_use]
    pub fn as_entry_ref(&self) -> EntryRef<'_> {
        EntryRef {
            tree: self.tree,
            key: &self.key,
            before: self.before.as_prior(),
        }
    }

    /// Encodes the entry as a forward `Undo` body.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.key.len());
        encode_forward(self.tree, &self.key, self.before.as_prior(), &mut out);
        out
    }
}

const BEFORE_ABSENT: u8 = 0;
const BEFORE_VALUE: u8 = 1;
const BEFORE_PATCHED: u8 = 2;

/// Appends the forward `Undo` body of a change of `key` in `tree` that replaced `before`.
pub fn encode_forward(tree: TreeId, key: &[u8], before: Prior<'_>, out: &mut Vec<u8>) {
    out.push(FORWARD);
    out.extend_from_slice(&tree.to_le_bytes());
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(key);
    match before {
        Prior::Value(value) => {
            out.push(BEFORE_VALUE);
            out.extend_from_slice(&(value.len() as u32).to_le_bytes());
            out.extend_from_slice(value);
        }
        Prior::Patched { len, restore } => {
            out.push(BEFORE_PATCHED);
            out.extend_from_slice(&(len as u32).to_le_bytes());
            out.extend_from_slice(&(restore.len() as u32).to_le_bytes());
            out.extend_from_slice(restore);
        }
        Prior::Absent => out.push(BEFORE_ABSENT),
    }
}

/// Appends the body of a compensation for forward entry `index`.
pub fn encode_compensation(index: u32, out: &mut Vec<u8>) {
    out.push(COMPENSATION);
    out.extend_from_slice(&index.to_le_bytes());
}

/// Largest key-and-value bytes of an undo list kept for the thread's next transaction.
const SPARE_MAX_BYTES: usize = 256 * 1024;

std::thread_local! {
    /// The buffers of this thread's last transaction's undo list.
    static SPARE: std::cell::Cell<Option<UndoList>> = const { std::cell::Cell::new(None) };
}

/// The in-memory undo list of a transaction: its forward entries in order, as their encoded
/// `Undo` bodies (the bytes logged) back to back in one buffer, so that a row change adds no
/// allocation once the buffer has grown. An entry is first *staged* (encoded at the end),
/// then kept once its row change reached the log, or dropped. The buffers go back to the
/// thread for its next transaction ([`UndoList::recycle`]).
#[derive(Debug, Default)]
pub struct UndoList {
    bytes: Vec<u8>,
    /// The end of each kept entry in `bytes`.
    ends: Vec<usize>,
    /// Where a row change copies the value it replaces (`TreeStore::put_row`), reused.
    before: Vec<u8>,
}

impl UndoList {
    /// The calling thread's spare (empty, with its buffers' capacity), or a new one.
    #[must_use]
    pub fn take_spare() -> UndoList {
        crate::spare::take(&SPARE)
    }

    /// Empties this and keeps its buffers as the calling thread's spare (not when they grew
    /// past 256 KiB; nor while the thread is exiting).
    pub fn recycle(mut self) {
        if self.bytes.capacity() > SPARE_MAX_BYTES {
            return;
        }
        self.clear();
        crate::spare::keep(&SPARE, self);
    }

    /// Whether the list has buffers (a new list has none until [`UndoList::take_spare`] or
    /// its first entry).
    #[must_use]
    pub fn has_buffers(&self) -> bool {
        self.bytes.capacity() > 0
    }

    /// Whether no entry is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Entries kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Forgets every entry (the buffers stay).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.before.clear();
    }

    /// Takes the buffer a row change copies its before-value into (give it back with
    /// [`UndoList::return_before_buffer`] so that the next change reuses it).
    pub fn take_before_buffer(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.before)
    }

    /// Gives back the buffer of [`UndoList::take_before_buffer`].
    pub fn return_before_buffer(&mut self, buffer: Vec<u8>) {
        self.before = buffer;
    }

    /// Encodes the forward entry of a change of `key` in `tree` whose value was `before` as
    /// the staged entry (replacing one staged before) and returns its body.
    pub fn stage(&mut self, tree: TreeId, key: &[u8], before: Prior<'_>) -> &[u8] {
        self.drop_staged();
        let start = self.bytes.len();
        encode_forward(tree, key, before, &mut self.bytes);
        &self.bytes[start..]
    }

    /// Keeps the staged entry (its change reached the log); no-op when none is staged.
    pub fn keep_staged(&mut self) {
        if self.bytes.len() > self.ends.last().copied().unwrap_or(0) {
            self.ends.push(self.bytes.len());
        }
    }

    /// Drops the staged entry, if any.
    pub fn drop_staged(&mut self) {
        self.bytes.truncate(self.ends.last().copied().unwrap_or(0));
    }

    /// Passes the kept entries with their indexes to `apply`, newest first (what a rollback
    /// applies), decoded in place; stops at `apply`'s first error.
    ///
    /// # Errors
    /// `apply`'s; a malformed body (never: the bodies were encoded here).
    pub fn for_each_newest_first(
        &self,
        mut apply: impl FnMut(u32, EntryRef<'_>) -> Result<()>,
    ) -> Result<()> {
        for index in (0..self.ends.len()).rev() {
            let start = if index == 0 { 0 } else { self.ends[index - 1] };
            match decode_ref(&self.bytes[start..self.ends[index]])? {
                RecordRef::Forward(entry) => apply(index as u32, entry)?,
                RecordRef::Compensation(_) => return Err(bad("a compensation in a forward list")),
            }
        }
        Ok(())
    }
}

/// Encodes a compensation for forward entry `index`.
#[must_use]
pub fn compensation(index: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(5);
    encode_compensation(index, &mut out);
    out
}

fn bad(why: &str) -> Error {
    Error::CorruptLog {
        offset: 0,
        reason: format!("malformed undo entry: {why}"),
    }
}

fn take<'a>(bytes: &'a [u8], at: &mut usize, len: usize) -> Result<&'a [u8]> {
    let end = at.checked_add(len).ok_or_else(|| bad("length"))?;
    let slice = bytes.get(*at..end).ok_or_else(|| bad("truncated"))?;
    *at = end;
    Ok(slice)
}

/// Decodes an `Undo` body (the whole input must be consumed).
///
/// # Errors
/// [`Error::CorruptLog`] for malformed bytes; never panics.
pub fn decode(bytes: &[u8]) -> Result<UndoRecord> {
    Ok(match decode_ref(bytes)? {
        RecordRef::Forward(entry) => UndoRecord::Forward(entry.to_entry()),
        RecordRef::Compensation(index) => UndoRecord::Compensation(index),
    })
}

/// [`decode`] borrowing from `bytes` instead of copying.
///
/// # Errors
/// As [`decode`].
pub fn decode_ref(bytes: &[u8]) -> Result<RecordRef<'_>> {
    let mut at = 0;
    let kind = take(bytes, &mut at, 1)?[0];
    let u32_at = |slice: &[u8]| u32::from_le_bytes([slice[0], slice[1], slice[2], slice[3]]);
    let record = match kind {
        FORWARD => {
            let tree = u32_at(take(bytes, &mut at, 4)?);
            let key_len = take(bytes, &mut at, 2)?;
            let key_len = usize::from(u16::from_le_bytes([key_len[0], key_len[1]]));
            let key = take(bytes, &mut at, key_len)?;
            let before = match take(bytes, &mut at, 1)?[0] {
                BEFORE_ABSENT => Prior::Absent,
                BEFORE_VALUE => {
                    let len = u32_at(take(bytes, &mut at, 4)?) as usize;
                    Prior::Value(take(bytes, &mut at, len)?)
                }
                BEFORE_PATCHED => {
                    let len = u32_at(take(bytes, &mut at, 4)?) as usize;
                    let patch_len = u32_at(take(bytes, &mut at, 4)?) as usize;
                    let restore = take(bytes, &mut at, patch_len)?;
                    patch::check(restore, len).map_err(|why| bad(&why.to_string()))?;
                    Prior::Patched { len, restore }
                }
                _ => return Err(bad("before-value flag")),
            };
            RecordRef::Forward(EntryRef { tree, key, before })
        }
        COMPENSATION => RecordRef::Compensation(u32_at(take(bytes, &mut at, 4)?)),
        _ => return Err(bad("kind")),
    };
    if at != bytes.len() {
        return Err(bad("trailing bytes"));
    }
    Ok(record)
}

/// The forward entries of a loser still to undo, newest first: every forward entry without a
/// compensation, given the bodies in log order.
///
/// # Errors
/// A malformed body.
pub fn remaining(bodies: &[Vec<u8>]) -> Result<Vec<(u32, UndoEntry)>> {
    let mut forward = Vec::new();
    let mut compensated = std::collections::HashSet::new();
    for body in bodies {
        match decode(body)? {
            UndoRecord::Forward(entry) => forward.push((forward.len() as u32, entry)),
            UndoRecord::Compensation(index) => {
                compensated.insert(index);
            }
        }
    }
    forward.retain(|(index, _)| !compensated.contains(index));
    forward.reverse();
    Ok(forward)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_garbage_is_an_error() {
        let entries = [
            UndoEntry {
                tree: 3,
                key: b"key".to_vec(),
                before: Before::Value(b"old".to_vec()),
            },
            UndoEntry {
                tree: 0,
                key: Vec::new(),
                before: Before::Absent,
            },
            UndoEntry {
                tree: 5,
                key: b"row".to_vec(),
                before: Before::Patched {
                    len: 10,
                    restore: vec![2, 0, 3, 0, 7, 8, 9],
                },
            },
        ];
        for entry in &entries {
            let body = entry.encode();
            assert_eq!(decode(&body).unwrap(), UndoRecord::Forward(entry.clone()));
            assert!(decode(&body[..body.len() - 1]).is_err());
        }
        assert_eq!(
            decode(&compensation(7)).unwrap(),
            UndoRecord::Compensation(7)
        );
        assert!(decode(&[9]).is_err());
        // A patch that does not fit the value's length is corrupt, not applied later.
        let mut past_the_end = entries[2].clone();
        past_the_end.before = Before::Patched {
            len: 4,
            restore: vec![2, 0, 3, 0, 7, 8, 9],
        };
        assert!(decode(&past_the_end.encode()).is_err());
        assert!(decode(&[]).is_err());
        let bodies = vec![entries[0].encode(), entries[1].encode(), compensation(1)];
        let left = remaining(&bodies).unwrap();
        assert_eq!(left, vec![(0, entries[0].clone())]);
    }

    #[test]
    fn an_undo_list_keeps_only_the_entries_kept_and_gives_them_newest_first() {
        let mut list = UndoList::default();
        let body = list.stage(3, b"a", Prior::Value(b"old")).to_vec();
        assert_eq!(
            body,
            UndoEntry {
                tree: 3,
                key: b"a".to_vec(),
                before: Before::Value(b"old".to_vec())
            }
            .encode()
        );
        list.keep_staged();
        list.stage(3, b"dropped", Prior::Absent);
        list.drop_staged();
        list.stage(4, b"replaced", Prior::Absent);
        list.stage(4, b"b", Prior::Absent);
        list.keep_staged();
        list.keep_staged();
        assert_eq!(list.len(), 2);
        let newest_first = |list: &UndoList| {
            let mut entries = Vec::new();
            list.for_each_newest_first(|index, entry| {
                entries.push((index, entry.to_entry()));
                Ok(())
            })
            .unwrap();
            entries
        };
        let entries = newest_first(&list);
        assert_eq!(
            entries,
            vec![
                (
                    1,
                    UndoEntry {
                        tree: 4,
                        key: b"b".to_vec(),
                        before: Before::Absent
                    }
                ),
                (
                    0,
                    UndoEntry {
                        tree: 3,
                        key: b"a".to_vec(),
                        before: Before::Value(b"old".to_vec())
                    }
                ),
            ]
        );
        list.clear();
        assert!(list.is_empty());
        assert!(newest_first(&list).is_empty());
    }
}
