//! The plots and the self-contained HTML report of `bench --out DIR`, drawn with `plotters`'
//! SVG backend.
//!
//! Writes into DIR: `results.json`, `throughput.svg`, `timeline.svg` (throughput per 100 ms
//! step), `latency.svg` and `report.html`. The report embeds every plot as inline SVG (no
//! external file, script file, font or URL: it opens offline and can go into an appendix; its
//! one inline script sorts the tables) and holds: the setup (command line, device and its
//! profile, model host, each scheme's composition), the comparison as HTML tables
//! ([`comparison_html`]: the printed table's cells, sortable by a click on a header, each
//! column explained in [`COLUMNS`] and on hover), throughput bars with their values,
//! per-interval timelines (throughput, free frames, dirty pages, read stalls per 100 ms step;
//! one line per scheme), latency quantiles, read-stall waits, device bandwidth used against the
//! device's limit, and mutex waits.
//!
//! Colours mean schemes ([`super::chart`]): a scheme has the same colour in every plot; bars of
//! measures that are not schemes (mean/p95/p99, read/write/peak, one mutex each) are grey with
//! hatching. Every legend is drawn in a column at the right of its plot, never over the data.
//!
//! The latency CDFs (all operations per scheme; per transaction type for record workloads) draw
//! `latency_cdf` (29 quantiles of the run's histogram) on a log latency axis; results.json files
//! without it fall back to p50/p95/p99/max. Schemes whose timeline carries the flush-rate
//! controller's `P_scan` / `P_io` (vanilla+self-tuning, +percona, fixed) get a plot of them
//! each. The setup lists each scheme's pool-config keys that differ from the defaults
//! (`config_diff`).
//!
//! Partial: the read-stall plot shows mean, p99 and max, not the whole distribution.
//!
//! Pure functions build each SVG and the HTML as strings (no I/O); [`write_report_dir`] writes
//! them. Bounds: one element per scheme, per timeline point, per mutex.

use std::fmt::Write as _;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::chart::{
    BarStyle, Hatch, LegendEntry, LegendLayout, Mark, TICK_FONT, desc_font, draw_bar, draw_legend,
    measure_style, scheme_colour,
};
use super::report::{BenchResults, Comparison, RunResult, comparison};
use super::table::{SORT_SCRIPT, TABLE_CSS};
use crate::engine::Composition;
use crate::error::{Error, Result};

/// Width and height of a plot in pixels, its legend included.
const SIZE: (u32, u32) = (1150, 380);

/// Width of the legend column at the right of a plot.
const LEGEND_WIDTH: u32 = 250;

/// Pixels above the plot area (margin and caption): where the legend column starts.
const LEGEND_TOP: u32 = 40;

/// Every column of the comparison table with its meaning: the one text source for the report
/// and `flashbuf bench --help` ([`columns_help`]).
pub const COLUMNS: &[(&str, &str)] = &[
    (
        "scheme",
        "the scheme (preset or composition; `flashbuf schemes`)",
    ),
    (
        "ops/s",
        "operations completed per second of device time in the measured phase",
    ),
    ("ratio", "ops/s divided by the first scheme's ops/s"),
    (
        "p95 ms, p99 ms",
        "95th and 99th percentile of one operation's latency, device-time ms",
    ),
    ("hit %", "page requests served from the pool without a read"),
    (
        "stall %",
        "read stalls per miss: misses that had to write a dirty victim (or wait for one to be written) before reading",
    ),
    ("stall ms", "mean device-time ms a read stall waited"),
    (
        "syncw %",
        "synchronous (foreground) page writes as % of all page writes",
    ),
    (
        "fsync ms",
        "mean device-time ms of one data-device sync of the write path",
    ),
    ("r IOPS, w IOPS", "page reads and writes per device second"),
    (
        "bw %",
        "(read + write MB/s) / the device's peak MB/s at this read/write mix (LRU-C Table 5's bandwidth used)",
    ),
    (
        "mutex ms",
        "real ms threads waited on the pool's list mutexes, summed over mutexes",
    ),
    (
        "CPU",
        "cores kept busy on average, and that as % of the available cores (real time)",
    ),
    (
        "bound",
        "what limited the run: cpu-bound, cpu-starved (threads waited for a core at least half the time they wanted one and at least 5% of their time: the host was short of CPU; results.json's cpu.run_queue_wait_share and run_queue_wait_threads), device-bound, lock-bound (list mutexes), wait-bound (on `mem`: latches or background threads, no device time), mixed or unknown",
    ),
    (
        "steady",
        "whether the measured phase was steady: its throughput over windows of >= 0.5 s (whole cycles when it is periodic) varied little (cv <= 0.15) and did not drift (trend <= 10%); `w` is the window; results.json's steadiness.verdict says why",
    ),
];

