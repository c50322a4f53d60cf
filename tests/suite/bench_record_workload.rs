//! A record-workload bench run (TPC-C at a reduced scale, two warehouses) on `mem` with two
//! schemes finishes: each scheme starts from a copy of the same in-memory image, reports
//! transactions/s, tpmC and per-type latencies, and its consistency check after the run
//! (TPC-C conditions 1-4 and the B+-tree check) is clean; `check: false` skips the check and
//! says so.

use std::sync::Arc;
use std::time::Duration;

use flashbuf::bench::driver::{RecordDriver, RecordSpec};
use flashbuf::bench::image::Image;
use flashbuf::bench::{BenchConfig, LogSetup, WarmUp, default_factory, report, run_bench};
use flashbuf::device::DeviceSpec;
use flashbuf::pool::Scheme;
use flashbuf::workload::synthetic::{Mix, SyntheticConfig};
use flashbuf::workload::tpcc::{TXN_TYPE_NAMES, TpccConfig, TpccScale};
use flashbuf::workload::ycsb::{YcsbConfig, YcsbWorkload};

const PAGE_SIZE: usize = 8192;

fn config(check: bool) -> BenchConfig {
    let mut tpcc = TpccConfig::new(2);
    tpcc.scale = TpccScale::reduced(1000, 60).unwrap();
    let spec = RecordSpec::Tpcc(tpcc);
    let image = Image::build(&spec, PAGE_SIZE, &mut |_| {}).unwrap();
    assert!(image.loaded_pages > 0 && image.capacity_pages > image.loaded_pages);
    assert!(image.load.rows() > 0);
    let loaded = image.loaded_pages;
    BenchConfig {
        workload: SyntheticConfig::new(Mix::Ms, loaded, PAGE_SIZE),
        schemes: vec![Scheme::Vanilla.composition(), Scheme::LruC.composition()],
        device: DeviceSpec::Memory,
        log: Some(LogSetup {
            device: DeviceSpec::Memory,
            size: 16 << 20,
            flush_log_at_trx_commit: 0,
        }),
        buffer_pages: (loaded / 5) as usize,
        threads: 4,
        duration: Duration::from_millis(800),
        measure_cap: None,
        warmup: WarmUp::For(Duration::from_millis(200)),
        fill_pool: false,
        prewarm: false,
        step: flashbuf::bench::timeline::STEP,
        pool_config: None,
        command_line: "bench_record_workload test".into(),
        progress: false,
        record: Some(Arc::new(RecordDriver::new(spec, Arc::new(image)).unwrap())),
        check,
        repeats: 1,
        regime_reference: Default::default(),
    }
}

#[test]
fn tpcc_on_two_schemes_reports_per_type_latencies_and_a_clean_check() {
    let results = run_bench(&config(true), &*default_factory()).unwrap();
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    assert_eq!(results.runs.len(), 2);
    for run in &results.runs {
        assert_eq!(run.workload, "tpcc");
        assert_eq!(run.unit, "tx/s");
        assert!(run.ops > 0 && run.throughput > 0.0, "{}", run.scheme);
        let names: Vec<&str> = run.per_type.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, TXN_TYPE_NAMES);
        let new_order = &run.per_type[0];
        assert!(new_order.count > 0);
        assert!(new_order.latency_ms.mean > 0.0 && new_order.latency_ms.p95 > 0.0);
        assert!(new_order.latency_ms.p99 >= new_order.latency_ms.p95);
        let tpmc = run.tpmc.unwrap();
        assert!((tpmc - new_order.count as f64 * 60.0 / run.duration_s).abs() < 1e-6);
        let completed: u64 = run.per_type.iter().map(|t| t.count).sum();
        // Recorded by the phase an operation began in; the window's count by completion: at
        // most the one operation each worker has in flight at the end is recorded beyond it.
        assert!(
            completed > 0 && completed <= run.ops + run.threads as u64,
            "{completed} recorded against {} in the window",
            run.ops
        );
        let check = run.check.as_ref().expect("the check ran");
        assert!(check.is_clean(), "{check:?}");
        assert_eq!(check.conditions.len(), 4, "TPC-C conditions 1-4");
        assert!(check.rows_scanned > 0 && check.trees > 0);
        assert!(!run.check_skipped);
        assert!(run.device_read_share.is_some());
        // Aborts per type add up to the run's; the built-in workloads attribute every one.
        let typed: u64 = run.per_type.iter().map(|t| t.aborts).sum();
        assert_eq!(
            run.aborts,
            typed + run.aborts_unattributed,
            "{}",
            run.scheme
        );
        assert_eq!(run.aborts_unattributed, 0);
        assert!(!new_order.latency_cdf.is_empty() && !run.latency_cdf.is_empty());
    }
    // The report draws a latency CDF per transaction type that ran.
    let plots = flashbuf::bench::plot::report_plots(&results).unwrap();
    assert!(plots.iter().any(|(id, _, _)| id == "latency-cdf-new_order"));
    let table = report::format_table(&results);
    assert!(table.contains("per transaction type"), "{table}");
    assert!(
        table.contains("new_order") && table.contains("tpmC"),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&results.to_json().unwrap()).unwrap();
    let run = &json["runs"][0];
    assert_eq!(run["per_type"].as_array().unwrap().len(), 5);
    assert!(run["per_type"][1]["latency_ms"]["p99"].as_f64().unwrap() > 0.0);
    assert_eq!(run["check"]["violations"], 0);
}

