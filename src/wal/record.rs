//! Log records and their framing (issue 5; `docs/wal-format.md` draws the bytes).
//!
//! A record is a 24-byte frame followed by a typed body:
//!
//! ```text
//! offset size field
//!      0    4 crc        CRC32C of bytes [4, total_len) of the record (frame rest + body)
//!      4    4 total_len  frame + body length in bytes, FRAME_SIZE ..= MAX_RECORD_BYTES
//!      8    8 lsn        the record's start LSN (catches stale records from an earlier lap)
//!     16    4 prev_crc   the crc of the record before it (chains the log: a record left over
//!                        from a tail that an earlier recovery discarded does not chain on)
//!     20    1 type       1 PageRedo, 2 FullPageImage, 3 Commit, 4 Checkpoint, 5 PageOp,
//!                        6 MtrEnd, 7 Undo, 8 TxnCommit, 9 TxnAbort
//!     21    3 reserved   zero
//!     24   .. body       per type, little endian, exactly as long as the type says
//! ```
//!
//! Decoding is strict and total: every byte string either decodes to exactly one record or is a
//! [`DecodeError`]; nothing here panics on any input. The log pages that carry records (their
//! headers, spanning) are handled by `log.rs` and `reader.rs`.

use super::crc::crc32c;
use crate::error::PageId;
use crate::page::Lsn;

/// A transaction identifier (assigned by the transaction layer).
pub type TxnId = u64;

/// Size of the record frame in bytes.
pub const FRAME_SIZE: usize = 24;
/// Upper bound on one record's encoded length (frame included). A bound of the format: a reader
/// never allocates more than this for one record.
pub const MAX_RECORD_BYTES: usize = 1 << 20;

const TYPE_PAGE_REDO: u8 = 1;
const TYPE_FULL_PAGE_IMAGE: u8 = 2;
const TYPE_COMMIT: u8 = 3;
const TYPE_CHECKPOINT: u8 = 4;
const TYPE_PAGE_OP: u8 = 5;
const TYPE_MTR_END: u8 = 6;
const TYPE_UNDO: u8 = 7;
const TYPE_TXN_COMMIT: u8 = 8;
const TYPE_TXN_ABORT: u8 = 9;
/// The highest type byte a record may carry.
const TYPE_MAX: u8 = TYPE_TXN_ABORT;

/// One redo log record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogRecord {
    /// Physical redo: `bytes` were written at `offset` of `page`.
    PageRedo {
        /// The transaction that made the change.
        txn: TxnId,
        /// The data page changed.
        page: PageId,
        /// Byte offset of the change inside the page.
        offset: u32,
        /// The new bytes.
        bytes: Vec<u8>,
    },
    /// The whole image of `page` (PostgreSQL full_page_writes): logged at the first change of a
    /// page after a checkpoint, so recovery can restore a torn page before replaying redo.
    FullPageImage {
        /// The transaction that made the first change.
        txn: TxnId,
        /// The data page.
        page: PageId,
        /// The page image.
        image: Vec<u8>,
    },
    /// Transaction `txn` committed.
    Commit {
        /// The transaction.
        txn: TxnId,
    },
    /// A checkpoint was taken whose redo starts at `redo_lsn` (informational; recovery starts
    /// from the checkpoint slots in the log header, not from this record).
    Checkpoint {
        /// Where redo starts for this checkpoint.
        redo_lsn: Lsn,
    },
    /// Physiological redo of a mini-transaction (the B+-tree's): `op` is one operation on
    /// `page` (insert at a slot, delete a slot, set a link, a compact image, ...), encoded and
    /// interpreted by the redo hook given to `Database::open_with_redo`; opaque to the log.
    /// Applied only when the batch it belongs to ends with [`LogRecord::MtrEnd`].
    PageOp {
        /// The data page changed.
        page: PageId,
        /// The encoded operation.
        op: Vec<u8>,
    },
    /// Terminator of a mini-transaction batch: the `PageOp` and `Undo` records appended with
    /// it in one append form an atomic unit; a batch cut by a torn log tail is ignored.
    MtrEnd {
        /// The transaction the batch belongs to (0 for a system mini-transaction, e.g. a
        /// split, which no transaction rolls back).
        txn: TxnId,
    },
    /// Undo information of one row operation of `txn` (logical: tree, key, before-value),
    /// encoded and interpreted by the transaction layer; opaque to the log. Part of the
    /// mini-transaction batch that made the change.
    Undo {
        /// The transaction.
        txn: TxnId,
        /// The encoded undo entry.
        body: Vec<u8>,
    },
    /// Key-value transaction `txn` committed (the transaction layer's commit; `Commit` stays
    /// the page-level `db::Transaction`'s).
    TxnCommit {
        /// The transaction.
        txn: TxnId,
    },
    /// Key-value transaction `txn` is rolled back completely (its undo was applied and logged).
    TxnAbort {
        /// The transaction.
        txn: TxnId,
    },
}