/// The columns of the comparison table explained, for `flashbuf bench --help`.
#[must_use]
pub fn columns_help() -> String {
    let mut out = String::from("Columns of the comparison table:\n");
    for (name, meaning) in COLUMNS {
        let _ = writeln!(out, "  {name:15} {meaning}");
    }
    out.push_str(
        "\nListings: `flashbuf schemes`, `flashbuf devices`, `flashbuf config --default`.",
    );
    out
}

/// What a comparison-table column means ([`COLUMNS`]), for its header's tooltip.
fn column_meaning(header: &str) -> Option<&'static str> {
    COLUMNS
        .iter()
        .find(|(names, _)| names.split(", ").any(|name| name == header))
        .map(|(_, meaning)| *meaning)
}

/// The comparison as HTML: its notes as paragraphs, each table a sortable `<table>` whose
/// headers explain themselves on hover (the failures are the caller's: the reports show them
/// elsewhere). Needs [`SORT_SCRIPT`] in the page to sort.
#[must_use]
pub fn comparison_html(comparison: &Comparison) -> String {
    let mut out = String::new();
    for note in &comparison.notes {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    for table in &comparison.tables {
        out.push_str(&table.to_html(column_meaning));
    }
    for warning in &comparison.warnings {
        let _ = writeln!(out, "<p class=\"warning\">warning: {}</p>", escape(warning));
    }
    out
}

/// A plotters error as ours.
pub(crate) fn plot_error(err: impl std::fmt::Display) -> Error {
    Error::io("drawing a plot", std::io::Error::other(err.to_string()))
}

/// Draws into an SVG string of [`SIZE`]: `draw` gets the plot's area, and `legend` goes into
/// the column at its right (never over the data).
fn svg(
    legend: &[LegendEntry],
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<()>,
) -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (plot, side) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
        draw(&plot)?;
        let (_, legend_area) = side.split_vertically(LEGEND_TOP);
        draw_legend(&legend_area, legend, LegendLayout::Column)?;
        root.present().map_err(plot_error)?;
    }
    Ok(out)
}

/// A line legend entry per scheme, in the scheme colours.
fn scheme_legend<'a>(names: impl IntoIterator<Item = &'a String>) -> Vec<LegendEntry> {
    names
        .into_iter()
        .enumerate()
        .map(|(index, name)| LegendEntry {
            name: name.clone(),
            mark: Mark::Line {
                colour: scheme_colour(index),
                dashed: false,
                marker: false,
            },
        })
        .collect()
}

/// The y-axis description's font: fits the plot's height.
fn y_desc_font(
    chart: &ChartContext<'_, SVGBackend<'_>, impl CoordTranslate>,
    text: &str,
) -> (&'static str, f64) {
    desc_font(text, chart.plotting_area().dim_in_pixel().1)
}

/// What colours the bars of [`grouped_bars`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BarColours {
    /// One series whose groups are the schemes: each bar in its scheme's colour.
    Schemes,
    /// Series of measures (not schemes): grey shades with hatching ([`measure_style`]).
    Measures,
}

/// An upper bound for an axis: 10% over the maximum, at least `floor`.
fn axis_max(values: impl Iterator<Item = f64>, floor: f64) -> f64 {
    let max = values.filter(|v| v.is_finite()).fold(0.0, f64::max);
    (max * 1.1).max(floor)
}

