//! The bench harness, the synthetic mixes and the `bench` CLI flags, on the `mem` device with a
//! simple in-test target (a write-back cache under one mutex) standing in for the buffer pool.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clap::Parser;
use flashbuf::bench::{
    BenchConfig, BenchTarget, LogSetup, TargetFactory, WarmUp, default_factory, plot, report,
    run_bench,
};
use flashbuf::cli::bench::BenchArgs;
use flashbuf::device::{AlignedBuf, DeviceSpec, OpenOptions, SharedDevice, open};
use flashbuf::error::{Error, PageId, Result};
use flashbuf::page;
use flashbuf::pool::stats::MutexCounters;
use flashbuf::pool::{PoolStats, Scheme};
use flashbuf::workload::PageAccess;
use flashbuf::workload::synthetic::{
    Mix, OpKind, SyntheticConfig, SyntheticWorkload, record_version,
};

/// A write-back cache of at most `frames` pages with FIFO eviction, all under one mutex (I/O
/// under the mutex is fine for a test stand-in, not for the real pool).
struct CacheTarget {
    device: SharedDevice,
    frames: usize,
    cache: flashbuf::sync::Mutex<Cache>,
    counters: MutexCounters,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    sync_writes: AtomicU64,
    /// Fail every operation after this many (for the failure test).
    fail_after: Option<u64>,
    ops: AtomicU64,
}

#[derive(Default)]
struct Cache {
    map: HashMap<PageId, (AlignedBuf, bool)>,
    order: VecDeque<PageId>,
}

impl CacheTarget {
    fn new(device: SharedDevice, frames: usize, fail_after: Option<u64>) -> Self {
        CacheTarget {
            device,
            frames,
            cache: flashbuf::sync::Mutex::new(Cache::default()),
            counters: MutexCounters::default(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            sync_writes: AtomicU64::new(0),
            fail_after,
            ops: AtomicU64::new(0),
        }
    }

    fn write_back(&self, page_id: PageId, buf: &mut AlignedBuf) -> Result<()> {
        page::stamp(buf.as_mut_slice(), page_id, 0);
        self.device.write_page(page_id, buf)?;
        Ok(())
    }

    fn with_page<T>(
        &self,
        page_id: PageId,
        dirty: bool,
        f: impl FnOnce(&mut [u8]) -> T,
    ) -> Result<T> {
        let done = self.ops.fetch_add(1, Ordering::Relaxed);
        if self.fail_after.is_some_and(|limit| done >= limit) {
            return Err(Error::InvalidArgument("injected test failure".into()));
        }
        self.device.info().check_page(page_id)?;
        let mut cache = self.counters.lock(&self.cache);
        if cache.map.contains_key(&page_id) {
            self.hits.fetch_add(1, Ordering::Relaxed);
        } else {
            self.misses.fetch_add(1, Ordering::Relaxed);
            if cache.map.len() >= self.frames {
                let victim = cache.order.pop_front().unwrap();
                let (mut buf, was_dirty) = cache.map.remove(&victim).unwrap();
                if was_dirty {
                    self.write_back(victim, &mut buf)?;
                    self.sync_writes.fetch_add(1, Ordering::Relaxed);
                }
                self.evictions.fetch_add(1, Ordering::Relaxed);
            }
            let mut buf = AlignedBuf::new(self.device.info().page_size);
            self.device.read_page(page_id, &mut buf)?;
            page::verify(buf.as_slice(), page_id)?;
            cache.map.insert(page_id, (buf, false));
            cache.order.push_back(page_id);
        }
        let (buf, is_dirty) = cache.map.get_mut(&page_id).unwrap();
        *is_dirty |= dirty;
        Ok(f(buf.as_mut_slice()))
    }
}

impl PageAccess for CacheTarget {
    fn pages(&self) -> u64 {
        self.device.info().pages
    }
    fn page_size(&self) -> usize {
        self.device.info().page_size
    }
    fn read_with(&self, page: PageId, f: &mut dyn FnMut(&[u8])) -> Result<()> {
        self.with_page(page, false, |bytes| f(bytes))
    }
    fn update_with(&self, page: PageId, f: &mut dyn FnMut(&mut [u8])) -> Result<()> {
        self.with_page(page, true, |bytes| f(bytes))
    }
}

impl BenchTarget for CacheTarget {
    fn stats(&self) -> PoolStats {
        let (resident, dirty) = {
            let cache = self.cache.lock();
            let dirty = cache.map.values().filter(|(_, d)| *d).count();
            (cache.map.len(), dirty)
        };
        let mut stats = PoolStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            sync_replacement_writes: self.sync_writes.load(Ordering::Relaxed),
            free_frames: (self.frames - resident) as u64,
            dirty_pages: dirty as u64,
            frames: self.frames as u64,
            ..PoolStats::default()
        };
        stats
            .mutexes
            .insert("cache".to_string(), self.counters.snapshot());
        stats
    }

