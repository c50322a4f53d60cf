//! The point flags of `sweep` and `reproduce` (`--plan`, `--point`, `--fresh`) and the loop
//! that runs a plan's points (issue 21 item 6; the plan, ids and files are
//! [`crate::sweep::points`]).
//!
//! A whole run with an output directory writes each point's results file
//! (`OUT/points/ID.point.json`) after every run of the point (until it completes, the file
//! says it is under way and keeps the runs that ended) and, as the point ends, calls back with
//! the results so far (the caller rewrites its report). A rerun into the same directory skips
//! the points whose file says they are done and continues the others from the runs their files
//! kept ([`crate::bench::continuation`]); `--fresh` removes the files first and runs
//! everything. A `--point` run writes only its points' files: other workers may be writing
//! into the same directory, so the report is `flashbuf merge`'s job.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::bench::continuation::{Continuation, EndedRun};
use crate::error::{Error, Result};
use crate::sweep::points::{POINTS_DIR, PointFile, Provenance, SUFFIX, assemble};
use crate::sweep::reuse;
use crate::sweep::{PointStatus, SweepPoint, SweepResults, points::Plan};

/// `--plan`, `--point`, `--fresh`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PointFlags {
    /// Print the plan and run nothing: one point id per line (`--plan=json`: one JSON record
    /// per line with the id, the value, the schemes, the repeats and `argv`, the command that
    /// runs the point). Every flag is checked as for a run. See docs/distributed.md.
    #[arg(
        long,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "ids",
        value_name = "FORMAT",
        value_parser = ["ids", "json"]
    )]
    pub plan: Option<String>,
    /// Run only these points (ids from `--plan`; comma-separated or repeated), each writing
    /// its own results file OUT/points/ID.point.json (with the flashbuf version, the command,
    /// the host, the start and end time) and no report: `flashbuf merge` assembles that from
    /// any set of point files. A point file that says the point is done is not run again
    /// (`--fresh` does).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "ID",
        conflicts_with = "plan"
    )]
    pub point: Vec<String>,
    /// Run every point again: remove the point files in OUT/points first. Without it, a rerun
    /// into the same --out skips the points already done (and says so).
    #[arg(long, conflicts_with = "plan")]
    pub fresh: bool,
}

impl PointFlags {
    /// Whether `--plan=json` was asked for.
    #[must_use]
    pub fn plan_json(&self) -> bool {
        self.plan.as_deref() == Some("json")
    }
}

/// This process's arguments without `--plan`/`--plan=FORMAT`: the base of each point's
/// command in `--plan=json`.
#[must_use]
pub fn argv_without_plan() -> Vec<String> {
    std::env::args()
        .filter(|arg| arg != "--plan" && !arg.starts_with("--plan="))
        .collect()
}

/// `command_line` without the flags that say where output goes or which points run (`--out`,
/// `--json`, `--plan`, `--point`, `--fresh`, with their values): the identity of a sweep's
/// plan, the same for every worker.
#[must_use]
pub fn plan_identity(args: &[String]) -> String {
    const WITH_VALUE: &[&str] = &["--out", "--json", "--point"];
    const ALONE: &[&str] = &["--plan", "--fresh"];
    let (kept, _) = crate::sweep::points::split_flags(
        args.iter().skip(1).map(String::as_str),
        WITH_VALUE,
        ALONE,
    );
    format!("flashbuf {}", kept.join(" "))
}

/// Which points a run runs, and what is already done in its output directory.
#[derive(Debug)]
pub struct Resume {
    /// Points done in an earlier run (by index), kept.
    pub done: BTreeMap<usize, SweepPoint>,
    /// Indices to run, in order.
    pub todo: Vec<usize>,
    /// Per index to run: the runs an interrupted earlier attempt kept, which it continues from.
    pub kept: BTreeMap<usize, Vec<EndedRun>>,
    /// Whether this runs the whole plan (a report after every point) rather than `--point`s.
    pub whole: bool,
}

