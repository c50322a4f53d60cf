//! Byte patches of a value whose length does not change: what an update in place logs instead
//! of the whole row, as InnoDB's redo and undo records of an update carry only the changed
//! fields (`MLOG_REC_UPDATE_IN_PLACE`, `TRX_UNDO_UPD_EXIST_REC`).
//!
//! A patch is a sequence of pieces, each `at u16, len u16, len bytes`, in increasing `at`,
//! not overlapping, every piece inside the value. [`diff_into`] computes, from the old and the
//! new value, the patch that turns old into new (its redo: the new bytes) and the patch that
//! turns new back into old (its undo: the old bytes at the same places); runs of changed bytes
//! closer than a piece header are merged, since copying the gap costs less than a second
//! header.
//!
//! Invariants: [`check`] accepts exactly the patches [`apply`] can apply to a value of that
//! length, so an apply either writes every piece or (on a malformed patch) nothing; applying
//! the redo patch to the old value gives the new one, and the undo patch to the new value the
//! old one (tested against random values below).

use std::ops::Range;

/// Bytes before each piece's data: its offset and its length, both `u16`.
pub const PIECE_HEADER: usize = 4;

/// Why a patch does not fit a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchError {
    /// A piece's header or data runs past the end of the patch.
    Truncated,
    /// A piece reaches past the value's end.
    OutOfValue,
    /// A piece starts before the previous one ends.
    Unordered,
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PatchError::Truncated => "a piece runs past the end of the patch",
            PatchError::OutOfValue => "a piece reaches past the end of the value",
            PatchError::Unordered => "pieces overlap or are out of order",
        })
    }
}

/// The pieces of `patch`: (offset in the value, bytes), without checking them against a value.
fn pieces(patch: &[u8]) -> impl Iterator<Item = Result<(usize, &[u8]), PatchError>> + '_ {
    let mut rest = patch;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let Some((header, tail)) = rest.split_first_chunk::<PIECE_HEADER>() else {
            rest = &[];
            return Some(Err(PatchError::Truncated));
        };
        let at = usize::from(u16::from_le_bytes([header[0], header[1]]));
        let len = usize::from(u16::from_le_bytes([header[2], header[3]]));
        let Some((data, tail)) = tail.split_at_checked(len) else {
            rest = &[];
            return Some(Err(PatchError::Truncated));
        };
        rest = tail;
        Some(Ok((at, data)))
    })
}

/// Checks that `patch` applies to a value of `value_len` bytes.
///
/// # Errors
/// The first problem found.
pub fn check(patch: &[u8], value_len: usize) -> Result<(), PatchError> {
    let mut end = 0;
    for piece in pieces(patch) {
        let (at, data) = piece?;
        if at < end {
            return Err(PatchError::Unordered);
        }
        end = at + data.len();
        if end > value_len {
            return Err(PatchError::OutOfValue);
        }
    }
    Ok(())
}

/// Applies `patch` to `value`: every piece, or nothing when the patch does not fit it.
///
/// # Errors
/// As [`check`].
pub fn apply(value: &mut [u8], patch: &[u8]) -> Result<(), PatchError> {
    check(patch, value.len())?;
    for (at, data) in pieces(patch).flatten() {
        value[at..at + data.len()].copy_from_slice(data);
    }
    Ok(())
}

/// The bytes of the value a checked patch writes, from its first piece's start to its last
/// piece's end (empty for a patch without pieces).
#[must_use]
pub fn span(patch: &[u8]) -> Range<usize> {
    let mut span: Option<Range<usize>> = None;
    for (at, data) in pieces(patch).flatten() {
        let start = span.as_ref().map_or(at, |span| span.start);
        span = Some(start..at + data.len());
    }
    span.unwrap_or(0..0)
}

