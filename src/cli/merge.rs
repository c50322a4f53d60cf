//! `flashbuf merge FILES_OR_DIRS... --out DIR` (issue 21 item 6): assembles the report of a
//! sweep or a reproduction from point results files (`*.point.json`, written by `--point` runs
//! or by whole runs), wherever and in whatever order they ran.
//!
//! The files are grouped by plan ([`crate::sweep::points::group`]: one group per experiment, or
//! per sweep command line; files of two runs of one experiment are refused), and each group
//! gets the report its whole run writes: results.json, verdicts.json and report.html for a
//! reproduction (with the verdicts printed), sweep.json, the plots and report.html for a sweep,
//! and the table. One group writes into `--out`; several reproductions one subdirectory each
//! (`--out/EXPERIMENT`, as `reproduce A B --out DIR` does); several sweeps are refused.
//!
//! A plan point with no file is reported by id, marked `not_run` (`missing`) in the report,
//! and makes the exit code 1, as does a point that did not complete; the report is written
//! either way.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::sweep::points::{self, Group, PointFile};

/// Arguments of `merge`.
#[derive(Debug, Clone, clap::Args)]
pub struct MergeArgs {
    /// Point results files (`*.point.json`), or directories searched for them recursively
    /// (e.g. the `--out` of every `--point` run, or one shared directory).
    #[arg(required = true, value_name = "FILES_OR_DIRS")]
    pub inputs: Vec<PathBuf>,
    /// Where to write the report: results.json, verdicts.json and report.html for a
    /// reproduction, sweep.json, plots and report.html for a sweep; with several experiments,
    /// one subdirectory per experiment.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Runs the command.
///
/// # Errors
/// Bad inputs (nothing written): no point files, unreadable or inconsistent files, files of
/// different runs of one experiment, duplicates that cannot be resolved, a bad `--out`.
/// After writing: missing points or points that did not complete, named.
pub fn run(args: &MergeArgs) -> Result<()> {
    if args.out.exists() && !args.out.is_dir() {
        return Err(Error::Config(format!(
            "--out {}: exists and is not a directory",
            args.out.display()
        )));
    }
    let paths = points::find_files(&args.inputs)?;
    if paths.is_empty() {
        return Err(Error::Config(format!(
            "no point results files (*{}) in {}",
            points::SUFFIX,
            args.inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let files = paths
        .into_iter()
        .map(|path| PointFile::read(&path).map(|file| (path, file)))
        .collect::<Result<Vec<_>>>()?;
    let groups = points::group(files)?;
    let sweeps = groups
        .iter()
        .filter(|g| g.plan.experiment.is_none())
        .count();
    if sweeps > 0 && groups.len() > 1 {
        return Err(Error::Config(format!(
            "the files hold {} runs, {sweeps} of them sweeps ({}); merge a sweep on its own",
            groups.len(),
            groups
                .iter()
                .map(|g| format!("`{}`", g.plan.command_line))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut problems = Vec::new();
    for group in &groups {
        let dir = match (&group.plan.experiment, groups.len()) {
            (Some(id), n) if n > 1 => args.out.join(id),
            _ => args.out.clone(),
        };
        problems.extend(merge_group(group, &dir)?);
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::Failed(problems.join("; ")))
    }
}

/// Writes one group's report into `dir`; returns its problems (missing points, points that
/// did not complete), one line each.
fn merge_group(group: &Group, dir: &Path) -> Result<Vec<String>> {
    let plan = &group.plan;
    eprintln!(
        "merge: {} ({}): {} of {} points, from {}",
        plan.label(),
        plan.command_line,
        group.points.len(),
        plan.values.len(),
        hosts(group)
    );
    for note in &group.notes {
        eprintln!("merge: {note}");
    }
    let sweep = group.assemble();
    std::fs::create_dir_all(dir).map_err(|err| {
        Error::Config(format!("--out {}: cannot create it: {err}", dir.display()))
    })?;
    outln!("{}", sweep.format_table());
    if plan.experiment.is_some() {
        super::reproduce::report_experiment(plan, &sweep, dir)?;
    } else {
        crate::sweep::plot::write_sweep_dir(dir, &sweep)?;
        eprintln!(
            "wrote sweep.json, plots and report.html to {}",
            dir.display()
        );
    }
    let mut problems = Vec::new();
    let missing = group.missing();
    if !missing.is_empty() {
        problems.push(format!(
            "{}: {} of {} points missing (no results file among the inputs): {}; the report \
             marks them not run",
            plan.label(),
            missing.len(),
            plan.values.len(),
            missing.join(", ")
        ));
    }
    let not_done: Vec<String> = group
        .points
        .values()
        .filter(|(_, file)| !file.done())
        .map(|(_, file)| match file.ended_runs.len() {
            0 => file.id.clone(),
            ended => format!(
                "{} (under way: {ended} of {} runs ended; a rerun into its directory continues it)",
                file.id,
                plan.repeats * plan.schemes.len()
            ),
        })
        .collect();
    if !not_done.is_empty() {
        problems.push(format!(
            "{}: points that did not complete: {}",
            plan.label(),
            not_done.join(", ")
        ));
    }
    Ok(problems)
}

/// The hosts the group's points ran on, with how many each.
fn hosts(group: &Group) -> String {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (_, file) in group.points.values() {
        *counts.entry(file.provenance.host.as_str()).or_default() += 1;
    }
    counts
        .iter()
        .map(|(host, n)| format!("{host} ({n})"))
        .collect::<Vec<_>>()
        .join(", ")
}