/// Works out what to run: `selected` (`None`: every point) minus the points whose file in
/// `out` says they are done, unless `fresh` (which removes the files first); a point whose file
/// kept the runs of an interrupted attempt continues from them. Prints a line per skipped or
/// continued point.
///
/// # Errors
/// `out` holds point files of another plan (and not `fresh`), or files that cannot be read or
/// removed.
pub fn resume(
    plan: &Plan,
    out: Option<&Path>,
    selected: Option<&[usize]>,
    fresh: bool,
) -> Result<Resume> {
    let all: Vec<usize> = (0..plan.values.len()).collect();
    let wanted = selected.unwrap_or(&all);
    let mut done = BTreeMap::new();
    let mut partial = BTreeMap::new();
    if let Some(dir) = out {
        if fresh {
            remove_point_files(dir)?;
        }
        for (path, file) in readable_point_files(dir)? {
            if !file.plan.same_run(plan) {
                return Err(Error::Config(format!(
                    "--out {}: holds results of another run ({} from `{}`); rerun with \
                     --fresh to replace them, or choose another --out",
                    dir.display(),
                    path.display(),
                    file.plan.command_line
                )));
            }
            if file.done() {
                done.insert(file.index, (path, file));
            } else if !file.ended_runs.is_empty() {
                partial.insert(file.index, (path, file.ended_runs));
            }
        }
    }
    let todo: Vec<usize> = wanted
        .iter()
        .copied()
        .filter(|index| !done.contains_key(index))
        .collect();
    for index in wanted.iter().filter(|index| done.contains_key(index)) {
        let (path, _) = &done[index];
        eprintln!(
            "{}: point {} ({} = {}) already done ({}): skipped; --fresh runs it again",
            plan.label(),
            plan.id(*index),
            plan.param,
            plan.values[*index],
            path.display()
        );
    }
    let kept = continued(plan, &todo, partial);
    Ok(Resume {
        done: done
            .into_iter()
            .map(|(index, (_, file))| (index, file.point))
            .collect(),
        todo,
        kept,
        whole: selected.is_none(),
    })
}

/// The kept runs of the points in `todo` whose file holds some, with a line per point.
fn continued(
    plan: &Plan,
    todo: &[usize],
    mut partial: BTreeMap<usize, (PathBuf, Vec<EndedRun>)>,
) -> BTreeMap<usize, Vec<EndedRun>> {
    let mut kept = BTreeMap::new();
    for index in todo {
        let Some((path, runs)) = partial.remove(index) else {
            continue;
        };
        eprintln!(
            "{}: point {} ({} = {}) continues an interrupted attempt: {} of {} runs kept ({}); \
             --fresh runs it all again",
            plan.label(),
            plan.id(*index),
            plan.param,
            plan.values[*index],
            runs.len(),
            plan.repeats * plan.schemes.len(),
            path.display()
        );
        kept.insert(*index, runs);
    }
    kept
}

/// Takes the points of `resume.todo` that a point among `donors` covers
/// ([`crate::sweep::reuse`]) instead of running them: each is written into `out` as its own
/// point file (saying where it came from) and counted done. Prints a line per point taken.
///
/// # Errors
/// A point file that cannot be written.
pub fn reuse(
    plan: &Plan,
    out: &Path,
    donors: &[(PathBuf, PointFile)],
    mut resume: Resume,
) -> Result<Resume> {
    let mut todo = Vec::with_capacity(resume.todo.len());
    for index in std::mem::take(&mut resume.todo) {
        let covering = donors.iter().find_map(|(path, donor)| {
            let at = reuse::covering_index(&donor.plan, plan, index)?;
            (donor.index == at && donor.done()).then_some((path, donor))
        });
        let Some((path, donor)) = covering else {
            todo.push(index);
            continue;
        };
        let file = reuse::derive(donor, path, plan, index);
        let written = file.write(out)?;
        eprintln!(
            "{}: point {} ({} = {}) taken from {} ({}){}: wrote {}",
            plan.label(),
            file.id,
            plan.param,
            plan.values[index],
            donor.id,
            path.display(),
            left_out(&file),
            written.display()
        );
        resume.done.insert(index, file.point);
    }
    resume.todo = todo;
    Ok(resume)
}

/// `, leaving out S1, S2` for a point taken from a run with more schemes.
fn left_out(file: &PointFile) -> String {
    match &file.derived_from {
        Some(derived) if !derived.schemes_left_out.is_empty() => {
            format!(", leaving out {}", derived.schemes_left_out.join(", "))
        }
        _ => String::new(),
    }
}

/// Reads the point files under `inputs` (`--reuse`): files, or directories searched
/// recursively.
///
/// # Errors
/// [`Error::Config`] naming `--reuse` and the input that does not exist or cannot be read.
pub fn read_donors(inputs: &[PathBuf]) -> Result<Vec<(PathBuf, PointFile)>> {
    let fail = |err: Error| Error::Config(format!("--reuse: {err}"));
    crate::sweep::points::find_files(inputs)
        .map_err(fail)?
        .into_iter()
        .map(|path| {
            PointFile::read(&path)
                .map(|file| (path, file))
                .map_err(fail)
        })
        .collect()
}

/// The point files under `dir` that can be read; one that cannot is reported and left out
/// (its point runs again and rewrites it).
fn readable_point_files(dir: &Path) -> Result<Vec<(PathBuf, PointFile)>> {
    let points = dir.join(POINTS_DIR);
    if !points.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for path in crate::sweep::points::find_files(&[points])? {
        match PointFile::read(&path) {
            Ok(file) => files.push((path, file)),
            Err(err) => eprintln!("flashbuf: {err}; that point runs again"),
        }
    }
    Ok(files)
}

