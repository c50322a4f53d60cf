//! `flashbuf reproduce` (issue 13 item 5): `--list` shows the papers' experiments
//! (`experiments/*.toml`, embedded); `reproduce ID... [--quick] [--out DIR]` runs each through
//! the bench or sweep code, judges every claim, and writes report.html (paper and ours side by
//! side, verdicts), results.json and verdicts.json.
//!
//! An experiment that needs something not built is refused with what it needs (exit code 1),
//! never run with a stand-in. The exit code is also non-zero when a run failed (a point or a
//! scheme); verdicts, good or bad, are results, not failures.
//!
//! Output directories: each experiment's is created before anything runs (so a directory that
//! cannot be made is found first), and a directory this command created is removed again if
//! the command fails before writing anything into it. An id given twice is refused (the two
//! runs would write into one directory).

use crate::bench::continuation::Continuation;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches, Parser};

use super::bench::{self, BenchArgs};
use super::points::PointFlags;
use super::sweep::{self as sweep_cli, PreparedSweep, SweepArgs};
use crate::error::{Error, Result};
use crate::reproduce::experiment::{self, Command, Experiment};
use crate::reproduce::report::write_report_dir;
use crate::reproduce::verdict::{Measured, Verdict};
use crate::sweep::points::{self, Plan};
use crate::sweep::{SweepPoint, SweepResults};

/// Arguments of `reproduce`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReproduceArgs {
    /// List the experiments: id, paper and figure, runnable or what it needs, description.
    #[arg(long, conflicts_with_all = ["ids", "quick", "out", "set", "plan", "point", "fresh"])]
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
    /// Judge a saved run again (DIR holds its results.json and verdicts.json) with the current
    /// claims and rules, running nothing: prints each claim's verdict before and after and
    /// writes DIR/verdicts-rescored.json.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["list", "ids", "quick", "out", "repeat", "set"])]
    pub rescore: Option<PathBuf>,
    /// Testing and exploration: bench flags appended to the experiment's own (the later flag
    /// wins), e.g. `--set "--device mem --log-device mem --duration 100ms"`.
    #[arg(long, allow_hyphen_values = true)]
    pub set: Option<String>,
    /// Take the points that another run's point files under these files or directories
    /// cover instead of running them: a run of the same command with more schemes (Figure 6's
    /// run holds Table 3's, Figure 7a's Table 7's; docs/reproduce.md, "Shared runs"). Each
    /// point taken is written into --out saying where it came from; the rest run.
    #[arg(long, value_name = "FILE_OR_DIR", conflicts_with_all = ["list", "rescore", "plan"])]
    pub reuse: Vec<PathBuf>,
    /// `--plan`, `--point`, `--fresh` (point ids are EXPERIMENT.pN; with `--point`, the
    /// experiment ids may be left out).
    #[command(flatten)]
    pub points: PointFlags,
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

/// Parses an experiment's sweep line, recording which flags it gives.
fn parse_sweep_line(line: &[String]) -> std::result::Result<SweepLine, clap::Error> {
    let matches = SweepLine::command().try_get_matches_from(line)?;
    let mut parsed = SweepLine::from_arg_matches(&matches)?;
    parsed.args.bench.given = super::given::Given::from_matches(&matches);
    Ok(parsed)
}

/// Parses an experiment's bench line, recording which flags it gives.
fn parse_bench_line(line: &[String]) -> std::result::Result<BenchLine, clap::Error> {
    let matches = BenchLine::command().try_get_matches_from(line)?;
    let mut parsed = BenchLine::from_arg_matches(&matches)?;
    parsed.args.given = super::given::Given::from_matches(&matches);
    Ok(parsed)
}

/// Runs the command.
///
/// `--rescore DIR`: judges a saved run again with today's claims and rules.
fn rescore(dir: &Path) -> Result<()> {
    let rescored = crate::reproduce::rescore::rescore_dir(dir)?;
    super::out(&rescored.changes());
    rescored.write(dir)?;
    eprintln!("wrote {}", dir.join("verdicts-rescored.json").display());
    Ok(())
}

