//! The report of one reproduction: report.html with the paper's values and ours side by side
//! (a table, and per metric a plot with both series: the paper's dashed, ours solid), the
//! verdict of each claim with the numbers that decided it, and the setup of both; plus
//! verdicts.json. results.json (our full sweep results) is written by the runner.
//!
//! Pure functions build strings; [`write_report_dir`] writes them. Bounds: one row per paper
//! value and per claim, one plot per metric the paper gives.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::experiment::{Experiment, PaperValue};
use super::verdict::{Measured, Outcome, Verdict};
use crate::bench::plot::{comparison_html, escape, html_head, strip_xml_declaration, write_files};
use crate::bench::report::comparison;
use crate::bench::table::SORT_SCRIPT;
use crate::error::{Error, Result};
use crate::sweep::SweepResults;
use crate::sweep::metrics;
use crate::sweep::plot::{
    BarSeries, Line, XAxis, bar_chart, line_chart, sweep_plots, x_axis as sweep_x_axis,
};

/// verdicts.json.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictsFile<'a> {
    /// The experiment.
    pub id: &'a str,
    /// Paper and figure.
    pub figure: String,
    /// Whether this was the `--quick` run.
    pub quick: bool,
    /// The command that ran.
    pub command: String,
    /// One verdict per claim.
    pub verdicts: &'a [Verdict],
}

/// One row of the side-by-side table.
struct Row {
    scheme: String,
    point: String,
    metric: &'static str,
    paper: f64,
    unit: String,
    source: String,
    ours: Option<f64>,
    /// The scheme the ratios are to (the experiment's baseline, or the one the paper's value
    /// is a ratio to).
    base: Option<String>,
    /// The paper gives this value as a ratio (`x SCHEME`, `x base`), not in a unit of ours.
    given_as_ratio: bool,
    /// Half-width of the 95% interval of `ours` (with `--repeat N`).
    ours_ci95: Option<f64>,
    paper_ratio: Option<f64>,
    ours_ratio: Option<f64>,
}

fn fmt(value: f64) -> String {
    if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// The scheme a paper value is a ratio to when its unit says it is one: `x SCHEME`, or
/// `x base` (the baseline of a claim about the scheme on this metric; for a value of 1, the
/// base itself). `None`: a value in a unit (IOPS, tpmC, ...).
fn given_ratio_base(experiment: &Experiment, value: &PaperValue) -> Option<String> {
    let named = value.unit.trim().strip_prefix("x ")?.trim();
    if named != "base" {
        return Some(named.to_string());
    }
    experiment
        .claims
        .iter()
        .filter(|claim| claim.scheme == value.scheme && claim.metric == value.metric)
        .find_map(|claim| claim.baseline.clone())
        .or_else(|| ((value.value - 1.0).abs() < 1e-9).then(|| value.scheme.clone()))
}

fn rows(experiment: &Experiment, measured: &Measured) -> Vec<Row> {
    let paper_base = |base: &str, point: &str, metric: &str| {
        experiment
            .paper_values
            .iter()
            .find(|v| v.scheme == base && v.point == point && v.metric == metric)
            .map(|v| v.value)
    };
    let ratio = |v: Option<f64>, b: Option<f64>| match (v, b) {
        (Some(v), Some(b)) if b != 0.0 => Some(v / b),
        _ => None,
    };
    let mut rows = Vec::new();
    for value in &experiment.paper_values {
        let Ok(metric) = metrics::metric(&value.metric) else {
            continue;
        };
        let given = given_ratio_base(experiment, value);
        let base = given.clone().or_else(|| experiment.baseline.clone());
        let ours = measured.get(&value.point, &value.scheme, metric.id);
        let ours_base = base
            .as_deref()
            .and_then(|base| measured.get(&value.point, base, metric.id));
        let paper_ratio = if given.is_some() {
            Some(value.value)
        } else {
            let paper_base = base
                .as_deref()
                .and_then(|base| paper_base(base, &value.point, metric.id));
            ratio(Some(value.value), paper_base)
        };
        rows.push(Row {
            scheme: value.scheme.clone(),
            point: value.point.clone(),
            metric: metric.id,
            paper: value.value,
            unit: value.unit.clone(),
            source: value.source.clone(),
            ours,
            base,
            given_as_ratio: given.is_some(),
            paper_ratio,
            ours_ci95: measured
                .interval(&value.point, &value.scheme, metric.id)
                .and_then(|interval| interval.ci95),
            ours_ratio: ratio(ours, ours_base),
        });
    }
    rows
}

/// One paper-vs-ours plot: the metric's id, the SVG, and a caption giving the paper's unit.
struct ComparisonPlot {
    id: String,
    svg: String,
    caption: String,
}

/// The table rows of one metric, and whether they are plotted as ratios to the baseline.
struct MetricRows<'a> {
    rows: Vec<&'a Row>,
    as_ratio: bool,
}

