//! The sweep's report: one plot per metric ([`super::metrics::METRICS`]; x = the parameter's
//! values in sweep order, evenly spaced and labelled with the value as given; one series per
//! scheme in its scheme colour), drawn with `plotters`' SVG backend, and report.html embedding
//! them with the setup and the printed table. Ordered parameters (buffer, threads, ...) get
//! lines; categorical ones (devices) get markers only, side by side, never a line joining one
//! device to the next. [`line_chart`] and [`bar_chart`] are also what `reproduce` draws its
//! paper vs measured plots with. Legends go below the plot, never over the data.
//!
//! A two-parameter sweep also gets a heat map per scheme after the first
//! ([`super::heatmap`]) and its grid tables (in the table).
//!
//! Pure functions build strings; [`write_sweep_dir`] writes them. Bounds: one element per
//! scheme and point; a missing value (a failed scheme) breaks the line there.

use std::fmt::Write as _;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::metrics::METRICS;
use super::results::SweepResults;
use crate::bench::chart::{
    BarStyle, Hatch, LEGEND_LINE, LegendEntry, LegendLayout, Mark, TICK_FONT, desc_font, draw_bar,
    draw_legend, legend_rows, scheme_colour,
};
use crate::bench::plot::{escape, html_head, plot_error, strip_xml_declaration, tick};
use crate::error::{Error, Result};

/// Width and height of a plot in pixels, without its legend (below it).
const SIZE: (u32, u32) = (640, 340);

/// Width of one legend entry below a plot: its longest text at 7 pixels a character (13-point
/// sans-serif is narrower) plus the mark, so entries never run into each other.
fn legend_cell(legend: &[LegendEntry]) -> u32 {
    let longest = legend
        .iter()
        .map(|entry| entry.name.chars().count())
        .max()
        .unwrap_or(0);
    (longest as u32 * 7 + 40).clamp(120, SIZE.0 - 40)
}

/// One line of a chart: a name, a colour index, dashed or not, one optional value per x label.
#[derive(Debug, Clone)]
pub struct Line {
    /// Legend text.
    pub name: String,
    /// Scheme colour index (same index, same colour).
    pub colour: usize,
    /// Drawn dashed with hollow markers (e.g. the paper's values beside ours).
    pub dashed: bool,
    /// One value per x label (`None`: no value there).
    pub values: Vec<Option<f64>>,
    /// Join the points across a missing value (a quick run's skipped points) rather than
    /// break the line there (a failed run).
    pub join_gaps: bool,
}

/// What the x labels of a chart are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// Ordered values (buffer sizes, thread counts): points joined by lines.
    Ordered,
    /// Categories (devices, schemes): markers only, each series a little apart.
    Categorical,
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

/// Draws an SVG of [`SIZE`] plus a legend of `legend` below it.
fn svg_with_legend(
    legend: &[LegendEntry],
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<()>,
) -> Result<String> {
    let cell = legend_cell(legend);
    let rows = legend_rows(legend.len(), SIZE.0 - 40, cell);
    let height = SIZE.1 + rows * LEGEND_LINE + if rows > 0 { 8 } else { 0 };
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (SIZE.0, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (plot, below) = root.split_vertically(SIZE.1);
        draw(&plot)?;
        let (_, legend_area) = below.split_horizontally(40);
        draw_legend(&legend_area, legend, LegendLayout::Rows(cell))?;
        root.present().map_err(plot_error)?;
    }
    Ok(out)
}

