//! Independent points (issue 21 item 6): a sweep's or a reproduction's plan as points with
//! stable ids, one results file per point, and the assembly of any set of those files into the
//! run's [`SweepResults`], which is what a whole run reports after every point and what
//! `flashbuf merge` reports from files written on many machines.
//!
//! **A point** is one value of the swept parameter (a bench experiment has one point, `-`),
//! with all its schemes and all its repeats. Those run on one host, interleaved (every scheme
//! once, then every scheme again, ...), exactly as in a whole run: the paired ratio interval
//! ([`crate::bench::stats::ratio_interval`]) pairs repeat k of two schemes that ran back to
//! back, and a confidence interval over repeats measures one host's run-to-run noise, so
//! neither schemes nor repeats of a point are split across hosts.
//!
//! **Ids**: `pN` for a sweep, `EXPERIMENT.pN` for a reproduction (N counts the values from 1 in
//! the plan's order; experiment ids are lowercase letters, digits and `-`, so the `.` is
//! unambiguous). An id is stable for a given command line; the results file carries its plan,
//! so files of another plan are refused rather than mixed. Plans that differ only in
//! [`HOST_FLAGS`] (the time scale, the image's path) are one run: a host too slow for the
//! others' time scale runs its points at a higher one, and [`group`] names which ran how.
//!
//! **Files**: `DIR/points/ID.point.json` ([`PointFile`]): the format tag, the id, the plan, the
//! provenance (flashbuf version, the full command, the host, start and end time) and the point
//! in the sweep.json format. Written through a temporary file and a rename, after every run of
//! the point: until the point completes, the file says it is under way (`not_run`) and holds
//! the runs that ended (`ended_runs`), which a rerun continues from
//! ([`crate::bench::continuation`]).
//!
//! **Assembly** ([`assemble`]): points in plan order; a plan value with no file is a `not_run`
//! point saying `missing`. Duplicates ([`group`]): the same file reached twice counts once; of
//! two files for one point, the only one whose point is done is taken (and said so); two done
//! (or two not done) are refused, naming both files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{PointStatus, SweepPoint, SweepResults};
use crate::error::{Error, Result};

/// The subdirectory of an output directory that holds the point files.
pub const POINTS_DIR: &str = "points";

/// How a point file's name ends.
pub const SUFFIX: &str = ".point.json";

/// The format tag of a point file.
pub const FORMAT: &str = "flashbuf-point/1";

/// A run's plan: what its points are and the command line that makes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The reproduction's experiment id (`None`: a sweep).
    pub experiment: Option<String>,
    /// A reproduction's `--quick`.
    pub quick: bool,
    /// The run's command line without its output, plan and point flags: the plan's identity.
    pub command_line: String,
    /// The swept parameter (`run` for a bench experiment).
    pub param: String,
    /// What it sets.
    pub param_sets: String,
    /// Every value, in order (point N is value N).
    pub values: Vec<String>,
    /// The schemes, in order.
    pub schemes: Vec<String>,
    /// Runs of each scheme at each point.
    pub repeats: usize,
    /// A two-parameter sweep's axes (`values` are then the grid's labels, in point order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<super::grid::Grid>,
}

/// Flags that say how a host runs a plan, not what it measures: the emulation's time scale
/// (`--model-cores`; every run records its time scale and timing error, which the verdicts
/// judge) and where a record workload's image lies (`--db`; `bench` refuses an image loaded
/// with other parameters). Points whose plans differ only in these are points of one run, so
/// a slow host can run its points at a higher time scale and still merge with the rest.
pub const HOST_FLAGS: &[&str] = &["--model-cores", "--db"];

/// Switches (flags without a value) that say how a host runs a plan: `--fill-pool`, which
/// fills the pool untimed before the warm-up that settles it ([`crate::bench::fill`]), so that
/// a point whose pool takes hours of real time to fill (a hard disk at a high time scale) can
/// be run with it and merge with the points that ran without.
pub const HOST_SWITCHES: &[&str] = &["--fill-pool"];

impl Plan {
    /// The command line without [`HOST_FLAGS`] (with their values) and [`HOST_SWITCHES`]: what
    /// the plan measures.
    #[must_use]
    pub fn identity(&self) -> String {
        split_host_flags(&self.command_line).0.join(" ")
    }

    /// The [`HOST_FLAGS`] (with their values) and [`HOST_SWITCHES`] of the command line, in
    /// order (a later one wins).
    #[must_use]
    pub fn host_flags(&self) -> String {
        split_host_flags(&self.command_line).1.join(" ")
    }