/// Groups of bars: one group per label, one bar per series, each bar with its value on top;
/// the legend names the schemes ([`BarColours::Schemes`]) or the series.
fn grouped_bars(
    title: &str,
    y_label: &str,
    labels: &[String],
    series: &[(String, Vec<f64>)],
    colours: BarColours,
    value_format: fn(f64) -> String,
) -> Result<String> {
    let style_of = |k: usize, group: usize| match colours {
        BarColours::Schemes => BarStyle {
            fill: scheme_colour(group),
            hatch: Hatch::None,
        },
        BarColours::Measures => measure_style(k),
    };
    let legend: Vec<LegendEntry> = match colours {
        BarColours::Schemes => labels
            .iter()
            .enumerate()
            .map(|(group, name)| LegendEntry {
                name: name.clone(),
                mark: Mark::Bar(style_of(0, group)),
            })
            .collect(),
        BarColours::Measures => series
            .iter()
            .enumerate()
            .map(|(k, (name, _))| LegendEntry {
                name: name.clone(),
                mark: Mark::Bar(style_of(k, 0)),
            })
            .collect(),
    };
    svg(&legend, |root| {
        let y_max = axis_max(series.iter().flat_map(|(_, v)| v.iter().copied()), 1e-9);
        let groups = labels.len().max(1) as f64;
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..groups, 0.0..y_max)
            .map_err(plot_error)?;
        let label_of = |x: &f64| {
            let index = x.floor();
            if (x - index - 0.5).abs() < 1e-6 && index >= 0.0 {
                labels.get(index as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let desc = y_desc_font(&chart, y_label);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(labels.len() * 2 + 1)
            .x_label_formatter(&label_of)
            .y_desc(y_label)
            .axis_desc_style(desc)
            .label_style(TICK_FONT)
            .y_label_formatter(&|y| tick(*y))
            .draw()
            .map_err(plot_error)?;
        let count = series.len().max(1) as f64;
        let width = 0.8 / count;
        let base = root.get_base_pixel();
        let pixel = |point: (f64, f64)| {
            let (x, y) = chart.backend_coord(&point);
            (x - base.0, y - base.1)
        };
        // NaN: no such value for this group (a mutex the scheme does not have): no bar.
        let present = |values: &'_ [f64]| {
            values
                .iter()
                .copied()
                .enumerate()
                .filter(|(_, v)| v.is_finite())
                .collect::<Vec<_>>()
        };
        for (k, (_, values)) in series.iter().enumerate() {
            for (group, value) in present(values) {
                let x0 = group as f64 + 0.1 + width * k as f64;
                draw_bar(
                    root,
                    pixel((x0, 0.0)),
                    pixel((x0 + width * 0.92, value)),
                    style_of(k, group),
                )?;
            }
        }
        for (k, (_, values)) in series.iter().enumerate() {
            let label_style = TextStyle::from(("sans-serif", 13).into_font())
                .pos(Pos::new(HPos::Center, VPos::Bottom));
            let texts = present(values).into_iter().map(|(group, value)| {
                let x = group as f64 + 0.1 + width * (k as f64 + 0.46);
                Text::new(
                    value_format(value),
                    (x, value + y_max * 0.005),
                    label_style.clone(),
                )
            });
            chart.draw_series(texts).map_err(plot_error)?;
        }
        Ok(())
    })
}

/// One line per scheme over the timeline's device seconds.
fn timeline_lines(
    results: &BenchResults,
    title: &str,
    y_label: &str,
    value: fn(&super::timeline::TimelinePoint) -> f64,
) -> Result<String> {
    let legend = scheme_legend(results.runs.iter().map(|run| &run.scheme));
    svg(&legend, |root| {
        let points = || results.runs.iter().flat_map(|run| run.timeline.iter());
        // 2% past the last step, so the last point sits inside the frame.
        let t_max = axis_max(points().map(|p| p.t_s), 0.1) / 1.1 * 1.02;
        let y_max = axis_max(points().map(value), 1.0);
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..t_max, 0.0..y_max)
            .map_err(plot_error)?;
        let desc = y_desc_font(&chart, y_label);
        chart
            .configure_mesh()
            .x_desc("device seconds into the measured phase (one point per 100 ms step)")
            .y_desc(y_label)
            .axis_desc_style(desc)
            .label_style(TICK_FONT)
            .y_label_formatter(&|y| tick(*y))
            .draw()
            .map_err(plot_error)?;
        for (index, run) in results.runs.iter().enumerate() {
            let c = scheme_colour(index);
            let line = run.timeline.iter().map(|p| (p.t_s, value(p)));
            chart
                .draw_series(LineSeries::new(line, c.stroke_width(2)))
                .map_err(plot_error)?;
            let dots = run
                .timeline
                .iter()
                .map(|p| Circle::new((p.t_s, value(p)), 2, c.filled()));
            chart.draw_series(dots).map_err(plot_error)?;
        }
        Ok(())
    })
}

