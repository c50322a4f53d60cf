//! Percona Server 5.6's flushing end to end: `vanilla+percona` on the `mem` device with a small
//! redo log (1 MiB), a write-heavy mix, with query threads on an empty free list in `legacy`
//! (single-page flush) and `backoff` (never flush, wait for the cleaner) modes, the latter by the
//! pool knob and by the scheme part `vanilla+percona+backoff`.
//!
//! Asserted: both runs complete without error (the backoff wait is bounded and the separately
//! paced LRU manager and flush-list flusher keep frames coming); the LRU manager and the
//! flusher both ran; in `backoff` mode no user thread wrote a victim (synchronous replacement
//! writes are 0) and the waits were counted; in `legacy` mode they were. Speed is not asserted.

use std::time::Duration;

use flashbuf::bench::{BenchConfig, LogSetup, WarmUp, default_factory, run_bench};
use flashbuf::device::DeviceSpec;
use flashbuf::engine::Composition;
use flashbuf::workload::synthetic::{Mix, SyntheticConfig};

fn config(scheme: &str, pool_config: &str) -> BenchConfig {
    BenchConfig {
        workload: SyntheticConfig::new(Mix::Wis, 4096, 4096),
        schemes: vec![Composition::parse(scheme).unwrap()],
        device: DeviceSpec::Memory,
        log: Some(LogSetup {
            device: DeviceSpec::Memory,
            size: 1 << 20,
            flush_log_at_trx_commit: 0,
        }),
        step: flashbuf::bench::timeline::STEP,
        buffer_pages: 512,
        threads: 4,
        duration: Duration::from_millis(1500),
        measure_cap: None,
        warmup: WarmUp::For(Duration::from_millis(200)),
        fill_pool: false,
        prewarm: false,
        // A short flusher period so the run sees several of its rounds.
        pool_config: Some(format!(
            "cleaner_period_ms = 100\ntime_constant_scale = 1.0\n{pool_config}"
        )),
        command_line: "flushrate_percona test".into(),
        progress: false,
        record: None,
        check: true,
        repeats: 1,
        regime_reference: Default::default(),
    }
}

#[test]
fn percona_paces_both_parts_and_backoff_never_writes_from_user_threads() {
    // The scheme part `backoff` is the pool knob for that scheme alone (Percona Server 5.6's
    // default beside MySQL's schemes in one run).
    for (mode, scheme, toml) in [
        ("legacy", "vanilla+percona", ""),
        (
            "backoff",
            "vanilla+percona",
            "empty_free_list = \"backoff\"\n",
        ),
        ("backoff part", "vanilla+percona+backoff", ""),
    ] {
        let results = run_bench(&config(scheme, toml), &*default_factory()).unwrap();
        assert!(
            results.failures.is_empty(),
            "{mode}: {:?}",
            results.failures
        );
        let run = &results.runs[0];
        let stats = &run.pool_stats;
        eprintln!(
            "{mode}: ops {} misses {} sync replacement writes {} backoff waits {:?} LRU rounds \
             {:?} flush rounds {:?} furious {:?} LRU sleep {:?}",
            run.ops,
            stats.misses,
            stats.sync_replacement_writes,
            stats.extra.get("backoff_waits"),
            stats.extra.get("percona_lru_rounds"),
            stats.extra.get("percona_flush_rounds"),
            stats.extra.get("percona_furious_rounds"),
            stats.extra.get("percona_lru_sleep_ms"),
        );
        assert!(run.ops > 0, "{mode}: no operations");
        assert!(stats.extra["percona_lru_rounds"] >= 1.0, "{mode}");
        assert!(stats.extra["percona_flush_rounds"] >= 1.0, "{mode}");
        if mode.starts_with("backoff") {
            assert_eq!(stats.sync_replacement_writes, 0, "backoff never flushes");
            assert!(stats.extra["backoff_waits"] > 0.0);
            // Nor does it scan the LRU: only the page cleaner evicts.
            for scan in ["user_scan_clean_pages", "user_scan_dirty_pages"] {
                assert_eq!(
                    stats.extra.get(scan).copied().unwrap_or(0.0),
                    0.0,
                    "{mode}: {scan}"
                );
            }
        } else {
            assert_eq!(stats.extra["backoff_waits"], 0.0);
            assert!(
                stats.extra["user_scan_clean_pages"] > 0.0,
                "legacy threads scan"
            );
        }
    }
}