    /// Whether `other` is a plan of the same run: equal but for [`HOST_FLAGS`] and
    /// [`HOST_SWITCHES`].
    #[must_use]
    pub fn same_run(&self, other: &Plan) -> bool {
        let without = |plan: &Plan| Plan {
            command_line: plan.identity(),
            ..plan.clone()
        };
        without(self) == without(other)
    }

    /// The id of point `index` (0-based).
    #[must_use]
    pub fn id(&self, index: usize) -> String {
        match &self.experiment {
            Some(experiment) => format!("{experiment}.p{}", index + 1),
            None => format!("p{}", index + 1),
        }
    }

    /// Every point's id, in order.
    #[must_use]
    pub fn ids(&self) -> Vec<String> {
        (0..self.values.len()).map(|index| self.id(index)).collect()
    }

    /// The index of point `id`, if the plan has it.
    #[must_use]
    pub fn index_of(&self, id: &str) -> Option<usize> {
        (0..self.values.len()).find(|&index| self.id(index) == id)
    }

    /// How the plan is named in messages: the experiment, or `sweep`.
    #[must_use]
    pub fn label(&self) -> String {
        self.experiment
            .clone()
            .unwrap_or_else(|| format!("sweep over {}", self.param))
    }

    /// An empty results record of this plan.
    #[must_use]
    pub fn empty_results(&self) -> SweepResults {
        let mut sweep = SweepResults::new(
            &self.command_line,
            &self.param,
            &self.param_sets,
            self.values.clone(),
            self.schemes.clone(),
        );
        sweep.header.repeats = self.repeats;
        sweep.grid.clone_from(&self.grid);
        sweep
    }

    /// The plan as printed by `--plan`: one id per line, or (`json`) one JSON record per line
    /// with the id, the experiment, the point's index (from 1), parameter, value, schemes,
    /// repeats, and `argv`, the command that runs the point (`base_argv` plus `--point ID`).
    #[must_use]
    pub fn lines(&self, json: bool, base_argv: &[String]) -> String {
        let mut out = String::new();
        for (index, value) in self.values.iter().enumerate() {
            let id = self.id(index);
            if json {
                let mut argv = base_argv.to_vec();
                argv.extend(["--point".to_string(), id.clone()]);
                let record = serde_json::json!({
                    "id": id,
                    "experiment": self.experiment,
                    "index": index + 1,
                    "param": self.param,
                    "value": value,
                    "coordinates": self.grid.as_ref().map(|grid| grid.coordinates(index)),
                    "schemes": self.schemes,
                    "repeats": self.repeats,
                    "argv": argv,
                });
                out.push_str(&record.to_string());
            } else {
                out.push_str(&id);
            }
            out.push('\n');
        }
        out
    }
}

/// Checks `--point` ids against the plans and returns, per plan, the indices asked for.
///
/// # Errors
/// [`Error::Config`] naming `--point`, the unknown id and the valid ones.
pub fn select(plans: &[&Plan], requested: &[String]) -> Result<Vec<Vec<usize>>> {
    let mut selected = vec![Vec::new(); plans.len()];
    for id in requested {
        let found = plans
            .iter()
            .enumerate()
            .find_map(|(at, plan)| plan.index_of(id).map(|index| (at, index)));
        let Some((at, index)) = found else {
            let valid: Vec<String> = plans.iter().flat_map(|plan| plan.ids()).collect();
            return Err(Error::Config(format!(
                "--point {id}: no such point in this run; its points are {} (`--plan` lists \
                 them with the same flags)",
                valid.join(", ")
            )));
        };
        if selected[at].contains(&index) {
            return Err(Error::Config(format!(
                "--point {id} is given more than once; give each point once"
            )));
        }
        selected[at].push(index);
    }
    for indices in &mut selected {
        indices.sort_unstable();
    }
    Ok(selected)
}

/// Where a results file was written and by what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// `CARGO_PKG_VERSION` of the flashbuf that ran the point.
    pub flashbuf_version: String,
    /// The source it was built from ([`crate::BUILD`]; empty in files written before it was
    /// recorded).
    #[serde(default)]
    pub flashbuf_build: String,
    /// The full command that ran it.
    pub command: String,
    /// The host's name.
    pub host: String,
    /// UTC start time, ISO 8601.
    pub started: String,
    /// UTC end time, ISO 8601.
    pub ended: String,
    /// A point continued from an interrupted attempt: where, by what build and when each run
    /// taken from it ran (the rest ran as this provenance says).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept_runs: Vec<crate::bench::continuation::RunOrigin>,
}

