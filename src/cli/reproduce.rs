//! `flashbuf reproduce` (issue 13 item 5): `--list` shows the papers' experiments
//! (`experiments/*.toml`, embedded); `reproduce ID... [--quick] [--out DIR]` runs each through
//! the bench or sweep code, judges every claim, and writes report.html (paper and ours side by
//! side, verdicts), results.json and verdicts.json.
//!
//! An experiment that needs something not built is refused with what it needs (exit code 1),
//! never run with a stand-in. The exit code is also non-zero when a run failed (a point or a
//! scheme); verdicts, good or bad, are results, not failures.

use std::path::{Path, PathBuf};

use clap::Parser;

use super::bench::{self, BenchArgs};
use super::sweep::{self as sweep_cli, SweepArgs};
use crate::error::{Error, Result};
use crate::reproduce::experiment::{self, Command, Experiment};
use crate::reproduce::report::write_report_dir;
use crate::reproduce::verdict::{Measured, Verdict, judge_all};
use crate::sweep::{PointStatus, SweepPoint, SweepResults};

/// Arguments of `reproduce`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReproduceArgs {
    /// List the experiments: id, paper and figure, runnable or what it needs, description.
    #[arg(long)]
    pub list: bool,
    /// Experiments to run (ids from `--list`).
    pub ids: Vec<String>,
    /// The smaller version of each experiment (fewer points, shorter, a smaller database):
    /// minutes rather than hours.
    #[arg(long)]
    pub quick: bool,
    /// Where to write report.html, results.json and verdicts.json (default: ./reproduce-ID;
    /// with several ids, one subdirectory per id).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Runs of each scheme at each point (`bench --repeat`), whose means and 95% confidence
    /// intervals the verdicts print: default 3 for a full run (or the experiment's own
    /// `--repeat`, if larger), 1 with `--quick`.
    #[arg(long)]
    pub repeat: Option<usize>,
    /// Testing and exploration: bench flags appended to the experiment's own (the later flag
    /// wins), e.g. `--set "--device mem --log-device mem --duration 100ms"`.
    #[arg(long, allow_hyphen_values = true)]
    pub set: Option<String>,
}

#[derive(Debug, Parser)]
#[command(name = "sweep", args_override_self = true)]
struct SweepLine {
    #[command(flatten)]
    args: SweepArgs,
}

#[derive(Debug, Parser)]
#[command(name = "bench", args_override_self = true)]
struct BenchLine {
    #[command(flatten)]
    args: BenchArgs,
}

/// Runs the command.
///
/// # Errors
/// An unknown id, an experiment that needs something not built, a failed run.
pub fn run(args: &ReproduceArgs) -> Result<()> {
    if args.list || args.ids.is_empty() {
        super::out(&list()?);
        if args.ids.is_empty() && !args.list {
            eprintln!("give an experiment id to run it: flashbuf reproduce ID [--quick]");
        }
        return Ok(());
    }
    // Every id is checked before anything runs.
    let experiments = args
        .ids
        .iter()
        .map(|id| experiment::find(id))
        .collect::<Result<Vec<_>>>()?;
    for experiment in &experiments {
        if !experiment.runnable() {
            return Err(Error::Config(format!(
                "experiment `{}` ({} {}) cannot run here: it needs {}",
                experiment.id,
                experiment.paper.cite(),
                experiment.figure,
                experiment.needs.trim()
            )));
        }
    }
    let mut failed = Vec::new();
    for experiment in &experiments {
        let dir = match (&args.out, experiments.len()) {
            (Some(dir), 1) => dir.clone(),
            (Some(dir), _) => dir.join(&experiment.id),
            (None, _) => PathBuf::from(format!("reproduce-{}", experiment.id)),
        };
        let (sweep, _verdicts) = run_experiment(
            experiment,
            args.quick,
            args.repeat,
            args.set.as_deref(),
            &dir,
        )?;
        if sweep.any_failed() {
            failed.push(experiment.id.clone());
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "runs failed in {} (see their reports)",
            failed.join(", ")
        )))
    }
}

/// The `--list` text.
///
/// # Errors
/// A broken registry.
pub fn list() -> Result<String> {
    use std::fmt::Write as _;
    let experiments = experiment::registry()?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:16} {:38} {:9} description",
        "id", "paper / figure", "status"
    );
    for e in &experiments {
        let status = if e.runnable() { "runnable" } else { "needs" };
        let _ = writeln!(
            out,
            "{:16} {:38} {:9} {}",
            e.id,
            format!("{} {}", e.paper.cite(), e.figure),
            status,
            e.title
        );
        if !e.runnable() {
            let _ = writeln!(out, "{:65}needs: {}", "", e.needs.trim());
        }
    }
    let runnable = experiments.iter().filter(|e| e.runnable()).count();
    let _ = writeln!(
        out,
        "{} experiments, {runnable} runnable. Run one: flashbuf reproduce ID [--quick] [--out DIR]",
        experiments.len()
    );
    Ok(out)
}

/// Runs per scheme of a full reproduction at least (issue 19: the paper averaged 3 runs).
pub const FULL_REPEATS: usize = 3;

/// The runs per scheme of an experiment's run: `requested`, else 1 with `quick`, else
/// [`FULL_REPEATS`] or the experiment's own `--repeat` if larger.
#[must_use]
pub fn repeats(experiment: &Experiment, quick: bool, requested: Option<usize>) -> usize {
    if let Some(repeats) = requested {
        return repeats;
    }
    if quick {
        return 1;
    }
    let args = experiment.args(false);
    let own = args
        .iter()
        .position(|arg| arg == "--repeat")
        .and_then(|at| args.get(at + 1))
        .and_then(|value| value.parse::<usize>().ok());
    own.map_or(FULL_REPEATS, |own| own.max(FULL_REPEATS))
}