/// The CDF points of one latency distribution: `latency_cdf` when results.json has it, else
/// the quantiles it always has ((p50, 0.5), (p95, 0.95), (p99, 0.99), (max, 1)), older files.
fn cdf_points(cdf: &[(f64, f64)], summary: &super::report::LatencyMs) -> Vec<(f64, f64)> {
    if cdf.is_empty() {
        vec![
            (summary.p50, 0.5),
            (summary.p95, 0.95),
            (summary.p99, 0.99),
            (summary.max, 1.0),
        ]
    } else {
        cdf.to_vec()
    }
}

/// The y-axis description of the CDF plots.
const CDF_Y_LABEL: &str = "fraction at or below";

/// One line of a CDF plot: the scheme's index in the run (its colour), its name, its points.
type CdfLine = (usize, String, Vec<(f64, f64)>);

/// Latency CDFs, one line per scheme, on a log latency axis: the tail, where schemes differ,
/// gets as much room as the body. The y axis ends a little above 1 so the last points show.
fn latency_cdf_lines(title: &str, lines: &[CdfLine]) -> Result<String> {
    let legend: Vec<LegendEntry> = lines
        .iter()
        .map(|(index, name, _)| LegendEntry {
            name: name.clone(),
            mark: Mark::Line {
                colour: scheme_colour(*index),
                dashed: false,
                marker: false,
            },
        })
        .collect();
    svg(&legend, |root| {
        let latencies = || {
            lines
                .iter()
                .flat_map(|(_, _, points)| points.iter().map(|p| p.0))
        };
        let positive_min = latencies()
            .filter(|ms| *ms > 0.0 && ms.is_finite())
            .fold(f64::INFINITY, f64::min);
        let x_min = if positive_min.is_finite() {
            positive_min / 1.5
        } else {
            1e-3
        };
        let x_max = latencies()
            .filter(|ms| ms.is_finite())
            .fold(x_min * 10.0, f64::max)
            * 1.5;
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d((x_min..x_max).log_scale(), 0.0..1.03)
            .map_err(plot_error)?;
        let desc = y_desc_font(&chart, CDF_Y_LABEL);
        chart
            .configure_mesh()
            .x_desc("latency, device-time ms (log scale)")
            .y_desc(CDF_Y_LABEL)
            .axis_desc_style(desc)
            .label_style(TICK_FONT)
            .x_labels(15)
            .x_label_formatter(&|x| log_tick(*x))
            .y_label_formatter(&|y| format!("{y:.1}"))
            .draw()
            .map_err(plot_error)?;
        for (index, _, points) in lines {
            let c = scheme_colour(*index);
            let line: Vec<(f64, f64)> = points.iter().map(|&(ms, f)| (ms.max(x_min), f)).collect();
            chart
                .draw_series(LineSeries::new(line.clone(), c.stroke_width(2)))
                .map_err(plot_error)?;
            chart
                .draw_series(line.into_iter().map(|p| Circle::new(p, 2, c.filled())))
                .map_err(plot_error)?;
        }
        Ok(())
    })
}

/// Operation latency CDF per scheme (all operation types together).
fn latency_cdf_svg(results: &BenchResults) -> Result<String> {
    let lines: Vec<CdfLine> = results
        .runs
        .iter()
        .enumerate()
        .map(|(index, run)| {
            (
                index,
                run.scheme.clone(),
                cdf_points(&run.latency_cdf, &run.latency_ms),
            )
        })
        .collect();
    latency_cdf_lines("Operation latency CDF (device time)", &lines)
}

/// The transaction types the record runs completed, in the first run's order (a type the mix
/// never draws, as YCSB-A's inserts, gets no plot).
fn record_types(results: &BenchResults) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for run in results.runs.iter().filter(|run| run.unit == "tx/s") {
        for kind in run.per_type.iter().filter(|kind| kind.count > 0) {
            if !names.contains(&kind.name) {
                names.push(kind.name.clone());
            }
        }
    }
    names
}

/// Latency CDF of one transaction type, one line per scheme that ran it.
fn type_cdf_svg(results: &BenchResults, type_name: &str) -> Result<String> {
    let lines: Vec<CdfLine> = results
        .runs
        .iter()
        .enumerate()
        .filter_map(|(index, run)| {
            let kind = run
                .per_type
                .iter()
                .find(|kind| kind.name == type_name && kind.count > 0)?;
            Some((
                index,
                run.scheme.clone(),
                cdf_points(&kind.latency_cdf, &kind.latency_ms),
            ))
        })
        .collect();
    latency_cdf_lines(
        &format!("Latency CDF of {type_name} transactions (device time)"),
        &lines,
    )
}