#[test]
fn no_check_skips_the_check_and_says_so() {
    let mut config = config(false);
    config.schemes.truncate(1);
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    let run = &results.runs[0];
    assert!(run.check.is_none() && run.check_skipped);
    assert!(report::format_table(&results).contains("skipped (--no-check)"));
}

/// The same run with the data on a real file (`file:`, O_DIRECT, io_uring): each scheme gets a
/// fresh file holding the image, the check is clean, and the file is removed afterwards.
#[test]
fn tpcc_on_a_file_device_checks_clean_and_removes_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tpcc.db");
    let mut config = config(true);
    config.device = DeviceSpec::File(path.clone());
    config.duration = Duration::from_millis(400);
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    assert_eq!(results.runs.len(), 2);
    for run in &results.runs {
        assert!(run.ops > 0, "{}", run.scheme);
        assert!(run.device.starts_with("file:"), "{}", run.device);
        let check = run.check.as_ref().expect("the check ran");
        assert!(check.is_clean(), "{check:?}");
        assert_eq!(check.conditions.len(), 4, "TPC-C conditions 1-4");
    }
    assert!(!path.exists(), "the bench removes the scheme's file");
}

#[test]
fn a_prewarmed_pool_that_holds_the_database_reads_nothing_in_the_measured_phase() {
    // Point lookups (YCSB-C) in memory as `scripts/vs_vmcache.py` runs them: a pool of twice
    // the loaded pages, loaded before the workers start. Without the prewarm the warm-up
    // leaves most pages unread, and the measured phase misses on them.
    let spec = RecordSpec::Ycsb(YcsbConfig::standard(YcsbWorkload::C, 3000));
    let image = Image::build(&spec, PAGE_SIZE, &mut |_| {}).unwrap();
    let loaded = image.loaded_pages;
    let mut config = config(false);
    config.workload = SyntheticConfig::new(Mix::Ms, loaded, PAGE_SIZE);
    config.record = Some(Arc::new(RecordDriver::new(spec, Arc::new(image)).unwrap()));
    config.schemes = vec![Scheme::Vanilla.composition()];
    config.buffer_pages = (loaded * 2) as usize;
    config.threads = 2;
    config.warmup = WarmUp::For(Duration::from_millis(1));
    config.duration = Duration::from_millis(300);
    config.prewarm = true;
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    let run = &results.runs[0];
    let prewarm = run.prewarm.expect("the pool was prewarmed");
    assert_eq!(prewarm.loaded_pages, loaded as f64, "{prewarm:?}");
    // Pages the store read when it opened (its registry) were cached already.
    assert!(
        prewarm.pages <= prewarm.loaded_pages && prewarm.pages > prewarm.loaded_pages - 8.0,
        "{prewarm:?}"
    );
    assert!(run.ops > 0);
    assert_eq!(
        run.io.read_iops, 0.0,
        "the measured phase read pages from the device: {:?}",
        run.pool_stats
    );
}
