//! Binding an unbound image to a new log is two steps (format the log, then write the data
//! file's header with the log's id); a crash between them leaves an unbound image and a
//! formatted, never-used log. Opening that pair finishes the binding (it used to fail with
//! "bound to log 0x0, but the log has id ..."; `tests/suite/tpcc_crash.rs` found it, seed 219 of a
//! longer campaign), and the database is then usable and binds to that log.

use std::sync::Arc;

use flashbuf::bench::driver::RecordSpec;
use flashbuf::bench::image::Image;
use flashbuf::datafile::{DATA_START, DataFile};
use flashbuf::device::SharedDevice;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::Wal;
use flashbuf::workload::record::RecordWorkload;
use flashbuf::workload::tpcc::{Tpcc, TpccConfig, TpccScale};

const PAGE: usize = 4096;

#[test]
fn an_image_and_a_formatted_unused_log_finish_binding() {
    let mut tpcc = TpccConfig::new(1);
    tpcc.scale = TpccScale::reduced(100, 30).unwrap();
    let image = Image::build(&RecordSpec::Tpcc(tpcc.clone()), PAGE, &mut |_| {}).unwrap();
    let data: SharedDevice =
        Arc::new(MemoryDevice::new(PAGE, DATA_START + image.capacity_pages).unwrap());
    image.copy_to(&data).unwrap();
    let config = KvConfig::new(64);
    let wal = &config.database.wal;
    let log: SharedDevice =
        Arc::new(MemoryDevice::new(wal.page_size, wal.log_size / wal.page_size as u64).unwrap());
    // The first step only: the log is formatted, the data file not yet bound.
    let log_id = Wal::create(Arc::clone(&log), wal.clone()).unwrap().log_id();
    assert_eq!(
        DataFile::open(Arc::clone(&data)).unwrap().header().log_id,
        0
    );

    let (kv, _) = KvStore::open(Arc::clone(&data), Arc::clone(&log), &config).unwrap();
    let report = Tpcc::new(tpcc).unwrap().check(&kv).unwrap();
    assert!(report.is_consistent(), "{report}");
    kv.close().unwrap();
    assert_eq!(DataFile::open(data).unwrap().header().log_id, log_id);
}
