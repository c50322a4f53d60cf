//! The sweep's report: one line plot per metric ([`super::metrics::METRICS`]; x = the
//! parameter's values in sweep order, evenly spaced and labelled with the value as given; one
//! line per scheme), drawn with `plotters`' SVG backend, and report.html embedding them with
//! the setup and the printed table. [`line_chart`] is also what `reproduce` draws its paper vs
//! measured plots with.
//!
//! Pure functions build strings; [`write_sweep_dir`] writes them. Bounds: one element per
//! scheme and point; a missing value (a failed scheme) breaks the line there.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use super::metrics::METRICS;
use super::results::SweepResults;
use crate::bench::plot::{COLOURS, escape, html_head, plot_error, strip_xml_declaration, tick};
use crate::error::{Error, Result};

/// Width and height of a plot in pixels.
const SIZE: (u32, u32) = (640, 340);

/// One line of a chart: a name, a colour index, dashed or not, one optional value per x label.
#[derive(Debug, Clone)]
pub struct Line {
    /// Legend text.
    pub name: String,
    /// Colour index (same index, same colour).
    pub colour: usize,
    /// Drawn dashed (e.g. the paper's values beside ours).
    pub dashed: bool,
    /// One value per x label (`None`: no value there).
    pub values: Vec<Option<f64>>,
    /// Join the points across a missing value (a quick run's skipped points) rather than
    /// break the line there (a failed run).
    pub join_gaps: bool,
}

/// Dash segments between two points in pixel-free data space: `parts` alternate on/off pieces.
fn dashes(a: (f64, f64), b: (f64, f64), parts: usize) -> Vec<Vec<(f64, f64)>> {
    let at = |t: f64| (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
    (0..parts)
        .step_by(2)
        .map(|k| {
            vec![
                at(k as f64 / parts as f64),
                at((k + 1) as f64 / parts as f64),
            ]
        })
        .collect()
}

/// A line chart over categorical x labels: each [`Line`] drawn with dots, broken where a value
/// is missing; a legend in the upper right.
///
/// # Errors
/// Drawing errors (not expected when drawing into a string).
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    labels: &[String],
    lines: &[Line],
) -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let y_data_max = lines
            .iter()
            .flat_map(|l| l.values.iter().flatten())
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        // Headroom for the legend: 7% per entry above the data.
        let y_max = (y_data_max * (1.1 + 0.07 * lines.len() as f64)).max(1e-6);
        let x_max = labels.len().max(1) as f64 - 0.5;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(62)
            .build_cartesian_2d(-0.5..x_max, 0.0..y_max)
            .map_err(plot_error)?;
        let label_of = |x: &f64| {
            let index = x.round();
            if (x - index).abs() < 1e-6 && index >= 0.0 {
                labels.get(index as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_labels(labels.len() * 2 + 1)
            .x_label_formatter(&label_of)
            .x_desc(x_label)
            .y_desc(y_label)
            .y_label_formatter(&|y| tick(*y))
            .draw()
            .map_err(plot_error)?;
        for line in lines {
            draw_line(&mut chart, line)?;
        }
        if !lines.is_empty() {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(plot_error)?;
        }
        root.present().map_err(plot_error)?;
    }
    Ok(out)
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_line(chart: &mut Chart<'_, '_>, line: &Line) -> Result<()> {
    let c = COLOURS[line.colour % COLOURS.len()];
    let points: Vec<(f64, f64)> = line
        .values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.filter(|v| v.is_finite()).map(|v| (i as f64, v)))
        .collect();
    // Segments join neighbours only (a missing value breaks the line), unless `join_gaps`.
    let mut segments: Vec<Vec<(f64, f64)>> = Vec::new();
    for pair in points.windows(2) {
        if line.join_gaps || (pair[1].0 - pair[0].0 - 1.0).abs() < 1e-9 {
            if line.dashed {
                segments.extend(dashes(pair[0], pair[1], 9));
            } else {
                segments.push(vec![pair[0], pair[1]]);
            }
        }
    }
    let style = c.stroke_width(2);
    chart
        .draw_series(segments.into_iter().map(|s| PathElement::new(s, style)))
        .map_err(plot_error)?;
    let dashed = line.dashed;
    let marks = points.iter().map(move |&p| {
        if dashed {
            EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], c.stroke_width(2))
        } else {
            EmptyElement::at(p) + Rectangle::new([(-3, -3), (3, 3)], c.filled())
        }
    });
    chart
        .draw_series(marks)
        .map_err(plot_error)?
        .label(line.name.as_str())
        .legend(move |(x, y)| {
            if dashed {
                PathElement::new(vec![(x, y), (x + 6, y)], c.stroke_width(2))
            } else {
                PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
            }
        });
    Ok(())
}

