//! Images built straight into a file (`Image::build_file`, `flashbuf load`) and loaded into
//! devices with the file under their RAM (`Device::load_file`): the file holds the same
//! database as an image built in RAM, both header slots are unbound, every device starts from
//! the file's bytes, and a run's writes never reach the file.

use std::sync::Arc;

use flashbuf::bench::driver::RecordSpec;
use flashbuf::bench::image::{DEFAULT_ROOM_PCT, Image};
use flashbuf::datafile::{DATA_START, HEADER_SLOTS, SlotContent, decode_slot};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, DeviceSpec, OpenOptions, SharedDevice};
use flashbuf::workload::ycsb::{YcsbConfig, YcsbWorkload};

/// YCSB rows (1020 bytes) need 8 KiB pages.
const PAGE: usize = 8192;

fn spec() -> RecordSpec {
    RecordSpec::Ycsb(YcsbConfig::standard(YcsbWorkload::A, 800))
}

fn page_of(bytes: &[u8], page: u64) -> &[u8] {
    &bytes[page as usize * PAGE..(page as usize + 1) * PAGE]
}

#[test]
fn a_file_built_image_matches_one_built_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let in_memory = dir.path().join("memory.img");
    let in_file = dir.path().join("file.img");
    let built = Image::build(&spec(), PAGE, &mut |_| {}).unwrap();
    built.write_file(&in_memory).unwrap();
    let direct = Image::build_file(&spec(), PAGE, DEFAULT_ROOM_PCT, &in_file, &mut |_| {}).unwrap();
    assert_eq!(direct.loaded_pages, built.loaded_pages);
    assert_eq!(direct.capacity_pages, built.capacity_pages);
    assert_eq!(
        Image::peek_file(&in_file).unwrap(),
        Image::peek_file(&in_memory).unwrap()
    );

    let a = std::fs::read(&in_memory).unwrap();
    let b = std::fs::read(&in_file).unwrap();
    assert_eq!(a.len(), b.len(), "same capacity, same file length");
    // Bound: the image's device pages.
    for page in DATA_START..DATA_START + built.loaded_pages {
        assert!(
            page_of(&a, page) == page_of(&b, page),
            "device page {page} differs between the two builds"
        );
    }
    for page in HEADER_SLOTS..DATA_START {
        assert!(
            page_of(&b, page).iter().all(|&byte| byte == 0),
            "doublewrite page {page} must be zero in an image"
        );
    }
    for slot in 0..HEADER_SLOTS {
        match decode_slot(page_of(&b, slot)) {
            SlotContent::Valid(header) => {
                assert_eq!(header.log_id, 0, "slot {slot} still names the loading log");
                assert_eq!(header.high_water_mark, built.loaded_pages);
                assert_eq!(header.data_pages, built.capacity_pages);
            }
            other => panic!("slot {slot}: {other:?}"),
        }
    }
}

/// `flashbuf load --room`: the image keeps that share of its loaded pages for the run's
/// inserts, in its header and its length, and a reader sees that capacity.
#[test]
fn an_image_keeps_the_room_it_was_built_with() {
    let dir = tempfile::tempdir().unwrap();
    let roomy = dir.path().join("roomy.img");
    let image = Image::build_file(&spec(), PAGE, 300, &roomy, &mut |_| {}).unwrap();
    assert_eq!(
        image.capacity_pages,
        image.loaded_pages + (image.loaded_pages * 3).max(4096)
    );
    assert_eq!(
        image.capacity_pages,
        Image::capacity_with_room(image.loaded_pages, 300)
    );
    let facts = Image::peek_file(&roomy).unwrap();
    assert_eq!(facts.capacity_pages, image.capacity_pages);
    assert_eq!(facts.loaded_pages, image.loaded_pages);
    let bytes = std::fs::metadata(&roomy).unwrap().len();
    assert_eq!(bytes, (DATA_START + image.capacity_pages) * PAGE as u64);
    let read = Image::read_file(&roomy, &spec()).unwrap();
    assert_eq!(read.capacity_pages, image.capacity_pages);
    assert!(
        Image::capacity_with_room(100, 0) == 100 + 4096,
        "at least 4,096 pages of room"
    );
    // An image built in memory (`bench --room`) keeps its room the same way.
    let in_memory = Image::build_with_room(&spec(), PAGE, 300, &mut |_| {}).unwrap();
    assert_eq!(in_memory.loaded_pages, image.loaded_pages);
    assert_eq!(in_memory.capacity_pages, image.capacity_pages);
}

#[test]
fn devices_read_the_file_until_they_write_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("image.img");
    Image::build_file(&spec(), PAGE, DEFAULT_ROOM_PCT, &path, &mut |_| {}).unwrap();
    let original = std::fs::read(&path).unwrap();
    let image = Image::read_file(&path, &spec()).unwrap();
    let pages = DATA_START + image.capacity_pages;

    let memory: SharedDevice = Arc::new(MemoryDevice::new(PAGE, pages).unwrap());
    let emulated = flashbuf::device::open(
        &DeviceSpec::parse("emu:ssd-a").unwrap(),
        &OpenOptions {
            page_size: PAGE,
            pages,
            create: true,
        },
    )
    .unwrap();
    let mut buf = AlignedBuf::new(PAGE);
    for device in [&memory, &emulated] {
        image.copy_to(device).unwrap();
        // Bound: the image's device pages.
        for page in 0..DATA_START + image.loaded_pages {
            device.read_page(page, &mut buf).unwrap();
            assert!(
                buf.as_slice() == page_of(&original, page),
                "{}: page {page} is not the file's",
                device.info().name
            );
        }
        let past = DATA_START + image.loaded_pages;
        device.read_page(past, &mut buf).unwrap();
        assert!(buf.as_slice().iter().all(|&b| b == 0), "headroom is zero");

        buf.as_mut_slice().fill(0xab);
        device.write_page(DATA_START, &buf).unwrap();
        device.write_page(past, &buf).unwrap();
        device.sync().unwrap();
        device.read_page(DATA_START, &mut buf).unwrap();
        assert!(
            buf.as_slice().iter().all(|&b| b == 0xab),
            "the write is seen"
        );
    }
    assert!(
        std::fs::read(&path).unwrap() == original,
        "a device's writes must never reach the image file"
    );
    // A fresh device still starts from the file's bytes.
    let fresh: SharedDevice = Arc::new(MemoryDevice::new(PAGE, pages).unwrap());
    image.copy_to(&fresh).unwrap();
    fresh.read_page(DATA_START, &mut buf).unwrap();
    assert!(buf.as_slice() == page_of(&original, DATA_START));
}

#[test]
fn a_failed_build_leaves_no_file_and_an_existing_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("image.img");
    std::fs::write(&path, b"precious").unwrap();
    let refused = Image::build_file(&spec(), PAGE, DEFAULT_ROOM_PCT, &path, &mut |_| {});
    assert!(refused.is_err());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"precious",
        "an existing file is never touched"
    );

    // 4 KiB pages cannot hold YCSB's 1020-byte rows four to a leaf: the load fails, and the
    // partial file is removed.
    let failing = dir.path().join("failing.img");
    let failed = Image::build_file(&spec(), 4096, DEFAULT_ROOM_PCT, &failing, &mut |_| {});
    assert!(failed.is_err(), "1020-byte rows in 4 KiB pages must fail");
    assert!(
        !failing.exists(),
        "a failed build must remove its partial file"
    );
}