impl Provenance {
    /// Provenance for a point that started at `started` and ends now.
    #[must_use]
    pub fn ending_now(started: String) -> Provenance {
        Provenance {
            flashbuf_version: crate::VERSION.to_string(),
            flashbuf_build: crate::BUILD.to_string(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            host: crate::bench::report::host_name(),
            started,
            ended: crate::bench::report::utc_now_iso8601(),
            kept_runs: Vec::new(),
        }
    }
}

/// One point's results file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointFile {
    /// [`FORMAT`].
    pub format: String,
    /// The point's id.
    pub id: String,
    /// Its index in the plan (0-based).
    pub index: usize,
    /// The plan it belongs to.
    pub plan: Plan,
    /// Who ran it, where, when.
    pub provenance: Provenance,
    /// The point, as in sweep.json.
    pub point: SweepPoint,
    /// Set when the point was taken from another run's point that covers it
    /// (`reproduce --reuse`, [`super::reuse`]) rather than run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<DerivedFrom>,
    /// A point that did not complete: the runs that did, each scheme's repeat with its record,
    /// which a rerun into the same directory takes instead of running them again
    /// ([`crate::bench::continuation`]). Empty for a completed point.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ended_runs: Vec<crate::bench::continuation::EndedRun>,
}

/// Where a point taken from another run came from ([`super::reuse::derive()`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DerivedFrom {
    /// The covering point's file, as read.
    pub file: String,
    /// The covering point's id.
    pub id: String,
    /// The command line of the covering run's plan.
    pub command_line: String,
    /// The covering run's schemes that this point leaves out.
    pub schemes_left_out: Vec<String>,
    /// UTC time the point was taken, ISO 8601.
    pub taken: String,
}

impl PointFile {
    /// The file of point `id` under output directory `dir`.
    #[must_use]
    pub fn path_in(dir: &Path, id: &str) -> PathBuf {
        dir.join(POINTS_DIR).join(format!("{id}{SUFFIX}"))
    }

    /// Writes the file under `dir` (through a temporary file and a rename); returns its path.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn write(&self, dir: &Path) -> Result<PathBuf> {
        let path = Self::path_in(dir, &self.id);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|err| Error::io(format!("creating {}", parent.display()), err))?;
        }
        let json = serde_json::to_string_pretty(self)
            .map_err(|err| Error::Config(format!("cannot serialize point {}: {err}", self.id)))?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, json)
            .map_err(|err| Error::io(format!("writing {}", tmp.display()), err))?;
        std::fs::rename(&tmp, &path)
            .map_err(|err| Error::io(format!("renaming to {}", path.display()), err))?;
        Ok(path)
    }

    /// Reads and checks a point file.
    ///
    /// # Errors
    /// [`Error::Config`] naming the file: not readable, not a point file, or inconsistent.
    pub fn read(path: &Path) -> Result<PointFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| Error::io(format!("reading {}", path.display()), err))?;
        let file: PointFile = serde_json::from_str(&text).map_err(|err| {
            Error::Config(format!(
                "{}: not a flashbuf point results file: {err}",
                path.display()
            ))
        })?;
        if file.format != FORMAT {
            return Err(Error::Config(format!(
                "{}: format `{}`, this flashbuf reads `{FORMAT}`",
                path.display(),
                file.format
            )));
        }
        let consistent = file.index < file.plan.values.len()
            && file.plan.id(file.index) == file.id
            && file.plan.values[file.index] == file.point.value;
        if !consistent {
            return Err(Error::Config(format!(
                "{}: point {} does not match its plan (index {}, value `{}`)",
                path.display(),
                file.id,
                file.index,
                file.point.value
            )));
        }
        Ok(file)
    }

    /// Whether the point completed (every scheme ran).
    #[must_use]
    pub fn done(&self) -> bool {
        self.point.status == PointStatus::Done
    }
}

/// The point files among `inputs`: files as given, directories searched recursively for
/// `*.point.json`; sorted, each canonical path once.
///
/// # Errors
/// [`Error::Config`] naming an input that does not exist or cannot be listed.
pub fn find_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for input in inputs {
        if input.is_dir() {
            collect_dir(input, &mut found)?;
        } else if input.is_file() {
            found.push(input.clone());
        } else {
            return Err(Error::Config(format!(
                "{}: no such file or directory",
                input.display()
            )));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    found.retain(|path| seen.insert(std::fs::canonicalize(path).unwrap_or_else(|_| path.clone())));
    found.sort();
    Ok(found)
}

fn collect_dir(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|err| Error::io(format!("listing {}", dir.display()), err))?;
    for entry in entries {
        let path = entry
            .map_err(|err| Error::io(format!("listing {}", dir.display()), err))?
            .path();
        if path.is_dir() {
            collect_dir(&path, found)?;
        } else if path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.ends_with(SUFFIX))
        {
            found.push(path);
        }
    }
    Ok(())
}