impl MetricRows<'_> {
    /// The paper's (`paper`) or our value of `scheme` at `point` (`None`: any point).
    fn value(&self, scheme: &str, point: Option<&str>, paper: bool) -> Option<f64> {
        let row = self
            .rows
            .iter()
            .find(|r| r.scheme == scheme && point.is_none_or(|p| r.point == p))?;
        match (self.as_ratio, paper) {
            (true, true) => row.paper_ratio,
            (true, false) => row.ours_ratio,
            (false, true) => Some(row.paper),
            (false, false) => row.ours,
        }
    }

    /// The schemes, in the paper's order.
    fn schemes(&self) -> Vec<String> {
        dedup(self.rows.iter().map(|r| r.scheme.clone()))
    }
}

/// Per metric the paper gives, a plot of the paper's values and ours: bars per scheme for a
/// single-point (bench) experiment, lines over the points for a sweep (markers alone when the
/// swept parameter is categorical, e.g. devices). A scheme keeps the colour it has in our
/// run's plots (its position in `schemes`); a scheme we did not run (a quick run skips some)
/// gets a colour after theirs.
fn comparison_plots(
    experiment: &Experiment,
    measured: &Measured,
    param: &str,
    schemes: &[String],
) -> Result<Vec<ComparisonPlot>> {
    let table = rows(experiment, measured);
    let metric_ids = dedup(table.iter().map(|row| row.metric.to_string()));
    let not_run = dedup(
        table
            .iter()
            .filter(|row| !schemes.contains(&row.scheme))
            .map(|row| row.scheme.clone()),
    );
    let colour_of = |scheme: &str| {
        schemes
            .iter()
            .chain(&not_run)
            .position(|s| s == scheme)
            .unwrap_or(0)
    };
    let mut plots = Vec::new();
    for id in metric_ids {
        let Ok(metric) = metrics::metric(&id) else {
            continue;
        };
        let rows: Vec<&Row> = table.iter().filter(|r| r.metric == id).collect();
        // The paper's ratios are plotted against ours (a ratio beside ops/s would be a flat
        // line at the bottom of the plot).
        let as_ratio =
            experiment.ratio_metrics.contains(&id) || rows.iter().all(|r| r.given_as_ratio);
        let of_metric = MetricRows { rows, as_ratio };
        let (y_label, caption) = if of_metric.as_ratio {
            let bases = dedup(of_metric.rows.iter().filter_map(|r| r.base.clone()));
            match bases.as_slice() {
                [base] => (
                    format!("x {base}"),
                    format!("Both as a ratio to {base} at the same point."),
                ),
                _ => (
                    "x its base".to_string(),
                    format!(
                        "Both as a ratio to each scheme's base at the same point ({}: the \
                         table's base column).",
                        bases.join(", ")
                    ),
                ),
            }
        } else {
            (
                metric.y_label.to_string(),
                format!(
                    "The paper's values in {}; ours: {}.",
                    of_metric.rows[0].unit, metric.y_label
                ),
            )
        };
        let svg = if measured.points.len() <= 1 {
            scheme_bars(metric.title, &y_label, &of_metric, colour_of)?
        } else {
            point_lines(
                metric.title,
                &y_label,
                &of_metric,
                measured,
                param,
                colour_of,
            )?
        };
        plots.push(ComparisonPlot { id, svg, caption });
    }
    Ok(plots)
}

/// A single-point experiment: per scheme (a category), the paper's bar (hatched) and ours.
fn scheme_bars(
    title: &str,
    y_label: &str,
    of_metric: &MetricRows<'_>,
    colour_of: impl Fn(&str) -> usize,
) -> Result<String> {
    let labels = of_metric.schemes();
    let colours: Vec<usize> = labels.iter().map(|s| colour_of(s)).collect();
    let series = |paper: bool| BarSeries {
        name: if paper { "paper" } else { "ours" }.to_string(),
        hatched: paper,
        values: labels
            .iter()
            .map(|s| of_metric.value(s, None, paper))
            .collect(),
    };
    bar_chart(
        &format!("{title}: paper (hatched) vs ours (solid)"),
        "scheme",
        y_label,
        &labels,
        &colours,
        &[series(true), series(false)],
    )
}

