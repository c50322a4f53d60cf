//! A log whose checkpoint slots were both zeroed (or damaged) after a crash is never silently
//! re-formatted: `Wal::open` never formats, `Wal::open_or_create` formats only a device that is
//! blank in its slots *and* its first ring page, and `wal::inspect` tells the cases apart
//! without writing (issue 8, bug 3: "both checkpoint slots zeroed").

use crate::wal_common;

use flashbuf::Error;
use flashbuf::device::{AlignedBuf, Device};
use flashbuf::error::FormatProblem;
use flashbuf::wal::{LogDeviceContent, LogRecord, Wal, inspect};
use wal_common::{PAGE, config, mem_for, shared, snapshot};

fn zero_slots(device: &dyn Device) {
    let zeros = AlignedBuf::new(PAGE);
    device.write_page(0, &zeros).unwrap();
    device.write_page(1, &zeros).unwrap();
}

#[test]
fn zeroed_slots_are_never_formatted_over() {
    let config = config(16, 4);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    let end = wal.append(&[LogRecord::Commit { txn: 7 }]).unwrap();
    wal.flush_to(end).unwrap();
    drop(wal);
    zero_slots(device.as_ref());
    let before = snapshot(&device);

    assert_eq!(
        inspect(device.as_ref(), &config).unwrap(),
        LogDeviceContent::HeaderLost
    );
    let open = Wal::open(shared(&device), config.clone()).unwrap_err();
    assert!(
        matches!(
            open,
            Error::Format {
                problem: FormatProblem::Blank,
                ..
            }
        ),
        "{open}"
    );
    let either = Wal::open_or_create(shared(&device), config.clone()).unwrap_err();
    assert!(
        matches!(&either, Error::CorruptLog { reason, .. } if reason.contains("refusing to format")),
        "{either}"
    );
    assert_eq!(snapshot(&device), before, "nothing was written");
}

#[test]
fn damaged_slots_are_errors_for_every_open() {
    let config = config(16, 4);
    let device = mem_for(&config);
    Wal::create(shared(&device), config.clone()).unwrap();
    let mut garbage = AlignedBuf::new(PAGE);
    garbage.as_mut_slice().fill(0xa5);
    device.write_page(1, &garbage).unwrap();
    let before = snapshot(&device);
    assert!(matches!(
        inspect(device.as_ref(), &config),
        Err(Error::CorruptLog { .. })
    ));
    assert!(matches!(
        Wal::open(shared(&device), config.clone()),
        Err(Error::CorruptLog { .. })
    ));
    assert!(matches!(
        Wal::open_or_create(shared(&device), config.clone()),
        Err(Error::CorruptLog { .. })
    ));
    assert_eq!(snapshot(&device), before, "nothing was written");
}

#[test]
fn a_blank_device_is_formatted_by_create_or_open_or_create_only() {
    let config = config(16, 4);
    let device = mem_for(&config);
    assert_eq!(
        inspect(device.as_ref(), &config).unwrap(),
        LogDeviceContent::Blank
    );
    assert!(Wal::open(shared(&device), config.clone()).is_err());
    let (wal, recovery) = Wal::open_or_create(shared(&device), config.clone()).unwrap();
    assert!(recovery.records.is_empty());
    drop(wal);
    assert!(matches!(
        inspect(device.as_ref(), &config).unwrap(),
        LogDeviceContent::Formatted(_)
    ));
}
