//! A torn or failed header update never loses the data file: the update writes the other slot,
//! so opening falls back to the previous header; a failed sync leaves the header in memory as
//! it was. Classifying a device writes nothing.

use std::sync::Arc;

use flashbuf::datafile::{self, DATA_START, DataFile, DataFileContent};
use flashbuf::device::fault::{FaultConfig, FaultDevice, TearMode, UnsyncedOnCrash};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{Device, SharedDevice};

const PAGE: usize = 4096;

#[test]
fn a_torn_header_write_falls_back_to_the_other_slot() {
    for mode in [TearMode::Prefix, TearMode::Sectors] {
        let inner: SharedDevice = Arc::new(MemoryDevice::new(PAGE, DATA_START + 16).unwrap());
        let fault = Arc::new(
            FaultDevice::new_zeroed(
                inner,
                FaultConfig {
                    seed: 3,
                    tear_mode: mode,
                    unsynced_on_crash: UnsyncedOnCrash::TearAll,
                    fail_syncs: vec![3], // the sync of the first update
                    ..FaultConfig::default()
                },
            )
            .unwrap(),
        );
        let file = DataFile::create(fault.clone(), 7, None).unwrap();
        let before = file.header();
        assert!(file.raise_high_water_mark(9).is_err(), "the sync failed");
        assert_eq!(file.header(), before, "unchanged in memory");
        let image: SharedDevice = Arc::new(fault.crash().unwrap());
        let opened = DataFile::open(image).unwrap().header();
        // Sector tears keep the 128-byte header whole: either version is a valid outcome.
        let after_update = (9, before.seq + 1);
        assert!(
            opened == before || (opened.high_water_mark, opened.seq) == after_update,
            "{mode:?}: {opened:?}"
        );
    }
}

#[test]
fn a_damaged_newer_slot_falls_back_to_the_older_one() {
    let device = Arc::new(MemoryDevice::new(PAGE, DATA_START + 16).unwrap());
    let file = DataFile::create(device.clone(), 7, None).unwrap();
    let before = file.header();
    file.raise_high_water_mark(9).unwrap();
    let newer = file.header();
    drop(file);
    // Tear the newer slot inside its header bytes (byte granularity).
    let mut page = vec![0u8; PAGE];
    device.store().read(newer.slot(), &mut page).unwrap();
    page[60..128].fill(0);
    device.store().write(newer.slot(), &page).unwrap();
    let opened = DataFile::open(device).unwrap();
    assert_eq!(opened.header(), before);
}

#[test]
fn classify_writes_nothing() {
    let device = Arc::new(MemoryDevice::new(PAGE, DATA_START + 4).unwrap());
    assert_eq!(
        datafile::classify(device.as_ref()).unwrap(),
        DataFileContent::Blank
    );
    assert_eq!(device.stats().writes, 0);
    DataFile::create(device.clone(), 1, None).unwrap();
    let writes = device.stats().writes;
    assert!(matches!(
        datafile::classify(device.as_ref()).unwrap(),
        DataFileContent::Ours(_)
    ));
    assert_eq!(device.stats().writes, writes);
}
