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

use super::experiment::Experiment;
use super::verdict::{Measured, Outcome, Verdict};
use crate::bench::plot::{escape, html_head, strip_xml_declaration, write_files};
use crate::error::{Error, Result};
use crate::sweep::SweepResults;
use crate::sweep::metrics;
use crate::sweep::plot::{Line, line_chart, sweep_plots};

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
    ours: Option<f64>,
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

fn rows(experiment: &Experiment, measured: &Measured) -> Vec<Row> {
    let paper_base = |point: &str, metric: &str| {
        let base = experiment.baseline.as_deref()?;
        experiment
            .paper_values
            .iter()
            .find(|v| v.scheme == base && v.point == point && v.metric == metric)
            .map(|v| v.value)
    };
    let mut rows = Vec::new();
    for value in &experiment.paper_values {
        let Ok(metric) = metrics::metric(&value.metric) else {
            continue;
        };
        let ours = measured.get(&value.point, &value.scheme, metric.id);
        let ours_base = experiment
            .baseline
            .as_deref()
            .and_then(|base| measured.get(&value.point, base, metric.id));
        let ratio = |v: Option<f64>, b: Option<f64>| match (v, b) {
            (Some(v), Some(b)) if b != 0.0 => Some(v / b),
            _ => None,
        };
        rows.push(Row {
            scheme: value.scheme.clone(),
            point: value.point.clone(),
            metric: metric.id,
            paper: value.value,
            unit: value.unit.clone(),
            ours,
            ours_ci95: measured
                .interval(&value.point, &value.scheme, metric.id)
                .and_then(|interval| interval.ci95),
            paper_ratio: ratio(Some(value.value), paper_base(&value.point, metric.id)),
            ours_ratio: ratio(ours, ours_base),
        });
    }
    rows
}

/// Per metric the paper gives, a plot of the paper's values and ours.
fn comparison_plots(
    experiment: &Experiment,
    measured: &Measured,
    param: &str,
) -> Result<Vec<(String, String)>> {
    let table = rows(experiment, measured);
    let mut metric_ids: Vec<&'static str> = Vec::new();
    for row in &table {
        if !metric_ids.contains(&row.metric) {
            metric_ids.push(row.metric);
        }
    }
    let bench_like = measured.points.len() <= 1;
    let mut plots = Vec::new();
    for id in metric_ids {
        let Ok(metric) = metrics::metric(id) else {
            continue;
        };
        let as_ratio = experiment.ratio_metrics.iter().any(|m| m == id);
        let pick = |row: &Row, paper: bool| -> Option<f64> {
            match (as_ratio, paper) {
                (true, true) => row.paper_ratio,
                (true, false) => row.ours_ratio,
                (false, true) => Some(row.paper),
                (false, false) => row.ours,
            }
        };
        let of_metric: Vec<&Row> = table.iter().filter(|r| r.metric == id).collect();
        let y_label = if as_ratio {
            format!(
                "x {} (paper's and ours)",
                experiment.baseline.as_deref().unwrap_or("baseline")
            )
        } else {
            format!("{} (paper: {})", metric.y_label, of_metric[0].unit)
        };
        let (labels, lines, x_label) = if bench_like {
            let labels: Vec<String> = dedup(of_metric.iter().map(|r| r.scheme.clone()));
            let line = |paper: bool| Line {
                name: if paper { "paper".into() } else { "ours".into() },
                colour: usize::from(!paper),
                dashed: paper,
                join_gaps: true,
                values: labels
                    .iter()
                    .map(|s| {
                        of_metric
                            .iter()
                            .find(|r| &r.scheme == s)
                            .and_then(|r| pick(r, paper))
                    })
                    .collect(),
            };
            let lines = vec![line(true), line(false)];
            (labels, lines, "scheme".to_string())
        } else {
            let paper_points = dedup(of_metric.iter().map(|r| r.point.clone()));
            let labels = merge_points(&paper_points, &measured.points);
            let schemes = dedup(of_metric.iter().map(|r| r.scheme.clone()));
            let mut lines = Vec::new();
            for (k, scheme) in schemes.iter().enumerate() {
                for paper in [true, false] {
                    lines.push(Line {
                        name: format!("{}: {scheme}", if paper { "paper" } else { "ours" }),
                        colour: k,
                        dashed: paper,
                        join_gaps: true,
                        values: labels
                            .iter()
                            .map(|p| {
                                of_metric
                                    .iter()
                                    .find(|r| &r.scheme == scheme && &r.point == p)
                                    .and_then(|r| pick(r, paper))
                            })
                            .collect(),
                    });
                }
            }
            (labels, lines, param.to_string())
        };
        let title = format!("{}: paper (dashed) vs ours (solid)", metric.title);
        plots.push((
            id.to_string(),
            line_chart(&title, &x_label, &y_label, &labels, &lines)?,
        ));
    }
    Ok(plots)
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
         figure{margin:0}",
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
        escape(&sweep.header.flashbuf_version),
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
    for (id, svg) in comparison_plots(experiment, &measured, &sweep.param)? {
        let _ = writeln!(
            out,
            "<figure class=\"plot\" data-plot=\"compare-{id}\">{}</figure>",
            strip_xml_declaration(&svg)
        );
    }
    let _ = writeln!(out, "</div>");
    our_run_html(&mut out, experiment, sweep)?;
    let _ = writeln!(
        out,
        "<p>Raw figures: results.json (every run) and verdicts.json next to this file.</p>\
         </body></html>"
    );
    Ok(out)
}

/// Our run: the sweep's table, failures, and our plots of the claimed metrics.
fn our_run_html(out: &mut String, experiment: &Experiment, sweep: &SweepResults) -> Result<()> {
    // A bench experiment (one point): the bench's own table, with read stalls, IOPS and the
    // rest; a sweep: the sweep's table (every point's full table is in results.json).
    let table = match (
        sweep.points.len(),
        sweep.points.first().and_then(|p| p.results.as_ref()),
    ) {
        (1, Some(results)) => crate::bench::report::format_table(results),
        _ => sweep.format_table(),
    };
    let _ = writeln!(out, "<h2>Our run</h2>\n<pre>{}</pre>", escape(&table));
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
        let _ = writeln!(out, "</div>");
    }
    Ok(())
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
    let base = experiment.baseline.as_deref().unwrap_or("-");
    let _ = writeln!(
        out,
        "<table><tr><th>scheme</th><th>point</th><th>metric</th><th>paper</th><th>ours</th>\
         <th>paper / {b}</th><th>ours / {b}</th><th>source</th></tr>",
        b = escape(base)
    );
    for (row, value) in table.iter().zip(&experiment.paper_values) {
        let opt = |v: Option<f64>| v.map_or_else(|| "-".to_string(), fmt);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
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
            opt(row.paper_ratio),
            opt(row.ours_ratio),
            escape(&value.source)
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
    use super::merge_points;

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
}
