//! Torn writes of the last flush before a crash (sector prefixes, sector subsets, lost pages
//! of a multi-page flush) are still clean ends of the log: every record that was durable
//! before that flush is recovered, and nothing is called corruption.

use crate::wal_common;

use flashbuf::wal::Wal;
use wal_common::{PAGE, config, device_from, record, shared, snapshot};

const RING_PAGES: u64 = 32;
const SECTOR: usize = 512;
const SECTORS: usize = PAGE / SECTOR;

/// Mixes `old` and `new`: sector `s` comes from `new` when `take_new(s)`.
fn mix(old: &[u8], new: &[u8], take_new: impl Fn(usize) -> bool) -> Vec<u8> {
    let mut out = old.to_vec();
    for sector in 0..SECTORS {
        if take_new(sector) {
            let range = sector * SECTOR..(sector + 1) * SECTOR;
            out[range.clone()].copy_from_slice(&new[range]);
        }
    }
    out
}

#[test]
fn torn_last_flushes_are_clean_ends() {
    let config = config(RING_PAGES, 8);
    let device = wal_common::mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    let mut written = Vec::new();
    for id in 0..12 {
        let r = record((id % 2) as u8, id, 700);
        let end = wal.append(std::slice::from_ref(&r)).unwrap();
        wal.flush_to(end).unwrap();
        written.push(r);
    }
    let durable_count = written.len();
    let before = snapshot(&device);
    // The last flush: several records over four pages, the first of them a partial rewrite.
    for id in 100..110 {
        let r = record(0, id, 1400);
        wal.append(std::slice::from_ref(&r)).unwrap();
        written.push(r);
    }
    wal.close().unwrap();
    let after = snapshot(&device);
    let changed: Vec<usize> = (0..before.len())
        .filter(|&p| before[p] != after[p])
        .collect();
    assert!(
        changed.len() >= 4,
        "the last flush wrote {} pages",
        changed.len()
    );

    type Pattern = Box<dyn Fn(usize, usize) -> bool>;
    // (name, for (page index in the flush, sector) whether the new data landed)
    let patterns: Vec<(&str, Pattern)> = vec![
        ("prefix 1 sector", Box::new(|_, s| s < 1)),
        ("prefix 5 sectors", Box::new(|_, s| s < 5)),
        ("even sectors", Box::new(|_, s| s % 2 == 0)),
        ("odd sectors", Box::new(|_, s| s % 2 == 1)),
        ("last sectors only", Box::new(|_, s| s >= 6)),
        ("first page lost", Box::new(|p, _| p != 0)),
        ("second page lost", Box::new(|p, _| p != 1)),
        ("only the last page", Box::new(move |p, _| p == 3)),
        ("mixed per page", Box::new(|p, s| (p + s) % 3 != 0)),
        ("nothing landed", Box::new(|_, _| false)),
    ];
    for (name, landed) in &patterns {
        let mut image = after.clone();
        for (index, &page) in changed.iter().enumerate() {
            image[page] = mix(&before[page], &after[page], |s| landed(index, s));
        }
        let device = device_from(&image);
        let (_, recovery) = Wal::open(shared(&device), config.clone())
            .unwrap_or_else(|e| panic!("{name}: a torn last flush must be a clean end: {e}"));
        let got: Vec<_> = recovery.records.iter().map(|r| r.record.clone()).collect();
        assert!(got.len() >= durable_count, "{name}: lost durable records");
        assert_eq!(&got[..], &written[..got.len()], "{name}: a prefix");
    }
}