    fn shutdown(&self) -> Result<()> {
        let mut cache = self.cache.lock();
        let Cache { map, .. } = &mut *cache;
        for (&page_id, (buf, dirty)) in map.iter_mut() {
            if *dirty {
                self.write_back(page_id, buf)?;
                *dirty = false;
            }
        }
        self.device.sync()?;
        Ok(())
    }
}

fn cache_factory(fail_after: Option<u64>) -> Box<TargetFactory> {
    Box::new(move |_scheme, spec| {
        let region = spec.data_region()?;
        Ok(Arc::new(CacheTarget::new(region, spec.frames, fail_after)) as Arc<dyn BenchTarget>)
    })
}

fn small_config(mix: Mix, schemes: Vec<Scheme>) -> BenchConfig {
    BenchConfig {
        workload: SyntheticConfig::new(mix, 2048, 4096),
        schemes: schemes.into_iter().map(Scheme::composition).collect(),
        device: DeviceSpec::Memory,
        log: None,
        step: flashbuf::bench::timeline::STEP,
        buffer_pages: 205,
        threads: 4,
        duration: Duration::from_millis(1300),
        measure_cap: None,
        warmup: WarmUp::For(Duration::from_millis(200)),
        fill_pool: false,
        prewarm: false,
        pool_config: None,
        command_line: "bench_harness test".into(),
        progress: false,
        record: None,
        check: true,
        repeats: 1,
        regime_reference: Default::default(),
    }
}

#[test]
fn mixes_have_the_configured_read_ratio_and_locality() {
    let ops = 200_000;
    for &mix in Mix::ALL {
        let workload = SyntheticWorkload::new(SyntheticConfig::new(mix, 10_000, 4096)).unwrap();
        let keys = workload.keys();
        let mut worker = workload.worker(3);
        let (mut reads, mut hot, mut low_ids) = (0u32, 0u32, 0u32);
        for _ in 0..ops {
            let op = worker.next_op();
            assert!(op.page < 10_000);
            reads += u32::from(op.kind == OpKind::Read);
            hot += u32::from(keys.is_hot(op.page));
            low_ids += u32::from(op.page < 1000);
        }
        let read_share = f64::from(reads) / f64::from(ops);
        assert!(
            (read_share - mix.read_ratio()).abs() < 0.01,
            "{}: read share {read_share}",
            mix.name()
        );
        let low_share = f64::from(low_ids) / f64::from(ops);
        if mix == Mix::Mu {
            assert!(
                (low_share - 0.1).abs() < 0.01,
                "mu: low-id share {low_share}"
            );
        } else {
            assert_eq!(keys.hot_pages(), 1000);
            let hot_share = f64::from(hot) / f64::from(ops);
            assert!(
                (hot_share - 0.9).abs() < 0.01,
                "{}: hot share {hot_share}",
                mix.name()
            );
            // The hot set is scattered: the first 10% of ids do not get the hot traffic.
            assert!(low_share < 0.5, "{}: hot set is not scattered", mix.name());
        }
    }
}

#[test]
fn workers_are_seeded_per_thread_and_reproducible() {
    let workload = SyntheticWorkload::new(SyntheticConfig::new(Mix::Ms, 1000, 4096)).unwrap();
    let stream = |thread| {
        let mut worker = workload.worker(thread);
        (0..100).map(|_| worker.next_op()).collect::<Vec<_>>()
    };
    assert_eq!(stream(0), stream(0));
    assert_ne!(stream(0), stream(1));
}