/// # Errors
/// An unknown id, an experiment that needs something not built, a failed run.
pub fn run(args: &ReproduceArgs) -> Result<()> {
    if let Some(dir) = &args.rescore {
        return rescore(dir);
    }
    if args.list || (args.ids.is_empty() && args.points.point.is_empty()) {
        super::out(&list()?);
        if args.ids.is_empty() && !args.list {
            eprintln!("give an experiment id to run it: flashbuf reproduce ID [--quick]");
        }
        return Ok(());
    }
    // Every id and every run's flags (with --set) are checked before anything runs.
    refuse_repeated_ids(&args.ids)?;
    let ids = if args.ids.is_empty() {
        experiments_of_points(&args.points.point)?
    } else {
        args.ids.clone()
    };
    let experiments = ids
        .iter()
        .map(|id| experiment::find(id))
        .collect::<Result<Vec<_>>>()?;
    let mut runs = prepare_runs(&experiments, args)?;
    let donors = super::points::read_donors(&args.reuse)?;
    if args.points.plan.is_some() {
        let base = super::points::argv_without_plan();
        for run in &runs {
            super::out(&run.plan.lines(args.points.plan_json(), &base));
        }
        return Ok(());
    }
    let selected: Vec<Option<Vec<usize>>> = if args.points.point.is_empty() {
        vec![None; runs.len()]
    } else {
        let plans: Vec<&Plan> = runs.iter().map(|run| &run.plan).collect();
        points::select(&plans, &args.points.point)?
            .into_iter()
            .map(Some)
            .collect()
    };
    let dirs: Vec<PathBuf> = experiments
        .iter()
        .map(|experiment| out_dir(args.out.as_deref(), experiments.len(), &experiment.id))
        .collect();
    let mut created = CreatedDirs::default();
    let mut resumes = Vec::with_capacity(runs.len());
    for ((run, dir), selected) in runs.iter().zip(&dirs).zip(&selected) {
        if selected.as_ref().is_some_and(Vec::is_empty) {
            resumes.push(None);
            continue;
        }
        let resume = created
            .create(dir)
            .and_then(|()| {
                super::points::resume(&run.plan, Some(dir), selected.as_deref(), args.points.fresh)
            })
            .and_then(|resume| super::points::reuse(&run.plan, dir, &donors, resume));
        match resume {
            Ok(resume) => resumes.push(Some(resume)),
            Err(err) => {
                created.remove_empty();
                return Err(err);
            }
        }
    }
    let mut failed = Vec::new();
    for ((run, dir), resume) in runs.iter_mut().zip(&dirs).zip(resumes) {
        let Some(resume) = resume else {
            continue;
        };
        match run_experiment(run, dir, resume) {
            Ok(sweep) => {
                if sweep.any_failed() {
                    failed.push(run.experiment.id.clone());
                }
            }
            Err(err) => {
                // This experiment's directory and those of the ones not run yet, if empty.
                created.remove_empty();
                return Err(err);
            }
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::Failed(format!(
            "runs failed or did not complete in {} (see their reports)",
            failed.join(", ")
        )))
    }
}

/// Every experiment's run, its flags (with --set) checked; refuses one that cannot run here.
fn prepare_runs<'a>(
    experiments: &'a [Experiment],
    args: &ReproduceArgs,
) -> Result<Vec<ExperimentRun<'a>>> {
    let mut runs = Vec::with_capacity(experiments.len());
    for experiment in experiments {
        if !experiment.runnable() {
            return Err(Error::Config(format!(
                "experiment `{}` ({} {}) cannot run here: it needs {}",
                experiment.id,
                experiment.paper.cite(),
                experiment.figure,
                experiment.needs.trim()
            )));
        }
        runs.push(prepare_experiment(
            experiment,
            args.quick,
            args.repeat,
            args.set.as_deref(),
        )?);
    }
    Ok(runs)
}

/// The experiments named by `--point` ids (`EXPERIMENT.pN`), in first-seen order.
fn experiments_of_points(ids: &[String]) -> Result<Vec<String>> {
    let mut experiments: Vec<String> = Vec::new();
    for id in ids {
        let Some((experiment, _)) = id.rsplit_once(".p") else {
            return Err(Error::Config(format!(
                "--point {id}: not a reproduction's point id (EXPERIMENT.pN, from `flashbuf \
                 reproduce ID --plan`)"
            )));
        };
        if !experiments.iter().any(|e| e == experiment) {
            experiments.push(experiment.to_string());
        }
    }
    Ok(experiments)
}

