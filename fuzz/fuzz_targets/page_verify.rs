//! The data page decoder `page::verify` over arbitrary bytes and over damaged valid pages.
//!
//! Input: 8 bytes of page id, 1 mode byte, then bytes. Mode even: the rest (padded with zeros
//! to a page) is verified as is: no panic, and a success is either the all-zero page (LSN 0)
//! or a page whose magic, id and checksum verify. Mode odd: a page is stamped from the rest,
//! must verify, then one bit chosen by the input is flipped: it must not verify (CRC32C
//! detects every single-bit error).

#![no_main]

use flashbuf::page;
use libfuzzer_sys::fuzz_target;

const PAGE: usize = 4096;

fuzz_target!(|input: &[u8]| {
    if input.len() < 9 {
        return;
    }
    let id = u64::from_le_bytes(input[..8].try_into().unwrap());
    let mode = input[8];
    let rest = &input[9..];
    let mut bytes = vec![0u8; PAGE];
    let n = rest.len().min(PAGE);
    bytes[..n].copy_from_slice(&rest[..n]);
    if mode % 2 == 0 {
        if let Ok(lsn) = page::verify(&bytes, id) {
            let zero = bytes.iter().all(|&b| b == 0);
            let stamped = bytes[20..24] == page::PAGE_MAGIC
                && bytes[8..16] == id.to_le_bytes()
                && bytes[16..20] == page::checksum(&bytes).to_le_bytes();
            assert!(
                zero || stamped,
                "accepted a page that is neither blank nor stamped"
            );
            assert_eq!(lsn, if zero { 0 } else { page::page_lsn(&bytes) });
        }
        // Short and empty slices are errors, not panics.
        let _ = page::verify(&bytes[..n.min(40)], id);
    } else {
        let lsn = u64::from_le_bytes(input[..8].try_into().unwrap()).rotate_left(7) >> 2;
        page::stamp(&mut bytes, id, lsn);
        assert_eq!(page::verify(&bytes, id).ok(), Some(lsn));
        let bit = (usize::from(mode) * 31 + rest.len()) % (PAGE * 8);
        bytes[bit / 8] ^= 1 << (bit % 8);
        assert!(
            page::verify(&bytes, id).is_err(),
            "a flipped bit {bit} verified"
        );
    }
});
