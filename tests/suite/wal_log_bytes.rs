//! The bytes the log writes to its device do not depend on what its buffer slots held before:
//! a page entering the buffer gets only its header, and every image written is cut at the end
//! of the log with zeros after it (`src/wal/log.rs`, "Buffer slots"; `docs/wal-format.md`:
//! "zero after the last record").
//!
//! Two logs open one formatted image (same log id and geometry) and get the same appends and
//! flushes: one with a buffer so large that every page enters a slot never used before (all
//! zeros, as when slots were zeroed on entry), one with a 4-page buffer whose slots are reused
//! dozens of times and hold old records. Their devices must be equal byte for byte after every
//! flush, and the page holding the end must be zero after it.

use crate::wal_common;

use flashbuf::wal::Wal;
use wal_common::{PAGE, config, device_from, mem_for, record, shared, snapshot};

/// Stream pages in the ring.
const RING_PAGES: u64 = 320;
/// Device pages before the ring (the two checkpoint slots).
const SLOT_PAGES: u64 = 2;

#[test]
fn reused_buffer_slots_write_the_same_bytes_as_fresh_ones() {
    let formatted = {
        let config = config(RING_PAGES, 4);
        let device = mem_for(&config);
        Wal::create(shared(&device), config)
            .unwrap()
            .close()
            .unwrap();
        snapshot(&device)
    };
    let fresh_device = device_from(&formatted);
    let reused_device = device_from(&formatted);
    let (fresh, _) = Wal::open(shared(&fresh_device), config(RING_PAGES, 150)).unwrap();
    let (reused, _) = Wal::open(shared(&reused_device), config(RING_PAGES, 4)).unwrap();
    let mut flushes = 0;
    for id in 0..240u64 {
        // Sizes from a few bytes to about 3 KB, so records end anywhere in a page and some
        // span a page boundary.
        let size = (id * 977 % 3000) as usize;
        let r = record(id as u8, id, size);
        let end = fresh.append(std::slice::from_ref(&r)).unwrap();
        assert_eq!(reused.append(std::slice::from_ref(&r)).unwrap(), end);
        if id % 3 == 2 {
            continue; // two appends in one flush now and then
        }
        fresh.flush_to(end).unwrap();
        reused.flush_to(end).unwrap();
        flushes += 1;
        let (fresh_pages, reused_pages) = (snapshot(&fresh_device), snapshot(&reused_device));
        for (page, (a, b)) in fresh_pages.iter().zip(&reused_pages).enumerate() {
            assert!(a == b, "device page {page} differs after append {id}");
        }
        let stream_page = end / PAGE as u64;
        let device_page = SLOT_PAGES + stream_page % RING_PAGES;
        let offset = (end % PAGE as u64) as usize;
        assert!(
            reused_pages[device_page as usize][offset..]
                .iter()
                .all(|&byte| byte == 0),
            "the page holding the end (LSN {end}) is not zero after it"
        );
    }
    assert!(
        fresh.current_lsn() / PAGE as u64 > 40,
        "the test wraps the 4-page buffer many times"
    );
    assert!(flushes > 100);
    fresh.close().unwrap();
    reused.close().unwrap();
    assert!(snapshot(&fresh_device) == snapshot(&reused_device));
}