/// Where experiment `id` writes: `--out` itself for one experiment, `--out/ID` for several,
/// `./reproduce-ID` without `--out`.
fn out_dir(out: Option<&Path>, experiments: usize, id: &str) -> PathBuf {
    match (out, experiments) {
        (Some(dir), 1) => dir.to_path_buf(),
        (Some(dir), _) => dir.join(id),
        (None, _) => PathBuf::from(format!("reproduce-{id}")),
    }
}

/// Refuses an id given more than once: both runs would write into one directory.
fn refuse_repeated_ids(ids: &[String]) -> Result<()> {
    for (index, id) in ids.iter().enumerate() {
        if ids[..index].contains(id) {
            return Err(Error::Config(format!(
                "experiment `{id}` is given more than once; give each id once"
            )));
        }
    }
    Ok(())
}

/// The directories this command created (ancestors first), so that a failure can remove the
/// ones it left empty.
#[derive(Debug, Default)]
struct CreatedDirs(Vec<PathBuf>);

impl CreatedDirs {
    /// Creates `dir` and its missing ancestors, remembering each one created.
    fn create(&mut self, dir: &Path) -> Result<()> {
        let missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|p| !p.as_os_str().is_empty() && !p.exists())
            .collect();
        for path in missing.into_iter().rev() {
            match std::fs::create_dir(path) {
                Ok(()) => self.0.push(path.to_path_buf()),
                // Another worker (`--point` runs into one --out) made it meanwhile: not ours.
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => {}
                Err(err) => {
                    return Err(Error::Config(format!(
                        "--out {}: cannot create it: {err}",
                        dir.display()
                    )));
                }
            }
        }
        if dir.is_dir() {
            Ok(())
        } else {
            Err(Error::Config(format!(
                "--out {}: exists and is not a directory",
                dir.display()
            )))
        }
    }

    /// Removes the created directories that are still empty, deepest first (a directory with
    /// results in it stays).
    fn remove_empty(&mut self) {
        for path in self.0.drain(..).rev() {
            let _ = std::fs::remove_dir(&path);
        }
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
        Command::Probe => "device probe",
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
    let (schemes, points) = check_line(experiment, quick, None, None)?;
    let fail = |why: String| Error::Config(format!("experiment {}: {why}", experiment.id));
    if quick {
        return Ok(());
    }
    for claim in &experiment.claims {
        let required = claim.requires.iter().flat_map(|r| r.schemes.iter());
        for scheme in std::iter::once(&claim.scheme)
            .chain(claim.baseline.iter())
            .chain(required)
        {
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

/// Checks an experiment's command line (with `set` appended) as its run would see it, without
/// loading or running anything; returns its schemes and points.
///
/// # Errors
/// [`Error::Config`] naming the experiment and the problem.
pub fn check_line(
    experiment: &Experiment,
    quick: bool,
    repeat: Option<usize>,
    set: Option<&str>,
) -> Result<(Vec<String>, Vec<String>)> {
    let line = command_line(experiment, quick, repeat, set);
    let fail = |why: String| Error::Config(format!("experiment {}: {why}", experiment.id));
    Ok(match experiment.ours.command {
        Command::Probe => {
            super::reproduce_probe::check_line(&line).map_err(|e| fail(e.to_string()))?
        }
        Command::Sweep => {
            let parsed = parse_sweep_line(&line).map_err(|e| fail(e.render().to_string()))?;
            sweep_cli::check_sweep(&parsed.args).map_err(|e| fail(e.to_string()))?
        }
        Command::Bench => {
            let parsed = parse_bench_line(&line).map_err(|e| fail(e.render().to_string()))?;
            let (config, _) =
                bench::prepare(&parsed.args, "check").map_err(|e| fail(e.to_string()))?;
            let schemes = config.schemes.iter().map(|s| s.name.clone()).collect();
            (schemes, vec!["-".to_string()])
        }
    })
}

/// One experiment checked and ready to run: its command line, its plan and how to run a point.
pub struct ExperimentRun<'a> {
    /// The experiment.
    pub experiment: &'a Experiment,
    /// The plan (its points and their ids).
    pub plan: Plan,
    runner: Runner,
}

/// How an experiment's points run.
enum Runner {
    /// A co-run `device probe` line, one run per device (`reproduce_probe`).
    Probe(Vec<String>),
    /// Through the sweep code.
    Sweep(Box<PreparedSweep>),
    /// One bench run (the single point `-`).
    Bench(Box<BenchArgs>),
}

/// Checks an experiment's run (with `set` appended; nothing is loaded or run) and makes its
/// plan.
///
/// # Errors
/// [`Error::Config`] naming the experiment and the problem.
pub fn prepare_experiment<'a>(
    experiment: &'a Experiment,
    quick: bool,
    repeat: Option<usize>,
    set: Option<&str>,
) -> Result<ExperimentRun<'a>> {
    let line = command_line(experiment, quick, repeat, set);
    let shown = format!("flashbuf {}", line.join(" "));
    let fail = |why: String| Error::Config(format!("experiment {}: {why}", experiment.id));
    let (plan, runner) = match experiment.ours.command {
        Command::Probe => {
            let (schemes, values) =
                super::reproduce_probe::check_line(&line).map_err(|e| fail(e.to_string()))?;
            let plan = Plan {
                experiment: Some(experiment.id.clone()),
                quick,
                command_line: shown,
                param: "device".into(),
                param_sets: "the device of a co-run probe".into(),
                values,
                schemes,
                repeats: 1,
                grid: None,
            };
            (plan, Runner::Probe(line))
        }
        Command::Sweep => {
            let parsed = parse_sweep_line(&line).map_err(|e| fail(e.render().to_string()))?;
            let prepared =
                sweep_cli::prepare_sweep(&parsed.args, &shown, Some((&experiment.id, quick)))
                    .map_err(|e| fail(e.to_string()))?;
            (prepared.plan.clone(), Runner::Sweep(Box::new(prepared)))
        }
        Command::Bench => {
            let parsed = parse_bench_line(&line).map_err(|e| fail(e.render().to_string()))?;
            let (config, _) =
                bench::prepare(&parsed.args, "check").map_err(|e| fail(e.to_string()))?;
            let plan = Plan {
                experiment: Some(experiment.id.clone()),
                quick,
                command_line: shown,
                param: "run".into(),
                param_sets: "a single bench run".into(),
                values: vec!["-".into()],
                schemes: config.schemes.iter().map(|s| s.name.clone()).collect(),
                repeats: parsed.args.repeat,
                grid: None,
            };
            (plan, Runner::Bench(Box::new(parsed.args)))
        }
    };
    Ok(ExperimentRun {
        experiment,
        plan,
        runner,
    })
}