/// Removes `dir`'s point files (`--fresh`).
fn remove_point_files(dir: &Path) -> Result<()> {
    let points = dir.join(POINTS_DIR);
    let Ok(entries) = std::fs::read_dir(&points) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path: PathBuf = entry.path();
        let is_point = path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.ends_with(SUFFIX));
        if is_point {
            std::fs::remove_file(&path)
                .map_err(|err| Error::io(format!("--fresh: removing {}", path.display()), err))?;
        }
    }
    Ok(())
}

/// Runs `resume.todo` in order with `run_one` (index and its [`Continuation`] -> point),
/// writing each point's file into `out` (if any) after every run of the point and as it ends,
/// and, for a whole run, calling `progress` with the results so far after each point. On
/// Ctrl-C the points not started are `not_run` (and get no file). Returns the results: every
/// point of a whole run; a `--point` run's own points otherwise.
///
/// # Errors
/// A point file that cannot be written as the point ends (one that cannot be written after a
/// run is reported, and the point goes on).
pub fn run_points(
    plan: &Plan,
    out: Option<&Path>,
    resume: Resume,
    mut run_one: impl FnMut(usize, &mut Continuation<'_>) -> SweepPoint,
    mut progress: impl FnMut(&SweepResults),
) -> Result<SweepResults> {
    let Resume {
        mut done,
        todo,
        mut kept,
        whole,
    } = resume;
    let mut ran = BTreeMap::new();
    for &index in &todo {
        if crate::bench::interrupt::interrupted() {
            ran.insert(
                index,
                SweepPoint {
                    value: plan.values[index].clone(),
                    status: PointStatus::NotRun,
                    error: Some("not run: interrupted (Ctrl-C)".into()),
                    results: None,
                    coordinates: Vec::new(),
                },
            );
            continue;
        }
        let started = crate::bench::report::utc_now_iso8601();
        let mut under_way = |ended: &[EndedRun]| {
            if let Some(dir) = out
                && let Err(err) = under_way_file(plan, index, &started, ended).write(dir)
            {
                eprintln!("flashbuf: {err} (the point goes on)");
            }
        };
        let mut continuation =
            Continuation::new(kept.remove(&index).unwrap_or_default(), &mut under_way);
        let point = run_one(index, &mut continuation);
        let kept_runs = continuation.taken().to_vec();
        let ended_runs = continuation.into_runs();
        if let Some(dir) = out
            && (point.status != PointStatus::NotRun || !ended_runs.is_empty())
        {
            let file = PointFile {
                format: crate::sweep::points::FORMAT.into(),
                id: plan.id(index),
                index,
                plan: plan.clone(),
                provenance: Provenance {
                    kept_runs,
                    ..Provenance::ending_now(started)
                },
                ended_runs: if point.status == PointStatus::Done {
                    Vec::new()
                } else {
                    ended_runs
                },
                point: point.clone(),
                derived_from: None,
            };
            let path = file.write(dir)?;
            eprintln!("{}: wrote {}", plan.label(), path.display());
        }
        ran.insert(index, point.clone());
        if whole {
            done.insert(index, point);
            progress(&assemble(plan, &done, false));
        }
    }
    if whole {
        done.extend(ran);
        Ok(assemble(plan, &done, true))
    } else {
        Ok(only(plan, &ran))
    }
}

/// The file of point `index` while it runs: `not_run`, saying how many of its runs `ended`
/// holds, which a rerun takes instead of running them.
fn under_way_file(plan: &Plan, index: usize, started: &str, ended: &[EndedRun]) -> PointFile {
    let total = plan.repeats * plan.schemes.len();
    PointFile {
        format: crate::sweep::points::FORMAT.into(),
        id: plan.id(index),
        index,
        plan: plan.clone(),
        provenance: Provenance::ending_now(started.to_string()),
        point: SweepPoint {
            value: plan.values[index].clone(),
            status: PointStatus::NotRun,
            error: Some(format!(
                "under way: {} of {total} runs ended (kept in this file); if its run was \
                 stopped, a rerun into this directory continues from them",
                ended.len()
            )),
            results: None,
            coordinates: Vec::new(),
        },
        derived_from: None,
        ended_runs: ended.to_vec(),
    }
}

/// A `--point` run's results: its own points, in plan order (for the table and exit code).
fn only(plan: &Plan, points: &BTreeMap<usize, SweepPoint>) -> SweepResults {
    let mut sweep = plan.empty_results();
    sweep.values = points
        .keys()
        .map(|&index| plan.values[index].clone())
        .collect();
    for point in points.values() {
        sweep.push(point.clone());
    }
    sweep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn the_identity_drops_output_and_point_flags() {
        let line = strings(&[
            "/bin/flashbuf",
            "sweep",
            "--param",
            "threads",
            "--out",
            "dir",
            "--point=p2",
            "--plan",
            "--fresh",
            "--json",
            "x.json",
            "--values",
            "1,2",
            "--point",
            "p1",
            "--out=elsewhere",
        ]);
        assert_eq!(
            plan_identity(&line),
            "flashbuf sweep --param threads --values 1,2"
        );
    }
}