/// Why a byte string is not a valid record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the frame or than `total_len`.
    Truncated {
        /// Bytes needed.
        needed: usize,
        /// Bytes present.
        present: usize,
    },
    /// `total_len` outside `FRAME_SIZE ..= MAX_RECORD_BYTES` (zero for an unwritten tail).
    BadLength(u32),
    /// The checksum does not match.
    BadChecksum {
        /// Stored CRC.
        stored: u32,
        /// Computed CRC.
        computed: u32,
    },
    /// The record says it starts at another LSN (stale data from an earlier lap of the ring).
    WrongLsn {
        /// LSN stored in the record.
        stored: Lsn,
        /// Position it was read from.
        expected: Lsn,
    },
    /// The record does not chain on the record before it (`prev_crc` mismatch).
    BrokenChain {
        /// `prev_crc` stored in the record.
        stored: u32,
        /// CRC of the record read before it.
        expected: u32,
    },
    /// Unknown type byte or non-zero reserved bytes.
    BadType(u8),
    /// The body does not have the layout its type requires.
    BadBody(&'static str),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Truncated { needed, present } => {
                write!(f, "truncated record: {present} of {needed} bytes")
            }
            DecodeError::BadLength(len) => write!(f, "bad record length {len}"),
            DecodeError::BadChecksum { stored, computed } => {
                write!(f, "record checksum {stored:#010x} != {computed:#010x}")
            }
            DecodeError::WrongLsn { stored, expected } => {
                write!(f, "record stamped with LSN {stored}, read at {expected}")
            }
            DecodeError::BrokenChain { stored, expected } => write!(
                f,
                "record chains on crc {stored:#010x}, the record before has {expected:#010x}"
            ),
            DecodeError::BadType(t) => write!(f, "unknown record type {t}"),
            DecodeError::BadBody(why) => write!(f, "malformed record body: {why}"),
        }
    }
}

/// The frame fields that can be checked before the body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// Stored CRC.
    pub crc: u32,
    /// Frame + body length.
    pub total_len: usize,
    /// CRC of the record before it.
    pub prev_crc: u32,
}

impl LogRecord {
    fn type_byte(&self) -> u8 {
        match self {
            LogRecord::PageRedo { .. } => TYPE_PAGE_REDO,
            LogRecord::FullPageImage { .. } => TYPE_FULL_PAGE_IMAGE,
            LogRecord::Commit { .. } => TYPE_COMMIT,
            LogRecord::Checkpoint { .. } => TYPE_CHECKPOINT,
            LogRecord::PageOp { .. } => TYPE_PAGE_OP,
            LogRecord::MtrEnd { .. } => TYPE_MTR_END,
            LogRecord::Undo { .. } => TYPE_UNDO,
            LogRecord::TxnCommit { .. } => TYPE_TXN_COMMIT,
            LogRecord::TxnAbort { .. } => TYPE_TXN_ABORT,
        }
    }

