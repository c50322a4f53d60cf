//! InnoDB's adaptive flushing averages the flush-list part's own pages (`avg_page_rate`: MySQL
//! 5.6 adds the flush-list batch's pages to `sum_pages` in `page_cleaner_flush_pages_if_needed`,
//! 5.7 sets `last_pages = n_flushed_list`), not the LRU tail flush's. So with the log below its
//! low-water mark and the pool under `max_dirty_pages_pct`, the cleaner writes from the LRU
//! tail only, however much that is. Until 2026-11-30 flashbuf averaged both parts, which kept a
//! flush-list rate about equal to the LRU part's and cleaned pages before they reached the tail
//! (docs/regime.md, "Why vanilla's LRU tail stays clean").

use std::time::Duration;

use flashbuf::bench::{BenchConfig, LogSetup, WarmUp, default_factory, run_bench};
use flashbuf::device::DeviceSpec;
use flashbuf::engine::Composition;
use flashbuf::workload::synthetic::{Mix, SyntheticConfig};

#[test]
fn a_young_log_and_a_pool_under_its_dirty_limit_flush_only_the_lru_tail() {
    let config = BenchConfig {
        workload: SyntheticConfig::new(Mix::Ms, 4096, 4096),
        schemes: vec![Composition::parse("vanilla").unwrap()],
        device: DeviceSpec::Memory,
        // A log far larger than the run's redo: the checkpoint age stays under 10% of it.
        log: Some(LogSetup {
            device: DeviceSpec::Memory,
            size: 1 << 30,
            flush_log_at_trx_commit: 0,
        }),
        step: flashbuf::bench::timeline::STEP,
        buffer_pages: 410,
        threads: 4,
        duration: Duration::from_millis(1500),
        measure_cap: None,
        warmup: WarmUp::For(Duration::from_millis(300)),
        fill_pool: false,
        prewarm: false,
        // Rounds every 50 ms; the dirty limit out of reach.
        pool_config: Some(
            "cleaner_period_ms = 50\ntime_constant_scale = 1.0\nmax_dirty_pages_pct = 99.9\n"
                .into(),
        ),
        command_line: "adaptive_flushing_counts_flush_list test".into(),
        progress: false,
        record: None,
        check: true,
        repeats: 1,
        regime_reference: Default::default(),
    };
    let results = run_bench(&config, &*default_factory()).unwrap();
    assert!(results.failures.is_empty(), "{:?}", results.failures);
    let stats = &results.runs[0].pool_stats;
    eprintln!(
        "LRU flushes {} flush-list flushes {} misses {} dirty {} of {}",
        stats.lru_flushes, stats.flush_list_flushes, stats.misses, stats.dirty_pages, stats.frames
    );
    assert!(stats.lru_flushes > 0, "the LRU tail flush wrote nothing");
    assert_eq!(
        stats.flush_list_flushes, 0,
        "the flush list was flushed with a young log and a clean enough pool"
    );
}