/// The largest finite value, 0 when none.
fn data_max<'a>(values: impl Iterator<Item = &'a Option<f64>>) -> f64 {
    values
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

/// Builds the chart of a categorical x axis (`labels` at 0, 1, ...) and draws its mesh with
/// every label under its slot; the y axis description fits the plot's height.
fn categorical_chart<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    labels: &[String],
    y_max: f64,
) -> Result<Chart<'a, 'b>> {
    let x_max = labels.len().max(1) as f64 - 0.5;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(48)
        .y_label_area_size(62)
        .build_cartesian_2d(-0.5..x_max, 0.0..y_max.max(1e-6))
        .map_err(plot_error)?;
    let label_of = |x: &f64| {
        let index = x.round();
        if (x - index).abs() < 1e-6 && index >= 0.0 {
            labels.get(index as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let desc = desc_font(y_label, chart.plotting_area().dim_in_pixel().1);
    chart
        .configure_mesh()
        .x_labels(labels.len() * 2 + 1)
        .x_label_formatter(&label_of)
        .x_desc(x_label)
        .y_desc(y_label)
        .axis_desc_style(desc)
        .label_style(TICK_FONT)
        .y_label_formatter(&|y| tick(*y))
        .draw()
        .map_err(plot_error)?;
    Ok(chart)
}

/// A chart over categorical x labels: each [`Line`] drawn with markers, joined by a line
/// ([`XAxis::Ordered`], broken where a value is missing) or not ([`XAxis::Categorical`]);
/// the legend below.
///
/// # Errors
/// Drawing errors (not expected when drawing into a string).
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    labels: &[String],
    lines: &[Line],
    x_axis: XAxis,
) -> Result<String> {
    let legend: Vec<LegendEntry> = lines
        .iter()
        .map(|line| LegendEntry {
            name: line.name.clone(),
            mark: match x_axis {
                XAxis::Ordered => Mark::Line {
                    colour: scheme_colour(line.colour),
                    dashed: line.dashed,
                    marker: true,
                },
                XAxis::Categorical => Mark::Marker {
                    colour: scheme_colour(line.colour),
                    hollow: line.dashed,
                },
            },
        })
        .collect();
    svg_with_legend(&legend, |root| {
        let y_max = data_max(lines.iter().flat_map(|l| l.values.iter())) * 1.1;
        let mut chart = categorical_chart(root, title, x_label, y_label, labels, y_max)?;
        for (index, line) in lines.iter().enumerate() {
            let offset = match x_axis {
                XAxis::Ordered => None,
                XAxis::Categorical => Some(spread(index, lines.len())),
            };
            draw_line(&mut chart, line, offset)?;
        }
        Ok(())
    })
}

/// Where series `index` of `count` sits beside its category's slot: spread over at most
/// +-0.3, so the markers of one category do not hide each other.
fn spread(index: usize, count: usize) -> f64 {
    let step = (0.6 / count.max(1) as f64).min(0.15);
    (index as f64 - (count.saturating_sub(1)) as f64 / 2.0) * step
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Draws `line`: joined by segments, or (`offset`: categorical x) markers alone moved by it.
fn draw_line(chart: &mut Chart<'_, '_>, line: &Line, offset: Option<f64>) -> Result<()> {
    let c = scheme_colour(line.colour);
    let points: Vec<(f64, f64)> = line
        .values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            v.filter(|v| v.is_finite())
                .map(|v| (i as f64 + offset.unwrap_or(0.0), v))
        })
        .collect();
    // Segments join neighbours only (a missing value breaks the line), unless `join_gaps`.
    let mut segments: Vec<Vec<(f64, f64)>> = Vec::new();
    if offset.is_none() {
        for pair in points.windows(2) {
            if line.join_gaps || (pair[1].0 - pair[0].0 - 1.0).abs() < 1e-9 {
                if line.dashed {
                    segments.extend(dashes(pair[0], pair[1], 9));
                } else {
                    segments.push(vec![pair[0], pair[1]]);
                }
            }
        }
    }
    let style = c.stroke_width(2);
    chart
        .draw_series(segments.into_iter().map(|s| PathElement::new(s, style)))
        .map_err(plot_error)?;
    let dashed = line.dashed;
    let half = if offset.is_some() { 5 } else { 3 };
    let marks = points.iter().map(move |&p| {
        if dashed {
            EmptyElement::at(p) + Rectangle::new([(-half, -half), (half, half)], c.stroke_width(2))
        } else {
            EmptyElement::at(p) + Rectangle::new([(-half, -half), (half, half)], c.filled())
        }
    });
    chart.draw_series(marks).map_err(plot_error)?;
    Ok(())
}

/// One series of a [`bar_chart`]: a name, hatched or solid, one optional value per group.
#[derive(Debug, Clone)]
pub struct BarSeries {
    /// Legend text.
    pub name: String,
    /// Drawn as a light hatched bar (e.g. the paper's values) rather than a solid one.
    pub hatched: bool,
    /// One value per group (`None`: no bar there).
    pub values: Vec<Option<f64>>,
}

/// A bar's value on top of it: whole numbers from 100 up, else two decimals (a paper's
/// `1.29x` must not read `1.3`).
fn bar_label(value: f64) -> String {
    if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// `colour` faded towards white, keeping `share` of it.
fn tint(colour: RGBColor, share: f64) -> RGBColor {
    let fade = |c: u8| (255.0 - (255.0 - f64::from(c)) * share).round() as u8;
    RGBColor(fade(colour.0), fade(colour.1), fade(colour.2))
}

/// How a bar of `series` is drawn in the colour `colour`.
fn bar_style(colour: RGBColor, hatched: bool) -> BarStyle {
    if hatched {
        BarStyle {
            fill: tint(colour, 0.35),
            hatch: Hatch::Slash,
        }
    } else {
        BarStyle {
            fill: colour,
            hatch: Hatch::None,
        }
    }
}

/// Bars over categorical groups that are schemes: group `g` in the scheme colour
/// `group_colours[g]`, one bar per series (solid or hatched), each with its value on top; the
/// legend (below) tells the series apart by their pattern, in grey.
///
/// # Errors
/// Drawing errors (not expected when drawing into a string).
pub fn bar_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    labels: &[String],
    group_colours: &[usize],
    series: &[BarSeries],
) -> Result<String> {
    let legend: Vec<LegendEntry> = series
        .iter()
        .map(|s| LegendEntry {
            name: s.name.clone(),
            mark: Mark::Bar(bar_style(RGBColor(0x60, 0x60, 0x60), s.hatched)),
        })
        .collect();
    svg_with_legend(&legend, |root| {
        let y_max = data_max(series.iter().flat_map(|s| s.values.iter())) * 1.12;
        let mut chart = categorical_chart(root, title, x_label, y_label, labels, y_max)?;
        let width = 0.8 / series.len().max(1) as f64;
        let base = root.get_base_pixel();
        let label_style = TextStyle::from(("sans-serif", 12).into_font())
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        let mut texts = Vec::new();
        for (k, s) in series.iter().enumerate() {
            for (group, value) in s.values.iter().enumerate() {
                let Some(value) = value.filter(|v| v.is_finite()) else {
                    continue;
                };
                let x0 = group as f64 - 0.4 + width * k as f64;
                let pixel = |point: (f64, f64)| {
                    let (x, y) = chart.backend_coord(&point);
                    (x - base.0, y - base.1)
                };
                let colour = scheme_colour(group_colours.get(group).copied().unwrap_or(group));
                draw_bar(
                    root,
                    pixel((x0 + width * 0.04, 0.0)),
                    pixel((x0 + width * 0.96, value)),
                    bar_style(colour, s.hatched),
                )?;
                texts.push(Text::new(
                    bar_label(value),
                    (x0 + width / 2.0, value + y_max * 0.005),
                    label_style.clone(),
                ));
            }
        }
        chart.draw_series(texts).map_err(plot_error)?;
        Ok(())
    })
}

/// How a sweep of the parameter `param` is plotted ([`XAxis`]).
#[must_use]
pub fn x_axis(param: &str) -> XAxis {
    if super::params::is_categorical(param) {
        XAxis::Categorical
    } else {
        XAxis::Ordered
    }
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
        let svg = line_chart(
            metric.title,
            &sweep.param,
            metric.y_label,
            &labels,
            &lines,
            x_axis(&sweep.param),
        )?;
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
        escape(&sweep.header.version_and_build()),
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
    for (id, _title, svg) in super::heatmap::grid_heat_maps(sweep)? {
        let _ = writeln!(
            out,
            "<figure class=\"plot\" data-plot=\"{}\">{}</figure>",
            escape(&id),
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
    files.extend(
        super::heatmap::grid_heat_maps(sweep)?
            .into_iter()
            .map(|(id, _, svg)| (format!("sweep-{id}.svg"), svg)),
    );
    files.push(("report.html".into(), sweep_html(sweep)?));
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

    fn hex(index: usize) -> String {
        let c = scheme_colour(index);
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    /// The polylines of an SVG drawn in scheme colour `index`.
    fn coloured_lines(svg: &str, index: usize) -> usize {
        svg.split("<polyline")
            .skip(1)
            .map(|rest| &rest[..rest.find("/>").unwrap_or(rest.len())])
            .filter(|element| element.contains(&format!("stroke=\"{}\"", hex(index))))
            .count()
    }

    fn lines() -> Vec<Line> {
        (0..2)
            .map(|k| Line {
                name: format!("scheme {k}"),
                colour: k,
                dashed: k == 1,
                values: vec![Some(1.0 + k as f64), Some(2.0), Some(3.0)],
                join_gaps: false,
            })
            .collect()
    }

    #[test]
    fn categories_get_markers_and_ordered_values_lines() {
        let labels: Vec<String> = ["emu:sata", "emu:cloud", "emu:pcie"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        let categorical = line_chart(
            "t",
            "device",
            "ops/s",
            &labels,
            &lines(),
            XAxis::Categorical,
        )
        .unwrap();
        let ordered =
            line_chart("t", "buffer", "ops/s", &labels, &lines(), XAxis::Ordered).unwrap();
        for k in 0..2 {
            assert_eq!(
                coloured_lines(&categorical, k),
                0,
                "line {k} joins categories"
            );
            assert!(coloured_lines(&ordered, k) > 0, "line {k} not drawn");
            // Three markers each (plus the legend's).
            assert!(categorical.matches(&hex(k)).count() >= 4);
        }
        assert_eq!(x_axis("device"), XAxis::Categorical);
        assert_eq!(x_axis("buffer"), XAxis::Ordered);
    }

    #[test]
    fn the_legend_is_below_the_plot() {
        let labels = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let svg = line_chart("t", "x", "y", &labels, &lines(), XAxis::Ordered).unwrap();
        let legend_y: Vec<f64> = svg
            .split("<text ")
            .filter(|text| text.contains(">\nscheme "))
            .filter_map(|text| text.split("y=\"").nth(1)?.split('"').next()?.parse().ok())
            .collect();
        assert_eq!(legend_y.len(), 2, "{svg}");
        assert!(legend_y.iter().all(|y| *y > f64::from(SIZE.1)));
    }

    #[test]
    fn scheme_bars_are_hatched_for_the_paper_and_solid_for_ours() {
        let labels = vec!["vanilla".to_string(), "lru-c".to_string()];
        let series = [
            BarSeries {
                name: "paper".into(),
                hatched: true,
                values: vec![Some(10.0), Some(30.0)],
            },
            BarSeries {
                name: "ours".into(),
                hatched: false,
                values: vec![Some(12.0), None],
            },
        ];
        let svg = bar_chart("t", "scheme", "ops/s", &labels, &[0, 2], &series).unwrap();
        // Ours: solid in the scheme's colour; lru-c has no value of ours: no bar.
        assert!(svg.contains(&format!("fill=\"{}\"", hex(0))));
        assert!(!svg.contains(&format!("fill=\"{}\"", hex(2))));
        // The paper's: a tint of the scheme colour, hatched, never joined by a line.
        assert!(svg.contains(&format!(
            "fill=\"#{:02X}{:02X}{:02X}\"",
            tint(scheme_colour(2), 0.35).0,
            tint(scheme_colour(2), 0.35).1,
            tint(scheme_colour(2), 0.35).2
        )));
        for k in [0, 2] {
            assert_eq!(coloured_lines(&svg, k), 0);
        }
    }
}
