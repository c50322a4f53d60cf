//! Hand-written SVG plots and an HTML report for `bench --out DIR`.
//!
//! Writes into DIR: `results.json`, `throughput.svg` (bars per scheme, device time),
//! `timeline.svg` (per-second throughput lines per scheme), `latency.svg` (grouped bars of mean,
//! p95, p99 per scheme, device time) and `report.html` (the table and the three plots).
//!
//! Pure functions build each SVG as a string (no I/O); [`write_report_dir`] writes them.
//! Bounds: one element per scheme, per timeline point, per axis tick (5).

use std::fmt::Write as _;
use std::path::Path;

use super::report::{BenchResults, format_table};
use crate::error::{Error, Result};

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLOURS: &[&str] = &[
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

fn colour(index: usize) -> &'static str {
    COLOURS
        .get(index % COLOURS.len())
        .copied()
        .unwrap_or("#000")
}

/// Escapes text for XML/HTML.
#[must_use]
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A "nice" upper bound for an axis (1, 2 or 5 times a power of ten, at least `max`).
fn nice_max(max: f64) -> f64 {
    if !(max.is_finite() && max > 0.0) {
        return 1.0;
    }
    let magnitude = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|step| step * magnitude)
        .find(|bound| *bound >= max)
        .unwrap_or(10.0 * magnitude)
}

fn svg_open(out: &mut String, title: &str, y_label: &str) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
    let _ = writeln!(
        out,
        r#"<text transform="translate(16,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + (HEIGHT - TOP - BOTTOM) / 2.0,
        escape(y_label)
    );
}

/// Draws the y axis with 5 ticks up to `y_max`, and the x axis line.
fn axes(out: &mut String, y_max: f64) {
    let plot_h = HEIGHT - TOP - BOTTOM;
    for tick in 0..=5 {
        let value = y_max * f64::from(tick) / 5.0;
        let y = TOP + plot_h - plot_h * f64::from(tick) / 5.0;
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            short_number(value)
        );
    }
    let _ = writeln!(
        out,
        r#"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="black"/>"#,
        TOP + plot_h,
        WIDTH - RIGHT,
        TOP + plot_h
    );
}

fn short_number(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.1}M", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.1}k", value / 1e3)
    } else if value >= 10.0 || value == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

fn legend(out: &mut String, names: &[&str]) {
    for (index, name) in names.iter().enumerate() {
        let y = TOP + 18.0 * index as f64;
        let x = WIDTH - RIGHT + 12.0;
        let _ = writeln!(
            out,
            r#"<rect x="{x}" y="{y}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            colour(index),
            x + 16.0,
            y + 10.0,
            escape(name)
        );
    }
}

/// Bar chart of throughput per scheme.
#[must_use]
pub fn throughput_svg(results: &BenchResults) -> String {
    let values: Vec<(&str, f64)> = results
        .runs
        .iter()
        .map(|run| (run.scheme.as_str(), run.throughput))
        .collect();
    let mut out = String::new();
    svg_open(&mut out, "Throughput by scheme", "ops/s (device time)");
    let y_max = nice_max(values.iter().map(|(_, v)| *v).fold(0.0, f64::max));
    axes(&mut out, y_max);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let slot = plot_w / values.len().max(1) as f64;
    for (index, (name, value)) in values.iter().enumerate() {
        let h = plot_h * value / y_max;
        let x = LEFT + slot * index as f64 + slot * 0.15;
        let _ = writeln!(
            out,
            r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{}: {value:.0}</title></rect>"#,
            TOP + plot_h - h,
            slot * 0.7,
            colour(index),
            escape(name)
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            x + slot * 0.35,
            TOP + plot_h + 16.0,
            escape(name)
        );
    }
    out.push_str("</svg>\n");
    out
}

