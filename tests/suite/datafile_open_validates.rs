//! Opening a data file validates everything and answers with typed errors: blank, foreign
//! data, damaged header, another format version, wrong page size, a device shorter than the
//! header says; a valid file opens with its header, and its regions are offset views.

use std::sync::Arc;

use flashbuf::Error;
use flashbuf::datafile::{self, DATA_START, DOUBLEWRITE_PAGES, DataFile};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, Device, SharedDevice};
use flashbuf::error::FormatProblem;

const PAGE: usize = 4096;

fn mem(page_size: usize, pages: u64) -> Arc<MemoryDevice> {
    Arc::new(MemoryDevice::new(page_size, pages).unwrap())
}

fn problem(result: flashbuf::Result<DataFile>) -> FormatProblem {
    match result {
        Err(Error::Format { problem, .. }) => problem,
        Err(other) => panic!("expected a Format error, got {other}"),
        Ok(_) => panic!("opened"),
    }
}

/// Copies the first `pages` pages of `from` into a new device of `page_size`-byte pages.
fn copy_bytes(from: &MemoryDevice, page_size: usize, pages: u64) -> Arc<MemoryDevice> {
    let bytes_total = (pages as usize * page_size).min(from.info().pages as usize * PAGE);
    let mut bytes = vec![0u8; from.info().pages as usize * PAGE];
    for (index, chunk) in bytes.chunks_mut(PAGE).enumerate() {
        from.store().read(index as u64, chunk).unwrap();
    }
    let to = mem(page_size, pages);
    for (index, chunk) in bytes[..bytes_total].chunks(page_size).enumerate() {
        let mut page = vec![0u8; page_size];
        page[..chunk.len()].copy_from_slice(chunk);
        to.store().write(index as u64, &page).unwrap();
    }
    to
}

#[test]
fn a_created_file_opens_with_its_header_and_regions() {
    let device = mem(PAGE, DATA_START + 50);
    let created = DataFile::create(device.clone(), 0x55, None).unwrap();
    let header = created.header();
    assert_eq!(header.data_pages, 50);
    assert_eq!(header.log_id, 0x55);
    assert_eq!(header.high_water_mark, 0);
    created.raise_high_water_mark(20).unwrap();
    created.bind_log(0x99).unwrap();
    created.raise_high_water_mark(5).unwrap(); // never lowers
    drop(created);

    let opened = DataFile::open(device.clone()).unwrap();
    let header = opened.header();
    assert_eq!((header.high_water_mark, header.log_id), (20, 0x99));
    assert!(opened.check_log(0x99).is_ok());
    assert!(matches!(
        opened.check_log(0x55),
        Err(Error::Format {
            problem: FormatProblem::WrongLog {
                expected: 0x99,
                found: 0x55
            },
            ..
        })
    ));
    assert!(opened.raise_high_water_mark(51).is_err());

    let data = opened.data_device().unwrap();
    assert_eq!(data.info().pages, 50);
    let mut buf = AlignedBuf::new(PAGE);
    buf.as_mut_slice().fill(3);
    data.write_page(0, &buf).unwrap();
    let mut back = AlignedBuf::new(PAGE);
    device.read_page(DATA_START, &mut back).unwrap();
    assert_eq!(
        back.as_slice()[0],
        3,
        "data page 0 is device page {DATA_START}"
    );
    assert!(
        data.write_page(50, &buf).is_err(),
        "no access past the data region"
    );
    assert_eq!(
        opened.doublewrite_device().unwrap().info().pages,
        DOUBLEWRITE_PAGES
    );
}

#[test]
fn bad_devices_are_typed_errors() {
    let blank = mem(PAGE, DATA_START + 8);
    assert_eq!(problem(DataFile::open(blank.clone())), FormatProblem::Blank);

    let foreign = mem(PAGE, DATA_START + 8);
    let mut elf = AlignedBuf::new(PAGE);
    elf.as_mut_slice()[..4].copy_from_slice(b"\x7fELF");
    foreign.write_page(0, &elf).unwrap();
    assert!(matches!(
        problem(DataFile::open(foreign.clone())),
        FormatProblem::Foreign { .. }
    ));
    assert!(
        DataFile::create(foreign, 1, None).is_err(),
        "never formats over it"
    );

    let device = mem(PAGE, DATA_START + 40);
    DataFile::create(device.clone(), 1, None).unwrap();
    assert!(
        DataFile::create(device.clone(), 1, None).is_err(),
        "never formats over a data file"
    );

    // Truncated: the file holds fewer pages than its header says.
    let truncated = copy_bytes(&device, PAGE, DATA_START + 10);
    match problem(DataFile::open(truncated)) {
        FormatProblem::Truncated {
            needed_bytes,
            present_bytes,
        } => {
            assert_eq!(needed_bytes, (DATA_START + 40) * PAGE as u64);
            assert_eq!(present_bytes, (DATA_START + 10) * PAGE as u64);
        }
        other => panic!("{other}"),
    }

    // Read with another page size: the header is still found and the size named.
    let bigger = copy_bytes(&device, 2 * PAGE, DATA_START);
    assert_eq!(
        problem(DataFile::open(bigger)),
        FormatProblem::PageSize {
            found: PAGE as u64,
            expected: 2 * PAGE as u64
        }
    );

    // Another version: re-checksummed header with version 9 in both slots.
    let other = copy_bytes(&device, PAGE, DATA_START + 40);
    for slot in 0..2 {
        let mut page = vec![0u8; PAGE];
        other.store().read(slot, &mut page).unwrap();
        page[8..12].copy_from_slice(&9u32.to_le_bytes());
        let crc = crc32c_of(&page[8..128]);
        page[4..8].copy_from_slice(&crc.to_le_bytes());
        other.store().write(slot, &page).unwrap();
    }
    assert_eq!(
        problem(DataFile::open(other)),
        FormatProblem::UnsupportedVersion {
            found: 9,
            supported: datafile::DATAFILE_VERSION
        }
    );

    // Both slots damaged.
    let damaged = copy_bytes(&device, PAGE, DATA_START + 40);
    for slot in 0..2 {
        let mut page = vec![0u8; PAGE];
        damaged.store().read(slot, &mut page).unwrap();
        page[40] ^= 1;
        damaged.store().write(slot, &page).unwrap();
    }
    assert!(matches!(
        problem(DataFile::open(damaged)),
        FormatProblem::Damaged { .. }
    ));
}

/// CRC32C (Castagnoli), bitwise: the test does not depend on the crate's CRC dependency.
fn crc32c_of(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82f6_3b78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn zeroed_headers_over_data_are_damaged_not_blank() {
    let device = mem(PAGE, DATA_START + 8);
    let file = DataFile::create(device.clone(), 1, None).unwrap();
    let mut buf = AlignedBuf::new(PAGE);
    buf.as_mut_slice().fill(1);
    file.data_device().unwrap().write_page(0, &buf).unwrap();
    let zeros = AlignedBuf::new(PAGE);
    device.write_page(0, &zeros).unwrap();
    device.write_page(1, &zeros).unwrap();
    let shared: SharedDevice = device.clone();
    assert!(matches!(
        datafile::classify(shared.as_ref()).unwrap(),
        datafile::DataFileContent::Damaged(_)
    ));
    assert!(DataFile::create(device, 1, None).is_err());
}
