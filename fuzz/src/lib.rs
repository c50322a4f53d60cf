//! Helpers shared by the fuzz targets: RAM device images and byte mutations read from the
//! fuzzer's input.

use std::sync::Arc;

use flashbuf::device::Device;
use flashbuf::device::memory::MemoryDevice;

/// Log and data page size of every fuzzed image.
pub const PAGE: usize = 4096;

/// Copies every page of `device`.
pub fn snapshot(device: &MemoryDevice) -> Vec<u8> {
    let pages = device.info().pages as usize;
    let mut image = vec![0u8; pages * PAGE];
    for (index, page) in image.chunks_mut(PAGE).enumerate() {
        device.store().read(index as u64, page).unwrap();
    }
    image
}

/// A RAM device holding `image` (a whole number of pages).
pub fn device_from(image: &[u8]) -> Arc<MemoryDevice> {
    assert!(image.len() % PAGE == 0 && !image.is_empty());
    let device = Arc::new(MemoryDevice::new(PAGE, (image.len() / PAGE) as u64).unwrap());
    for (index, page) in image.chunks(PAGE).enumerate() {
        device.store().write(index as u64, page).unwrap();
    }
    device
}

/// One change to an image: XOR `mask` into the byte at `offset`, or zero `len` bytes there.
#[derive(Debug, Clone, Copy)]
pub struct Mutation {
    /// Byte offset in the image.
    pub offset: usize,
    /// XOR mask (when `zero_len` is 0).
    pub mask: u8,
    /// Bytes to zero from `offset` (0: XOR instead).
    pub zero_len: usize,
}

/// Reads up to `max` mutations of an image of `len` bytes from `input` (6 bytes each:
/// 4 offset, 1 mask, 1 kind). Mutations that change nothing are skipped.
pub fn mutations(input: &[u8], len: usize, max: usize) -> Vec<Mutation> {
    input
        .chunks_exact(6)
        .take(max)
        .filter_map(|chunk| {
            let offset =
                u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]) as usize % len;
            let mask = chunk[4];
            let zero_len = if chunk[5] & 0x80 != 0 {
                1 + (chunk[5] & 0x7f) as usize * 64
            } else {
                0
            };
            (zero_len > 0 || mask != 0).then_some(Mutation {
                offset,
                mask,
                zero_len: zero_len.min(len - offset),
            })
        })
        .collect()
}

/// Applies `mutations` to `image`; returns the byte ranges actually changed.
pub fn apply(image: &mut [u8], mutations: &[Mutation]) -> Vec<std::ops::Range<usize>> {
    let mut changed = Vec::new();
    for m in mutations {
        if m.zero_len == 0 {
            image[m.offset] ^= m.mask;
            changed.push(m.offset..m.offset + 1);
        } else {
            let range = m.offset..m.offset + m.zero_len;
            if image[range.clone()].iter().any(|&b| b != 0) {
                image[range.clone()].fill(0);
                changed.push(range);
            }
        }
    }
    changed
}

/// Log page header bytes that hold the flush stamp (`stamp`, `stamp_crc`): damage there only
/// removes a proof, the record scan never reads them.
pub const STAMP_BYTES: std::ops::Range<usize> = 24..36;

/// The LSN of the first byte of the log ring that differs between `before` and `after` and
/// that the record scan reads (stamp bytes excluded), for a log that never wrapped; `None`
/// when only the checkpoint slots or stamps differ. `slots_changed` says whether the slot
/// pages differ.
pub fn first_changed_lsn(before: &[u8], after: &[u8]) -> (Option<u64>, bool) {
    let slots_changed = before[..2 * PAGE] != after[..2 * PAGE];
    let first = before
        .iter()
        .zip(after)
        .enumerate()
        .skip(2 * PAGE)
        .filter(|(offset, _)| !STAMP_BYTES.contains(&(offset % PAGE)))
        .find(|(_, (a, b))| a != b)
        .map(|(offset, _)| (offset - 2 * PAGE) as u64);
    (first, slots_changed)
}

/// Whether the header of stream page `stream_page` (device page `2 + stream_page`) is the same
/// in both images.
pub fn header_unchanged(before: &[u8], after: &[u8], stream_page: u64) -> bool {
    let at = (2 + stream_page as usize) * PAGE;
    before[at..at + 40] == after[at..at + 40]
}
