//! Opening an existing file never changes it before its contents are validated: a foreign
//! file (a copy of /bin/ls: not a whole number of pages) is rejected with `create`, byte for
//! byte unchanged; an existing file shorter than asked is rejected unless `extend` is asked
//! for; an existing empty file counts as new.

use flashbuf::Error;
use flashbuf::device::file::{self, FileBackend, FileDevice, FileOptions};
use flashbuf::device::{AlignedBuf, Device, OpenOptions};

const PAGE: usize = 4096;

fn options(pages: u64) -> OpenOptions {
    OpenOptions {
        page_size: PAGE,
        pages,
        create: true,
    }
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("file-untouched-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

#[test]
fn a_foreign_file_is_rejected_unchanged() {
    let dir = temp_dir();
    let path = dir.path().join("ls-copy");
    // Any file that is not a whole number of pages; /bin/ls when it exists.
    let foreign: Vec<u8> = std::fs::read("/bin/ls")
        .ok()
        .filter(|b| b.len() % PAGE != 0)
        .unwrap_or_else(|| (0..PAGE * 3 + 123).map(|i| (i % 251) as u8).collect());
    std::fs::write(&path, &foreign).unwrap();
    let pages = foreign.len() as u64 / PAGE as u64 + 4;
    let err = file::open(&path, &options(pages)).unwrap_err();
    assert!(
        matches!(&err, Error::Config(m) if m.contains("not a whole number")),
        "{err}"
    );
    let err = file::open_extending(&path, &options(pages)).unwrap_err();
    assert!(matches!(&err, Error::Config(_)), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), foreign, "not a byte changed");
}

#[test]
fn a_short_file_grows_only_when_asked() {
    let dir = temp_dir();
    let path = dir.path().join("db");
    {
        let device = file::open(&path, &options(4)).unwrap();
        let mut buf = AlignedBuf::new(PAGE);
        buf.as_mut_slice().fill(7);
        device.write_page(3, &buf).unwrap();
        device.sync().unwrap();
    }
    let err = file::open(&path, &options(16)).unwrap_err();
    assert!(
        matches!(&err, Error::Config(m) if m.contains("nothing was written")),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 4 * PAGE as u64);
    assert_eq!(file::existing_pages(&path, PAGE).unwrap(), 4);

    let grown = FileDevice::open_with_options(
        &path,
        &options(16),
        &FileOptions {
            backend: FileBackend::Threads,
            extend: true,
        },
        &mut |_, _| {},
    )
    .unwrap();
    let mut buf = AlignedBuf::new(PAGE);
    grown.read_page(3, &mut buf).unwrap();
    assert!(buf.as_slice().iter().all(|&b| b == 7), "old data kept");
    drop(grown);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 16 * PAGE as u64);
}

#[test]
fn an_existing_empty_file_counts_as_new() {
    let dir = temp_dir();
    let path = dir.path().join("empty");
    std::fs::write(&path, b"").unwrap();
    let device = file::open(&path, &options(8)).unwrap();
    assert_eq!(device.info().pages, 8);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 8 * PAGE as u64);
}