    /// Encoded length (frame + body) in bytes.
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        FRAME_SIZE
            + match self {
                LogRecord::PageRedo { bytes, .. } => 24 + bytes.len(),
                LogRecord::FullPageImage { image, .. } => 20 + image.len(),
                LogRecord::PageOp { op, .. } => 12 + op.len(),
                LogRecord::Undo { body, .. } => 12 + body.len(),
                LogRecord::Commit { .. }
                | LogRecord::Checkpoint { .. }
                | LogRecord::MtrEnd { .. }
                | LogRecord::TxnCommit { .. }
                | LogRecord::TxnAbort { .. } => 8,
            }
    }

    /// Encodes the record with a zero LSN and CRC; [`seal`] fills them in once the record's
    /// position is known (under the log mutex).
    ///
    /// # Errors
    /// [`DecodeError::BadLength`] when the record is larger than [`MAX_RECORD_BYTES`] or a
    /// field does not fit its on-disk width.
    pub fn encode_unsealed(&self) -> Result<Vec<u8>, DecodeError> {
        let mut out = Vec::with_capacity(self.encoded_len().min(MAX_RECORD_BYTES));
        self.encode_unsealed_into(&mut out)?;
        Ok(out)
    }

    /// [`LogRecord::encode_unsealed`], appending to `out` (nothing is appended on error).
    ///
    /// # Errors
    /// As [`LogRecord::encode_unsealed`].
    pub fn encode_unsealed_into(&self, out: &mut Vec<u8>) -> Result<(), DecodeError> {
        let len = self.encoded_len();
        if len > MAX_RECORD_BYTES {
            return Err(DecodeError::BadLength(
                u32::try_from(len).unwrap_or(u32::MAX),
            ));
        }
        let start = out.len();
        out.reserve(len);
        out.extend_from_slice(&frame(len as u32, self.type_byte()));
        match self {
            LogRecord::PageRedo {
                txn,
                page,
                offset,
                bytes,
            } => {
                out.extend_from_slice(&txn.to_le_bytes());
                out.extend_from_slice(&page.to_le_bytes());
                out.extend_from_slice(&offset.to_le_bytes());
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                out.extend_from_slice(bytes);
            }
            LogRecord::FullPageImage { txn, page, image } => {
                out.extend_from_slice(&txn.to_le_bytes());
                out.extend_from_slice(&page.to_le_bytes());
                out.extend_from_slice(&(image.len() as u32).to_le_bytes());
                out.extend_from_slice(image);
            }
            LogRecord::Commit { txn }
            | LogRecord::MtrEnd { txn }
            | LogRecord::TxnCommit { txn }
            | LogRecord::TxnAbort { txn } => out.extend_from_slice(&txn.to_le_bytes()),
            LogRecord::Checkpoint { redo_lsn } => out.extend_from_slice(&redo_lsn.to_le_bytes()),
            LogRecord::PageOp {
                page: id,
                op: bytes,
            }
            | LogRecord::Undo {
                txn: id,
                body: bytes,
            } => {
                out.extend_from_slice(&id.to_le_bytes());
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                out.extend_from_slice(bytes);
            }
        }
        assert_eq!(out.len() - start, len, "encoded length matches encoded_len");
        Ok(())
    }

    /// Encodes and seals the record for start position `lsn` after a record of CRC
    /// `prev_crc`.
    ///
    /// # Errors
    /// As [`LogRecord::encode_unsealed`].
    pub fn encode(&self, lsn: Lsn, prev_crc: u32) -> Result<Vec<u8>, DecodeError> {
        let mut out = self.encode_unsealed()?;
        seal(&mut out, lsn, prev_crc);
        Ok(out)
    }
}

/// A frame's bytes before sealing: CRC, LSN and previous CRC zero, then `total_len`'s place
/// and the type.
fn frame(total_len: u32, type_byte: u8) -> [u8; FRAME_SIZE] {
    let mut bytes = [0u8; FRAME_SIZE];
    bytes[4..8].copy_from_slice(&total_len.to_le_bytes());
    bytes[20] = type_byte;
    bytes
}

/// The records with an opaque body that a batch can encode in place
/// ([`EncodedBatch::push_opaque`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpaqueKind {
    /// [`LogRecord::PageOp`]: the id is the page.
    PageOp,
    /// [`LogRecord::Undo`]: the id is the transaction.
    Undo,
}

