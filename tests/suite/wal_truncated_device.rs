//! A log device shorter than the log formatted on it (a truncated log file) is a clear
//! `Format::Truncated` error naming both sizes, whatever log size the caller configures.

use crate::wal_common;

use flashbuf::Error;
use flashbuf::error::FormatProblem;
use flashbuf::wal::{LogRecord, Wal, WalConfig};
use wal_common::{PAGE, config, device_from, mem_for, shared, snapshot};

#[test]
fn a_truncated_log_device_names_both_sizes() {
    let config = config(24, 4);
    let device = mem_for(&config);
    let wal = Wal::create(shared(&device), config.clone()).unwrap();
    for txn in 0..50 {
        let end = wal.append(&[LogRecord::Commit { txn }]).unwrap();
        wal.flush_to(end).unwrap();
    }
    drop(wal);
    let pages = snapshot(&device);
    let kept = 12;
    let truncated = device_from(&pages[..kept]);
    let present = (kept * PAGE) as u64;
    // The configured size either matches the formatted one or the truncated device.
    let smaller = WalConfig {
        log_size: present,
        ..config.clone()
    };
    for config in [config, smaller] {
        let err = Wal::open(shared(&truncated), config.clone()).unwrap_err();
        match &err {
            Error::Format {
                problem:
                    FormatProblem::Truncated {
                        needed_bytes,
                        present_bytes,
                    },
                ..
            } => {
                assert_eq!(*needed_bytes, 26 * PAGE as u64);
                assert_eq!(*present_bytes, present);
                let text = err.to_string();
                assert!(text.contains(&needed_bytes.to_string()), "{text}");
                assert!(text.contains(&present.to_string()), "{text}");
            }
            other => panic!("expected Format::Truncated, got {other}"),
        }
        assert!(Wal::open_or_create(shared(&truncated), config).is_err());
    }
}

#[test]
fn a_truncated_log_file_is_refused_unchanged_and_named() {
    use flashbuf::device::{OpenOptions, file};
    let dir = tempfile::Builder::new()
        .prefix("wal-truncated-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let path = dir.path().join("log");
    let config = config(24, 4);
    let pages = config.log_size / PAGE as u64;
    let options = OpenOptions {
        page_size: PAGE,
        pages,
        create: true,
    };
    {
        let device = file::open(&path, &options).unwrap();
        let wal = Wal::create(device, config.clone()).unwrap();
        for txn in 0..50 {
            let end = wal.append(&[LogRecord::Commit { txn }]).unwrap();
            wal.flush_to(end).unwrap();
        }
    }
    let kept = 12 * PAGE as u64;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(kept)
        .unwrap();
    // The file device refuses to extend it (nothing written)...
    let err = file::open(&path, &options).unwrap_err();
    assert!(
        matches!(&err, Error::Config(m) if m.contains("nothing was written")),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), kept);
    // ...and opened at the size it has, the log names both sizes.
    let existing = OpenOptions {
        pages: file::existing_pages(&path, PAGE).unwrap(),
        ..options
    };
    let device = file::open(&path, &existing).unwrap();
    let err = Wal::open(device, config).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Format {
                problem: FormatProblem::Truncated { needed_bytes, present_bytes },
                ..
            } if *needed_bytes == 26 * PAGE as u64 && *present_bytes == kept
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}