/// The point files under output directory `dir` (its [`POINTS_DIR`]); none if it has none.
///
/// # Errors
/// A file that cannot be read or is not a point file.
pub fn read_dir_points(dir: &Path) -> Result<Vec<(PathBuf, PointFile)>> {
    let points = dir.join(POINTS_DIR);
    if !points.is_dir() {
        return Ok(Vec::new());
    }
    find_files(&[points])?
        .into_iter()
        .map(|path| PointFile::read(&path).map(|file| (path, file)))
        .collect()
}

/// One plan's points, from any number of files.
#[derive(Debug, Clone)]
pub struct Group {
    /// The plan.
    pub plan: Plan,
    /// Per point index: the file it came from and its contents.
    pub points: BTreeMap<usize, (PathBuf, PointFile)>,
    /// How duplicates were resolved, one line each.
    pub notes: Vec<String>,
}

impl Group {
    /// The ids of the plan's points with no file.
    #[must_use]
    pub fn missing(&self) -> Vec<String> {
        (0..self.plan.values.len())
            .filter(|index| !self.points.contains_key(index))
            .map(|index| self.plan.id(index))
            .collect()
    }

    /// The results: every point of the plan, the missing ones `not_run`.
    #[must_use]
    pub fn assemble(&self) -> SweepResults {
        let points: BTreeMap<usize, SweepPoint> = self
            .points
            .iter()
            .map(|(&index, (_, file))| (index, file.point.clone()))
            .collect();
        assemble(&self.plan, &points, true)
    }
}

/// Splits a command line's words into the rest and the [`HOST_FLAGS`] with their values.
fn split_host_flags(command_line: &str) -> (Vec<&str>, Vec<&str>) {
    split_flags(command_line.split_whitespace(), HOST_FLAGS, HOST_SWITCHES)
}

/// Splits `words` into those kept and those taken: a flag of `with_value` with its value (as
/// `--flag value` or `--flag=value`), or a flag of `alone` (`--flag` or `--flag=...`).
#[must_use]
pub fn split_flags<'a>(
    words: impl IntoIterator<Item = &'a str>,
    with_value: &[&str],
    alone: &[&str],
) -> (Vec<&'a str>, Vec<&'a str>) {
    let (mut kept, mut taken) = (Vec::new(), Vec::new());
    let mut value_follows = false;
    for word in words {
        let name = word.split('=').next().unwrap_or(word);
        if std::mem::take(&mut value_follows) {
            taken.push(word);
        } else if with_value.contains(&word) {
            taken.push(word);
            value_follows = true;
        } else if with_value.contains(&name) || alone.contains(&name) {
            taken.push(word);
        } else {
            kept.push(word);
        }
    }
    (kept, taken)
}

/// Groups point files by plan (a reproduction's experiment, or a sweep's command line), in
/// first-seen order, resolving duplicates (see the module docs).
///
/// # Errors
/// [`Error::Config`]: files of one experiment from different plans, or a duplicate that
/// cannot be resolved (both named).
pub fn group(files: Vec<(PathBuf, PointFile)>) -> Result<Vec<Group>> {
    let mut groups: Vec<Group> = Vec::new();
    for (path, file) in files {
        let key = |plan: &Plan| plan.experiment.clone().unwrap_or(plan.identity());
        let at = if let Some(at) = groups.iter().position(|g| key(&g.plan) == key(&file.plan)) {
            at
        } else {
            groups.push(Group {
                plan: file.plan.clone(),
                points: BTreeMap::new(),
                notes: Vec::new(),
            });
            groups.len() - 1
        };
        let group = &mut groups[at];
        if !group.plan.same_run(&file.plan) {
            let first = group.points.values().next().map_or_else(
                || "the first file".to_string(),
                |(p, _)| p.display().to_string(),
            );
            return Err(Error::Config(format!(
                "{} and {first} are points of different runs of {}: `{}` (quick {}, repeats {}) \
                 and `{}` (quick {}, repeats {}); merge one run at a time",
                path.display(),
                group.plan.label(),
                file.plan.command_line,
                file.plan.quick,
                file.plan.repeats,
                group.plan.command_line,
                group.plan.quick,
                group.plan.repeats
            )));
        }
        let index = file.index;
        match group.points.remove(&index) {
            None => {
                group.points.insert(index, (path, file));
            }
            Some((other_path, other)) => {
                let (kept, dropped) = match (file.done(), other.done()) {
                    (true, false) => ((path, file), other_path),
                    (false, true) => ((other_path, other), path),
                    _ => {
                        return Err(Error::Config(format!(
                            "point {}: two results files, {} and {} (both {}); move one away \
                             and merge again",
                            file.id,
                            other_path.display(),
                            path.display(),
                            if file.done() { "done" } else { "not done" }
                        )));
                    }
                };
                group.notes.push(format!(
                    "point {}: two results files; took {} (done), not {} (did not complete)",
                    kept.1.id,
                    kept.0.display(),
                    dropped.display()
                ));
                group.points.insert(index, kept);
            }
        }
    }
    for group in &mut groups {
        note_host_flags(group);
    }
    Ok(groups)
}

