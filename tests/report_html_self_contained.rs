//! The bench report (`report.html`) is self-contained and complete: no external URL, script,
//! stylesheet, image or font; every plot present as inline SVG with one point per 100 ms
//! timeline step; the setup names each scheme's composition; every table column explained;
//! tags balanced. Built from a synthetic result set (no run), so it needs no browser and no
//! device. Set `REPORT_OUT=DIR` to also write the report there (for
//! `scripts/report_screenshot.sh`).

use std::collections::BTreeMap;

use flashbuf::bench::cpu::CpuUtil;
use flashbuf::bench::plot::{self, COLUMNS};
use flashbuf::bench::report::{
    BenchResults, ConfigDiff, DoublewriteStats, FsyncStats, Header, IoRates, LatencyMs, RunResult,
    StallWaitMs, Steadiness,
};
use flashbuf::bench::timeline::TimelinePoint;
use flashbuf::device::DeviceStats;
use flashbuf::pool::PoolStats;

/// One synthetic run: a 2 s measured phase at the 100 ms step (20 points).
fn run(scheme: &str, index: usize) -> RunResult {
    let scale = 1.0 + index as f64;
    let timeline = (1u32..=20)
        .map(|step| TimelinePoint {
            t_s: f64::from(step) * 0.1,
            throughput: 10_000.0 * scale + f64::from(step % 5) * 500.0,
            free_frames: 10 + u64::from(step % 3) * 5,
            dirty_pages: 200 + u64::from(step) * 3,
            misses: 1000,
            read_stalls: 100 / (index as u64 + 1),
            // The first scheme stands for one with a flush-rate controller (vanilla+percona).
            p_scan: (index == 0).then(|| 100.0 + f64::from(step) * 10.0),
            p_io: (index == 0).then(|| 400.0 - f64::from(step) * 5.0),
        })
        .collect();
    let mutex_wait_ms: BTreeMap<String, f64> =
        [("lru".to_string(), 3.0 * scale), ("flush".to_string(), 1.5)].into();
    RunResult {
        scheme: scheme.into(),
        workload: "ms".into(),
        read_ratio: 0.5,
        locality: "90/10".into(),
        device: "emu:ssd-a,time_scale=16".into(),
        log_device: Some("emu:sata,time_scale=16".into()),
        threads: 16,
        buffer_pages: 410,
        db_pages: 4096,
        page_size: 16384,
        duration_s: 2.0,
        duration_real_s: 32.0,
        scheme_real_s: 45.0,
        warmup_s: 0.5,
        time_scale: 16.0,
        model_host: "2 cores x time scale 16 = 32 cores".into(),
        ops: (20_000.0 * scale) as u64,
        throughput: 10_000.0 * scale,
        unit: "ops/s".into(),
        tpmc: None,
        per_type: Vec::new(),
        aborts: 0,
        aborts_unattributed: 0,
        retries: 0,
        rollbacks: 0,
        device_read_share: Some(0.4),
        check: None,
        check_skipped: false,
        latency_ms: LatencyMs {
            mean: 1.0 / scale,
            p50: 0.5 / scale,
            p95: 3.0 / scale,
            p99: 8.0 / scale,
            max: 20.0,
        },
        latency_cdf: flashbuf::bench::report::CDF_QUANTILES
            .iter()
            .map(|&f| (0.05 / scale * (1.0 + 400.0 * f.powi(8)), f))
            .collect(),
        read_ops: 10_000,
        write_ops: 10_000,
        hit_ratio: 0.7,
        read_stall_ratio: 0.3 / scale,
        read_stall_wait_ms: StallWaitMs {
            mean: 2.0,
            p99: 9.0,
            max: 15.0,
            cdf: vec![(0.5, 0.0), (2.0, 0.5), (9.0, 0.99), (15.0, 1.0)],
        },
        sync_write_pct: 40.0 / scale,
        io: IoRates {
            read_iops: 4000.0 * scale,
            write_iops: 6000.0 * scale,
            read_mbps: 65.0 * scale,
            write_mbps: 98.0 * scale,
            write_amplification: 1.1,
            peak_mbps: Some(900.0),
            bandwidth_share: Some(0.18 * scale),
        },
        fsync: FsyncStats {
            count: 10,
            mean_ms: 0.7,
        },
        doublewrite: DoublewriteStats::default(),
        bytes_per_op: None,
        log: None,
        mutex_wait_total_ms: mutex_wait_ms.values().sum(),
        mutex_wait_ms,
        cpu_util: Some(4.0),
        bound: "device-bound".into(),
        cpu: CpuUtil {
            cores_used: Some(0.08),
            pct_of_available: Some(4.0),
            available_cores: 2,
            run_queue_wait_threads: Some(0.01),
            run_queue_wait_share: Some(0.11),
            bound: "device-bound".into(),
        },
        steadiness: Steadiness {
            warmup_steady: true,
            cv: 0.05,
            steady: true,
            drift: 0.01,
            window_s: 0.5,
            windows: 4,
            period_s: None,
            verdict: "yes (cv 0.05, drift +1% over 4 windows of 0.5 s)".into(),
        },
        config_diff: if index == 0 {
            vec![ConfigDiff {
                key: "io_capacity".into(),
                value: "2000".into(),
                default: "10000".into(),
                source: "pool-config".into(),
            }]
        } else {
            Vec::new()
        },
        timeline,
        pool_stats: PoolStats::default(),
        device_stats: DeviceStats::default(),
    }
}

