//! The bench report (`report.html`) is self-contained and complete: no external URL, script
//! file, stylesheet, image or font (one inline script: the table sorter); every plot present as
//! inline SVG with one point per 100 ms timeline step; the comparison an HTML table with a row
//! per scheme; scheme colours only where a series is a scheme (never on the bars of measures);
//! legends beside the plot, never over it; the setup names each scheme's composition; every
//! table column explained; tags balanced. Built from a synthetic result set (no run), so it
//! needs no browser and no device. Set `REPORT_OUT=DIR` to also write the report there (for
//! `scripts/report_screenshot.sh`).

use std::collections::BTreeMap;

use flashbuf::bench::chart::SCHEME_COLOURS;
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
            gc_per_write: None,
            host_writes: 0,
            gc_writes: 0,
            tail_dirty_share: None,
            tail_run_pages: None,
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
        phases_real_s: flashbuf::bench::progress::PhaseTimes::default(),
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
            ..Steadiness::default()
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
        regime: None,
        host_lateness: None,
        device_aging: None,
        pool_fill: None,
        prewarm: None,
        // The first scheme sampled its eviction end (vanilla's tail, behind its cleaner).
        tail_profile: (index == 0).then(|| flashbuf::core::tail_profile::TailProfile {
            samples: 80,
            scan_depth: 38,
            unevictable_run_mean: 21.0,
            run_at_depth: 0.164,
            bands: vec![flashbuf::core::tail_profile::TailBand {
                from: 0.0,
                to: 0.01,
                dirty: 0.76,
                writing: 0.17,
            }],
        }),
        repeats: None,
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
    // Nothing fetched: no URL other than the SVG namespace, no script file, link, img or font.
    let without_namespace = html.replace("http://www.w3.org/2000/svg", "");
    for needle in [
        "http://",
        "https://",
        "src=",
        "<link",
        "<img",
        "@import",
        "url(",
        "fetch(",
        "XMLHttpRequest",
        "import(",
    ] {
        assert!(
            !without_namespace.contains(needle),
            "report contains `{needle}`"
        );
    }
    // One script, inline and without attributes: the table sorter.
    assert_eq!(html.matches("<script").count(), 1);
    assert_eq!(html.matches("<script>").count(), 1);
    assert!(html.contains(flashbuf::bench::table::SORT_SCRIPT));
    assert!(
        !html.contains("<?xml"),
        "inline SVG keeps its XML declaration"
    );
    for tag in [
        "html", "head", "body", "svg", "figure", "table", "thead", "tbody", "pre", "dl", "script",
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
    // The tail profile's table: one row, for the one run that sampled it.
    assert!(html.contains("<h2 id=\"tail\">LRU tail</h2>"));
    assert!(html.contains("<td>16.4% (depth 38)</td><td>76% (17%)</td>"));
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

/// The pixel colour `#RRGGBB` plotters writes for scheme colour `index`.
fn scheme_hex(index: usize) -> String {
    let c = SCHEME_COLOURS[index];
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// The comparison is an HTML table (no preformatted text block that scrolls sideways): its
/// header is the printed table's, one body row per scheme in run order with the printed
/// figures; sortable; each explained column's header carries its meaning as a tooltip. For a
/// record workload the transactions and per-type tables are HTML tables too.
#[test]
fn comparison_is_an_html_table_with_a_row_per_scheme() {
    let results = results();
    let html = plot::report_html(&results).unwrap();
    assert!(!html.contains("<pre"), "a preformatted block is left");
    let start = html
        .find("<table class=\"data sortable\">")
        .expect("comparison table");
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    let comparison = flashbuf::bench::report::comparison(&results);
    let main = &comparison.tables[0];
    for header in &main.header {
        assert!(
            table.contains(&format!(">{}</th>", plot::escape(header))),
            "header {header}"
        );
    }
    assert!(table.contains("title=\"operations completed per second"));
    let body = &table[table.find("<tbody>").unwrap()..];
    let row_names: Vec<&str> = body
        .split("<th scope=\"row\">")
        .skip(1)
        .map(|rest| &rest[..rest.find("</th>").unwrap()])
        .collect();
    assert_eq!(row_names, ["vanilla", "lru-c", "pg-clock+ace"]);
    // The cells are the printed table's.
    let lru_c_row = &body[body.find(">lru-c<").unwrap()..];
    let lru_c_row = &lru_c_row[..lru_c_row.find("</tr>").unwrap()];
    assert_eq!(lru_c_row.matches("<td").count(), main.header.len() - 1);
    assert!(
        lru_c_row.contains("<td>20000</td><td>2.00x</td>"),
        "{lru_c_row}"
    );
    // The mutex table follows, also a sortable table.
    assert_eq!(html.matches("<table class=\"data sortable\">").count(), 2);
    assert!(html.contains("<p class=\"caption\">mutex wait per list mutex (ms, real time)</p>"));

    let mut record = results.clone();
    for run in &mut record.runs {
        run.unit = "tx/s".into();
        run.per_type = vec![flashbuf::bench::report::TypeResult {
            name: "new_order".into(),
            count: 10,
            ..Default::default()
        }];
    }
    let html = plot::report_html(&record).unwrap();
    assert_eq!(html.matches("<table class=\"data sortable\">").count(), 4);
    assert!(html.contains(">tpmC</th>") && html.contains("<td class=\"text\">new_order</td>"));
}

/// Colours mean schemes: the bars of measures (latency mean/p95/p99, read-stall waits,
/// read/write/peak bandwidth, one mutex each) use grey shades and hatching, never a scheme
/// colour; the throughput bars and the lines do use them, each scheme its own.
#[test]
fn bar_charts_of_measures_do_not_use_scheme_colours() {
    let results = results();
    let plots = plot::report_plots(&results).unwrap();
    let svg_of = |id: &str| {
        &plots
            .iter()
            .find(|(plot_id, _, _)| plot_id == id)
            .unwrap_or_else(|| panic!("plot {id}"))
            .2
    };
    for id in ["latency-bars", "stall-waits", "bandwidth", "mutex"] {
        let svg = svg_of(id);
        for index in 0..SCHEME_COLOURS.len() {
            assert!(
                !svg.contains(&scheme_hex(index)),
                "{id} uses scheme colour {index}"
            );
        }
        // Hatching: lines drawn over the bars (the throughput bars, plain, have none).
        let lines = |svg: &str| svg.matches("<polyline").count();
        assert!(
            lines(svg) > lines(svg_of("throughput")) + 3 * results.runs.len(),
            "{id} has no hatching"
        );
    }
    for id in ["throughput", "timeline-throughput", "latency-cdf"] {
        let svg = svg_of(id);
        for index in 0..results.runs.len() {
            assert!(
                svg.contains(&scheme_hex(index)),
                "{id} lacks scheme {index}"
            );
        }
    }
    // The stall-wait CDF of a subset of the schemes keeps each scheme's own colour.
    let mut partial = results.clone();
    partial.runs[1].read_stall_wait_ms.cdf.clear();
    let plots = plot::report_plots(&partial).unwrap();
    let (_, _, cdf) = plots
        .iter()
        .find(|(id, _, _)| id == "stall-wait-cdf")
        .unwrap();
    assert!(cdf.contains(&scheme_hex(0)) && cdf.contains(&scheme_hex(2)));
    assert!(
        !cdf.contains(&scheme_hex(1)),
        "lru-c had no stall but has its colour"
    );
}

/// The legend sits in its own column at the right of the plot: every legend text starts to
/// the right of every bar, value label and axis (the mutex chart's legend covered a value).
#[test]
fn legends_never_cover_the_plot() {
    let results = results();
    let plots = plot::report_plots(&results).unwrap();
    let (_, _, mutex) = plots.iter().find(|(id, _, _)| id == "mutex").unwrap();
    let texts = svg_texts(mutex);
    let legend_x: Vec<f64> = texts
        .iter()
        .filter(|(_, text)| ["flush", "lru"].contains(&text.as_str()))
        .map(|(x, _)| *x)
        .collect();
    assert_eq!(legend_x.len(), 2, "{texts:?}");
    let plot_right = texts
        .iter()
        .filter(|(_, text)| text.parse::<f64>().is_ok())
        .map(|(x, _)| *x)
        .fold(0.0, f64::max);
    let legend_left = legend_x.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        legend_left > plot_right + 20.0,
        "legend at x {legend_left}, values up to x {plot_right}"
    );
}

/// Each `<text x=...>` of an SVG with its content.
fn svg_texts(svg: &str) -> Vec<(f64, String)> {
    svg.split("<text ")
        .skip(1)
        .filter_map(|rest| {
            let x = rest.split("x=\"").nth(1)?.split('"').next()?.parse().ok()?;
            let body = rest
                .split('>')
                .nth(1)?
                .split('<')
                .next()?
                .trim()
                .to_string();
            Some((x, body))
        })
        .collect()
}