/// Records encoded back to back, unsealed (the bytes of [`LogRecord::encode_unsealed`] one
/// after the other), ready for `Wal::append_batch`, which seals them in place. A writer that
/// keeps one batch and clears it between appends encodes without allocating: the bodies of
/// page operations and undo entries are written straight into it
/// ([`EncodedBatch::push_opaque`]) instead of into a `Vec` per record.
#[derive(Debug, Default)]
pub struct EncodedBatch {
    bytes: Vec<u8>,
    records: usize,
    last_type: u8,
}

impl EncodedBatch {
    /// An empty batch.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `record`.
    ///
    /// # Errors
    /// As [`LogRecord::encode_unsealed`]; the batch is then unchanged.
    pub fn push(&mut self, record: &LogRecord) -> Result<(), DecodeError> {
        record.encode_unsealed_into(&mut self.bytes)?;
        self.records += 1;
        self.last_type = record.type_byte();
        Ok(())
    }

    /// Appends a `PageOp` or `Undo` record for `id` whose body `write` appends to the buffer
    /// it is given (the bytes `LogRecord::PageOp::op` or `LogRecord::Undo::body` would
    /// hold). `write` returning `false` means no record: the batch is left unchanged.
    /// Returns whether a record was appended.
    ///
    /// # Errors
    /// [`DecodeError::BadLength`] when the record would exceed [`MAX_RECORD_BYTES`]; the batch
    /// is then unchanged.
    pub fn push_opaque(
        &mut self,
        kind: OpaqueKind,
        id: u64,
        write: impl FnOnce(&mut Vec<u8>) -> bool,
    ) -> Result<bool, DecodeError> {
        let type_byte = match kind {
            OpaqueKind::PageOp => TYPE_PAGE_OP,
            OpaqueKind::Undo => TYPE_UNDO,
        };
        let start = self.bytes.len();
        // The frame, the id and the body length's place, in one append.
        let mut head = [0u8; FRAME_SIZE + 12];
        head[..FRAME_SIZE].copy_from_slice(&frame(0, type_byte));
        head[FRAME_SIZE..FRAME_SIZE + 8].copy_from_slice(&id.to_le_bytes());
        self.bytes.extend_from_slice(&head);
        let body_at = self.bytes.len();
        if !write(&mut self.bytes) {
            self.bytes.truncate(start);
            return Ok(false);
        }
        let len = self.bytes.len() - start;
        let body_len = self.bytes.len() - body_at;
        if len > MAX_RECORD_BYTES {
            self.bytes.truncate(start);
            return Err(DecodeError::BadLength(
                u32::try_from(len).unwrap_or(u32::MAX),
            ));
        }
        self.bytes[start + 4..start + 8].copy_from_slice(&(len as u32).to_le_bytes());
        self.bytes[body_at - 4..body_at].copy_from_slice(&(body_len as u32).to_le_bytes());
        self.records += 1;
        self.last_type = type_byte;
        Ok(true)
    }

    /// Records in the batch.
    #[must_use]
    pub fn records(&self) -> usize {
        self.records
    }

    /// Whether the batch holds no record.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Whether the last record is a [`LogRecord::MtrEnd`].
    #[must_use]
    pub fn ends_with_mtr_end(&self) -> bool {
        self.records > 0 && self.last_type == TYPE_MTR_END
    }

    /// The encoded bytes (all records, unsealed until appended).
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The encoded bytes, for sealing in place.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// Empties the batch, keeping its buffer.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.records = 0;
        self.last_type = 0;
    }

    /// Bytes the buffer can hold without growing.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.bytes.capacity()
    }
}

/// The length of the record `bytes` starts with (its frame's `total_len`), clamped to
/// `FRAME_SIZE..=bytes.len()` so that a walk over a batch always moves on and stays inside it.
pub(crate) fn leading_record_len(bytes: &[u8]) -> usize {
    let len = u32_at(bytes, 4).map_or(bytes.len(), |len| len as usize);
    len.max(FRAME_SIZE).min(bytes.len())
}