/// Runs the points `resume` says of one experiment into `dir`: a whole run rewrites the report
/// (results.json, verdicts.json, report.html) after every point and prints the verdicts at the
/// end; a `--point` run writes only its point files. Returns the results.
///
/// # Errors
/// A failed load, files that cannot be written.
pub fn run_experiment(
    run: &mut ExperimentRun<'_>,
    dir: &Path,
    resume: super::points::Resume,
) -> Result<SweepResults> {
    let experiment = run.experiment;
    let plan = &run.plan;
    eprintln!(
        "reproduce {} ({} {}){}: {}",
        experiment.id,
        experiment.paper.cite(),
        experiment.figure,
        if plan.quick { ", quick" } else { "" },
        plan.command_line
    );
    let whole = resume.whole;
    let progress = |sweep: &SweepResults| {
        let verdicts = experiment.judge(Measured::from_sweep(sweep));
        if let Err(err) = write_report_dir(
            dir,
            experiment,
            sweep,
            &verdicts,
            plan.quick,
            &plan.command_line,
        ) {
            eprintln!("flashbuf: writing {}: {err}", dir.display());
        }
    };
    let sweep = match &mut run.runner {
        Runner::Probe(line) => {
            // A co-run probe is deterministic and takes about a second: it runs whole.
            let sweep = super::reproduce_probe::run_line(line, &plan.command_line)?;
            progress(&sweep);
            report_experiment(plan, &sweep, dir)?;
            return Ok(sweep);
        }
        Runner::Sweep(prepared) => prepared.run(Some(dir), resume, progress)?,
        Runner::Bench(args) => super::points::run_points(
            plan,
            Some(dir),
            resume,
            |_, continuation| bench_point(args, &plan.command_line, continuation),
            progress,
        )?,
    };
    if whole {
        report_experiment(plan, &sweep, dir)?;
    } else {
        eprintln!(
            "wrote the point files to {}; assemble the report with: flashbuf merge {} --out DIR",
            dir.join(points::POINTS_DIR).display(),
            dir.display()
        );
    }
    Ok(sweep)
}