#[test]
fn writes_change_pages_on_the_device_after_shutdown() {
    // 3000 pages of 4 KiB: the image loads in two chunks.
    let config = SyntheticConfig::new(Mix::Wis, 3000, 4096);
    let workload = SyntheticWorkload::new(config).unwrap();
    let options = OpenOptions {
        page_size: 4096,
        pages: 3000,
        create: true,
    };
    let device = open(&DeviceSpec::Memory, &options).unwrap();
    workload.load(&device).unwrap();
    let target = CacheTarget::new(Arc::clone(&device), 100, None);
    let mut worker = workload.worker(0);
    let mut writes: HashMap<PageId, u64> = HashMap::new();
    for _ in 0..5000 {
        let op = worker.step(&target).unwrap();
        if op.kind == OpKind::Write {
            *writes.entry(op.page).or_default() += 1;
        }
    }
    target.shutdown().unwrap();
    let mut buf = AlignedBuf::new(4096);
    for page_id in 0..3000 {
        device.read_page(page_id, &mut buf).unwrap();
        page::verify(buf.as_slice(), page_id).unwrap();
        let version = record_version(buf.as_slice(), page_id).unwrap();
        assert_eq!(
            version,
            writes.get(&page_id).copied().unwrap_or(0),
            "page {page_id}"
        );
    }
    assert!(
        writes.len() > 100,
        "the workload wrote only {} pages",
        writes.len()
    );
}

#[test]
fn a_short_run_of_two_schemes_writes_every_contract_field() {
    let config = small_config(Mix::Ms, vec![Scheme::Vanilla, Scheme::LruC]);
    let results = run_bench(&config, &*cache_factory(None)).unwrap();
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    assert_eq!(results.runs.len(), 2);
    println!("{}", report::format_table(&results));

    let dir = tempfile::tempdir().unwrap();
    plot::write_report_dir(dir.path(), &results).unwrap();
    for file in [
        "results.json",
        "throughput.svg",
        "timeline.svg",
        "latency.svg",
        "report.html",
    ] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(!text.is_empty(), "{file} is empty");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap())
            .unwrap();
    for field in [
        "flashbuf_version",
        "date",
        "host_cores",
        "command_line",
        "time_base",
    ] {
        assert!(
            json["header"].get(field).is_some(),
            "header.{field} missing"
        );
    }
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs[0]["scheme"], "vanilla");
    assert_eq!(runs[1]["scheme"], "lru-c");
    for run in runs {
        for field in [
            "scheme",
            "workload",
            "device",
            "threads",
            "buffer_pages",
            "db_pages",
            "duration_s",
            "throughput",
            "unit",
            "latency_ms",
            "hit_ratio",
            "read_stall_ratio",
            "sync_write_pct",
            "io",
            "mutex_wait_ms",
            "cpu_util",
            "timeline",
            "time_scale",
            "pool_stats",
            "device_stats",
        ] {
            assert!(run.get(field).is_some(), "run.{field} missing");
        }
        for field in ["mean", "p95", "p99"] {
            assert!(run["latency_ms"][field].is_number(), "latency_ms.{field}");
        }
        for field in ["read_iops", "write_iops", "read_mbps", "write_mbps"] {
            assert!(run["io"][field].is_number(), "io.{field}");
        }
        assert!(run["mutex_wait_ms"]["cache"].is_number());
        assert_eq!(run["workload"], "ms");
        assert_eq!(run["db_pages"], 2048);
        assert_eq!(run["buffer_pages"], 205);
        assert!(run["throughput"].as_f64().unwrap() > 0.0);
        let (reads, writes) = (
            run["read_ops"].as_f64().unwrap(),
            run["write_ops"].as_f64().unwrap(),
        );
        assert!(reads + writes > 0.0);
        // Binomial spread: 3 sigma of the share is 1.5 / sqrt(ops); check when it is < 0.05.
        if reads + writes >= 1000.0 {
            let read_share = reads / (reads + writes);
            assert!(
                (read_share - 0.5).abs() < 0.05,
                "achieved read share {read_share}"
            );
        }
        assert!(!run["timeline"].as_array().unwrap().is_empty());
        let hit_ratio = run["hit_ratio"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&hit_ratio));
        // 50% writes on a 10% buffer: dirty victims are written back during the run.
        assert!(run["device_stats"]["writes"].as_u64().unwrap() > 0);
        assert!(run["device_stats"]["reads"].as_u64().unwrap() > 0);
        // The latency CDF: one [ms, fraction] pair per quantile, ascending, 0 to 1.
        let cdf = run["latency_cdf"].as_array().unwrap();
        assert_eq!(
            cdf.len(),
            flashbuf::bench::report::CDF_QUANTILES.len(),
            "latency_cdf"
        );
        let pairs: Vec<(f64, f64)> = cdf
            .iter()
            .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
            .collect();
        assert!(
            pairs
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1)
        );
        assert!(pairs[0].1.abs() < 1e-12 && (pairs[pairs.len() - 1].1 - 1.0).abs() < 1e-12);
        // The steadiness verdict says why, with its windows; no config differs from the
        // defaults (no --pool-config, presets without knob changes).
        let steadiness = &run["steadiness"];
        assert!(steadiness["verdict"].as_str().unwrap().contains("window"));
        assert!(steadiness["window_s"].as_f64().unwrap() >= 0.5 - 1e-9);
        assert_eq!(run["config_diff"].as_array().unwrap().len(), 0);
        assert!(run["scheme_real_s"].as_f64().unwrap() >= run["duration_real_s"].as_f64().unwrap());
        for kind in run["per_type"].as_array().unwrap() {
            assert_eq!(kind["aborts"], 0);
            assert!(kind["latency_cdf"].is_array());
        }
    }
}

