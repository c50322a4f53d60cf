//! sweep.json: the parameter, its values, and per point the full [`BenchResults`] (or why the
//! point did not run), plus a compact per-scheme series table (one row per point, one field
//! per metric of [`super::metrics::METRICS`]) for scripts and plots. Also the printed table:
//! rows = points, columns = each scheme's throughput and its ratio to the first scheme.
//!
//! Invariant: `points` is in `values` order and never longer than it; the series are rebuilt
//! from the points (never stored separately from them) by [`SweepResults::refresh_series`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::grid::{Coordinate, Grid};
use super::metrics::{METRICS, interval};
use crate::bench::report::{BenchResults, Header, RunResult};
use crate::error::{Error, Result};

/// What happened to one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointStatus {
    /// Every scheme ran.
    Done,
    /// The point ran, and at least one scheme failed (see its results' failures).
    SchemesFailed,
    /// The point could not run (setup error).
    Failed,
    /// Not run: interrupted (Ctrl-C) before it started.
    NotRun,
}

/// One point of the sweep.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SweepPoint {
    /// The parameter's value at this point, as given.
    pub value: String,
    /// What happened.
    pub status: PointStatus,
    /// Why the point failed or did not run.
    pub error: Option<String>,
    /// The point's full bench results.
    pub results: Option<BenchResults>,
    /// A two-parameter sweep: the point's value of each parameter (`value` is their label).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coordinates: Vec<Coordinate>,
}

impl SweepPoint {
    /// The point of `value` from its bench run's outcome: done, some schemes failed, or the
    /// run failed (printed as `  {what} failed: ...`).
    #[must_use]
    pub fn from_outcome(value: &str, outcome: Result<BenchResults>, what: &str) -> SweepPoint {
        match outcome {
            Ok(results) => SweepPoint {
                value: value.to_string(),
                status: if results.failures.is_empty() {
                    PointStatus::Done
                } else {
                    PointStatus::SchemesFailed
                },
                error: None,
                results: Some(results),
                coordinates: Vec::new(),
            },
            Err(err) => {
                eprintln!("  {what} failed: {err}");
                SweepPoint {
                    value: value.to_string(),
                    status: PointStatus::Failed,
                    error: Some(err.to_string()),
                    results: None,
                    coordinates: Vec::new(),
                }
            }
        }
    }
}

/// One scheme's row at one point of the compact series.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesRow {
    /// The parameter's value.
    pub value: String,
    /// A two-parameter sweep: the point's value of each parameter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coordinates: Vec<Coordinate>,
    /// Metric id -> value (absent: the scheme did not run at this point, or the metric does not
    /// apply).
    pub metrics: BTreeMap<&'static str, f64>,
    /// With `--repeat N`: metric id -> its value's 95% interval ([`super::metrics::interval`]);
    /// empty for single runs.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub intervals: BTreeMap<&'static str, crate::bench::stats::Interval>,
}

/// One scheme across the points.
#[derive(Debug, Clone, Serialize)]
pub struct SchemeSeries {
    /// The scheme.
    pub scheme: String,
    /// One row per point, in point order.
    pub rows: Vec<SeriesRow>,
}

/// Everything one sweep produced.
#[derive(Debug, Clone, Serialize)]
pub struct SweepResults {
    /// Provenance.
    pub header: Header,
    /// The parameter's name.
    pub param: String,
    /// What it sets.
    pub param_sets: String,
    /// Every value, in order.
    pub values: Vec<String>,
    /// The schemes, in order (ratios are to the first).
    pub schemes: Vec<String>,
    /// The points run so far.
    pub points: Vec<SweepPoint>,
    /// The compact series, per scheme.
    pub series: Vec<SchemeSeries>,
    /// A two-parameter sweep's axes (`param` is then `A x B` and each value a point label).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grid: Option<Grid>,
}

impl SweepResults {
    /// An empty sweep of `param` over `values` for `schemes`.
    #[must_use]
    pub fn new(
        command_line: &str,
        param: &str,
        param_sets: &str,
        values: Vec<String>,
        schemes: Vec<String>,
    ) -> SweepResults {
        SweepResults {
            header: Header::new(command_line),
            param: param.to_string(),
            param_sets: param_sets.to_string(),
            values,
            schemes,
            points: Vec::new(),
            series: Vec::new(),
            grid: None,
        }
    }