/// When a group's points ran with different [`HOST_FLAGS`], names which points ran with
/// which (one note per set of flags) and drops the flags from the group's command line.
fn note_host_flags(group: &mut Group) {
    let mut by_flags: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (_, file) in group.points.values() {
        by_flags
            .entry(file.plan.host_flags())
            .or_default()
            .push(&file.id);
    }
    if by_flags.len() < 2 {
        return;
    }
    for (flags, ids) in &by_flags {
        let flags = if flags.is_empty() { "none" } else { flags };
        group.notes.push(format!(
            "host flags `{flags}`: {} (points of one run that differ only in host flags are \
             merged; each run's time scale and timing error are in its results)",
            ids.join(", ")
        ));
    }
    group.plan.command_line = group.plan.identity();
}

/// The results of `plan` with `points` (by index): in plan order, a value with no point
/// `not_run` (`missing`). With `complete`, every value of the plan is a point; otherwise the
/// points stop at the last one given (a run in progress: the rest are still to come).
#[must_use]
pub fn assemble(plan: &Plan, points: &BTreeMap<usize, SweepPoint>, complete: bool) -> SweepResults {
    let mut sweep = plan.empty_results();
    let end = if complete {
        plan.values.len()
    } else {
        points.keys().next_back().map_or(0, |last| last + 1)
    };
    for index in 0..end.min(plan.values.len()) {
        sweep.push(points.get(&index).cloned().unwrap_or_else(|| SweepPoint {
            value: plan.values[index].clone(),
            status: PointStatus::NotRun,
            error: Some(format!(
                "missing: no results file for point {}",
                plan.id(index)
            )),
            results: None,
            coordinates: Vec::new(),
        }));
    }
    sweep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(experiment: Option<&str>) -> Plan {
        Plan {
            experiment: experiment.map(str::to_string),
            quick: true,
            command_line: "sweep --param threads --values 1,2,4".into(),
            param: "threads".into(),
            param_sets: "--threads".into(),
            values: vec!["1".into(), "2".into(), "4".into()],
            schemes: vec!["vanilla".into()],
            repeats: 1,
            grid: None,
        }
    }

    fn file(plan: &Plan, index: usize, status: PointStatus) -> PointFile {
        PointFile {
            format: FORMAT.into(),
            id: plan.id(index),
            index,
            plan: plan.clone(),
            provenance: Provenance::ending_now("2025-01-01T00:00:00Z".into()),
            point: SweepPoint {
                value: plan.values[index].clone(),
                status,
                error: None,
                results: None,
                coordinates: Vec::new(),
            },
            derived_from: None,
            ended_runs: Vec::new(),
        }
    }

    #[test]
    fn ids_are_stable_and_checked() {
        let sweep = plan(None);
        assert_eq!(sweep.ids(), ["p1", "p2", "p3"]);
        let experiment = plan(Some("lruc-fig9"));
        assert_eq!(experiment.id(1), "lruc-fig9.p2");
        assert_eq!(experiment.index_of("lruc-fig9.p3"), Some(2));
        let selected = select(
            &[&experiment],
            &["lruc-fig9.p3".into(), "lruc-fig9.p1".into()],
        );
        assert_eq!(selected.unwrap(), [vec![0, 2]]);
        let err = select(&[&experiment], &["lruc-fig9.p4".into()]).unwrap_err();
        assert!(err.to_string().contains("--point lruc-fig9.p4"), "{err}");
        assert!(
            err.to_string().contains("lruc-fig9.p1, lruc-fig9.p2"),
            "{err}"
        );
        let twice = select(
            &[&experiment],
            &["lruc-fig9.p1".into(), "lruc-fig9.p1".into()],
        );
        assert!(twice.unwrap_err().to_string().contains("more than once"));
    }

    #[test]
    fn a_written_file_reads_back_and_a_missing_point_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let plan = plan(Some("x"));
        let path = file(&plan, 1, PointStatus::Done).write(tmp.path()).unwrap();
        assert!(path.ends_with("points/x.p2.point.json"));
        let files = read_dir_points(tmp.path()).unwrap();
        let groups = group(files).unwrap();
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].missing(), ["x.p1", "x.p3"]);
        let sweep = groups[0].assemble();
        assert_eq!(sweep.points.len(), 3);
        assert_eq!(sweep.points[0].status, PointStatus::NotRun);
        assert!(sweep.points[0].error.as_ref().unwrap().contains("x.p1"));
        assert_eq!(sweep.points[1].status, PointStatus::Done);
    }

    #[test]
    fn duplicates_are_resolved_or_refused() {
        let plan = plan(None);
        let done = |name: &str| (PathBuf::from(name), file(&plan, 0, PointStatus::Done));
        let failed = |name: &str| (PathBuf::from(name), file(&plan, 0, PointStatus::Failed));
        let groups = group(vec![failed("a"), done("b")]).unwrap();
        assert_eq!(groups[0].points[&0].0, PathBuf::from("b"));
        assert!(
            groups[0].notes[0].contains("took b"),
            "{:?}",
            groups[0].notes
        );
        let err = group(vec![done("a"), done("b")]).unwrap_err();
        assert!(
            err.to_string().contains("two results files, a and b"),
            "{err}"
        );
    }

    #[test]
    fn files_of_another_plan_are_refused() {
        let first = plan(Some("x"));
        let mut second = first.clone();
        second.quick = false;
        let err = group(vec![
            (PathBuf::from("a"), file(&first, 0, PointStatus::Done)),
            (PathBuf::from("b"), file(&second, 1, PointStatus::Done)),
        ])
        .unwrap_err();
        assert!(err.to_string().contains("different runs of x"), "{err}");
    }

    #[test]
    fn points_that_differ_only_in_host_flags_merge_and_say_so() {
        let mut first = plan(Some("x"));
        first.command_line = "reproduce x --db /a/w.img --model-cores 32".into();
        let mut second = first.clone();
        second.command_line =
            "reproduce x --db=/b/w.img --model-cores 32 --fill-pool --model-cores 256".into();
        assert!(first.same_run(&second));
        assert_eq!(second.identity(), "reproduce x");
        assert_eq!(
            second.host_flags(),
            "--db=/b/w.img --model-cores 32 --fill-pool --model-cores 256"
        );
        let groups = group(vec![
            (PathBuf::from("a"), file(&first, 0, PointStatus::Done)),
            (PathBuf::from("b"), file(&second, 1, PointStatus::Done)),
        ])
        .unwrap();
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].points.len(), 2);
        assert_eq!(groups[0].plan.command_line, "reproduce x");
        let notes = groups[0].notes.join("\n");
        assert!(
            notes.contains("`--db /a/w.img --model-cores 32`: x.p1"),
            "{notes}"
        );
        assert!(
            notes.contains("--fill-pool --model-cores 256`: x.p2"),
            "{notes}"
        );
        // Any other flag still makes another run.
        let mut third = first.clone();
        third.command_line = "reproduce x --db /a/w.img --threads 8".into();
        assert!(!first.same_run(&third));
        // One set of host flags: the command line is kept whole, with no note.
        let groups = group(vec![
            (PathBuf::from("a"), file(&first, 0, PointStatus::Done)),
            (PathBuf::from("c"), file(&first, 1, PointStatus::Done)),
        ])
        .unwrap();
        assert_eq!(groups[0].plan.command_line, first.command_line);
        assert!(groups[0].notes.is_empty());
    }

    #[test]
    fn a_run_in_progress_shows_the_points_so_far() {
        let plan = plan(None);
        let mut points = BTreeMap::new();
        points.insert(1, file(&plan, 1, PointStatus::Done).point);
        let sweep = assemble(&plan, &points, false);
        assert_eq!(sweep.points.len(), 2);
        assert_eq!(sweep.points[0].status, PointStatus::NotRun);
    }
}
