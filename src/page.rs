//! The on-disk page format: a 32-byte header, then the payload.
//!
//! ```text
//! offset size field
//!      0    8 page_lsn     LSN of the newest modification written into this image (little endian)
//!      8    8 page_id      the page's own number, to catch misdirected writes
//!     16    4 checksum     CRC32C of bytes [0, 16) and [20, page_size)
//!     20    4 magic        "FBPG" for a formatted page
//!     24    8 reserved     zero
//!     32    .. payload
//! ```
//!
//! A page that was never written is all zeros; it verifies as an empty page with LSN 0.
//! Anything else must carry the magic, the right page id and a matching checksum, or reading it
//! is an [`Error::CorruptPage`]. The buffer pool stamps the header just before each write.

use crate::error::{Error, PageId, Result};

/// Size of the page header in bytes; payload starts here.
pub const PAGE_HEADER_SIZE: usize = 32;
/// Magic number of a formatted page.
pub const PAGE_MAGIC: [u8; 4] = *b"FBPG";
/// A log sequence number (byte position in the redo log stream; 0 means "never modified").
pub type Lsn = u64;

const LSN_RANGE: std::ops::Range<usize> = 0..8;
const ID_RANGE: std::ops::Range<usize> = 8..16;
const CHECKSUM_RANGE: std::ops::Range<usize> = 16..20;
const MAGIC_RANGE: std::ops::Range<usize> = 20..24;

fn read_u64(page: &[u8], range: std::ops::Range<usize>) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&page[range]);
    u64::from_le_bytes(bytes)
}

/// The checksum over everything but the checksum field.
#[must_use]
pub fn checksum(page: &[u8]) -> u32 {
    let head = crc32c::crc32c(&page[..CHECKSUM_RANGE.start]);
    crc32c::crc32c_append(head, &page[CHECKSUM_RANGE.end..])
}

/// The LSN recorded in a page image.
#[must_use]
pub fn page_lsn(page: &[u8]) -> Lsn {
    read_u64(page, LSN_RANGE)
}

/// Writes the header (LSN, page id, magic) and the checksum. Call just before writing the page.
pub fn stamp(page: &mut [u8], page_id: PageId, lsn: Lsn) {
    assert!(page.len() > PAGE_HEADER_SIZE, "page larger than its header");
    page[LSN_RANGE].copy_from_slice(&lsn.to_le_bytes());
    page[ID_RANGE].copy_from_slice(&page_id.to_le_bytes());
    page[MAGIC_RANGE].copy_from_slice(&PAGE_MAGIC);
    page[24..PAGE_HEADER_SIZE].fill(0);
    let sum = checksum(page);
    page[CHECKSUM_RANGE].copy_from_slice(&sum.to_le_bytes());
}

/// The page id a formatted page image says it is (`None` when it carries no magic).
#[must_use]
pub fn stamped_page_id(page: &[u8]) -> Option<PageId> {
    (page.len() > PAGE_HEADER_SIZE && page[MAGIC_RANGE] == PAGE_MAGIC)
        .then(|| read_u64(page, ID_RANGE))
}

/// Verifies a page image read from disk; returns its LSN (0 for a never-written page).
///
/// # Errors
/// [`Error::CorruptPage`] on a wrong magic, page id or checksum.
pub fn verify(page: &[u8], page_id: PageId) -> Result<Lsn> {
    if page.len() <= PAGE_HEADER_SIZE {
        return Err(corrupt(
            page_id,
            format!("page of {} bytes is too small", page.len()),
        ));
    }
    if page[MAGIC_RANGE] != PAGE_MAGIC {
        if page.iter().all(|&b| b == 0) {
            return Ok(0);
        }
        return Err(corrupt(page_id, "bad magic (not a formatted page)".into()));
    }
    let stored_id = read_u64(page, ID_RANGE);
    if stored_id != page_id {
        return Err(corrupt(
            page_id,
            format!("header says page {stored_id} (misdirected write)"),
        ));
    }
    let mut stored = [0u8; 4];
    stored.copy_from_slice(&page[CHECKSUM_RANGE]);
    let stored = u32::from_le_bytes(stored);
    let computed = checksum(page);
    if stored != computed {
        return Err(corrupt(
            page_id,
            format!("checksum {stored:#010x} does not match contents ({computed:#010x})"),
        ));
    }
    Ok(page_lsn(page))
}

fn corrupt(page: PageId, reason: String) -> Error {
    Error::CorruptPage { page, reason }
}

/// The payload (everything after the header).
#[must_use]
pub fn payload(page: &[u8]) -> &[u8] {
    &page[PAGE_HEADER_SIZE..]
}

/// The payload, mutably.
#[must_use]
pub fn payload_mut(page: &mut [u8]) -> &mut [u8] {
    &mut page[PAGE_HEADER_SIZE..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamped_pages_verify_and_damage_is_caught() {
        let mut page = vec![0u8; 4096];
        assert_eq!(verify(&page, 7).ok(), Some(0), "zero page is an empty page");
        payload_mut(&mut page)[..5].copy_from_slice(b"hello");
        stamp(&mut page, 7, 42);
        assert_eq!(verify(&page, 7).ok(), Some(42));
        assert!(verify(&page, 8).is_err(), "misdirected");
        page[100] ^= 1;
        assert!(matches!(
            verify(&page, 7),
            Err(Error::CorruptPage { page: 7, .. })
        ));
    }
}