    /// Appends a point and rebuilds the series.
    pub fn push(&mut self, mut point: SweepPoint) {
        assert!(
            self.points.len() < self.values.len(),
            "more points than values"
        );
        if let Some(grid) = &self.grid {
            point.coordinates = grid.coordinates(self.points.len());
        }
        self.points.push(point);
        self.refresh_series();
    }

    /// The run of `scheme` at point `index`, and the first scheme's run there.
    #[must_use]
    pub fn run_at(&self, index: usize, scheme: &str) -> Option<(&RunResult, Option<&RunResult>)> {
        let results = self.points.get(index)?.results.as_ref()?;
        let run = results.runs.iter().find(|r| r.scheme == scheme)?;
        let first = self
            .schemes
            .first()
            .and_then(|name| results.runs.iter().find(|r| &r.scheme == name));
        Some((run, first))
    }

    /// Rebuilds [`SweepResults::series`] from the points.
    pub fn refresh_series(&mut self) {
        let mut series = Vec::with_capacity(self.schemes.len());
        for scheme in &self.schemes {
            let rows = (0..self.points.len())
                .map(|index| {
                    let run = self.run_at(index, scheme);
                    SeriesRow {
                        value: self.points[index].value.clone(),
                        coordinates: self.points[index].coordinates.clone(),
                        metrics: run
                            .map(|(run, first)| {
                                METRICS
                                    .iter()
                                    .filter_map(|m| (m.read)(run, first).map(|v| (m.id, v)))
                                    .collect()
                            })
                            .unwrap_or_default(),
                        intervals: run
                            .map(|(run, first)| {
                                METRICS
                                    .iter()
                                    .filter_map(|m| Some((m.id, interval(m, run, first)?)))
                                    .collect()
                            })
                            .unwrap_or_default(),
                    }
                })
                .collect();
            series.push(SchemeSeries {
                scheme: scheme.clone(),
                rows,
            });
        }
        self.series = series;
    }

    /// Whether any point or scheme failed or did not run.
    #[must_use]
    pub fn any_failed(&self) -> bool {
        self.points.len() < self.values.len()
            || self.points.iter().any(|p| p.status != PointStatus::Done)
    }

