//! Run-time write faults of the fault device: torn writes that are sector prefixes or
//! non-prefix sector subsets, misdirected writes, lost writes, and fused commands whose write
//! half is faulty; by ordinal and by seeded rate, counted, and replayed exactly from the seed.

use std::sync::Arc;

use flashbuf::device::fault::{FaultConfig, FaultCounters, FaultDevice, SECTOR_SIZE, TearMode};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, Device, IoRequest, SharedDevice};

const PAGE: usize = 4096;
const PAGES: u64 = 16;
const SECTORS: usize = PAGE / SECTOR_SIZE;

fn device(config: FaultConfig) -> FaultDevice {
    let inner: SharedDevice = Arc::new(MemoryDevice::new(PAGE, PAGES).unwrap());
    FaultDevice::new_zeroed(inner, config).unwrap()
}

fn filled(value: u8) -> AlignedBuf {
    let mut buf = AlignedBuf::new(PAGE);
    buf.as_mut_slice().fill(value);
    buf
}

fn read(device: &dyn Device, page: u64) -> Vec<u8> {
    let mut buf = AlignedBuf::new(PAGE);
    device.read_page(page, &mut buf).unwrap();
    buf.as_slice().to_vec()
}

/// Which sectors of `page` hold `value`.
fn sectors_with(bytes: &[u8], value: u8) -> Vec<bool> {
    bytes
        .chunks(SECTOR_SIZE)
        .map(|sector| sector.iter().all(|&b| b == value))
        .collect()
}

fn is_prefix(landed: &[bool]) -> bool {
    landed.iter().skip_while(|&&b| b).all(|&b| !b)
}

#[test]
fn torn_writes_tear_as_the_mode_says() {
    for (mode, want_prefix) in [(TearMode::Prefix, true), (TearMode::Sectors, false)] {
        let device = device(FaultConfig {
            seed: 11,
            torn_write_rate: 1.0,
            tear_mode: mode,
            ..FaultConfig::default()
        });
        for page in 0..PAGES {
            device.write_page(page, &filled(9)).unwrap();
            let landed = sectors_with(&read(&device, page), 9);
            let count = landed.iter().filter(|&&b| b).count();
            assert!(
                count > 0 && count < SECTORS,
                "{mode:?}: neither none nor all"
            );
            assert_eq!(is_prefix(&landed), want_prefix, "{mode:?}: {landed:?}");
        }
        assert_eq!(device.counters().torn_writes, PAGES);
    }
}

#[test]
fn misdirected_writes_land_elsewhere_and_leave_the_target() {
    let device = device(FaultConfig {
        seed: 5,
        misdirected_writes: vec![2],
        ..FaultConfig::default()
    });
    device.write_page(4, &filled(1)).unwrap();
    device.write_page(4, &filled(2)).unwrap(); // misdirected
    assert_eq!(read(&device, 4)[0], 1, "the target keeps its old contents");
    let elsewhere: Vec<u64> = (0..PAGES)
        .filter(|&p| p != 4 && read(&device, p)[0] == 2)
        .collect();
    assert_eq!(
        elsewhere.len(),
        1,
        "the data landed on exactly one other page"
    );
    device.sync().unwrap();
    let image = device.crash().unwrap();
    assert_eq!(read(&image, elsewhere[0])[0], 2, "and became durable there");
    assert_eq!(device.counters().misdirected_writes, 1);
}

#[test]
fn lost_writes_report_success_and_change_nothing() {
    let device = device(FaultConfig {
        lost_writes: vec![2, 3],
        ..FaultConfig::default()
    });
    device.write_page(1, &filled(1)).unwrap();
    device.write_page(1, &filled(2)).unwrap();
    device.write_page(2, &filled(2)).unwrap();
    device.sync().unwrap();
    assert_eq!(read(&device, 1)[0], 1);
    assert_eq!(read(&device, 2)[0], 0);
    let image = device.crash().unwrap();
    assert_eq!(read(&image, 1)[0], 1);
    assert_eq!(device.counters().lost_writes, 2);
}

#[test]
fn a_fused_command_with_a_lost_write_still_reads() {
    let device = device(FaultConfig {
        lost_writes: vec![2],
        ..FaultConfig::default()
    });
    device.write_page(7, &filled(7)).unwrap();
    let mut buf = filled(3);
    let request = IoRequest::fused(5, 7, buf.io_buffer());
    // SAFETY: `buf` outlives the wait.
    let tickets = unsafe { device.submit(vec![request]) };
    for ticket in tickets {
        ticket.wait().unwrap();
    }
    assert_eq!(buf.as_slice()[0], 7, "the read half ran");
    assert_eq!(read(&device, 5)[0], 0, "the write half was lost");
    assert_eq!(device.counters().lost_writes, 1);
}

fn seeded_run(seed: u64) -> (FaultCounters, Vec<Vec<u8>>) {
    let device = device(FaultConfig {
        seed,
        torn_write_rate: 0.2,
        tear_mode: TearMode::Mixed,
        misdirected_write_rate: 0.1,
        lost_write_rate: 0.1,
        ..FaultConfig::default()
    });
    for round in 0..20u8 {
        for page in 0..PAGES {
            device.write_page(page, &filled(round + 1)).unwrap();
        }
    }
    let pages = (0..PAGES).map(|p| read(&device, p)).collect();
    (device.counters(), pages)
}

#[test]
fn rates_replay_exactly_from_the_seed() {
    let (first, pages) = seeded_run(42);
    assert!(first.torn_writes > 0 && first.misdirected_writes > 0 && first.lost_writes > 0);
    assert_eq!(seeded_run(42), (first, pages.clone()));
    assert_ne!(seeded_run(43).1, pages, "another seed, other faults");
}
