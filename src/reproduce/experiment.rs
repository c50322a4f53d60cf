//! The papers' tables and figures as data (issue 13 item 5): one TOML file per experiment in
//! `experiments/`, embedded in the binary ([`FILES`], parsed by [`registry`]) so that
//! `flashbuf reproduce` works from any directory. docs/reproduce.md describes the format;
//! [`Experiment::check`] refuses a file that names an unknown metric, a claim without its
//! numbers, or a runnable experiment without a command.
//!
//! An experiment records: its id, the paper and figure, what it measures, the paper's setup,
//! the paper's values (cited from the seed text, with units), the claims that count as
//! reproduced, and how to run it here (a `bench`, `sweep` or co-run `device probe` command line,
//! full and `--quick`),
//! with the approximations we make. `needs` marks an experiment that needs something not
//! built: it is listed, and running it is an error, never a fabricated number.

use serde::Deserialize;

use super::verdict::{Measured, Verdict, judge_all};
use crate::error::{Error, Result};
use crate::sweep::metrics;

/// A paper of the seed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Paper {
    /// Lee, An, Lee. LRU-C, PVLDB 16(9), 2023 (seed 000).
    Lruc,
    /// Papon, Athanassoulis. ACE, ICDE 2023 (seed 001).
    Ace,
    /// Lee, Lee, Kim. A self-tuning buffer-flushing algorithm, JISE (seed 002).
    SelfTuning,
    /// An, Im, Jung, Lee. Your read is our priority (RW), PVLDB 15(9), 2022 (seed 004).
    Rw,
}

impl Paper {
    /// A short citation.
    #[must_use]
    pub fn cite(self) -> &'static str {
        match self {
            Paper::Lruc => "LRU-C (PVLDB 2023)",
            Paper::Ace => "ACE (ICDE 2023)",
            Paper::SelfTuning => "Self-tuning flushing (JISE)",
            Paper::Rw => "RW / R-Buf (PVLDB 2022)",
        }
    }
}

/// Which command runs the experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// `flashbuf bench ARGS`.
    Bench,
    /// `flashbuf sweep ARGS` (ARGS include `--param` and `--values`).
    Sweep,
    /// `flashbuf device probe --corun ARGS`, once per `--device` of ARGS (each device a point;
    /// the streams `read` and `write` are the schemes).
    Probe,
}

/// The paper's setup, as the paper states it.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PaperSetup {
    /// Device, workload, buffer, threads, in words.
    pub text: String,
    /// The schemes the paper compares, as our scheme names.
    pub schemes: Vec<String>,
}

/// How we run it.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Ours {
    /// Where our setup differs from the paper's.
    pub approximations: String,
    /// `bench`, `sweep` or `probe` (a co-run `device probe`).
    pub command: Command,
    /// The full run's arguments (after the command name).
    pub args: Vec<String>,
    /// The `--quick` run's arguments (a few minutes on a 2-core host).
    pub quick_args: Vec<String>,
}

/// One value the paper gives.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PaperValue {
    /// Our scheme name for the paper's scheme.
    pub scheme: String,
    /// The sweep value it belongs to (`-` for a bench experiment).
    #[serde(default = "no_point")]
    pub point: String,
    /// Our metric id it corresponds to.
    pub metric: String,
    /// The number.
    pub value: f64,
    /// Its unit in the paper.
    pub unit: String,
    /// Where in the paper.
    pub source: String,
}

fn no_point() -> String {
    "-".into()
}

/// What kind of comparison a claim makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// `scheme` at `points` is better than `baseline` (at `baseline_point`, default the same
    /// point) by a factor of at least `at_least` (the factor is oriented so that > 1 means
    /// better: value / base for higher-is-better metrics, base / value otherwise).
    Ratio,
    /// `scheme`'s value (or its factor over `baseline`) is within `tolerance` (relative) of the
    /// paper's `value`.
    Near,
    /// `scheme`'s value (or its factor over `baseline`) rises (`increasing`) or falls
    /// (`decreasing`) along the sweep's points.
    Trend,
    /// `scheme`'s metric is largest at point `at`.
    Peak,
    /// `scheme`'s value lies in [`min`, `max`].
    Range,
}

