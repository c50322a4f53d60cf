//! `flashbuf check PATH` on a database image in files: a clean image passes (exit 0, a summary
//! per tree); `--recover` opens it with its log first; a page with a flipped bit and a page
//! whose keys are out of order, a wrong key head or node prefix (with a valid checksum) each
//! fail with a non-zero exit and a message naming the page; an image of an older tree format
//! version fails naming the version, and is refused before its log is replayed when opened.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use flashbuf::btree::meta::META_PAGE;
use flashbuf::btree::meta::{FORMAT_VERSION, VERSION_AT};
use flashbuf::btree::node::{HEAD_AT, KIND_AT, KIND_LEAF, NodeRef, PREFIX_AT, SLOT_SIZE, SLOTS_AT};
use flashbuf::datafile::DATA_START;
use flashbuf::kv::KvEngine;
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;

const PAGE: usize = 4096;
const PAGES: u64 = 1024;

fn temp_dir() -> tempfile::TempDir {
    // On the build disk: /tmp may be tmpfs, which refuses O_DIRECT.
    tempfile::Builder::new()
        .prefix("check-cli")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// The store's configuration: 64 frames, a 4 MiB log.
fn config() -> KvConfig {
    let mut config = KvConfig::new(64);
    config.database.wal = WalConfig {
        log_size: 4 << 20,
        page_size: PAGE,
        buffer_size: 256 * 1024,
        full_timeout: Duration::from_secs(5),
    };
    config
}

fn build_image(path: &Path) {
    let config = config();
    let data = format!("file:{}", path.display());
    let log = format!("file:{}.log", path.display());
    let (kv, _) = KvStore::open_specs(&data, &log, PAGE, PAGES, &config).unwrap();
    let orders = kv.open_tree("orders").unwrap();
    let stock = kv.open_tree("stock").unwrap();
    let pairs = (0..5000u32).map(|n| (format!("o{n:08}").into_bytes(), vec![b'o'; 60]));
    kv.bulk_load(orders, &mut pairs.into_iter()).unwrap();
    let mut txn = kv.begin().unwrap();
    for n in 0..800u32 {
        txn.put(stock, &n.to_be_bytes(), &[b's'; 90]).unwrap();
    }
    txn.commit().unwrap();
    kv.close().unwrap();
}

fn check(path: &Path, extra: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .arg("check")
        .args(extra)
        .arg(path)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Data page `page` of the file (after the header slots and the doublewrite area).
fn read_page(path: &Path, page: u64) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    let at = (DATA_START + page) as usize * PAGE;
    bytes[at..at + PAGE].to_vec()
}

fn write_page(path: &Path, page: u64, data: &[u8]) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = (DATA_START + page) as usize * PAGE;
    bytes[at..at + PAGE].copy_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

/// The first leaf page (by page number) with at least two keys.
fn some_leaf(path: &Path) -> u64 {
    (1..PAGES - DATA_START)
        .find(|&page| {
            let bytes = read_page(path, page);
            bytes[KIND_AT] == KIND_LEAF && NodeRef::new(page, &bytes).is_ok_and(|n| n.count() > 2)
        })
        .unwrap()
}

#[test]
fn check_passes_clean_images_and_names_the_damaged_page() {
    let dir = temp_dir();
    let path = dir.path().join("db");
    build_image(&path);
    let (ok, stdout, stderr) = check(&path, &[]);
    assert!(ok, "clean image: {stdout}\n{stderr}");
    assert!(stdout.contains("orders") && stdout.contains("stock") && stdout.contains("ok:"));
    let (ok, stdout, stderr) = check(&path, &["--recover"]);
    assert!(ok && stdout.contains("recovered:"), "{stdout}\n{stderr}");

    // A flipped bit: the checksum names the page.
    let leaf = some_leaf(&path);
    let pristine = read_page(&path, leaf);
    let mut flipped = pristine.clone();
    flipped[PAGE - 10] ^= 0x04;
    write_page(&path, leaf, &flipped);
    let (ok, _, stderr) = check(&path, &[]);
    assert!(!ok, "a flipped bit must fail the check");
    assert!(stderr.contains(&format!("page {leaf}")), "{stderr}");
    assert!(stderr.contains("checksum"), "{stderr}");

    // Keys out of order with a valid checksum: the structure check names the page.
    let mut swapped = pristine.clone();
    let (a, b) = (SLOTS_AT, SLOTS_AT + SLOT_SIZE);
    let first: Vec<u8> = swapped[a..b].to_vec();
    swapped.copy_within(b..b + SLOT_SIZE, a);
    swapped[b..b + SLOT_SIZE].copy_from_slice(&first);
    let lsn = flashbuf::page::page_lsn(&swapped);
    flashbuf::page::stamp(&mut swapped, leaf, lsn);
    write_page(&path, leaf, &swapped);
    let (ok, _, stderr) = check(&path, &[]);
    assert!(!ok);
    assert!(
        stderr.contains(&format!("page {leaf}")) && stderr.contains("key"),
        "{stderr}"
    );

    // A wrong key head, and a node prefix longer than the keys share: named too.
    let mut bad_head = pristine.clone();
    bad_head[SLOTS_AT + SLOT_SIZE + HEAD_AT + 3] ^= 0x10;
    flashbuf::page::stamp(&mut bad_head, leaf, lsn);
    write_page(&path, leaf, &bad_head);
    let (ok, _, stderr) = check(&path, &[]);
    assert!(!ok);
    assert!(
        stderr.contains(&format!("page {leaf}")) && stderr.contains("key head of slot 1"),
        "{stderr}"
    );
    let mut bad_prefix = pristine.clone();
    let prefix = u16::from_le_bytes([bad_prefix[PREFIX_AT], bad_prefix[PREFIX_AT + 1]]);
    bad_prefix[PREFIX_AT..PREFIX_AT + 2].copy_from_slice(&(prefix + 5).to_le_bytes());
    flashbuf::page::stamp(&mut bad_prefix, leaf, lsn);
    write_page(&path, leaf, &bad_prefix);
    let (ok, _, stderr) = check(&path, &[]);
    assert!(!ok);
    assert!(
        stderr.contains(&format!("page {leaf}")) && stderr.contains("node prefix"),
        "{stderr}"
    );

    // A damaged meta page is reported too.
    write_page(&path, leaf, &pristine);
    assert!(check(&path, &[]).0, "restored");
    let mut meta = read_page(&path, META_PAGE);
    meta[100] ^= 1;
    write_page(&path, META_PAGE, &meta);
    let (ok, _, stderr) = check(&path, &[]);
    assert!(!ok && stderr.contains("page 0"), "{stderr}");

    // An image of tree format version 1 (2-byte slots, no key heads) is refused by name.
    let mut old = read_page(&path, META_PAGE);
    old[100] ^= 1;
    assert_eq!(FORMAT_VERSION, 2);
    old[VERSION_AT..VERSION_AT + 4].copy_from_slice(&1u32.to_le_bytes());
    let lsn = flashbuf::page::page_lsn(&old);
    flashbuf::page::stamp(&mut old, META_PAGE, lsn);
    write_page(&path, META_PAGE, &old);
    let (ok, stdout, stderr) = check(&path, &[]);
    assert!(
        !ok && stderr.contains("tree format version 1") && stderr.contains("version 2"),
        "{stdout}\n{stderr}"
    );
}

/// Opens the image at `path` (with its log), with the configuration `build_image` used.
fn open_image(path: &Path) -> flashbuf::Result<(KvStore, flashbuf::txn::KvRecovery)> {
    let mut config = config();
    // No checkpoint while the test's transaction runs: its records stay in the log to redo.
    config.database.checkpoint_period_ms = 3_600_000;
    let data = format!("file:{}", path.display());
    let log = format!("file:{}.log", path.display());
    KvStore::open_specs(&data, &log, PAGE, PAGES, &config)
}

/// An image of another tree format version whose log still holds committed records to redo is
/// refused by its version before anything is replayed: the data file comes out of the failed
/// open byte for byte as it went in, and the log keeps its records (with the meta page's
/// version put back, the same image recovers them).
#[test]
fn older_format_with_records_to_redo_is_refused_before_redo() {
    let dir = temp_dir();
    let path = dir.path().join("crashed.img");
    build_image(&path);
    // Commit more rows, then stop as a crash would: the pages stay unwritten, the log durable.
    let (kv, _) = open_image(&path).unwrap();
    let stock = kv.open_tree("stock").unwrap();
    let mut txn = kv.begin().unwrap();
    for n in 800..1200u32 {
        txn.put(stock, &n.to_be_bytes(), &[b't'; 90]).unwrap();
    }
    txn.commit().unwrap();
    kv.abandon();
    let current = read_page(&path, META_PAGE);

    // Stamped with tree format version 1, the meta page makes the open fail by name, first.
    let mut old = current.clone();
    assert_eq!(FORMAT_VERSION, 2);
    old[VERSION_AT..VERSION_AT + 4].copy_from_slice(&1u32.to_le_bytes());
    let lsn = flashbuf::page::page_lsn(&old);
    flashbuf::page::stamp(&mut old, META_PAGE, lsn);
    write_page(&path, META_PAGE, &old);
    let before = std::fs::read(&path).unwrap();
    let Err(err) = open_image(&path) else {
        panic!("an older format opened");
    };
    let message = err.to_string();
    assert!(
        message.contains("tree format version 1") && message.contains("version 2"),
        "{message}"
    );
    assert!(
        std::fs::read(&path).unwrap() == before,
        "the refused open wrote to the data file"
    );

    // Nothing was lost: with the version put back, redo recovers the committed rows.
    write_page(&path, META_PAGE, &current);
    let (kv, recovery) = open_image(&path).unwrap();
    assert!(
        recovery.database.redo_applied > 0,
        "the crash left records to redo: {:?}",
        recovery.database
    );
    let mut txn = kv.begin().unwrap();
    for n in [800u32, 1199] {
        assert_eq!(
            txn.get(stock, &n.to_be_bytes()).unwrap().unwrap(),
            vec![b't'; 90]
        );
    }
    txn.commit().unwrap();
    kv.close().unwrap();
}
