//! The data-file header decoder and `DataFile::open` over arbitrary header pages.
//!
//! Input byte 0 picks the mode. Even: the rest is one header page (padded with zeros):
//! `decode_slot` must not panic, and a `Valid` header must re-encode to exactly the page.
//! Odd: the rest fills the two header pages of a small device (the data area stays zero):
//! `classify` and `DataFile::open` must not panic and must agree (`open` succeeds only on
//! `Ours`), and neither may write anything.

#![no_main]

use std::sync::Arc;

use flashbuf::datafile::{self, DATA_START, DataFile, DataFileContent, SlotContent};
use flashbuf::device::Device;
use flashbuf::device::memory::MemoryDevice;
use libfuzzer_sys::fuzz_target;

const PAGE: usize = 4096;

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    if mode % 2 == 0 {
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
    let device = Arc::new(MemoryDevice::new(PAGE, DATA_START + 4).unwrap());
    for slot in 0..2usize {
        let mut page = vec![0u8; PAGE];
        let from = (slot * PAGE).min(rest.len());
        let to = ((slot + 1) * PAGE).min(rest.len());
        page[..to - from].copy_from_slice(&rest[from..to]);
        device.store().write(slot as u64, &page).unwrap();
    }
    let content = datafile::classify(device.as_ref()).expect("RAM reads do not fail");
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
});