/// `--duration auto`: the phase measures at least its minimum and at most its cap, and stops
/// before the cap only when steady with a narrow drift interval (whether this host's load
/// lets it stop early is not asserted: that is its measurement to make).
#[test]
fn a_measured_phase_until_steady_stays_within_its_bounds() {
    let mut config = small_config(Mix::Ms, vec![Scheme::Vanilla]);
    config.duration = Duration::from_secs(1);
    config.measure_cap = Some(Duration::from_secs(6));
    let results = run_bench(&config, &*cache_factory(None)).unwrap();
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    let run = &results.runs[0];
    assert!(run.duration_s >= 1.0 - 1e-3, "{}", run.duration_s);
    // The last tick may overshoot by one TICK (50 ms) and the stop itself.
    assert!(run.duration_s <= 6.2, "{}", run.duration_s);
    let steadiness = serde_json::to_value(&run.steadiness).unwrap();
    if run.duration_s < 5.8 {
        assert_eq!(steadiness["steady"], true, "{steadiness}");
        let ci = steadiness["drift_ci95"].as_f64().unwrap();
        assert!(
            ci <= 0.1 + 1e-9,
            "stopped at {} s on {steadiness}",
            run.duration_s
        );
    }
    // A bad cap is refused before anything runs.
    config.measure_cap = Some(Duration::from_millis(500));
    let err = run_bench(&config, &*cache_factory(None)).unwrap_err();
    assert!(err.to_string().contains("cap"), "{err}");
}

#[test]
fn a_failing_target_is_reported_under_its_scheme() {
    let mut config = small_config(Mix::Ris, vec![Scheme::Cflru, Scheme::War]);
    config.duration = Duration::from_millis(300);
    config.warmup = WarmUp::For(Duration::ZERO);
    let results = run_bench(&config, &*cache_factory(Some(500))).unwrap();
    assert!(results.runs.is_empty());
    assert_eq!(results.failures.len(), 2);
    assert_eq!(results.failures[0].scheme, "cflru");
    assert!(
        results.failures[0].error.contains("injected test failure"),
        "{}",
        results.failures[0].error
    );
    let table = report::format_table(&results);
    assert!(table.contains("FAILED cflru"), "{table}");
}

/// On an emulated SSD the warm-up ages the flash with the run's own writes and the record
/// says so; `age=off` keeps the uniform preconditioning, and `mem` has nothing to age.
#[test]
fn the_warm_up_ages_an_emulated_ssd_with_the_runs_writes() {
    let emulated = |age: &str| DeviceSpec::Emulated {
        profile: "ssd-a".into(),
        options: vec![
            ("time_scale".into(), "1".into()),
            ("age".into(), age.into()),
        ],
    };
    let mut config = small_config(Mix::Ms, vec![Scheme::Vanilla]);
    config.duration = Duration::from_millis(300);
    config.warmup = WarmUp::For(Duration::from_millis(400));
    config.device = emulated("on");
    let results = run_bench(&config, &*cache_factory(None)).unwrap();
    let aging = results.runs[0].device_aging.expect("the SSD was aged");
    assert!(
        aging.sampled_writes > 0 && aging.replayed_writes > 0,
        "{aging:?}"
    );
    assert!(aging.logical_pages >= 2048, "{aging:?}");
    let json = serde_json::to_value(&results).unwrap();
    assert!(json["runs"][0]["device_aging"]["gc_per_write_last"].is_f64());

    config.device = emulated("off");
    let results = run_bench(&config, &*cache_factory(None)).unwrap();
    assert_eq!(results.runs[0].device_aging, None);
    config.device = DeviceSpec::Memory;
    let results = run_bench(&config, &*cache_factory(None)).unwrap();
    assert_eq!(results.runs[0].device_aging, None);
}