/// The flush-rate controller of the run's scheme `index`: `P_scan` (solid) and `P_io`
/// (dashed) over the measured phase, in the scheme's colour.
fn flush_rate_svg(run: &RunResult, index: usize) -> Result<String> {
    let colour = scheme_colour(index);
    let legend: Vec<LegendEntry> = [false, true]
        .iter()
        .zip([
            "P_scan (pages scanned per round)",
            "P_io (pages written per round)",
        ])
        .map(|(dashed, name)| LegendEntry {
            name: name.to_string(),
            mark: Mark::Line {
                colour,
                dashed: *dashed,
                marker: false,
            },
        })
        .collect();
    svg(&legend, |root| {
        let series: [(&str, Vec<(f64, f64)>); 2] = [
            (
                "P_scan (pages scanned per round)",
                run.timeline
                    .iter()
                    .filter_map(|p| Some((p.t_s, p.p_scan?)))
                    .collect(),
            ),
            (
                "P_io (pages written per round)",
                run.timeline
                    .iter()
                    .filter_map(|p| Some((p.t_s, p.p_io?)))
                    .collect(),
            ),
        ];
        let all = || series.iter().flat_map(|(_, points)| points.iter());
        let t_max = axis_max(all().map(|p| p.0), 0.1) / 1.1 * 1.02;
        let y_max = axis_max(all().map(|p| p.1), 1.0);
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("Flush-rate controller of {}", run.scheme),
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..t_max, 0.0..y_max)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc("device seconds into the measured phase (value at the end of each step)")
            .y_desc("pages")
            .axis_desc_style(desc_font("pages", 300))
            .label_style(TICK_FONT)
            .y_label_formatter(&|y| tick(*y))
            .draw()
            .map_err(plot_error)?;
        // One scheme: its colour, P_scan solid and P_io dashed.
        let [(_, p_scan), (_, p_io)] = &series;
        chart
            .draw_series(LineSeries::new(
                p_scan.iter().copied(),
                colour.stroke_width(2),
            ))
            .map_err(plot_error)?;
        chart
            .draw_series(DashedLineSeries::new(
                p_io.iter().copied(),
                8,
                5,
                colour.stroke_width(2),
            ))
            .map_err(plot_error)?;
        Ok(())
    })
}

/// Whether a run's timeline carries the flush-rate controller's figures.
fn has_flush_rate(run: &RunResult) -> bool {
    run.timeline
        .iter()
        .any(|p| p.p_scan.is_some() || p.p_io.is_some())
}

/// A tick of a log axis: as [`tick`] from 1 up, else with the decimals its magnitude needs
/// (0.0001, not 0.000).
fn log_tick(value: f64) -> String {
    if value >= 1.0 || value <= 0.0 || !value.is_finite() {
        return tick(value);
    }
    let decimals = (-value.log10()).ceil().clamp(1.0, 12.0) as usize;
    format!("{value:.decimals$}")
}

/// An axis tick: no decimals from 100 up, else up to three significant decimals.
pub(crate) fn tick(value: f64) -> String {
    if value == 0.0 {
        "0".to_string()
    } else if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 1.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    }
}

fn scheme_labels(results: &BenchResults) -> Vec<String> {
    results.runs.iter().map(|r| r.scheme.clone()).collect()
}

fn thousands(value: f64) -> String {
    format!("{value:.0}")
}

fn one_decimal(value: f64) -> String {
    format!("{value:.1}")
}

fn three_decimals(value: f64) -> String {
    format!("{value:.3}")
}

/// Bar chart of throughput per scheme, values on the bars.
///
/// # Errors
/// Drawing errors (not expected when drawing into a string).
pub fn throughput_svg(results: &BenchResults) -> Result<String> {
    let values = results.runs.iter().map(|r| r.throughput).collect();
    grouped_bars(
        "Throughput by scheme",
        "ops per device second",
        &scheme_labels(results),
        &[("ops/s".into(), values)],
        BarColours::Schemes,
        thousands,
    )
}