/// Appends a piece; `at + bytes.len()` fits a `u16` (the values [`diff_into`] takes do).
fn push_piece(out: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    assert!(
        u16::try_from(at + bytes.len()).is_ok(),
        "a piece inside a u16-long value"
    );
    out.extend_from_slice(&(at as u16).to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The runs of bytes where `old` and `new` differ, compared a word at a time: a run spans
/// from the first to the last differing byte of each word that differs, and runs at most
/// [`PIECE_HEADER`] apart are merged.
fn changed_runs(old: &[u8], new: &[u8], mut visit: impl FnMut(Range<usize>)) {
    const WORD: usize = 8;
    const BLOCK: usize = 4 * WORD;
    let len = old.len();
    let mut run: Option<Range<usize>> = None;
    let mut extend = |changed: Range<usize>| {
        run = Some(match run.take() {
            Some(open) if changed.start - open.end <= PIECE_HEADER => open.start..changed.end,
            Some(open) => {
                visit(open);
                changed
            }
            None => changed,
        });
    };
    let word = |bytes: &[u8], at: usize| {
        let mut word = [0u8; WORD];
        word.copy_from_slice(&bytes[at..at + WORD]);
        u64::from_le_bytes(word)
    };
    // A fixed-size array compares inline (vector loads), where a slice comparison calls memcmp.
    let block = |bytes: &[u8], at: usize| -> [u8; BLOCK] {
        let mut block = [0u8; BLOCK];
        block.copy_from_slice(&bytes[at..at + BLOCK]);
        block
    };
    let mut at = 0;
    while at + WORD <= len {
        // Most of a row is unchanged: skip equal blocks of four words with one comparison.
        if at + BLOCK <= len && block(old, at) == block(new, at) {
            at += BLOCK;
            continue;
        }
        let differ = word(old, at) ^ word(new, at);
        if differ != 0 {
            // Little endian: the lowest differing byte is the first.
            let first = at + (differ.trailing_zeros() / 8) as usize;
            let last = at + WORD - 1 - (differ.leading_zeros() / 8) as usize;
            extend(first..last + 1);
        }
        at += WORD;
    }
    for at in at..len {
        if old[at] != new[at] {
            extend(at..at + 1);
        }
    }
    if let Some(open) = run {
        visit(open);
    }
}

/// Writes into `redo` the patch from `old` to `new` and into `undo` the patch back (both
/// cleared first). Returns whether the patch is smaller than `new` itself: `false` means the
/// whole value is the cheaper record (the buffers then hold the patches all the same).
///
/// # Panics
/// If the values differ in length or are longer than `u16::MAX` bytes (callers patch only
/// values of one length, and values fit a `u16` length on a page).
pub fn diff_into(old: &[u8], new: &[u8], redo: &mut Vec<u8>, undo: &mut Vec<u8>) -> bool {
    assert_eq!(old.len(), new.len(), "a patch keeps the value's length");
    assert!(
        u16::try_from(new.len()).is_ok(),
        "a patched value fits a u16"
    );
    redo.clear();
    undo.clear();
    changed_runs(old, new, |run| {
        push_piece(redo, run.start, &new[run.clone()]);
        push_piece(undo, run.start, &old[run]);
    });
    redo.len() < new.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn redo_turns_old_into_new_and_undo_turns_it_back() {
        let mut rng = SmallRng::seed_from_u64(7);
        let (mut redo, mut undo) = (Vec::new(), Vec::new());
        for _ in 0..2_000 {
            let len = rng.gen_range(0..400);
            let old: Vec<u8> = (0..len).map(|_| rng.gen_range(0..4)).collect();
            let mut new = old.clone();
            for _ in 0..rng.gen_range(0..6) {
                if len > 0 {
                    let at = rng.gen_range(0..len);
                    let end = (at + rng.gen_range(1..12)).min(len);
                    for byte in &mut new[at..end] {
                        *byte = rng.gen_range(0..4);
                    }
                }
            }
            let smaller = diff_into(&old, &new, &mut redo, &mut undo);
            assert_eq!(smaller, redo.len() < new.len());
            assert_eq!(check(&redo, len), Ok(()));
            let mut value = old.clone();
            apply(&mut value, &redo).unwrap();
            assert_eq!(value, new);
            apply(&mut value, &undo).unwrap();
            assert_eq!(value, old);
            let span = span(&redo);
            assert!(span.end <= len);
            assert_eq!(old[..span.start], new[..span.start]);
            assert_eq!(old[span.end..], new[span.end..]);
        }
    }

    #[test]
    fn a_typical_row_update_is_a_few_small_pieces() {
        // A TPC-C stock row: the quantity at the front, three counters after 240 bytes of
        // district information, then the data.
        let old: Vec<u8> = (0..300u32).map(|i| (i % 251) as u8).collect();
        let mut new = old.clone();
        new[0] ^= 1;
        new[242] ^= 1;
        new[247] ^= 1;
        new[250] ^= 1;
        let (mut redo, mut undo) = (Vec::new(), Vec::new());
        assert!(diff_into(&old, &new, &mut redo, &mut undo));
        // Two pieces: byte 0, and 242..251 (gaps of 4 merged).
        assert_eq!(redo.len(), 2 * PIECE_HEADER + 1 + 9);
        assert_eq!(span(&redo), 0..251);
        // An unchanged value is an empty patch.
        assert!(diff_into(&old, &old, &mut redo, &mut undo));
        assert!(redo.is_empty() && undo.is_empty());
        assert_eq!(span(&redo), 0..0);
        // A value changed everywhere is cheaper whole.
        let flipped: Vec<u8> = old.iter().map(|b| !b).collect();
        assert!(!diff_into(&old, &flipped, &mut redo, &mut undo));
    }

    #[test]
    fn malformed_patches_are_refused_and_change_nothing() {
        let mut value = vec![0u8; 10];
        let mut patch = Vec::new();
        push_piece(&mut patch, 8, &[1, 2, 3]);
        assert_eq!(apply(&mut value, &patch), Err(PatchError::OutOfValue));
        let mut patch = Vec::new();
        push_piece(&mut patch, 4, &[1, 2]);
        push_piece(&mut patch, 5, &[3]);
        assert_eq!(apply(&mut value, &patch), Err(PatchError::Unordered));
        let mut patch = Vec::new();
        push_piece(&mut patch, 0, &[1, 2]);
        patch.pop();
        assert_eq!(apply(&mut value, &patch), Err(PatchError::Truncated));
        assert_eq!(apply(&mut value, &[1, 0, 0]), Err(PatchError::Truncated));
        assert_eq!(value, vec![0u8; 10]);
    }
}