#[test]
fn fill_pool_fills_the_pool_untimed_before_the_warm_up() {
    // A hard disk at time scale 1 reads about 150 pages a second: 205 frames would take over a
    // second of device time to fill, far more than this warm-up.
    let mut config = small_config(Mix::Ms, vec![Scheme::Vanilla]);
    config.device = DeviceSpec::Emulated {
        profile: "hdd".into(),
        options: vec![("time_scale".into(), "1".into())],
    };
    config.duration = Duration::from_millis(200);
    config.warmup = WarmUp::For(Duration::from_millis(50));
    config.check = false;
    config.fill_pool = true;
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    let run = &results.runs[0];
    let fill = run.pool_fill.expect("the pool was filled");
    assert!(fill.full, "{fill:?}");
    assert!(fill.misses > 0.0, "{fill:?}");
    let json = serde_json::to_value(&results).unwrap();
    assert_eq!(json["runs"][0]["pool_fill"]["full"], true);
    // The measured phase began from the filled pool (the hard disk completes few operations
    // in 200 ms; the pool's gauges at its end still hold the filled pages).
    assert!(
        run.pool_stats.frames - run.pool_stats.free_frames >= run.pool_stats.frames / 2,
        "{:?}",
        run.pool_stats
    );

    config.fill_pool = false;
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert_eq!(results.runs[0].pool_fill, None);
    let json = serde_json::to_value(&results).unwrap();
    assert!(json["runs"][0].get("pool_fill").is_none());
}

#[test]
fn prewarm_reads_the_loaded_database_before_the_workers_start() {
    // 2,048 pages of data in a pool of as many frames (one instance, so that no instance fills
    // before the others): after the prewarm the measured phase reads nothing from the device.
    let mut config = small_config(Mix::Ms, vec![Scheme::Vanilla]);
    config.buffer_pages = 2048;
    config.pool_config = Some("instances = 1".into());
    config.duration = Duration::from_millis(300);
    config.warmup = WarmUp::For(Duration::from_millis(50));
    config.check = false;
    config.prewarm = true;
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    let run = &results.runs[0];
    let prewarm = run.prewarm.expect("the pool was prewarmed");
    assert_eq!(prewarm.loaded_pages, run.db_pages as f64, "{prewarm:?}");
    assert_eq!(prewarm.pages, prewarm.loaded_pages, "{prewarm:?}");
    assert!(!prewarm.pool_full, "{prewarm:?}");
    assert!(run.ops > 0);
    let json = serde_json::to_value(&results).unwrap();
    assert_eq!(json["runs"][0]["prewarm"]["pages"], prewarm.pages);

    // A pool smaller than the database: the prewarm stops when it is full.
    config.buffer_pages = 205;
    let results = run_bench(&config, &*default_factory()).unwrap();
    let prewarm = results.runs[0].prewarm.expect("the pool was prewarmed");
    assert!(prewarm.pool_full, "{prewarm:?}");
    // The page cleaner may free a few frames meanwhile (it evicts clean pages to keep free
    // ones, as InnoDB's does), so a few more pages than frames can be read; far from all.
    assert!(prewarm.pages < 2.0 * 205.0, "{prewarm:?}");

    config.prewarm = false;
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert_eq!(results.runs[0].prewarm, None);
    let json = serde_json::to_value(&results).unwrap();
    assert!(json["runs"][0].get("prewarm").is_none());
}

