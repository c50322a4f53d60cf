//! A log of an unreadable format version (version 1 had no flush stamps) does not open: it is
//! a typed `Format::UnsupportedVersion` error, and `open_or_create` does not format over it.
//! A version 2 log (no patch records) opens, and its next checkpoint is written as version 3.

use crate::wal_common;

use flashbuf::Error;
use flashbuf::error::FormatProblem;
use flashbuf::wal::Wal;
use flashbuf::wal::layout::FORMAT_VERSION;
use wal_common::{PAGE, config, mem_for, shared, snapshot};

#[test]
fn a_version_1_log_is_refused_and_kept() {
    let config = config(16, 4);
    let device = mem_for(&config);
    Wal::create(shared(&device), config.clone()).unwrap();
    // Rewrite the slot as version 1, checksummed, as an old build would have left it.
    let mut page = vec![0u8; PAGE];
    device.store().read(1, &mut page).unwrap();
    page[8..12].copy_from_slice(&1u32.to_le_bytes());
    let crc = crc32c::crc32c(&page[8..64]);
    page[4..8].copy_from_slice(&crc.to_le_bytes());
    device.store().write(1, &page).unwrap();
    let before = snapshot(&device);
    for result in [
        Wal::open(shared(&device), config.clone()).map(|_| ()),
        Wal::open_or_create(shared(&device), config.clone()).map(|_| ()),
    ] {
        match result {
            Err(Error::Format {
                problem: FormatProblem::UnsupportedVersion { found, supported },
                ..
            }) => assert_eq!((found, supported), (1, FORMAT_VERSION)),
            Err(other) => panic!("expected UnsupportedVersion, got {other}"),
            Ok(()) => panic!("an old log opened"),
        }
    }
    assert_eq!(snapshot(&device), before, "nothing was written");
}

/// Rewrites both checkpoint slots' version as `version`, checksummed.
fn set_slot_versions(
    device: &std::sync::Arc<flashbuf::device::memory::MemoryDevice>,
    version: u32,
) {
    for slot in 0..2 {
        let mut page = vec![0u8; PAGE];
        device.store().read(slot, &mut page).unwrap();
        if page[0..4] != *b"FBCK" {
            continue;
        }
        page[8..12].copy_from_slice(&version.to_le_bytes());
        let crc = crc32c::crc32c(&page[8..64]);
        page[4..8].copy_from_slice(&crc.to_le_bytes());
        device.store().write(slot, &page).unwrap();
    }
}

fn slot_versions(device: &std::sync::Arc<flashbuf::device::memory::MemoryDevice>) -> Vec<u32> {
    (0..2)
        .filter_map(|slot| {
            let mut page = vec![0u8; PAGE];
            device.store().read(slot, &mut page).unwrap();
            (page[0..4] == *b"FBCK").then(|| u32::from_le_bytes(page[8..12].try_into().unwrap()))
        })
        .collect()
}

#[test]
fn a_version_2_log_opens_and_its_next_checkpoint_says_version_3() {
    assert_eq!(FORMAT_VERSION, 3);
    let config = config(16, 4);
    let device = mem_for(&config);
    Wal::create(shared(&device), config.clone()).unwrap();
    set_slot_versions(&device, 2);
    assert!(slot_versions(&device).iter().all(|&v| v == 2));
    let (wal, _) = Wal::open(shared(&device), config.clone()).expect("a version 2 log opens");
    wal.write_checkpoint(wal.current_lsn()).unwrap();
    assert!(
        slot_versions(&device).contains(&3),
        "{:?}",
        slot_versions(&device)
    );
}