/// Throughput per 100 ms step, one line per scheme.
///
/// # Errors
/// As [`throughput_svg`].
pub fn timeline_svg(results: &BenchResults) -> Result<String> {
    timeline_lines(
        results,
        "Throughput per interval",
        "ops per device second",
        |p| p.throughput,
    )
}

/// One figure per scheme, in run order.
fn per_scheme(results: &BenchResults, figure: fn(&RunResult) -> f64) -> Vec<f64> {
    results.runs.iter().map(figure).collect()
}

/// Mean, p95 and p99 latency per scheme.
///
/// # Errors
/// As [`throughput_svg`].
pub fn latency_svg(results: &BenchResults) -> Result<String> {
    let pick = |f: fn(&RunResult) -> f64| per_scheme(results, f);
    grouped_bars(
        "Latency by scheme (device time)",
        "ms",
        &scheme_labels(results),
        &[
            ("mean".into(), pick(|r| r.latency_ms.mean)),
            ("p95".into(), pick(|r| r.latency_ms.p95)),
            ("p99".into(), pick(|r| r.latency_ms.p99)),
        ],
        BarColours::Measures,
        three_decimals,
    )
}

fn stall_wait_svg(results: &BenchResults) -> Result<String> {
    let pick = |f: fn(&RunResult) -> f64| per_scheme(results, f);
    grouped_bars(
        "Read-stall waits: summary (device time)",
        "ms",
        &scheme_labels(results),
        &[
            ("mean".into(), pick(|r| r.read_stall_wait_ms.mean)),
            ("p99".into(), pick(|r| r.read_stall_wait_ms.p99)),
            ("max".into(), pick(|r| r.read_stall_wait_ms.max)),
        ],
        BarColours::Measures,
        three_decimals,
    )
}

/// The read-stall wait CDF per scheme that stalled (a scheme without stalls has no line).
fn stall_wait_cdf_svg(results: &BenchResults) -> Result<String> {
    let lines: Vec<CdfLine> = results
        .runs
        .iter()
        .enumerate()
        .filter(|(_, run)| !run.read_stall_wait_ms.cdf.is_empty())
        .map(|(index, run)| {
            (
                index,
                run.scheme.clone(),
                run.read_stall_wait_ms.cdf.clone(),
            )
        })
        .collect();
    latency_cdf_lines(
        "Read-stall wait CDF (device time; schemes without stalls have no line)",
        &lines,
    )
}

fn bandwidth_svg(results: &BenchResults) -> Result<String> {
    let pick = |f: fn(&RunResult) -> f64| per_scheme(results, f);
    grouped_bars(
        "Device bandwidth used against the device's peak at the run's mix",
        "MB/s (device time)",
        &scheme_labels(results),
        &[
            ("read MB/s".into(), pick(|r| r.io.read_mbps)),
            ("write MB/s".into(), pick(|r| r.io.write_mbps)),
            (
                "peak MB/s (limit)".into(),
                pick(|r| r.io.peak_mbps.unwrap_or(0.0)),
            ),
        ],
        BarColours::Measures,
        one_decimal,
    )
}

