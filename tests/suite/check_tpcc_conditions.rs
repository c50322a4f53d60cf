//! `flashbuf check PATH` on a TPC-C database verifies consistency conditions 1-4 too: an image
//! written by `flashbuf load`'s path passes; after a committed change that breaks condition 1
//! (a district's D_YTD out of step with its warehouse's W_YTD) the check fails naming it, while
//! the tree structure is still fine.

use std::path::{Path, PathBuf};

use flashbuf::bench::driver::RecordSpec;
use flashbuf::bench::image::Image;
use flashbuf::cli::check::{CheckArgs, run};
use flashbuf::kv::KvEngine;
use flashbuf::txn::{KvConfig, KvStore, log_path_for};
use flashbuf::workload::tpcc::check::CONDITION_1;
use flashbuf::workload::tpcc::schema::{District, Trees, district_key};
use flashbuf::workload::tpcc::{TpccConfig, TpccScale};

const PAGE_SIZE: usize = 4096;

fn args(path: &Path) -> CheckArgs {
    CheckArgs {
        path: path.to_path_buf(),
        recover: false,
        page_size: None,
        frames: 256,
        json: None,
    }
}

fn temp(name: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("flashbuf-check-tpcc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(log_path_for(&path));
    path
}

#[test]
fn check_verifies_tpcc_conditions_on_images_and_databases() {
    let mut config = TpccConfig::new(2);
    config.scale = TpccScale::reduced(200, 30).unwrap();
    let image = Image::build(&RecordSpec::Tpcc(config), PAGE_SIZE, &mut |_| {}).unwrap();
    let path = temp("tpcc.img");
    image.write_file(&path).unwrap();
    run(&args(&path)).unwrap();

    // Open the image as a database (binds it to a new log), break condition 1, close cleanly.
    let pages = std::fs::metadata(&path).unwrap().len() / PAGE_SIZE as u64;
    let (kv, _) = KvStore::open_specs(
        &format!("file:{}", path.display()),
        &format!("file:{}", log_path_for(&path).display()),
        PAGE_SIZE,
        pages,
        &KvConfig::new(256),
    )
    .unwrap();
    let trees = Trees::open(&kv).unwrap();
    let mut txn = kv.begin().unwrap();
    let key = district_key(2, 7);
    let stored = txn.get(trees.district, &key).unwrap().unwrap();
    let mut district = District::decode(&stored).unwrap();
    district.ytd += 1;
    txn.put(trees.district, &key, &district.encode()).unwrap();
    txn.commit().unwrap();
    kv.close().unwrap();

    let err = run(&args(&path)).err().map(|e| e.to_string());
    let err = err.unwrap_or_default();
    assert!(
        err.contains("tpcc invariants violated") && err.contains(CONDITION_1),
        "{err}"
    );
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(log_path_for(&path));
}