/// A claim and the criterion that counts as reproduced.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The claim in words (from the paper).
    pub text: String,
    /// The kind of comparison.
    pub kind: ClaimKind,
    /// The scheme the claim is about.
    pub scheme: String,
    /// The scheme it is compared with.
    #[serde(default)]
    pub baseline: Option<String>,
    /// The metric id.
    pub metric: String,
    /// The points it is checked at (default: every point run).
    #[serde(default)]
    pub points: Vec<String>,
    /// Ratio: the baseline's point, if not the same point.
    #[serde(default)]
    pub baseline_point: Option<String>,
    /// Ratio: the factor that counts as reproduced (>= 1: a ratio claim is a claim of
    /// improvement).
    #[serde(default)]
    pub at_least: Option<f64>,
    /// Ratio: the upper end, where the paper gives a range ("gains 10-40%": `at_least = 1.1`,
    /// `at_most = 1.4`); a factor above it is not reproduced.
    #[serde(default)]
    pub at_most: Option<f64>,
    /// Near: the paper's value.
    #[serde(default)]
    pub value: Option<f64>,
    /// Near: relative tolerance; Trend: relative slack per step.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Trend: `increasing` or `decreasing`.
    #[serde(default)]
    pub direction: Option<String>,
    /// Peak: the point of the maximum.
    #[serde(default)]
    pub at: Option<String>,
    /// Range: bounds.
    #[serde(default)]
    pub min: Option<f64>,
    /// Range: bounds.
    #[serde(default)]
    pub max: Option<f64>,
    /// `higher` or `lower`: which way is "better" for this claim, when it is not the metric's
    /// own (e.g. "LRU-C reads more pages per second" on `read_iops`).
    #[serde(default)]
    pub prefer: Option<String>,
    /// What the run must show for the claim's mechanism to have been exercised at all (e.g.
    /// LRU mutex waits for a claim about splitting that mutex); unmet, the claim is "not
    /// evaluated", with the requirement's `why`.
    #[serde(default)]
    pub requires: Vec<Requirement>,
}

/// A precondition of a claim: at each of the claim's points, at least one of `schemes` has
/// `metric` >= `min`.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    /// The metric id.
    pub metric: String,
    /// The schemes, any of which may meet it.
    pub schemes: Vec<String>,
    /// The least value that shows the mechanism at work.
    pub min: f64,
    /// Why, in words: what the claim is about and why below `min` it was not exercised.
    pub why: String,
}

/// One experiment.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// `lruc-table4`, `ace-fig10f`, ...
    pub id: String,
    /// The paper.
    pub paper: Paper,
    /// `Table 4`, `Figure 10f`.
    pub figure: String,
    /// One line: what it shows.
    pub title: String,
    /// What is measured, in words.
    pub measures: String,
    /// Empty: runnable; else what is missing.
    #[serde(default)]
    pub needs: String,
    /// The scheme the report's ratio columns and ratio plots are taken to.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Metrics plotted as a ratio to `baseline` (paper and ours), because the paper's units or
    /// scale differ from ours (e.g. tpmC of 1,000 warehouses vs tx/s of one).
    #[serde(default)]
    pub ratio_metrics: Vec<String>,
    /// The paper's setup.
    pub paper_setup: PaperSetup,
    /// How we run it.
    pub ours: Ours,
    /// The paper's numbers.
    #[serde(default)]
    pub paper_values: Vec<PaperValue>,
    /// The claims and their criteria.
    #[serde(default)]
    pub claims: Vec<Claim>,
}

impl Experiment {
    /// Whether the experiment's runs are a deterministic timing model in virtual time (a co-run
    /// `device probe` with `--model`), whose single run is exact.
    #[must_use]
    pub fn is_deterministic(&self) -> bool {
        self.ours.command == Command::Probe && self.ours.args.iter().any(|a| a == "--model")
    }

    /// Every claim judged against `measured` (exact when the experiment
    /// [is deterministic](Self::is_deterministic)).
    #[must_use]
    pub fn judge(&self, mut measured: Measured) -> Vec<Verdict> {
        measured.exact |= self.is_deterministic();
        judge_all(&self.claims, &measured)
    }

    /// Parses one experiment file.
    ///
    /// # Errors
    /// [`Error::Config`] naming the file and the problem.
    pub fn parse(name: &str, text: &str) -> Result<Experiment> {
        let experiment: Experiment = toml::from_str(text)
            .map_err(|err| Error::Config(format!("experiment {name}: {err}")))?;
        experiment
            .check()
            .map_err(|why| Error::Config(format!("experiment {name}: {why}")))?;
        Ok(experiment)
    }

    /// Whether it can run here.
    #[must_use]
    pub fn runnable(&self) -> bool {
        self.needs.trim().is_empty()
    }

    /// The arguments of the full or quick run.
    #[must_use]
    pub fn args(&self, quick: bool) -> &[String] {
        if quick {
            &self.ours.quick_args
        } else {
            &self.ours.args
        }
    }