    /// The results as pretty JSON.
    ///
    /// # Errors
    /// Serialization errors (none expected).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string_pretty(self)
            .map_err(|err| Error::Config(format!("cannot serialize the sweep: {err}")))
    }

    /// Writes sweep.json to `path` (via a temporary file and a rename, so a kill never leaves a
    /// half-written file).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn write_json(&self, path: &Path) -> Result<()> {
        let json = self.to_json()?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, json)
            .map_err(|err| Error::io(format!("writing {}", tmp.display()), err))?;
        std::fs::rename(&tmp, path)
            .map_err(|err| Error::io(format!("renaming to {}", path.display()), err))
    }

    /// The table: rows = points, columns = each scheme's throughput and ratio to the first.
    #[must_use]
    pub fn format_table(&self) -> String {
        let mut out = String::new();
        let width = self
            .values
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(5)
            .max(self.param.len());
        // With repeats, each cell carries its interval (`812 ±23`).
        let repeated = self.header.repeats > 1
            || self
                .points
                .iter()
                .filter_map(|p| p.results.as_ref())
                .any(|r| r.header.repeats > 1);
        let (tx_width, ratio_width) = if repeated { (14, 12) } else { (12, 6) };
        let _ = write!(out, "{:width$}", self.param);
        for scheme in &self.schemes {
            let _ = write!(
                out,
                " | {:>tx_width$} {:>ratio_width$}",
                truncate(scheme, tx_width),
                "ratio"
            );
        }
        out.push('\n');
        let _ = writeln!(
            out,
            "{}",
            "-".repeat(width + self.schemes.len() * (tx_width + ratio_width + 4))
        );
        for (index, point) in self.points.iter().enumerate() {
            let _ = write!(out, "{:width$}", point.value);
            for scheme in &self.schemes {
                if let Some((run, first)) = self.run_at(index, scheme) {
                    let [throughput, ratio] = [&METRICS[0], &METRICS[1]].map(|metric| {
                        let decimals = if metric.id == "ratio" { 2 } else { 0 };
                        (metric.read)(run, first).map_or_else(
                            || "-".to_string(),
                            |value| {
                                let half = interval(metric, run, first).and_then(|i| i.ci95);
                                crate::bench::stats::format_pm(value, half, decimals)
                            },
                        )
                    });
                    let _ = write!(out, " | {throughput:>tx_width$} {ratio:>ratio_width$}");
                } else {
                    // No record: the scheme failed, or the point has none (not run, under way
                    // or missing, as its error says).
                    let cell = if point.status == PointStatus::NotRun {
                        "not run"
                    } else {
                        "failed"
                    };
                    let _ = write!(out, " | {cell:>tx_width$} {:>ratio_width$}", "-");
                }
            }
            if let Some(error) = &point.error {
                let _ = write!(out, "  ({error})");
            }
            out.push('\n');
        }
        for value in self.values.iter().skip(self.points.len()) {
            let _ = writeln!(out, "{value:width$}   not run");
        }
        let unit = self
            .points
            .iter()
            .filter_map(|p| p.results.as_ref())
            .filter_map(|r| r.runs.first())
            .map(|r| r.unit.clone())
            .next()
            .unwrap_or_else(|| "ops/s".into());
        let _ = writeln!(
            out,
            "(throughput in {unit}, device time; ratio to {}{})",
            self.schemes.first().map_or("-", String::as_str),
            if repeated {
                "; each the mean of the repeats, ± the half-width of its 95% confidence interval"
            } else {
                ""
            }
        );
        if self.grid.is_some() {
            out.push_str(&self.format_grid_tables());
        }
        out
    }

    /// A two-parameter sweep: per scheme after the first, its throughput ratio to the first
    /// scheme as a grid (rows: the outer parameter, columns: the inner one); `-` where it did
    /// not run. Empty for a one-parameter sweep.
    #[must_use]
    pub fn format_grid_tables(&self) -> String {
        let mut out = String::new();
        let Some(grid) = &self.grid else {
            return out;
        };
        let ratio = &METRICS[1];
        let row_width = grid
            .rows
            .values
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(1)
            .max(grid.rows.param.len());
        let cell = grid
            .columns
            .values
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(1)
            .max(6);
        for scheme in self.schemes.iter().skip(1) {
            let _ = writeln!(
                out,
                "\n{scheme} / {} (throughput ratio): rows {}, columns {}",
                self.schemes[0], grid.rows.param, grid.columns.param
            );
            let _ = write!(out, "{:row_width$}", grid.rows.param);
            for column in &grid.columns.values {
                let _ = write!(out, " {column:>cell$}");
            }
            out.push('\n');
            for (r, row) in grid.rows.values.iter().enumerate() {
                let _ = write!(out, "{row:row_width$}");
                for c in 0..grid.columns.values.len() {
                    let index = r * grid.columns.values.len() + c;
                    let text = self
                        .run_at(index, scheme)
                        .and_then(|(run, first)| (ratio.read)(run, first))
                        .map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
                    let _ = write!(out, " {text:>cell$}");
                }
                out.push('\n');
            }
        }
        out
    }

    /// A two-parameter sweep's cell values of `metric` for `scheme`: one row per outer value,
    /// one entry per inner value (`None`: not run, or no value).
    #[must_use]
    pub fn grid_values(
        &self,
        scheme: &str,
        metric: &super::metrics::Metric,
    ) -> Vec<Vec<Option<f64>>> {
        let Some(grid) = &self.grid else {
            return Vec::new();
        };
        let width = grid.columns.values.len();
        (0..grid.rows.values.len())
            .map(|r| {
                (0..width)
                    .map(|c| {
                        self.run_at(r * width + c, scheme)
                            .and_then(|(run, first)| (metric.read)(run, first))
                    })
                    .collect()
            })
            .collect()
    }
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}
