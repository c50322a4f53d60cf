//! The data-file header decoder and `DataFile::open` over arbitrary header pages.
//!
//! Input byte 0 picks the mode (modulo 3). 0: the rest is one header page (padded with
//! zeros): `decode_slot` must not panic, and a `Valid` header must re-encode to exactly the
//! page. 1: the rest fills the two header pages of a small device (the data area stays zero):
//! `classify` and `DataFile::open` must not panic and must agree (`open` succeeds only on
//! `Ours`), and neither may write anything. 2 (structured, so that checksums are right): the
//! rest gives header fields, which are encoded with a valid CRC into one or both slots, then
//! up to four bytes are XORed; as in mode 1, plus: a header that decodes as valid satisfies the
//! format's layout rules.

#![no_main]

use std::sync::Arc;

use flashbuf::datafile::{
    self, DATA_START, DOUBLEWRITE_PAGES, DOUBLEWRITE_SINGLE_SLOTS, DOUBLEWRITE_START, DataFile,
    DataFileContent, DataFileHeader, SlotContent,
};
use flashbuf::device::Device;
use flashbuf::device::memory::MemoryDevice;
use libfuzzer_sys::fuzz_target;

const PAGE: usize = 4096;

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut raw = [0u8; 8];
    for (index, byte) in raw.iter_mut().enumerate() {
        *byte = bytes.get(at + index).copied().unwrap_or(0);
    }
    u64::from_le_bytes(raw)
}

/// Mode 2: fields from the input, a valid CRC, then a few XORed bytes.
fn structured(rest: &[u8]) -> Vec<[u8; PAGE]> {
    let pick =
        |at: usize, choices: &[u64]| choices[(u64_at(rest, at) % choices.len() as u64) as usize];
    let layout_ok = u64_at(rest, 0) % 8 != 0; // mostly this format's layout
    let header = DataFileHeader {
        page_size: pick(8, &[4096, 4096, 8192, 1000, 65_536, 131_072]) as u32,
        database_id: u64_at(rest, 16) % 4,
        log_id: u64_at(rest, 24),
        data_pages: pick(32, &[0, 1, 4, 5, 1 << 40, u64::MAX]),
        high_water_mark: pick(40, &[0, 1, 4, 5, u64::MAX]),
        doublewrite_start: if layout_ok {
            DOUBLEWRITE_START
        } else {
            u64_at(rest, 48)
        },
        doublewrite_pages: if layout_ok {
            DOUBLEWRITE_PAGES
        } else {
            u64_at(rest, 56)
        },
        doublewrite_single_slots: if layout_ok {
            DOUBLEWRITE_SINGLE_SLOTS as u32
        } else {
            u64_at(rest, 64) as u32
        },
        data_start: if layout_ok {
            DATA_START
        } else {
            u64_at(rest, 72)
        },
        seq: u64_at(rest, 80) % 5,
    };
    let mut pages = vec![[0u8; PAGE]; 2];
    let both = u64_at(rest, 88) % 2 == 0;
    header.encode(&mut pages[(header.seq % 2) as usize]);
    if both {
        let older = DataFileHeader {
            seq: header.seq.saturating_sub(1),
            ..header
        };
        older.encode(&mut pages[(older.seq % 2) as usize]);
    }
    for flip in rest.get(96..).unwrap_or(&[]).chunks_exact(3).take(4) {
        let at = usize::from(u16::from_le_bytes([flip[0], flip[1]])) % (2 * PAGE);
        pages[at / PAGE][at % PAGE] ^= flip[2];
    }
    pages
}

/// Classify and open a device whose header pages are `pages`; they must agree and write
/// nothing.
fn check_device(pages: &[[u8; PAGE]]) {
    let device = Arc::new(MemoryDevice::new(PAGE, DATA_START + 4).unwrap());
    for (slot, page) in pages.iter().enumerate() {
        device.store().write(slot as u64, page).unwrap();
    }
    let content = datafile::classify(device.as_ref()).expect("RAM reads do not fail");
    if let DataFileContent::Ours(header) = &content {
        assert!(header.high_water_mark <= header.data_pages && header.data_pages > 0);
        assert!(header.database_id != 0 && header.seq != 0);
        assert_eq!(header.data_start, DATA_START);
    }
    let opened = DataFile::open(device.clone());
    match (&content, &opened) {
        (DataFileContent::Ours(header), Ok(file)) => assert_eq!(file.header(), *header),
        (DataFileContent::Ours(header), Err(err)) => {
            // Only the device checks may refuse a valid header.
            assert!(
                header.page_size as usize != PAGE || header.device_pages() > DATA_START + 4,
                "refused a valid header: {err}"
            );
        }
        (_, Ok(_)) => panic!("opened a device classified as {content:?}"),
        (_, Err(_)) => {}
    }
    assert_eq!(device.stats().writes, 0, "neither writes anything");
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    if mode % 3 == 2 {
        check_device(&structured(rest));
        return;
    }
    if mode % 3 == 0 {
        let mut page = vec![0u8; PAGE];
        let n = rest.len().min(PAGE);
        page[..n].copy_from_slice(&rest[..n]);
        if let SlotContent::Valid(header) = datafile::decode_slot(&page) {
            let mut again = vec![0u8; PAGE];
            header.encode(&mut again);
            assert_eq!(again, page, "a valid header re-encodes to the same bytes");
        }
        let _ = datafile::decode_slot(&page[..n]);
        return;
    }
    let mut pages = vec![[0u8; PAGE]; 2];
    for (slot, page) in pages.iter_mut().enumerate() {
        let from = (slot * PAGE).min(rest.len());
        let to = ((slot + 1) * PAGE).min(rest.len());
        page[..to - from].copy_from_slice(&rest[from..to]);
    }
    check_device(&pages);
});