/// A sweep: per scheme, the paper's values and ours over the points (dashed and solid lines,
/// or hollow and filled markers over categorical points).
fn point_lines(
    title: &str,
    y_label: &str,
    of_metric: &MetricRows<'_>,
    measured: &Measured,
    param: &str,
    colour_of: impl Fn(&str) -> usize,
) -> Result<String> {
    let paper_points = dedup(of_metric.rows.iter().map(|r| r.point.clone()));
    let labels = merge_points(&paper_points, &measured.points);
    let mut lines = Vec::new();
    for scheme in &of_metric.schemes() {
        for paper in [true, false] {
            lines.push(Line {
                name: format!("{}: {scheme}", if paper { "paper" } else { "ours" }),
                colour: colour_of(scheme),
                dashed: paper,
                join_gaps: true,
                values: labels
                    .iter()
                    .map(|p| of_metric.value(scheme, Some(p), paper))
                    .collect(),
            });
        }
    }
    let x_axis = sweep_x_axis(param);
    let styles = match x_axis {
        XAxis::Ordered => "paper (dashed) vs ours (solid)",
        XAxis::Categorical => "paper (hollow) vs ours (filled)",
    };
    line_chart(
        &format!("{title}: {styles}"),
        param,
        y_label,
        &labels,
        &lines,
        x_axis,
    )
}

/// The x axis of a paper-vs-ours plot: the paper's order when it covers every point we ran (a
/// quick run skips some), else our order followed by the paper's other points.
fn merge_points(paper: &[String], ours: &[String]) -> Vec<String> {
    let (first, second) = if ours.iter().all(|p| paper.contains(p)) {
        (paper, ours)
    } else {
        (ours, paper)
    };
    dedup(first.iter().chain(second.iter()).cloned())
}

fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

fn outcome_colour(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Reproduced => "#c8e6c9",
        Outcome::RightDirection => "#fff3c4",
        Outcome::NotReproduced => "#ffcdd2",
        Outcome::NotEvaluated => "#e0e0e0",
    }
}

/// The report.
///
/// # Errors
/// Drawing errors (not expected).
pub fn report_html(
    experiment: &Experiment,
    sweep: &SweepResults,
    verdicts: &[Verdict],
    quick: bool,
    command: &str,
) -> Result<String> {
    let measured = Measured::from_sweep(sweep);
    let mut out = html_head(
        &format!("flashbuf reproduce {}", experiment.id),
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;\
         text-align:left;vertical-align:top}.grid{display:flex;flex-wrap:wrap;gap:8px}\
         figure{margin:0}figcaption{font-size:13px;color:#444;max-width:640px}",
    );
    let _ = writeln!(
        out,
        "<h1>{}: {} {}</h1>\n<p><b>{}</b></p>\n<p>{}</p>",
        escape(&experiment.id),
        escape(experiment.paper.cite()),
        escape(&experiment.figure),
        escape(&experiment.title),
        escape(&experiment.measures)
    );
    let _ = writeln!(
        out,
        "<table><tr><th>paper's setup</th><td>{}<br>schemes: {}</td></tr>\
         <tr><th>our setup{}</th><td><code>{}</code></td></tr>\
         <tr><th>approximations</th><td>{}</td></tr>\
         <tr><th>run</th><td>flashbuf {}, {} host cores, {}</td></tr></table>",
        escape(&experiment.paper_setup.text),
        escape(&experiment.paper_setup.schemes.join(", ")),
        if quick { " (--quick)" } else { "" },
        escape(command),
        escape(&experiment.ours.approximations),
        escape(&sweep.header.version_and_build()),
        sweep.header.host_cores,
        escape(&sweep.header.date)
    );
    let _ = writeln!(
        out,
        "<h2>Verdicts</h2>\n<table><tr><th>claim</th><th>criterion</th><th>verdict</th>\
         <th>reason</th></tr>"
    );
    for verdict in verdicts {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td style=\"background:{}\"><b>{}</b></td><td>{}</td></tr>",
            escape(&verdict.claim),
            escape(&verdict.criterion),
            outcome_colour(verdict.outcome),
            verdict.outcome.label(),
            escape(&verdict.reason)
        );
    }
    let _ = writeln!(out, "</table>");
    side_by_side_table(&mut out, experiment, &measured);
    let _ = writeln!(out, "<h2>Paper vs ours</h2>\n<div class=\"grid\">");
    for plot in comparison_plots(experiment, &measured, &sweep.param, &sweep.schemes)? {
        let _ = writeln!(
            out,
            "<figure class=\"plot\" data-plot=\"compare-{}\">{}<figcaption>{}</figcaption>\
             </figure>",
            plot.id,
            strip_xml_declaration(&plot.svg),
            escape(&plot.caption)
        );
    }
    let _ = writeln!(out, "</div>");
    our_run_html(&mut out, experiment, sweep)?;
    let _ = writeln!(
        out,
        "<p>Raw figures: results.json (every run) and verdicts.json next to this file.</p>"
    );
    out.push_str(SORT_SCRIPT);
    out.push_str("</body></html>\n");
    Ok(out)
}