/// Lines of per-second throughput per scheme.
#[must_use]
pub fn timeline_svg(results: &BenchResults) -> String {
    let mut out = String::new();
    svg_open(&mut out, "Throughput over time", "ops/s (device time)");
    let y_max = nice_max(
        results
            .runs
            .iter()
            .flat_map(|run| run.timeline.iter().map(|p| p.throughput))
            .fold(0.0, f64::max),
    );
    let t_max = results
        .runs
        .iter()
        .flat_map(|run| run.timeline.iter().map(|p| p.t_s))
        .fold(0.0, f64::max)
        .max(1.0);
    axes(&mut out, y_max);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    for (index, run) in results.runs.iter().enumerate() {
        let points: Vec<String> = run
            .timeline
            .iter()
            .map(|p| {
                format!(
                    "{:.1},{:.1}",
                    LEFT + plot_w * p.t_s / t_max,
                    TOP + plot_h - plot_h * p.throughput / y_max
                )
            })
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>"#,
            colour(index),
            points.join(" ")
        );
    }
    for tick in 0..=5 {
        let t = t_max * f64::from(tick) / 5.0;
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{t:.1}</text>"#,
            LEFT + plot_w * f64::from(tick) / 5.0,
            TOP + plot_h + 16.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">seconds into the measured phase (real time)</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 16.0
    );
    let names: Vec<&str> = results.runs.iter().map(|r| r.scheme.as_str()).collect();
    legend(&mut out, &names);
    out.push_str("</svg>\n");
    out
}

/// Grouped bars of mean, p95 and p99 latency per scheme.
#[must_use]
pub fn latency_svg(results: &BenchResults) -> String {
    let mut out = String::new();
    svg_open(&mut out, "Latency by scheme", "ms (device time)");
    let y_max = nice_max(
        results
            .runs
            .iter()
            .map(|run| run.latency_ms.p99.max(run.latency_ms.mean))
            .fold(0.0, f64::max),
    );
    axes(&mut out, y_max);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let slot = plot_w / results.runs.len().max(1) as f64;
    for (index, run) in results.runs.iter().enumerate() {
        let bars = [run.latency_ms.mean, run.latency_ms.p95, run.latency_ms.p99];
        for (k, value) in bars.iter().enumerate() {
            let h = plot_h * value / y_max;
            let x = LEFT + slot * index as f64 + slot * (0.1 + 0.27 * k as f64);
            let _ = writeln!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{}"><title>{} {}: {value:.3} ms</title></rect>"#,
                TOP + plot_h - h,
                slot * 0.25,
                colour(k),
                escape(&run.scheme),
                ["mean", "p95", "p99"][k]
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + slot * (index as f64 + 0.5),
            TOP + plot_h + 16.0,
            escape(&run.scheme)
        );
    }
    legend(&mut out, &["mean", "p95", "p99"]);
    out.push_str("</svg>\n");
    out
}

/// The HTML report: header, table, plots.
#[must_use]
pub fn report_html(results: &BenchResults) -> String {
    let header = &results.header;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>flashbuf bench report</title>\
         <style>body{{font-family:sans-serif;margin:2em}}pre{{background:#f6f6f6;padding:1em}}\
         </style></head><body>"
    );
    let _ = writeln!(out, "<h1>flashbuf bench report</h1>");
    let _ = writeln!(
        out,
        "<p>flashbuf {} &middot; {} &middot; {} cores<br><code>{}</code></p><p>{}</p>",
        escape(&header.flashbuf_version),
        escape(&header.date),
        header.host_cores,
        escape(&header.command_line),
        escape(&header.time_base)
    );
    let _ = writeln!(out, "<pre>{}</pre>", escape(&format_table(results)));
    for (file, alt) in [
        ("throughput.svg", "throughput"),
        ("timeline.svg", "timeline"),
        ("latency.svg", "latency"),
    ] {
        let _ = writeln!(out, "<p><img src=\"{file}\" alt=\"{alt}\"></p>");
    }
    let _ = writeln!(
        out,
        "<p>Raw figures: <a href=\"results.json\">results.json</a></p></body></html>"
    );
    out
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
        ("throughput.svg", throughput_svg(results)),
        ("timeline.svg", timeline_svg(results)),
        ("latency.svg", latency_svg(results)),
        ("report.html", report_html(results)),
    ];
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
    fn nice_bounds_cover_the_maximum() {
        assert!((nice_max(0.0) - 1.0).abs() < 1e-12);
        assert!((nice_max(7.0) - 10.0).abs() < 1e-12);
        assert!((nice_max(1200.0) - 2000.0).abs() < 1e-9);
        assert!((nice_max(0.03) - 0.05).abs() < 1e-12);
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("<a&b>"), "&lt;a&amp;b&gt;");
    }
}