#[test]
fn the_default_factory_runs_every_scheme_on_the_buffer_pool() {
    let mut config = small_config(Mix::Ms, Scheme::ALL.to_vec());
    config.duration = Duration::from_millis(300);
    config.warmup = WarmUp::For(Duration::from_millis(50));
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert_eq!(
        results.runs.len(),
        Scheme::ALL.len(),
        "{:?}",
        results.failures
    );
    for run in &results.runs {
        assert!(run.ops > 0, "{}: no operations", run.scheme);
        assert!(
            run.doublewrite.pages > 0,
            "{}: the doublewrite is off",
            run.scheme
        );
        // The eviction end was profiled once per timeline step of the measured phase.
        let tail = run
            .tail_profile
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no tail profile", run.scheme));
        assert!(tail.samples > 0 && tail.bands.len() == 5, "{tail:?}");
        assert!(
            tail.bands.iter().all(
                |band| (0.0..=1.0).contains(&band.dirty) && (0.0..=1.0).contains(&band.writing)
            ),
            "{}: {tail:?}",
            run.scheme
        );
        assert!((0.0..=1.0).contains(&tail.run_at_depth), "{tail:?}");
    }
    // With the redo log on its own device, every scheme commits logged transactions.
    config.log = Some(LogSetup {
        device: DeviceSpec::Memory,
        size: 1 << 20,
        flush_log_at_trx_commit: 0,
    });
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert_eq!(
        results.runs.len(),
        Scheme::ALL.len(),
        "{:?}",
        results.failures
    );
    for run in &results.runs {
        let log = run.log.as_ref().unwrap();
        assert!(log.mbps > 0.0, "{}: nothing logged", run.scheme);
    }
    // A bad pool configuration fails every scheme with an error naming the knob, not a panic.
    config.pool_config = Some("no_such_knob = 1".into());
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert_eq!(results.failures.len(), Scheme::ALL.len());
    assert!(
        results.failures[0].error.contains("no_such_knob"),
        "{:?}",
        results.failures
    );
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: BenchArgs,
}

fn parse(flags: &[&str]) -> Result<BenchConfig> {
    let cli = Cli::try_parse_from(std::iter::once("bench").chain(flags.iter().copied()))
        .map_err(|err| Error::Config(err.to_string()))?;
    cli.args.to_config("test")
}

#[test]
fn cli_flags_parse_and_bad_values_error_cleanly() {
    let config = parse(&[]).unwrap();
    assert!(!config.fill_pool);
    assert!(parse(&["--fill-pool"]).unwrap().fill_pool);
    // A real device cannot serve untimed: refused before any work, naming the flag.
    let err = parse(&[
        "--fill-pool",
        "--device",
        "file:/nonexistent/fill-pool-data",
    ])
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("--fill-pool") && err.contains("file:"),
        "{err}"
    );
    assert_eq!(
        config.schemes,
        Scheme::ALL
            .iter()
            .map(|s| s.composition())
            .collect::<Vec<_>>()
    );
    assert_eq!(config.workload.mix, Mix::Ms);
    assert_eq!(config.workload.db_pages, 32_768);
    assert_eq!(config.buffer_pages, 3277);
    let config = parse(&[
        "--workload",
        "wis",
        "--schemes",
        "lru-c,vanilla",
        "--device",
        "mem",
        "--buffer",
        "500",
        "--threads",
        "8",
        "--duration",
        "2m",
        "--warmup",
        "3s",
        "--db-size",
        "1GiB",
        "--page-size",
        "4096",
        "--read-ratio",
        "20%",
        "--locality",
        "zipf:0.9",
        "--seed",
        "7",
    ])
    .unwrap();
    assert_eq!(config.schemes, vec![Scheme::LruC, Scheme::Vanilla]);
    assert_eq!(config.workload.db_pages, 262_144);
    assert_eq!(config.buffer_pages, 500);
    assert_eq!(config.duration, Duration::from_mins(2));
    assert!((config.workload.read_ratio - 0.2).abs() < 1e-12);
    assert_eq!(config.workload.seed, 7);

    let cases: &[(&[&str], &str)] = &[
        (&["--duration", "10x"], "--duration"),
        (&["--duration", "0s"], "--duration"),
        (&["--db-size", "0"], "--db-size"),
        (&["--db-size", "lots"], "--db-size"),
        (&["--buffer", "200%"], "--buffer"),
        (&["--buffer", "99999999"], "--buffer"),
        (&["--warmup", "soon"], "--warmup"),
        (&["--read-ratio", "2"], "--read-ratio"),
        (&["--page-size", "1000"], "--page-size"),
        (&["--workload", "tpcx"], "ms, wis, ris, mu"),
        (&["--workload", "tpcc", "--records", "10"], "--records"),
        (&["--workload", "ms", "--warehouses", "2"], "--warehouses"),
        (&["--workload", "tpcc", "--mix", "neworder=50"], "mix"),
        (
            &["--workload", "tpcc", "--mix", "no=100", "--rw-ratio", "4:1"],
            "not both",
        ),
        (&["--workload", "tpcc", "--rw-ratio", "9:1"], "ratio"),
        (
            &["--workload", "tpcc", "--read-ratio", "0.5"],
            "--read-ratio",
        ),
        (&["--workload", "tpcc", "--no-log"], "--no-log"),
        (&["--workload", "ycsb-z"], "ycsb"),
        (&["--workload", "linkbench", "--nodes", "1"], "nodes"),
        (&["--schemes", "fifo"], "valid presets"),
        (&["--device", "disk:/x"], "valid forms"),
        (&["--locality", "90"], "locality"),
        (&["--threads", "0"], "threads"),
        (&["--pool-config", "/nonexistent/pool.toml"], "pool config"),
    ];
    for (flags, expected) in cases {
        let err = parse(flags)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains(expected),
            "{flags:?}: `{err}` lacks `{expected}`"
        );
    }
}