/// Our run: the sweep's table, failures, and our plots of the claimed metrics.
fn our_run_html(out: &mut String, experiment: &Experiment, sweep: &SweepResults) -> Result<()> {
    // A bench experiment (one point): the bench's own table, with read stalls, IOPS and the
    // rest; a sweep: the sweep's table (every point's full table is in results.json).
    let _ = writeln!(out, "<h2>Our run</h2>");
    match (
        sweep.points.len(),
        sweep.points.first().and_then(|p| p.results.as_ref()),
    ) {
        (1, Some(results)) => {
            out.push_str(&comparison_html(&comparison(results)));
        }
        _ => {
            let _ = writeln!(out, "<pre>{}</pre>", escape(&sweep.format_table()));
        }
    }
    time_scales_html(out, sweep);
    for point in &sweep.points {
        if let Some(error) = &point.error {
            let _ = writeln!(
                out,
                "<p><b>{}: </b>{}</p>",
                escape(&point.value),
                escape(error)
            );
        }
        for failure in point.results.iter().flat_map(|r| r.failures.iter()) {
            let _ = writeln!(
                out,
                "<p><b>{} {} failed:</b> {}</p>",
                escape(&point.value),
                escape(&failure.scheme),
                escape(&failure.error)
            );
        }
    }
    if sweep.points.len() > 1 {
        let wanted: Vec<&str> = experiment
            .claims
            .iter()
            .map(|c| c.metric.as_str())
            .collect();
        let _ = writeln!(out, "<div class=\"grid\">");
        for (id, _, svg) in sweep_plots(sweep)? {
            if id == "throughput" || wanted.contains(&id) {
                let _ = writeln!(
                    out,
                    "<figure class=\"plot\" data-plot=\"{id}\">{}</figure>",
                    strip_xml_declaration(&svg)
                );
            }
        }
        // A two-parameter sweep: the heat maps of the ratios to the first scheme.
        for (id, _, svg) in crate::sweep::heatmap::grid_heat_maps(sweep)? {
            let _ = writeln!(
                out,
                "<figure class=\"plot\" data-plot=\"{}\">{}</figure>",
                escape(&id),
                strip_xml_declaration(&svg)
            );
        }
        let _ = writeln!(out, "</div>");
    }
    Ok(())
}

/// When the points ran at different time scales (points run on different hosts, or a point
/// rerun at a higher `--model-cores` and merged): each point's time scale and its runs'
/// largest timing error, so that a reader sees which measured how exactly.
fn time_scales_html(out: &mut String, sweep: &SweepResults) {
    let per_point: Vec<(&str, f64, Option<f64>)> = sweep
        .points
        .iter()
        .filter_map(|point| {
            let runs = &point.results.as_ref()?.runs;
            let scale = runs.iter().map(|run| run.time_scale).fold(0.0, f64::max);
            let error = runs
                .iter()
                .filter_map(|run| {
                    run.host_lateness
                        .as_ref()
                        .map(|l| l.judged_error(run.latency_ms.mean))
                })
                .reduce(f64::max);
            Some((point.value.as_str(), scale, error))
        })
        .collect();
    let mut scales: Vec<f64> = per_point.iter().map(|(_, scale, _)| *scale).collect();
    scales.dedup();
    if scales.len() < 2 {
        return;
    }
    let items: Vec<String> = per_point
        .iter()
        .map(|(value, scale, error)| match error {
            Some(error) => format!(
                "{} at time scale {scale} (timing error up to {:.1}%)",
                escape(value),
                error * 100.0
            ),
            None => format!("{} at time scale {scale}", escape(value)),
        })
        .collect();
    let _ = writeln!(
        out,
        "<p>The points ran at different time scales: {}.</p>",
        items.join("; ")
    );
}