fn mutex_svg(results: &BenchResults) -> Result<String> {
    let mut names: Vec<String> = results
        .runs
        .iter()
        .flat_map(|r| r.mutex_wait_ms.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    let series: Vec<(String, Vec<f64>)> = names
        .iter()
        .map(|name| {
            let values = results
                .runs
                .iter()
                .map(|r| r.mutex_wait_ms.get(name).copied().unwrap_or(f64::NAN))
                .collect();
            (name.clone(), values)
        })
        .collect();
    grouped_bars(
        "Mutex waits per list mutex (real time)",
        "ms waited, all threads",
        &scheme_labels(results),
        &series,
        BarColours::Measures,
        one_decimal,
    )
}

/// Escapes text for XML/HTML.
#[must_use]
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The plots of the report, in order: (id, heading, SVG). After the common ones: for record
/// workloads a latency CDF per transaction type (`latency-cdf-TYPE`), and for each scheme whose
/// timeline has the flush-rate controller's `P_scan` / `P_io`, its plot (`flush-rate-SCHEME`).
///
/// # Errors
/// As [`throughput_svg`].
pub fn report_plots(results: &BenchResults) -> Result<Vec<(String, String, String)>> {
    let mut plots: Vec<(String, String, String)> = common_plots(results)?
        .into_iter()
        .map(|(id, heading, svg)| (id.to_string(), heading.to_string(), svg))
        .collect();
    for type_name in record_types(results) {
        plots.push((
            format!("latency-cdf-{type_name}"),
            format!("Latency CDF: {type_name}"),
            type_cdf_svg(results, &type_name)?,
        ));
    }
    for (index, run) in results.runs.iter().enumerate() {
        if has_flush_rate(run) {
            plots.push((
                format!("flush-rate-{}", run.scheme),
                format!("Flush-rate controller: {}", run.scheme),
                flush_rate_svg(run, index)?,
            ));
        }
    }
    Ok(plots)
}

/// The plots every report has.
fn common_plots(results: &BenchResults) -> Result<Vec<(&'static str, &'static str, String)>> {
    Ok(vec![
        ("throughput", "Throughput", throughput_svg(results)?),
        (
            "timeline-throughput",
            "Timeline: throughput",
            timeline_svg(results)?,
        ),
        (
            "timeline-free",
            "Timeline: free frames",
            timeline_lines(
                results,
                "Free frames at the end of each interval",
                "frames",
                |p| p.free_frames as f64,
            )?,
        ),
        (
            "timeline-dirty",
            "Timeline: dirty pages",
            timeline_lines(
                results,
                "Dirty pages at the end of each interval",
                "pages",
                |p| p.dirty_pages as f64,
            )?,
        ),
        (
            "timeline-stalls",
            "Timeline: read stalls",
            timeline_lines(results, "Read stalls per interval", "read stalls", |p| {
                p.read_stalls as f64
            })?,
        ),
        ("latency-cdf", "Latency CDF", latency_cdf_svg(results)?),
        ("latency-bars", "Latency summary", latency_svg(results)?),
        ("stall-waits", "Read-stall waits", stall_wait_svg(results)?),
        (
            "stall-wait-cdf",
            "Read-stall wait distribution",
            stall_wait_cdf_svg(results)?,
        ),
        ("bandwidth", "Device bandwidth", bandwidth_svg(results)?),
        ("mutex", "Mutex waits", mutex_svg(results)?),
    ])
}

fn setup_html(out: &mut String, results: &BenchResults) {
    let header = &results.header;
    let _ = writeln!(out, "<h2>Setup</h2>\n<table class=\"kv\">");
    let mut row = |key: &str, value: String| {
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(key),
            escape(&value)
        );
    };
    row("command line", header.command_line.clone());
    row(
        "flashbuf",
        format!(
            "{}, {}, {} host cores",
            header.version_and_build(),
            header.date,
            header.host_cores
        ),
    );
    row("time base", header.time_base.clone());
    if let Some(first) = results.runs.first() {
        row("data device", first.device.clone());
        if let Some(profile) = first
            .device
            .strip_prefix("emu:")
            .and_then(|rest| rest.split(',').next())
            .and_then(crate::device::emulated::profile::profile_description)
        {
            row("device profile", profile.to_string());
        }
        row(
            "log device",
            first.log_device.clone().unwrap_or_else(|| "none".into()),
        );
        row("model host", first.model_host.clone());
        row(
            "workload",
            format!(
                "{} (reads {:.0}%, locality {}), {} threads",
                first.workload,
                first.read_ratio * 100.0,
                first.locality,
                first.threads
            ),
        );
        row(
            "database and buffer",
            format!(
                "{} pages of {} bytes, buffer {} frames",
                first.db_pages, first.page_size, first.buffer_pages
            ),
        );
        row(
            "phases",
            format!(
                "warm-up {:.1} s, measured {:.1} s (device time), time scale {}",
                first.warmup_s, first.duration_s, first.time_scale
            ),
        );
    }
    for run in &results.runs {
        let decisions =
            Composition::parse(&run.scheme).map_or_else(|err| err.to_string(), |c| c.decisions());
        row(&format!("scheme {}", run.scheme), decisions);
    }
    for run in &results.runs {
        row(
            &format!("config of {}", run.scheme),
            config_diff_text(&run.config_diff),
        );
    }
    for run in &results.runs {
        row(
            &format!("steady {}", run.scheme),
            run.steadiness.verdict.clone(),
        );
    }
    let _ = writeln!(out, "</table>");
}

