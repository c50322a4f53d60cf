//! `flashbuf check` on files that are not what it checks (issue 18): an empty file or
//! `/dev/null` is named as empty (not "failed to fill whole buffer"), a page-level database (no
//! B+-trees) gets its pages verified instead of "page 0 is corrupt", a file whose header slot 0
//! is damaged is checked from slot 1 without `--page-size` (and read by `bench --db`), and a
//! `--page-size` that contradicts the header, a `--json` in a missing directory or a `--frames`
//! below a pool's minimum are refused before anything is read.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use flashbuf::bench::driver::RecordSpec;
use flashbuf::bench::image::Image;
use flashbuf::datafile::{DATA_START, DataFile};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, SharedDevice};
use flashbuf::workload::synthetic::{Mix, SyntheticConfig, SyntheticWorkload};
use flashbuf::workload::ycsb::{YcsbConfig, YcsbWorkload};

const PAGE: usize = 4096;

fn flashbuf(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn dump(device: &SharedDevice, path: &Path) {
    let info = device.info();
    let mut bytes = Vec::with_capacity(info.pages as usize * info.page_size);
    let mut buf = AlignedBuf::new(info.page_size);
    for page in 0..info.pages {
        device.read_page(page, &mut buf).unwrap();
        bytes.extend_from_slice(buf.as_slice());
    }
    std::fs::write(path, bytes).unwrap();
}

/// A page-level database as the bench's page mixes make it: a data file whose data pages are
/// checksummed pages, not B+-tree nodes.
fn page_level_database(path: &Path, pages: u64) {
    let device: SharedDevice = Arc::new(MemoryDevice::new(PAGE, DATA_START + pages).unwrap());
    let datafile = DataFile::create(Arc::clone(&device), 0, Some(pages)).unwrap();
    let workload = SyntheticWorkload::new(SyntheticConfig::new(Mix::Ms, pages, PAGE)).unwrap();
    workload.load(&datafile.data_device().unwrap()).unwrap();
    datafile.raise_high_water_mark(pages).unwrap();
    drop(datafile);
    dump(&device, path);
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn empty_files_and_dev_null_are_named_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    for file in [path_str(&empty), "/dev/null"] {
        let (code, _, stderr) = flashbuf(&["check", file]);
        assert_eq!(code, Some(1), "{file}: {stderr}");
        assert!(stderr.contains("is empty (0 bytes)"), "{file}: {stderr}");
        assert!(!stderr.contains("fill whole buffer"), "{file}: {stderr}");
    }
    let (code, _, stderr) = flashbuf(&["check", path_str(dir.path())]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("is a directory"), "{stderr}");
}

#[test]
fn a_page_level_database_has_its_pages_verified() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pages.db");
    page_level_database(&db, 64);
    let (code, stdout, stderr) = flashbuf(&["check", path_str(&db)]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("a page-level database"), "{stdout}");
    assert!(stdout.contains("ok: 64 pages verified"), "{stdout}");
    assert!(!stderr.contains("corrupt"), "{stderr}");

    // A damaged page of it is named.
    let mut bytes = std::fs::read(&db).unwrap();
    let at = (DATA_START as usize + 9) * PAGE + 100;
    bytes[at] ^= 0xff;
    std::fs::write(&db, bytes).unwrap();
    let (code, stdout, stderr) = flashbuf(&["check", path_str(&db)]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("1 bad"), "{stdout}");
    assert!(stderr.contains("page 9"), "{stderr}");
}

#[test]
fn a_damaged_first_header_slot_falls_back_to_the_second() {
    let dir = tempfile::tempdir().unwrap();
    let image_path = dir.path().join("ycsb.img");
    // YCSB rows (1020 bytes) need 8 KiB pages.
    let spec = RecordSpec::Ycsb(YcsbConfig::standard(YcsbWorkload::A, 500));
    Image::build(&spec, 2 * PAGE, &mut |_| {})
        .unwrap()
        .write_file(&image_path)
        .unwrap();
    let mut bytes = std::fs::read(&image_path).unwrap();
    bytes[20] ^= 0xff; // inside slot 0's checksummed header
    std::fs::write(&image_path, bytes).unwrap();
    let image = path_str(&image_path);

    let (code, stdout, stderr) = flashbuf(&["check", image]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("trees verified"), "{stdout}");
    assert!(
        Image::read_file(&image_path, &spec).is_ok(),
        "bench --db must read an image whose slot 0 is damaged"
    );

    let (code, _, stderr) = flashbuf(&["check", image, "--page-size", "16384"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("--page-size 16384") && stderr.contains("8192-byte pages"),
        "{stderr}"
    );
    let (code, _, stderr) = flashbuf(&["check", image, "--json", "/nonexistent/dir/r.json"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("--json"), "{stderr}");
    let (code, _, stderr) = flashbuf(&["check", image, "--frames", "4"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("--frames 4"), "{stderr}");
}