    /// Internal consistency (what the schema cannot say).
    ///
    /// # Errors
    /// A message naming the problem.
    pub fn check(&self) -> std::result::Result<(), String> {
        let id_ok = !self.id.is_empty()
            && self
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !id_ok {
            return Err(format!(
                "id `{}` must be lowercase letters, digits, `-`",
                self.id
            ));
        }
        if self.runnable() && (self.ours.args.is_empty() || self.ours.quick_args.is_empty()) {
            return Err("a runnable experiment needs ours.args and ours.quick_args".into());
        }
        if self.runnable() && self.claims.is_empty() {
            return Err("a runnable experiment needs at least one claim".into());
        }
        if !self.ratio_metrics.is_empty() && self.baseline.is_none() {
            return Err("ratio_metrics needs a baseline".into());
        }
        for id in &self.ratio_metrics {
            metrics::metric(id).map_err(|e| e.to_string())?;
        }
        for value in &self.paper_values {
            metrics::metric(&value.metric).map_err(|e| e.to_string())?;
            if value.source.trim().is_empty() {
                return Err(format!(
                    "paper value {} {} at {} has no source",
                    value.scheme, value.metric, value.point
                ));
            }
        }
        for claim in &self.claims {
            metrics::metric(&claim.metric).map_err(|e| e.to_string())?;
            let missing =
                |what: &str| format!("claim `{}` ({:?}) needs `{what}`", claim.text, claim.kind);
            if !matches!(claim.prefer.as_deref(), None | Some("higher" | "lower")) {
                return Err(missing("prefer = higher | lower"));
            }
            if claim.at_most.is_some() && claim.kind != ClaimKind::Ratio {
                return Err(missing(
                    "kind = ratio for at_most (a range uses min and max)",
                ));
            }
            for requirement in &claim.requires {
                metrics::metric(&requirement.metric).map_err(|e| e.to_string())?;
                if requirement.schemes.is_empty() || requirement.why.trim().is_empty() {
                    return Err(missing("requires: schemes and why"));
                }
            }
            match claim.kind {
                ClaimKind::Ratio => {
                    let at_least = claim.at_least.ok_or_else(|| missing("at_least"))?;
                    if at_least < 1.0 {
                        return Err(missing("at_least >= 1 (a claim of improvement)"));
                    }
                    if claim.at_most.is_some_and(|at_most| at_most < at_least) {
                        return Err(missing("at_most >= at_least"));
                    }
                    if claim.baseline.is_none() && claim.baseline_point.is_none() {
                        return Err(missing("baseline or baseline_point"));
                    }
                }
                ClaimKind::Near => {
                    claim.value.ok_or_else(|| missing("value"))?;
                    claim.tolerance.ok_or_else(|| missing("tolerance"))?;
                }
                ClaimKind::Trend => match claim.direction.as_deref() {
                    Some("increasing" | "decreasing") => {}
                    _ => return Err(missing("direction = increasing | decreasing")),
                },
                ClaimKind::Peak => {
                    claim.at.as_ref().ok_or_else(|| missing("at"))?;
                }
                ClaimKind::Range => {
                    if claim.min.is_none() && claim.max.is_none() {
                        return Err(missing("min or max"));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Embeds `experiments/NAME` for each name.
macro_rules! embed {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../experiments/", $name)))),*]
    };
}

/// Every experiment file, embedded: (file name, text). A test checks that every file in
/// `experiments/` is listed here.
pub const FILES: &[(&str, &str)] = embed!(
    "lruc-table2.toml",
    "lruc-table3.toml",
    "lruc-table4.toml",
    "lruc-table5.toml",
    "lruc-table6.toml",
    "lruc-table7.toml",
    "lruc-fig6.toml",
    "lruc-fig7a.toml",
    "lruc-fig7b.toml",
    "lruc-fig8.toml",
    "lruc-fig9.toml",
    "lruc-fig10.toml",
    "lruc-fig11.toml",
    "lruc-fig12.toml",
    "lruc-fig13.toml",
    "ace-fig8a.toml",
    "ace-fig8b.toml",
    "ace-fig8c.toml",
    "ace-fig8d.toml",
    "ace-fig10ab.toml",
    "ace-fig10d.toml",
    "ace-fig10f.toml",
    "ace-fig10g.toml",
    "ace-fig10h.toml",
    "ace-fig10i.toml",
    "selftuning-fig2.toml",
    "selftuning-fig3.toml",
    "selftuning-fig4.toml",
    "rw-table2a.toml",
    "rw-table2b.toml",
    "rw-table3.toml",
    "rw-table4.toml",
    "rw-fig6.toml",
    "rw-fig7.toml",
);

/// Parses every embedded experiment, in [`FILES`] order (paper by paper, tables then figures).
///
/// # Errors
/// The first file that does not parse or check; two files with one id.
pub fn registry() -> Result<Vec<Experiment>> {
    let experiments = FILES
        .iter()
        .map(|(name, text)| Experiment::parse(name, text))
        .collect::<Result<Vec<_>>>()?;
    for (index, experiment) in experiments.iter().enumerate() {
        if experiments[..index].iter().any(|e| e.id == experiment.id) {
            return Err(Error::Config(format!(
                "two experiments have id `{}`",
                experiment.id
            )));
        }
    }
    Ok(experiments)
}

/// The experiment `id`.
///
/// # Errors
/// Unknown id (the error lists the known ones); a broken registry.
pub fn find(id: &str) -> Result<Experiment> {
    let experiments = registry()?;
    let ids: Vec<String> = experiments.iter().map(|e| e.id.clone()).collect();
    experiments.into_iter().find(|e| e.id == id).ok_or_else(|| {
        Error::Config(format!(
            "unknown experiment `{id}`: `flashbuf reproduce --list` lists them ({})",
            ids.join(", ")
        ))
    })
}
