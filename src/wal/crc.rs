//! CRC-32C of the log's short pieces (record frames and bodies, page headers, checkpoint
//! slots): the same checksum as `crc32c::crc32c`, computed for inputs under
//! [`SHORT_LIMIT`] bytes with the SSE 4.2 instruction over unaligned 8-byte words.
//!
//! Why: a TPC-C transaction seals about 74 redo records of about 50 bytes each. The crate
//! aligns its input first (up to 7 single-byte steps at each end) and sets up its 3-way
//! parallel loops even when they run zero times, about 140 instructions for a 50-byte record;
//! x86-64 loads unaligned words at full speed, so whole words from the start, then one 4-, 2-
//! and 1-byte step for the tail, take about a quarter of that (docs/performance.md, "The log's
//! checksums"). Longer inputs (log pages, data pages) keep the crate's parallel loops, which
//! are faster there. Other targets use the crate throughout.

/// Inputs at least this long go to `crc32c::crc32c`.
pub const SHORT_LIMIT: usize = 256;

/// CRC-32C (Castagnoli, reflected, initial value and final XOR all ones) of `data`: equal to
/// `crc32c::crc32c(data)` for every input.
#[inline]
#[must_use]
pub fn crc32c(data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if data.len() < SHORT_LIMIT && std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU has SSE 4.2 (checked just above).
            return unsafe { short_sse42(data) };
        }
    }
    crc32c::crc32c(data)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
fn short_sse42(data: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u8, _mm_crc32_u16, _mm_crc32_u32, _mm_crc32_u64};
    let mut crc = u64::from(u32::MAX);
    let mut words = data.chunks_exact(8);
    for word in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        crc = _mm_crc32_u64(crc, u64::from_le_bytes(bytes));
    }
    let mut crc = crc as u32;
    let mut tail = words.remainder();
    if let Some((four, rest)) = tail.split_first_chunk::<4>() {
        crc = _mm_crc32_u32(crc, u32::from_le_bytes(*four));
        tail = rest;
    }
    if let Some((two, rest)) = tail.split_first_chunk::<2>() {
        crc = _mm_crc32_u16(crc, u16::from_le_bytes(*two));
        tail = rest;
    }
    if let Some(&one) = tail.first() {
        crc = _mm_crc32_u8(crc, one);
    }
    !crc
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::{SHORT_LIMIT, crc32c};

    #[test]
    fn agrees_with_the_crate_for_every_length_and_offset() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let bytes: Vec<u8> = (0..2 * SHORT_LIMIT + 16)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for start in 0..8 {
            for len in 0..=(SHORT_LIMIT + 40) {
                let data = &bytes[start..start + len];
                assert_eq!(
                    crc32c(data),
                    crc32c::crc32c(data),
                    "start {start} len {len}"
                );
            }
        }
        // The standard check value of CRC-32C.
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    }
}