fn side_by_side_table(out: &mut String, experiment: &Experiment, measured: &Measured) {
    let _ = writeln!(out, "<h2>The paper's values and ours</h2>");
    let table = rows(experiment, measured);
    if table.is_empty() {
        let _ = writeln!(
            out,
            "<p>The paper's text gives no numbers for this figure (only the claims above).</p>"
        );
        return;
    }
    let _ = writeln!(
        out,
        "<table><tr><th>scheme</th><th>point</th><th>metric</th><th>paper</th><th>ours</th>\
         <th>base</th><th>paper / base</th><th>ours / base</th><th>source</th></tr>"
    );
    for row in &table {
        let opt = |v: Option<f64>| v.map_or_else(|| "-".to_string(), fmt);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&row.scheme),
            escape(&row.point),
            row.metric,
            fmt(row.paper),
            escape(&row.unit),
            row.ours.map_or_else(
                || "-".to_string(),
                |ours| match row.ours_ci95 {
                    Some(half) => format!("{} ±{}", fmt(ours), fmt(half)),
                    None => fmt(ours),
                }
            ),
            escape(row.base.as_deref().unwrap_or("-")),
            opt(row.paper_ratio),
            opt(row.ours_ratio),
            escape(&row.source)
        );
    }
    let _ = writeln!(out, "</table>");
}

/// Writes results.json (our sweep), verdicts.json and report.html into `dir`.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_report_dir(
    dir: &Path,
    experiment: &Experiment,
    sweep: &SweepResults,
    verdicts: &[Verdict],
    quick: bool,
    command: &str,
) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|err| Error::io(format!("creating {}", dir.display()), err))?;
    sweep.write_json(&dir.join("results.json"))?;
    let file = VerdictsFile {
        id: &experiment.id,
        figure: format!("{} {}", experiment.paper.cite(), experiment.figure),
        quick,
        command: command.to_string(),
        verdicts,
    };
    let json = serde_json::to_string_pretty(&file)
        .map_err(|err| Error::Config(format!("cannot serialize verdicts: {err}")))?;
    let files = [
        ("verdicts.json", json),
        (
            "report.html",
            report_html(experiment, sweep, verdicts, quick, command)?,
        ),
    ];
    write_files(dir, files)
}

#[cfg(test)]
mod tests {
    use super::{Measured, given_ratio_base, merge_points, rows};
    use crate::reproduce::experiment::find;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn plot_points_follow_the_paper_when_it_covers_ours() {
        let paper = strings(&["5%", "10%", "15%", "20%", "25%"]);
        let quick = strings(&["5%", "15%", "25%"]);
        assert_eq!(merge_points(&paper, &quick), paper);
        let ours = strings(&["1:1", "2:1", "3:1", "4:1"]);
        assert_eq!(merge_points(&strings(&["4:1"]), &ours), ours);
    }

    /// ace-fig10f gives ACE-CFLRU's throughput as `x pg-cflru` and has no experiment-wide
    /// baseline: the paper's 1.29 is a ratio, and ours is compared as one (ours / pg-cflru at
    /// the same point), not as 1.29 beside ops/s.
    #[test]
    fn values_the_paper_gives_as_ratios_are_compared_as_ratios() {
        let experiment = find("ace-fig10f").unwrap();
        let value = &experiment.paper_values[0];
        assert_eq!(
            given_ratio_base(&experiment, value).as_deref(),
            Some("pg-cflru")
        );
        let measured = Measured {
            points: vec!["2%".into(), "10%".into()],
            values: vec![
                (0, "pg-cflru".into(), "throughput", 50_000.0),
                (0, "ace-cflru".into(), "throughput", 60_000.0),
            ],
            ..Measured::default()
        };
        let table = rows(&experiment, &measured);
        let at_2 = table.iter().find(|r| r.point == "2%").unwrap();
        assert!(at_2.given_as_ratio);
        assert_eq!(at_2.base.as_deref(), Some("pg-cflru"));
        assert!((at_2.paper_ratio.unwrap() - 1.29).abs() < 1e-9);
        assert!((at_2.ours_ratio.unwrap() - 1.2).abs() < 1e-9);
        // `x base` takes the base from the claim about the scheme (ACE vs its base policy).
        let fig8a = find("ace-fig8a").unwrap();
        let ace_clock = fig8a
            .paper_values
            .iter()
            .find(|v| v.scheme == "ace-clock")
            .unwrap();
        assert_eq!(
            given_ratio_base(&fig8a, ace_clock).as_deref(),
            Some("pg-clock")
        );
        let pg_clock = fig8a
            .paper_values
            .iter()
            .find(|v| v.scheme == "pg-clock")
            .unwrap();
        assert_eq!(
            given_ratio_base(&fig8a, pg_clock).as_deref(),
            Some("pg-clock")
        );
    }
}