/// Stamps the start LSN, the previous record's CRC and the CRC into an encoded record;
/// returns the record's CRC.
///
/// # Panics
/// If `record` is shorter than the frame (a caller bug: it comes from `encode_unsealed`).
pub fn seal(record: &mut [u8], lsn: Lsn, prev_crc: u32) -> u32 {
    assert!(record.len() >= FRAME_SIZE, "a sealed record has a frame");
    record[8..16].copy_from_slice(&lsn.to_le_bytes());
    record[16..20].copy_from_slice(&prev_crc.to_le_bytes());
    let crc = crc32c(&record[4..]);
    record[0..4].copy_from_slice(&crc.to_le_bytes());
    crc
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let slice = bytes.get(at..at + 4)?;
    let mut raw = [0u8; 4];
    raw.copy_from_slice(slice);
    Some(u32::from_le_bytes(raw))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let slice = bytes.get(at..at + 8)?;
    let mut raw = [0u8; 8];
    raw.copy_from_slice(slice);
    Some(u64::from_le_bytes(raw))
}

/// Checks the first [`FRAME_SIZE`] bytes of a record read at `expected_lsn`: length bounds,
/// LSN stamp, type and reserved bytes. The CRC is checked by [`decode`] once the body is in.
///
/// # Errors
/// The first check that fails.
pub fn check_frame(frame: &[u8], expected_lsn: Lsn) -> Result<FrameHeader, DecodeError> {
    let (Some(crc), Some(total), Some(lsn), Some(prev_crc)) = (
        u32_at(frame, 0),
        u32_at(frame, 4),
        u64_at(frame, 8),
        u32_at(frame, 16),
    ) else {
        return Err(DecodeError::Truncated {
            needed: FRAME_SIZE,
            present: frame.len(),
        });
    };
    let total_len = total as usize;
    if !(FRAME_SIZE..=MAX_RECORD_BYTES).contains(&total_len) {
        return Err(DecodeError::BadLength(total));
    }
    if lsn != expected_lsn {
        return Err(DecodeError::WrongLsn {
            stored: lsn,
            expected: expected_lsn,
        });
    }
    let type_byte = frame.get(20).copied().unwrap_or(0);
    if !(TYPE_PAGE_REDO..=TYPE_MAX).contains(&type_byte) || frame.get(21..24) != Some(&[0u8; 3][..])
    {
        return Err(DecodeError::BadType(type_byte));
    }
    Ok(FrameHeader {
        crc,
        total_len,
        prev_crc,
    })
}

/// Decodes one whole record (exactly `total_len` bytes) read at `expected_lsn`; when
/// `expected_prev` is given, the record must chain on that CRC.
///
/// # Errors
/// A [`DecodeError`] for any malformed input; never panics.
pub fn decode(
    record: &[u8],
    expected_lsn: Lsn,
    expected_prev: Option<u32>,
) -> Result<LogRecord, DecodeError> {
    let header = check_frame(record, expected_lsn)?;
    if record.len() != header.total_len {
        return Err(DecodeError::Truncated {
            needed: header.total_len,
            present: record.len(),
        });
    }
    let computed = crc32c(&record[4..]);
    if computed != header.crc {
        return Err(DecodeError::BadChecksum {
            stored: header.crc,
            computed,
        });
    }
    if let Some(expected) = expected_prev
        && expected != header.prev_crc
    {
        return Err(DecodeError::BrokenChain {
            stored: header.prev_crc,
            expected,
        });
    }
    decode_body(record[20], &record[FRAME_SIZE..])
}