/// One SVG per metric that has at least one value: (metric id, title, svg).
///
/// # Errors
/// As [`line_chart`].
pub fn sweep_plots(sweep: &SweepResults) -> Result<Vec<(&'static str, &'static str, String)>> {
    let labels: Vec<String> = sweep.points.iter().map(|p| p.value.clone()).collect();
    let mut plots = Vec::new();
    for metric in METRICS {
        let lines: Vec<Line> = sweep
            .series
            .iter()
            .enumerate()
            .map(|(k, series)| Line {
                name: series.scheme.clone(),
                colour: k,
                dashed: false,
                join_gaps: false,
                values: series
                    .rows
                    .iter()
                    .map(|row| row.metrics.get(metric.id).copied())
                    .collect(),
            })
            .collect();
        if lines.iter().all(|l| l.values.iter().all(Option::is_none)) {
            continue;
        }
        let svg = line_chart(metric.title, &sweep.param, metric.y_label, &labels, &lines)?;
        plots.push((metric.id, metric.title, svg));
    }
    Ok(plots)
}

/// The sweep's report.html: setup, the table, a grid of line plots (inline SVG, offline).
///
/// # Errors
/// As [`line_chart`].
pub fn sweep_html(sweep: &SweepResults) -> Result<String> {
    let mut out = html_head(
        "flashbuf sweep report",
        ".grid{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0}",
    );
    let _ = writeln!(
        out,
        "<h1>flashbuf sweep: {}</h1>\n<p>{} &mdash; values {}. Command: <code>{}</code>. \
         flashbuf {}, {} host cores, {}. {}</p>",
        escape(&sweep.param),
        escape(&sweep.param_sets),
        escape(&sweep.values.join(", ")),
        escape(&sweep.header.command_line),
        escape(&sweep.header.flashbuf_version),
        sweep.header.host_cores,
        escape(&sweep.header.date),
        escape(&sweep.header.time_base)
    );
    if let Some(run) = sweep
        .points
        .iter()
        .filter_map(|p| p.results.as_ref())
        .find_map(|r| r.runs.first())
    {
        let _ = writeln!(
            out,
            "<p>Workload {} (reads {:.0}%, locality {}), device {}, log {}, {} threads, \
             {:.1} s measured per scheme (device time), model host {}.</p>",
            escape(&run.workload),
            run.read_ratio * 100.0,
            escape(&run.locality),
            escape(&run.device),
            escape(run.log_device.as_deref().unwrap_or("none")),
            run.threads,
            run.duration_s,
            escape(&run.model_host)
        );
    }
    let _ = writeln!(
        out,
        "<h2>Table</h2>\n<pre>{}</pre>",
        escape(&sweep.format_table())
    );
    for point in &sweep.points {
        for failure in point.results.iter().flat_map(|r| r.failures.iter()) {
            let _ = writeln!(
                out,
                "<p><b>{} = {}: {} failed:</b> {}</p>",
                escape(&sweep.param),
                escape(&point.value),
                escape(&failure.scheme),
                escape(&failure.error)
            );
        }
    }
    let _ = writeln!(
        out,
        "<h2>Metrics by {}</h2>\n<div class=\"grid\">",
        escape(&sweep.param)
    );
    for (id, _title, svg) in sweep_plots(sweep)? {
        let _ = writeln!(
            out,
            "<figure class=\"plot\" data-plot=\"{id}\">{}</figure>",
            strip_xml_declaration(&svg)
        );
    }
    let _ = writeln!(
        out,
        "</div>\n<p>Raw figures: sweep.json next to this file (every point's full results and \
         the per-scheme series).</p></body></html>"
    );
    Ok(out)
}

/// Writes sweep.json, one SVG per metric (`sweep-METRIC.svg`) and report.html into `dir`.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_sweep_dir(dir: &Path, sweep: &SweepResults) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|err| Error::io(format!("creating {}", dir.display()), err))?;
    sweep.write_json(&dir.join("sweep.json"))?;
    let mut files: Vec<(String, String)> = sweep_plots(sweep)?
        .into_iter()
        .map(|(id, _, svg)| (format!("sweep-{id}.svg"), svg))
        .collect();
    files.push(("report.html".into(), sweep_html(sweep)?));
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|err| Error::io(format!("writing {}", path.display()), err))?;
    }
    Ok(())
}