/// A bench experiment's one point, continuing from the runs `continuation` kept.
fn bench_point(args: &BenchArgs, shown: &str, continuation: &mut Continuation<'_>) -> SweepPoint {
    SweepPoint::from_outcome("-", bench::run_to_results(args, shown, continuation), "run")
}

/// Judges an experiment's results (of `plan`, from a whole run or `merge`), writes its report
/// into `dir` and prints the verdicts; returns them.
///
/// # Errors
/// A plan that is not a known experiment's; files that cannot be written.
pub fn report_experiment(plan: &Plan, sweep: &SweepResults, dir: &Path) -> Result<Vec<Verdict>> {
    let id = plan
        .experiment
        .as_deref()
        .ok_or_else(|| Error::Config("not a reproduction's results".into()))?;
    let experiment = experiment::find(id)?;
    let verdicts = experiment.judge(Measured::from_sweep(sweep));
    write_report_dir(
        dir,
        &experiment,
        sweep,
        &verdicts,
        plan.quick,
        &plan.command_line,
    )?;
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
    Ok(verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(ids: &[&str], out: &Path, set: &str) -> ReproduceArgs {
        ReproduceArgs {
            list: false,
            ids: ids.iter().map(|id| (*id).to_string()).collect(),
            quick: true,
            out: Some(out.to_path_buf()),
            set: Some(set.into()),
            repeat: None,
            rescore: None,
            reuse: Vec::new(),
            points: PointFlags::default(),
        }
    }

    #[test]
    fn an_id_given_twice_is_refused_before_anything_is_made() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("twice");
        let err = run(&args(&["lruc-fig6", "lruc-fig6"], &out, "")).unwrap_err();
        assert!(err.to_string().contains("more than once"), "{err}");
        assert!(!out.exists());
    }

    #[test]
    fn a_failed_run_leaves_no_empty_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("a").join("b");
        // A bench flag no run accepts: the experiment fails before it writes anything.
        let err = run(&args(&["lruc-fig6"], &out, "--threads 0")).unwrap_err();
        assert!(err.to_string().contains("threads"), "{err}");
        assert!(!tmp.path().join("a").exists(), "left {}", out.display());
        let several = run(&args(&["lruc-fig6", "lruc-fig7a"], &out, "--threads 0"));
        assert!(several.is_err());
        assert!(!tmp.path().join("a").exists(), "left {}", out.display());
    }

    #[test]
    fn an_experiment_that_needs_something_is_refused_with_what_it_needs() {
        let text = r#"
id = "x-needs"
paper = "ace"
figure = "Figure 0"
title = "t"
measures = "m"
needs = "a device model nobody built"
[paper_setup]
text = "s"
schemes = ["pg-lru"]
[ours]
approximations = "Not run."
command = "bench"
args = []
quick_args = []
"#;
        let experiment = Experiment::parse("x-needs.toml", text).unwrap();
        assert!(!experiment.runnable());
        let tmp = tempfile::tempdir().unwrap();
        let err = prepare_runs(&[experiment], &args(&[], tmp.path(), ""))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("cannot run here") && err.contains("nobody built"),
            "{err}"
        );
    }

    #[test]
    fn an_existing_directory_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let err = run(&args(&["lruc-fig6"], tmp.path(), "--threads 0"));
        assert!(err.is_err());
        assert!(tmp.path().is_dir());
    }
}