/// The command line of an experiment's run (`bench ...` or `sweep ...`): its arguments, then
/// `--repeat` ([`repeats`]), then `set` (whose flags win).
#[must_use]
pub fn command_line(
    experiment: &Experiment,
    quick: bool,
    repeat: Option<usize>,
    set: Option<&str>,
) -> Vec<String> {
    let name = match experiment.ours.command {
        Command::Bench => "bench",
        Command::Sweep => "sweep",
    };
    let mut line = vec![name.to_string()];
    line.extend(experiment.args(quick).iter().cloned());
    line.push("--repeat".into());
    line.push(repeats(experiment, quick, repeat).to_string());
    line.extend(set.unwrap_or("").split_whitespace().map(str::to_string));
    line
}

/// Checks an experiment's run without running it: its command line parses, every point passes
/// the bench's checks (schemes, workload, devices, pool configuration), and, for the full run,
/// every claim names a scheme and points the run has.
///
/// # Errors
/// [`Error::Config`] naming the experiment and the problem.
pub fn check_experiment(experiment: &Experiment, quick: bool) -> Result<()> {
    let line = command_line(experiment, quick, None, None);
    let fail = |why: String| Error::Config(format!("experiment {}: {why}", experiment.id));
    let (schemes, points) = match experiment.ours.command {
        Command::Sweep => {
            let parsed =
                SweepLine::try_parse_from(&line).map_err(|e| fail(e.render().to_string()))?;
            sweep_cli::check_sweep(&parsed.args).map_err(|e| fail(e.to_string()))?
        }
        Command::Bench => {
            let parsed =
                BenchLine::try_parse_from(&line).map_err(|e| fail(e.render().to_string()))?;
            let (config, _) =
                bench::prepare(&parsed.args, "check").map_err(|e| fail(e.to_string()))?;
            let schemes = config.schemes.iter().map(|s| s.name.clone()).collect();
            (schemes, vec!["-".to_string()])
        }
    };
    if quick {
        return Ok(());
    }
    for claim in &experiment.claims {
        for scheme in std::iter::once(&claim.scheme).chain(claim.baseline.iter()) {
            if !schemes.contains(scheme) {
                return Err(fail(format!(
                    "claim `{}` names scheme `{scheme}`, which the run does not have ({})",
                    claim.text,
                    schemes.join(", ")
                )));
            }
        }
        let named = claim
            .points
            .iter()
            .chain(claim.baseline_point.iter())
            .chain(claim.at.iter());
        for point in named {
            if !points.contains(point) {
                return Err(fail(format!(
                    "claim `{}` names point `{point}`, which the run does not have ({})",
                    claim.text,
                    points.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// Runs one experiment and writes its report into `dir`; returns our results and the verdicts.
///
/// # Errors
/// Bad arguments in the experiment (nothing ran), a failed load, files that cannot be written.
pub fn run_experiment(
    experiment: &Experiment,
    quick: bool,
    repeat: Option<usize>,
    set: Option<&str>,
    dir: &Path,
) -> Result<(SweepResults, Vec<Verdict>)> {
    let line = command_line(experiment, quick, repeat, set);
    let shown = format!("flashbuf {}", line.join(" "));
    std::fs::create_dir_all(dir).map_err(|err| {
        Error::Config(format!("--out {}: cannot create it: {err}", dir.display()))
    })?;
    eprintln!(
        "reproduce {} ({} {}){}: {shown}",
        experiment.id,
        experiment.paper.cite(),
        experiment.figure,
        if quick { ", quick" } else { "" }
    );
    let parse_error = |err: clap::Error| {
        Error::Config(format!(
            "experiment {}: its command line does not parse: {}",
            experiment.id,
            err.render()
        ))
    };
    let sweep = match experiment.ours.command {
        Command::Sweep => {
            let parsed = SweepLine::try_parse_from(&line).map_err(parse_error)?;
            sweep_cli::run_sweep(&parsed.args, &shown)?
        }
        Command::Bench => {
            let parsed = BenchLine::try_parse_from(&line).map_err(parse_error)?;
            let results = bench::run_to_results(&parsed.args, &shown)?;
            let schemes = results
                .runs
                .iter()
                .map(|r| r.scheme.clone())
                .chain(results.failures.iter().map(|f| f.scheme.clone()))
                .collect();
            let mut sweep = SweepResults::new(
                &shown,
                "run",
                "a single bench run",
                vec!["-".into()],
                schemes,
            );
            sweep.header.repeats = results.header.repeats;
            let status = if results.failures.is_empty() {
                PointStatus::Done
            } else {
                PointStatus::SchemesFailed
            };
            sweep.push(SweepPoint {
                value: "-".into(),
                status,
                error: None,
                results: Some(results),
            });
            sweep
        }
    };
    let verdicts = judge_all(&experiment.claims, &Measured::from_sweep(&sweep));
    write_report_dir(dir, experiment, &sweep, &verdicts, quick, &shown)?;
    outln!("\n{} verdicts:", experiment.id);
    for verdict in &verdicts {
        outln!(
            "  [{}] {}\n      {}; {}",
            verdict.outcome.label(),
            verdict.claim,
            verdict.criterion,
            verdict.reason
        );
    }
    eprintln!(
        "wrote report.html, results.json and verdicts.json to {}",
        dir.display()
    );
    Ok((sweep, verdicts))
}
