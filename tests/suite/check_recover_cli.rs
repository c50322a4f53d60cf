//! `flashbuf check` on databases left by a crash and on images that never had a log:
//! - `check --recover` recovers a database whatever log settings it ran with (a 1 MiB log,
//!   log pages of 4 and 16 KiB: the log's own header says them), and the committed
//!   transactions are in the checked trees afterwards;
//! - `check` without `--recover` on a crashed database says it needs `--recover` (and does
//!   not report corrupt pages); once recovered, `check` passes;
//! - `check --recover` on an image from `flashbuf load` (no log) says there is nothing to
//!   recover, creates no log, and checks the image.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use flashbuf::kv::KvEngine;
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;

const PAGE: usize = 4096;
const PAGES: u64 = 1024;
/// Transactions committed (durably) before the crash, each putting one key in `stock`.
const COMMITTED: u32 = 300;

fn temp_dir() -> tempfile::TempDir {
    // On the build disk: /tmp may be tmpfs, which refuses O_DIRECT.
    tempfile::Builder::new()
        .prefix("check-recover-cli")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// A database with a small log of `log_page`-byte pages, left as a crash leaves it: committed
/// transactions (synced log at each commit) whose pages were never written back.
fn crashed_database(path: &Path, log_page: usize, log_size: u64) {
    let mut config = KvConfig::new(64);
    config.database.wal = WalConfig {
        log_size,
        page_size: log_page,
        buffer_size: 4 * log_page,
        full_timeout: Duration::from_secs(5),
    };
    config.database.flush_log_at_trx_commit = 1;
    let data = format!("file:{}", path.display());
    let log = format!("file:{}.log", path.display());
    let (kv, _) = KvStore::open_specs(&data, &log, PAGE, PAGES, &config).unwrap();
    let stock = kv.open_tree("stock").unwrap();
    for n in 0..COMMITTED {
        let mut txn = kv.begin().unwrap();
        txn.put(stock, &n.to_be_bytes(), &[b's'; 40]).unwrap();
        txn.commit().unwrap();
    }
    kv.abandon();
}

fn flashbuf(args: &[&str], path: &Path) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The `keys` column of `tree`'s row in check's table.
fn keys_of(stdout: &str, tree: &str) -> Option<u64> {
    let row = stdout
        .lines()
        .find(|line| line.split_whitespace().next() == Some(tree))?;
    row.split_whitespace().nth(5)?.parse().ok()
}

fn crash_then_check(log_page: usize, log_size: u64) {
    let dir = temp_dir();
    let path = dir.path().join("db");
    crashed_database(&path, log_page, log_size);
    let context = format!("log pages of {log_page} bytes, log of {log_size} bytes");

    let (ok, stdout, stderr) = flashbuf(&["check"], &path);
    assert!(!ok, "{context}: a crashed database passed: {stdout}");
    assert!(
        stderr.contains("not closed cleanly") && stderr.contains("check --recover"),
        "{context}: {stderr}"
    );
    assert!(!stderr.contains("corrupt"), "{context}: {stderr}");
    assert!(
        !stdout.contains("bad checksums"),
        "{context}: checked anyway: {stdout}"
    );

    let (ok, stdout, stderr) = flashbuf(&["check", "--recover"], &path);
    assert!(ok, "{context}: recovery failed: {stdout}\n{stderr}");
    assert!(
        stdout.contains("recovered:") && stdout.contains("ok:"),
        "{stdout}"
    );
    assert_eq!(
        keys_of(&stdout, "stock"),
        Some(u64::from(COMMITTED)),
        "{context}: every committed put is there: {stdout}"
    );

    let (ok, stdout, stderr) = flashbuf(&["check"], &path);
    assert!(ok, "{context}: recovered database: {stdout}\n{stderr}");
    assert_eq!(keys_of(&stdout, "stock"), Some(u64::from(COMMITTED)));
}

#[test]
fn recover_reads_a_1_mib_log_with_4_kib_pages_from_its_header() {
    crash_then_check(4096, 1 << 20);
}

#[test]
fn recover_reads_a_log_with_16_kib_pages_from_its_header() {
    crash_then_check(16_384, 1 << 20);
}

#[test]
fn recover_on_a_loaded_image_has_nothing_to_recover() {
    let dir = temp_dir();
    let path = dir.path().join("img");
    let (ok, stdout, stderr) = flashbuf(
        &["load", "--workload", "ycsb-a", "--records", "2000", "--db"],
        &path,
    );
    assert!(ok, "load: {stdout}\n{stderr}");
    let (ok, stdout, stderr) = flashbuf(&["check", "--recover"], &path);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(stdout.contains("nothing to recover"), "{stdout}");
    assert!(!stdout.contains("recovered:"), "{stdout}");
    assert_eq!(keys_of(&stdout, "ycsb.usertable"), Some(2000), "{stdout}");
    assert!(
        !flashbuf::txn::log_path_for(&path).exists(),
        "checking created a log"
    );
    let (ok, stdout, stderr) = flashbuf(&["check"], &path);
    assert!(ok && stdout.contains("ok:"), "{stdout}\n{stderr}");
}