fn results() -> BenchResults {
    BenchResults {
        header: Header::new("flashbuf bench --schemes vanilla,lru-c,pg-clock+ace --out <dir>"),
        runs: ["vanilla", "lru-c", "pg-clock+ace"]
            .iter()
            .enumerate()
            .map(|(index, scheme)| run(scheme, index))
            .collect(),
        failures: Vec::new(),
    }
}

/// Counts of `<tag` openings and `</tag>` closings agree for the structural tags.
fn assert_balanced(html: &str, tag: &str) {
    let opened =
        html.matches(&format!("<{tag}>")).count() + html.matches(&format!("<{tag} ")).count();
    let closed = html.matches(&format!("</{tag}>")).count();
    assert_eq!(
        opened, closed,
        "<{tag}> opened {opened} times, closed {closed}"
    );
}

#[test]
fn report_is_self_contained_and_has_every_plot() {
    let results = results();
    let html = plot::report_html(&results).unwrap();
    if let Some(dir) = std::env::var_os("REPORT_OUT") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(std::path::Path::new(&dir).join("report.html"), &html).unwrap();
    }
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    // Nothing fetched: no URL other than the SVG namespace, no script, link, img or font.
    let without_namespace = html.replace("http://www.w3.org/2000/svg", "");
    for needle in [
        "http://", "https://", "src=", "<script", "<link", "<img", "@import", "url(",
    ] {
        assert!(
            !without_namespace.contains(needle),
            "report contains `{needle}`"
        );
    }
    assert!(
        !html.contains("<?xml"),
        "inline SVG keeps its XML declaration"
    );
    for tag in [
        "html", "head", "body", "svg", "figure", "table", "pre", "dl",
    ] {
        assert_balanced(&html, tag);
    }
    let plots = plot::report_plots(&results).unwrap();
    assert_eq!(html.matches("<svg").count(), plots.len());
    assert!(
        plots.iter().any(|(id, _, _)| id == "stall-wait-cdf"),
        "the read-stall wait distribution is plotted"
    );
    for (id, _, svg) in &plots {
        assert!(
            html.contains(&format!("data-plot=\"{id}\"")),
            "plot {id} missing"
        );
        for run in &results.runs {
            if *id != "throughput" && !id.starts_with("flush-rate-") {
                assert!(svg.contains(&run.scheme), "plot {id} lacks {}", run.scheme);
            }
        }
    }
    // The flush-rate controller: a plot for the scheme that has P_scan / P_io, none for the
    // others.
    let flush: Vec<&String> = plots
        .iter()
        .map(|(id, _, _)| id)
        .filter(|id| id.starts_with("flush-rate-"))
        .collect();
    assert_eq!(flush, ["flush-rate-vanilla"]);
    // The latency CDF draws every latency_cdf point (29 per scheme) as a dot.
    let (_, _, cdf) = plots.iter().find(|(id, _, _)| id == "latency-cdf").unwrap();
    assert_eq!(
        cdf.matches("<circle").count(),
        flashbuf::bench::report::CDF_QUANTILES.len() * results.runs.len()
    );
    // Config diffs in the setup: the override, and `none` for the others.
    assert!(html.contains("io_capacity = 2000 (default 10000, from the pool-config)"));
    assert!(html.contains("config of lru-c</th><td>none"));
    // The throughput bars carry their values.
    let (_, _, bars) = &plots[0];
    for run in &results.runs {
        assert!(
            bars.contains(&format!("{:.0}", run.throughput)),
            "{}",
            run.scheme
        );
    }
    // 20 timeline points (2 s at 100 ms) per scheme: one dot each.
    let (_, _, timeline) = &plots[1];
    assert_eq!(timeline.matches("<circle").count(), 20 * results.runs.len());
    // Setup: the command line and each scheme's decisions; every column explained.
    assert!(html.contains("--schemes vanilla,lru-c,pg-clock+ace"));
    assert!(html.contains("order=clock miss=ace"));
    assert!(html.contains("Intel P4101"));
    for (name, meaning) in COLUMNS {
        assert!(html.contains(&plot::escape(name)), "column {name}");
        assert!(html.contains(&plot::escape(meaning)), "column {name}");
    }
}

/// Every column header of the comparison table is explained once in [`COLUMNS`] (the text
/// `flashbuf bench --help` and the report print), and nothing else is.
#[test]
fn every_table_column_is_explained_once() {
    let table = flashbuf::bench::report::format_table(&results());
    let header_line = table
        .lines()
        .find(|line| line.starts_with("scheme "))
        .expect("table header");
    let headers: Vec<&str> = header_line
        .split("  ")
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .collect();
    let explained: Vec<&str> = COLUMNS
        .iter()
        .flat_map(|(name, _)| name.split(", "))
        .collect();
    let mut sorted_headers = headers.clone();
    sorted_headers.sort_unstable();
    let mut sorted_explained = explained.clone();
    sorted_explained.sort_unstable();
    assert_eq!(sorted_headers, sorted_explained, "table columns vs COLUMNS");
    let help = plot::columns_help();
    for (name, meaning) in COLUMNS {
        assert!(help.contains(name) && help.contains(meaning), "{name}");
    }
}
