//! `sync_failure_loses_pending`: after a failed sync the writes that completed before it are
//! gone, from the crash image and from what reads return, and a later successful sync does not
//! bring them back (Linux after a failed fsync). Without the option a later sync still makes
//! them durable (the old, optimistic model).

use std::sync::Arc;

use flashbuf::device::fault::{FaultConfig, FaultDevice};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, Device};

const PAGE: usize = 4096;

fn filled(value: u8) -> AlignedBuf {
    let mut buf = AlignedBuf::new(PAGE);
    buf.as_mut_slice().fill(value);
    buf
}

fn first_byte(device: &dyn Device, page: u64) -> u8 {
    let mut buf = AlignedBuf::new(PAGE);
    device.read_page(page, &mut buf).unwrap();
    buf.as_slice()[0]
}

fn run(loses: bool) -> (FaultDevice, flashbuf::device::memory::MemoryDevice) {
    let device = FaultDevice::new_zeroed(
        Arc::new(MemoryDevice::new(PAGE, 8).unwrap()),
        FaultConfig {
            fail_syncs: vec![2],
            sync_failure_loses_pending: loses,
            ..FaultConfig::default()
        },
    )
    .unwrap();
    device.write_page(1, &filled(1)).unwrap();
    device.sync().unwrap();
    device.write_page(1, &filled(2)).unwrap();
    device.write_page(2, &filled(2)).unwrap();
    assert!(device.sync().is_err(), "sync 2 fails");
    if loses {
        assert_eq!(
            first_byte(&device, 1),
            1,
            "reads see the durable contents again"
        );
        assert_eq!(first_byte(&device, 2), 0);
    }
    device.write_page(3, &filled(3)).unwrap();
    device.sync().unwrap();
    let image = device.crash().unwrap();
    (device, image)
}

#[test]
fn a_failed_sync_loses_the_pending_writes_for_good() {
    let (device, image) = run(true);
    assert_eq!(first_byte(&image, 1), 1, "page 1 keeps its synced contents");
    assert_eq!(first_byte(&image, 2), 0, "page 2 was never durable");
    assert_eq!(first_byte(&image, 3), 3, "later writes are unaffected");
    let counters = device.counters();
    assert_eq!(counters.failed_syncs, 1);
    assert_eq!(counters.lost_on_sync_failure, 2);
}

#[test]
fn without_the_option_a_later_sync_makes_them_durable() {
    let (device, image) = run(false);
    assert_eq!(first_byte(&image, 1), 2);
    assert_eq!(first_byte(&image, 2), 2);
    assert_eq!(device.counters().lost_on_sync_failure, 0);
}