/// Not a check: prints sample tables for 16 and 64 threads (run with `--ignored --nocapture`).
#[test]
#[ignore = "prints sample tables; several seconds"]
fn sample_tables_for_16_and_64_threads() {
    for threads in [16, 64] {
        let mut config = small_config(Mix::Ms, vec![Scheme::Vanilla, Scheme::LruC]);
        config.workload = SyntheticConfig::new(Mix::Ms, 32_768, 4096);
        config.buffer_pages = 3277;
        config.threads = threads;
        config.duration = Duration::from_secs(3);
        config.warmup = WarmUp::UntilSteady {
            max: Duration::from_secs(2),
        };
        let results = run_bench(&config, &*cache_factory(None)).unwrap();
        println!("{}", report::format_table(&results));
        let dir = std::env::temp_dir().join(format!("flashbuf-bench-sample-{threads}"));
        plot::write_report_dir(&dir, &results).unwrap();
        println!("report in {}", dir.display());
    }
}

/// A run kept from an interrupted attempt takes its place (its repeat of its scheme) instead
/// of running; every run that does run reaches the continuation with all the runs ended so far,
/// in the interleaved order.
#[test]
fn kept_runs_are_taken_in_their_place_and_the_rest_run() {
    use flashbuf::bench::continuation::{Continuation, EndedRun};
    use flashbuf::bench::harness::{Finished, run_bench_with};
    let mut config = small_config(Mix::Ms, vec![Scheme::Cflru, Scheme::War]);
    config.duration = Duration::from_millis(300);
    config.warmup = WarmUp::For(Duration::ZERO);
    config.repeats = 2;
    let marker = report::RunResult {
        scheme: "war".into(),
        throughput: 12_345.0,
        unit: "ops/s".into(),
        ..Default::default()
    };
    let kept = vec![EndedRun {
        repeat: 0,
        scheme: "war".into(),
        origin: Default::default(),
        run: marker,
    }];
    let mut saved: Vec<Vec<(usize, String)>> = Vec::new();
    let mut keep = |ended: &[EndedRun]| {
        saved.push(ended.iter().map(|r| (r.repeat, r.scheme.clone())).collect());
    };
    let mut continuation = Continuation::new(kept, &mut keep);
    let (mut ran, mut taken) = (0, 0);
    let results = run_bench_with(
        &config,
        &*cache_factory(None),
        &mut continuation,
        &mut |_, finished| match finished {
            Finished::Run(_) => ran += 1,
            Finished::Kept(run) => {
                assert_eq!(run.throughput, 12_345.0);
                taken += 1;
            }
            Finished::Failed(failure) => panic!("{failure:?}"),
        },
    )
    .unwrap();
    drop(continuation);
    assert_eq!((ran, taken), (3, 1));
    let war = results.runs.iter().find(|run| run.scheme == "war").unwrap();
    let repeats = war.repeats.as_ref().unwrap();
    assert_eq!(repeats.runs.len(), 2);
    assert_eq!(repeats.runs[0].as_ref().unwrap().throughput, 12_345.0);
    assert_ne!(repeats.runs[1].as_ref().unwrap().throughput, 12_345.0);
    assert_eq!(saved.len(), 3, "one save per run that ran");
    let order = |runs: &[(usize, &str)]| -> Vec<(usize, String)> {
        runs.iter().map(|(r, s)| (*r, (*s).to_string())).collect()
    };
    assert_eq!(saved[0], order(&[(0, "cflru")]));
    assert_eq!(
        saved[2],
        order(&[(0, "cflru"), (0, "war"), (1, "cflru"), (1, "war")])
    );
}