fn decode_body(type_byte: u8, body: &[u8]) -> Result<LogRecord, DecodeError> {
    let short = DecodeError::BadBody("body shorter than its fixed fields");
    match type_byte {
        TYPE_PAGE_REDO => {
            let (Some(txn), Some(page), Some(offset), Some(len)) = (
                u64_at(body, 0),
                u64_at(body, 8),
                u32_at(body, 16),
                u32_at(body, 20),
            ) else {
                return Err(short);
            };
            let bytes = body.get(24..).unwrap_or_default();
            if bytes.len() != len as usize {
                return Err(DecodeError::BadBody("page redo length does not match body"));
            }
            Ok(LogRecord::PageRedo {
                txn,
                page,
                offset,
                bytes: bytes.to_vec(),
            })
        }
        TYPE_FULL_PAGE_IMAGE => {
            let (Some(txn), Some(page), Some(len)) =
                (u64_at(body, 0), u64_at(body, 8), u32_at(body, 16))
            else {
                return Err(short);
            };
            let image = body.get(20..).unwrap_or_default();
            if image.len() != len as usize {
                return Err(DecodeError::BadBody("image length does not match body"));
            }
            Ok(LogRecord::FullPageImage {
                txn,
                page,
                image: image.to_vec(),
            })
        }
        TYPE_COMMIT | TYPE_CHECKPOINT | TYPE_MTR_END | TYPE_TXN_COMMIT | TYPE_TXN_ABORT => {
            if body.len() != 8 {
                return Err(DecodeError::BadBody(
                    "commit/checkpoint/terminator body is not 8 bytes",
                ));
            }
            let value = u64_at(body, 0).ok_or(short)?;
            Ok(match type_byte {
                TYPE_COMMIT => LogRecord::Commit { txn: value },
                TYPE_MTR_END => LogRecord::MtrEnd { txn: value },
                TYPE_TXN_COMMIT => LogRecord::TxnCommit { txn: value },
                TYPE_TXN_ABORT => LogRecord::TxnAbort { txn: value },
                _ => LogRecord::Checkpoint { redo_lsn: value },
            })
        }
        TYPE_PAGE_OP | TYPE_UNDO => {
            let (Some(id), Some(len)) = (u64_at(body, 0), u32_at(body, 8)) else {
                return Err(short);
            };
            let bytes = body.get(12..).unwrap_or_default();
            if bytes.len() != len as usize {
                return Err(DecodeError::BadBody("op/undo length does not match body"));
            }
            Ok(if type_byte == TYPE_PAGE_OP {
                LogRecord::PageOp {
                    page: id,
                    op: bytes.to_vec(),
                }
            } else {
                LogRecord::Undo {
                    txn: id,
                    body: bytes.to_vec(),
                }
            })
        }
        other => Err(DecodeError::BadType(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips_and_damage_is_caught() {
        let records = [
            LogRecord::PageRedo {
                txn: 1,
                page: 2,
                offset: 3,
                bytes: vec![4, 5, 6],
            },
            LogRecord::FullPageImage {
                txn: 7,
                page: 8,
                image: vec![9; 100],
            },
            LogRecord::Commit { txn: 10 },
            LogRecord::Checkpoint { redo_lsn: 11 },
            LogRecord::PageOp {
                page: 12,
                op: vec![1, 2, 3],
            },
            LogRecord::MtrEnd { txn: 13 },
            LogRecord::Undo {
                txn: 14,
                body: vec![15; 40],
            },
            LogRecord::TxnCommit { txn: 16 },
            LogRecord::TxnAbort { txn: 17 },
            LogRecord::PageOp {
                page: 18,
                op: Vec::new(),
            },
        ];
        for record in &records {
            let bytes = record.encode(4096, 77).unwrap();
            assert_eq!(bytes.len(), record.encoded_len());
            assert_eq!(decode(&bytes, 4096, None).as_ref(), Ok(record));
            assert_eq!(decode(&bytes, 4096, Some(77)).as_ref(), Ok(record));
            assert!(matches!(
                decode(&bytes, 4096, Some(78)),
                Err(DecodeError::BrokenChain { .. })
            ));
            assert!(matches!(
                decode(&bytes, 8192, None),
                Err(DecodeError::WrongLsn { .. })
            ));
            let mut flipped = bytes.clone();
            let last = flipped.len() - 1;
            flipped[last] ^= 0x10;
            assert!(matches!(
                decode(&flipped, 4096, None),
                Err(DecodeError::BadChecksum { .. })
            ));
            assert!(decode(&bytes[..bytes.len() - 1], 4096, None).is_err());
        }
        assert_eq!(
            check_frame(&[0u8; FRAME_SIZE], 0),
            Err(DecodeError::BadLength(0))
        );
    }
}