/// A scheme's differences from the default pool config, or `none`.
fn config_diff_text(diffs: &[super::report::ConfigDiff]) -> String {
    if diffs.is_empty() {
        return "none (the defaults: `flashbuf config --default`)".to_string();
    }
    diffs
        .iter()
        .map(|d| {
            format!(
                "{} = {} (default {}, from the {})",
                d.key, d.value, d.default, d.source
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The start of a self-contained report page: doctype, `title` (escaped), the style every
/// report shares plus `extra_css`, and the opening `<body>`.
pub(crate) fn html_head(title: &str, extra_css: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{}</title>\n<style>\
         body{{font-family:sans-serif;margin:2em;max-width:1350px}}\
         pre{{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}}\
         p.note{{margin:.2em 0;font-size:14px}}{TABLE_CSS}\
         {extra_css}</style></head><body>\n",
        escape(title)
    )
}

/// The HTML report: setup, table with its columns explained, and every plot inline.
///
/// # Errors
/// As [`throughput_svg`].
pub fn report_html(results: &BenchResults) -> Result<String> {
    let mut out = html_head(
        "flashbuf bench report",
        "table.kv th{text-align:left;padding-right:1em;vertical-align:top}\
         dt{font-weight:bold;font-family:monospace}dd{margin:0 0 .4em 2em}figure{margin:1em 0}",
    );
    out = out.replace("</style>", &format!("{}</style>", super::regime::CSS));
    let _ = writeln!(out, "<h1>flashbuf bench report</h1>");
    setup_html(&mut out, results);
    let _ = writeln!(out, "<h2>Comparison</h2>");
    out.push_str(&comparison_html(&comparison(results)));
    let _ = writeln!(
        out,
        "<p class=\"note\">Click a column's header to sort by it; hover over it for its \
         meaning.</p>"
    );
    let _ = writeln!(out, "<h3>Columns</h3>\n<dl>");
    for (name, meaning) in COLUMNS {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(name), escape(meaning));
    }
    let _ = writeln!(out, "</dl>");
    out.push_str(&super::regime::html(&results.runs));
    out.push_str(&super::regime::tail_html(&results.runs));
    for failure in &results.failures {
        let _ = writeln!(
            out,
            "<p><b>{} failed:</b> {}</p>",
            escape(&failure.scheme),
            escape(&failure.error)
        );
    }
    for (id, heading, svg) in report_plots(results)? {
        let id = escape(&id);
        let _ = writeln!(
            out,
            "<h2 id=\"{id}\">{}</h2>\n<figure class=\"plot\" data-plot=\"{id}\">{}</figure>",
            escape(&heading),
            strip_xml_declaration(&svg)
        );
    }
    let _ = writeln!(out, "<p>Raw figures: results.json next to this file.</p>");
    out.push_str(SORT_SCRIPT);
    out.push_str("</body></html>\n");
    Ok(out)
}

/// Inline SVG in HTML must not carry an XML declaration.
pub(crate) fn strip_xml_declaration(svg: &str) -> &str {
    match svg.strip_prefix("<?xml") {
        Some(rest) => rest
            .find("?>")
            .map_or(svg, |end| rest[end + 2..].trim_start()),
        None => svg,
    }
}

/// Writes results.json, the SVG plots and report.html into `dir` (created if missing).
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_report_dir(dir: &Path, results: &BenchResults) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|err| Error::io(format!("creating {}", dir.display()), err))?;
    results.write_json(&dir.join("results.json"))?;
    let files = [
        ("throughput.svg", throughput_svg(results)?),
        ("timeline.svg", timeline_svg(results)?),
        ("latency.svg", latency_svg(results)?),
        ("report.html", report_html(results)?),
    ];
    write_files(dir, files)
}

/// Writes each `(file name, text)` into `dir`.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub(crate) fn write_files<'a>(
    dir: &Path,
    files: impl IntoIterator<Item = (&'a str, String)>,
) -> Result<()> {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|err| Error::io(format!("writing {}", path.display()), err))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_keep_their_magnitude() {
        assert_eq!(log_tick(0.0001), "0.0001");
        assert_eq!(log_tick(0.01), "0.01");
        assert_eq!(log_tick(0.5), "0.5");
        assert_eq!(log_tick(10.0), "10.0");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("<a&b>"), "&lt;a&amp;b&gt;");
    }

    #[test]
    fn strips_the_xml_declaration() {
        assert_eq!(
            strip_xml_declaration("<?xml version=\"1.0\"?>\n<svg/>"),
            "<svg/>"
        );
        assert_eq!(strip_xml_declaration("<svg/>"), "<svg/>");
    }
}
