//! `flashbuf sweep --param NAME --values V1,V2,... [every bench flag]` (issue 13 item 4): runs
//! the bench's schemes at each value of one parameter and writes sweep.json, one line plot per
//! metric and report.html (`--out DIR`). With `--param` and `--values` given twice (issue 21
//! item 5), it runs every pair of the two value lists (the grid of [`crate::sweep::grid`]: the
//! first parameter outer, the second inner); each point is labelled `A=a B=b`, sweep.json keeps
//! both coordinates, and the report adds a heat map and a grid table per scheme after the first.
//!
//! A point is exactly a bench run: the value is applied to a copy of the bench flags
//! ([`point_args`]; pool-config keys to the point's pool configuration), which then go
//! through bench's own parsers and preflight. Every point is checked before any runs. Every
//! point starts from the same image: a record workload is loaded once (or read from `--db`)
//! and shared by all points (refused if the points would load different databases); a
//! synthetic one uses the same `--seed`.
//!
//! Persistence: sweep.json (and the plots) are rewritten after every point; on Ctrl-C the
//! current point's finished schemes are kept, the remaining points are marked not run, and the
//! report is still written. The exit code is non-zero if any point or scheme failed.

use crate::bench::continuation::Continuation;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::bench::{self, BenchArgs};
use crate::bench::BenchConfig;
use crate::bench::driver::RecordSpec;
use crate::error::{Error, Result};
use crate::sweep::grid::{Axis as GridAxis, Grid};
use crate::sweep::params::{self, Param, ParamInfo};
use crate::sweep::plot::write_sweep_dir;
use crate::sweep::points::{self, Plan};
use crate::sweep::{PointStatus, SweepPoint, SweepResults};

/// Arguments of `sweep`.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepArgs {
    /// The parameter to vary (the table below lists them); give `--param` twice (each followed
    /// by its `--values`) to run every pair of two parameters' values.
    #[arg(long, required = true, action = clap::ArgAction::Append)]
    pub param: Vec<String>,
    /// Comma-separated values, run in this order (a device string's own options stay with it);
    /// one `--values` per `--param`, in the same order.
    #[arg(long, required = true, action = clap::ArgAction::Append)]
    pub values: Vec<String>,
    /// Every bench flag; `--out DIR` gets sweep.json, the plots and report.html, `--json FILE`
    /// gets sweep.json.
    #[command(flatten)]
    pub bench: BenchArgs,
    /// `--plan`, `--point`, `--fresh`.
    #[command(flatten)]
    pub points: super::points::PointFlags,
}

/// One checked point, ready to run.
struct PreparedPoint {
    value: String,
    args: BenchArgs,
    config: BenchConfig,
    record: Option<RecordSpec>,
}

/// Runs the sweep (or prints its plan, or runs some of its points); an error if any point or
/// scheme failed.
///
/// # Errors
/// Bad flags or values (nothing ran), a failed load, failed points or schemes (after writing
/// everything that finished).
pub fn run(args: &SweepArgs) -> Result<()> {
    let argv: Vec<String> = std::env::args().collect();
    let identity = super::points::plan_identity(&argv);
    check_point_flags(args)?;
    let mut prepared = prepare_sweep(args, &identity, None)?;
    if args.points.plan.is_some() {
        let base = super::points::argv_without_plan();
        super::out(&prepared.plan.lines(args.points.plan_json(), &base));
        return Ok(());
    }
    let selected = if args.points.point.is_empty() {
        None
    } else {
        Some(points::select(&[&prepared.plan], &args.points.point)?.remove(0))
    };
    let out = args.bench.out.as_deref();
    let resume =
        super::points::resume(&prepared.plan, out, selected.as_deref(), args.points.fresh)?;
    let whole = resume.whole;
    let sweep = prepared.run(out, resume, |sweep| write_outputs(args, sweep))?;
    outln!("{}", sweep.format_table());
    if whole {
        write_final(args, &sweep)?;
    } else if let Some(dir) = out {
        eprintln!(
            "wrote the point files to {}; assemble the report with: flashbuf merge {} --out DIR",
            dir.join(points::POINTS_DIR).display(),
            dir.display()
        );
    }
    failed_points(&sweep)
}

/// `--point` needs `--out` (where its files go) and does not write `--json`.
fn check_point_flags(args: &SweepArgs) -> Result<()> {
    if args.points.point.is_empty() {
        return Ok(());
    }
    if args.bench.out.is_none() {
        return Err(Error::Config(
            "--point needs --out DIR: each point writes DIR/points/ID.point.json".into(),
        ));
    }
    if args.bench.json.is_some() {
        return Err(Error::Config(
            "--point writes point files, not --json; `flashbuf merge` writes sweep.json".into(),
        ));
    }
    Ok(())
}

/// The error for points or schemes that did not complete, naming them (`Ok` if none).
fn failed_points(sweep: &SweepResults) -> Result<()> {
    if !sweep.any_failed() {
        return Ok(());
    }
    let failed: Vec<String> = sweep
        .points
        .iter()
        .filter(|p| p.status != PointStatus::Done)
        .map(|p| {
            let detail = p.error.clone().unwrap_or_else(|| {
                let schemes: Vec<&str> = p
                    .results
                    .iter()
                    .flat_map(|r| r.failures.iter().map(|f| f.scheme.as_str()))
                    .collect();
                format!("failed: {}", schemes.join(", "))
            });
            if sweep.grid.is_some() {
                format!("{}: {detail}", p.value)
            } else {
                format!("{} = {}: {detail}", sweep.param, p.value)
            }
        })
        .collect();
    Err(Error::Config(format!(
        "{} of {} points did not complete: {}",
        failed.len(),
        sweep.values.len(),
        failed.join("; ")
    )))
}

/// One swept parameter and its values.
type Axis = (&'static ParamInfo, Vec<String>);

/// The swept parameters (one or two) and their values, refused when a parameter does not apply
/// to the workload, is given twice, or the grid has too many points.
fn swept_axes(args: &SweepArgs) -> Result<Vec<Axis>> {
    if args.param.len() != args.values.len() {
        return Err(Error::Config(format!(
            "--param is given {} times and --values {} times: give one --values after each \
             --param",
            args.param.len(),
            args.values.len()
        )));
    }
    if args.param.len() > params::MAX_PARAMS {
        return Err(Error::Config(format!(
            "--param is given {} times; a sweep varies at most {} parameters",
            args.param.len(),
            params::MAX_PARAMS
        )));
    }
    let mut axes: Vec<Axis> = Vec::with_capacity(args.param.len());
    for (name, text) in args.param.iter().zip(&args.values) {
        let info = params::lookup(name)?;
        let values = params::split_values(info, text)?;
        if !info.applies.covers(&args.bench.workload) {
            return Err(Error::Config(format!(
                "--param {} applies to {}, not to --workload {}",
                info.name,
                info.applies.describe(),
                args.bench.workload
            )));
        }
        if axes.iter().any(|(seen, _)| seen.param == info.param) {
            return Err(Error::Config(format!(
                "--param {} is given twice; a two-parameter sweep varies two different \
                 parameters",
                info.name
            )));
        }
        check_not_also_given(info, &args.bench)?;
        check_some_scheme_uses(info, &args.bench)?;
        axes.push((info, values));
    }
    let points: usize = axes.iter().map(|(_, values)| values.len()).product();
    if points > params::MAX_POINTS {
        return Err(Error::Config(format!(
            "--param {}: {points} points ({}); at most {}",
            axes.iter()
                .map(|(info, _)| info.name)
                .collect::<Vec<_>>()
                .join(" x "),
            axes.iter()
                .map(|(_, values)| values.len().to_string())
                .collect::<Vec<_>>()
                .join(" x "),
            params::MAX_POINTS
        )));
    }
    Ok(axes)
}

/// The grid of a two-parameter sweep (`None` for one parameter).
fn grid_of(axes: &[Axis]) -> Option<Grid> {
    let axis = |(info, values): &Axis| GridAxis {
        param: info.name.to_string(),
        sets: info.sets.to_string(),
        values: values.clone(),
    };
    match axes {
        [rows, columns] => Some(Grid {
            rows: axis(rows),
            columns: axis(columns),
        }),
        _ => None,
    }
}

/// One point to prepare: its label and the value of each swept parameter.
struct PointSpec {
    label: String,
    assignments: Vec<(&'static ParamInfo, String)>,
}

/// Every point of the sweep, in run order (a grid: the first parameter outer).
fn point_specs(axes: &[Axis], grid: Option<&Grid>) -> Vec<PointSpec> {
    match (axes, grid) {
        ([(rows, row_values), (columns, column_values)], Some(grid)) => row_values
            .iter()
            .flat_map(|row| {
                column_values.iter().map(move |column| PointSpec {
                    label: grid.label(row, column),
                    assignments: vec![(*rows, row.clone()), (*columns, column.clone())],
                })
            })
            .collect(),
        _ => axes
            .iter()
            .flat_map(|(info, values)| {
                values.iter().map(move |value| PointSpec {
                    label: value.clone(),
                    assignments: vec![(*info, value.clone())],
                })
            })
            .collect(),
    }
}

/// The bench flag a parameter sets (its argument id and its name), if it sets one.
fn flag_of(param: Param) -> Option<(&'static str, &'static str)> {
    match param {
        Param::Buffer => Some(("buffer", "--buffer")),
        Param::Threads => Some(("threads", "--threads")),
        Param::ReadRatio => Some(("read_ratio", "--read-ratio")),
        Param::RwRatio => Some(("rw_ratio", "--rw-ratio")),
        Param::Device => Some(("device", "--device")),
        Param::LogSize => Some(("log_size", "--log-size")),
        Param::Channels
        | Param::FlushUs
        | Param::Alpha
        | Param::LruScanDepth
        | Param::AceNW
        | Param::ListScanNs => None,
    }
}

/// A flag the swept parameter overrides at every point may not be given as well.
fn check_not_also_given(info: &ParamInfo, bench: &BenchArgs) -> Result<()> {
    if let Some((id, flag)) = flag_of(info.param)
        && bench.given.has(id)
    {
        return Err(Error::Config(format!(
            "--param {} sets {flag} at every point; drop {flag} (the --values say what it is)",
            info.name
        )));
    }
    let device_option = match info.param {
        Param::Channels => Some("channels"),
        Param::FlushUs => Some("flush_us"),
        Param::Alpha => Some("alpha"),
        _ => None,
    };
    if let Some(option) = device_option
        && let Ok(crate::device::DeviceSpec::Emulated { options, .. }) =
            crate::device::DeviceSpec::parse(&bench.device)
        && options.iter().any(|(key, _)| key == option)
    {
        return Err(Error::Config(format!(
            "--param {} sets the {option}= option at every point, and --device {} sets it \
             too; remove it from --device",
            info.name, bench.device
        )));
    }
    Ok(())
}

/// A pool-config parameter must be one that at least one of the chosen schemes reads.
fn check_some_scheme_uses(info: &ParamInfo, bench: &BenchArgs) -> Result<()> {
    let Some(key) = pool_key(info.param) else {
        return Ok(());
    };
    let schemes = crate::engine::Composition::parse_list(&bench.schemes)?;
    if schemes.iter().any(|scheme| scheme.reads_pool_key(key)) {
        return Ok(());
    }
    let names: Vec<&str> = schemes.iter().map(|s| s.name.as_str()).collect();
    Err(Error::Config(format!(
        "--param {}: none of the schemes ({}) reads the pool-config key `{key}`, so every point \
         would run the same; {}",
        info.name,
        names.join(", "),
        match info.param {
            Param::AceNW => "it is ACE's (ace-* presets, or +ace)",
            _ => "it is read by InnoDB's miss path and page cleaner (vanilla, war, rw, lru-c*)",
        }
    )))
}

/// Checks a sweep's flags and every point's configuration without loading or running
/// anything; returns the schemes and the values.
///
/// # Errors
/// As [`prepare_sweep`].
pub fn check_sweep(args: &SweepArgs) -> Result<(Vec<String>, Vec<String>)> {
    let prepared = prepare_sweep(args, "check", None)?;
    Ok((prepared.plan.schemes, prepared.plan.values))
}

/// A sweep checked and ready to run: its plan and every point's flags and configuration (no
/// image loaded yet).
pub struct PreparedSweep {
    /// The plan (its points, ids and identity).
    pub plan: Plan,
    points: Vec<PreparedPoint>,
}

/// Checks every point of the sweep (nothing is loaded or run) and makes its plan;
/// `experiment` is the reproduction's id and `--quick`, if it is one.
///
/// # Errors
/// Bad flags or values, naming the point.
pub fn prepare_sweep(
    args: &SweepArgs,
    command_line: &str,
    experiment: Option<(&str, bool)>,
) -> Result<PreparedSweep> {
    let axes = swept_axes(args)?;
    let grid = grid_of(&axes);
    let specs = point_specs(&axes, grid.as_ref());
    let points = prepare_points(args, &specs, command_line)?;
    let (param, param_sets) = match (&grid, axes.first()) {
        (Some(grid), _) => (grid.param(), grid.sets()),
        (None, Some((info, _))) => (info.name.to_string(), info.sets.to_string()),
        (None, None) => return Err(Error::Config("--param: none given".into())),
    };
    let plan = Plan {
        experiment: experiment.map(|(id, _)| id.to_string()),
        quick: experiment.is_some_and(|(_, quick)| quick),
        command_line: command_line.to_string(),
        param,
        param_sets,
        values: specs.into_iter().map(|spec| spec.label).collect(),
        schemes: scheme_union(&points),
        repeats: args.bench.repeat,
        grid,
    };
    Ok(PreparedSweep { plan, points })
}

impl PreparedSweep {
    /// Runs the points `resume` says (loading a record workload's image once, if any point
    /// runs), writing point files into `out` and calling `progress` after each point of a
    /// whole run; returns the results ([`super::points::run_points`]).
    ///
    /// # Errors
    /// A failed load, a point file that cannot be written.
    pub fn run(
        &mut self,
        out: Option<&Path>,
        resume: super::points::Resume,
        progress: impl FnMut(&SweepResults),
    ) -> Result<SweepResults> {
        if !resume.todo.is_empty() {
            attach_records(&mut self.points, &resume.todo)?;
        }
        let total = self.plan.values.len();
        let plan = &self.plan;
        let points = &self.points;
        super::points::run_points(
            plan,
            out,
            resume,
            |index, continuation| {
                let point = &points[index];
                eprintln!(
                    "sweep: point {} of {total}: {} = {} ({})",
                    index + 1,
                    plan.param,
                    point.value,
                    plan.id(index)
                );
                run_point(point, continuation)
            },
            progress,
        )
    }
}

/// Runs one prepared point, continuing from the runs `continuation` kept.
fn run_point(point: &PreparedPoint, continuation: &mut Continuation<'_>) -> SweepPoint {
    let outcome = bench::run_prepared(&point.args, &point.config, continuation);
    SweepPoint::from_outcome(&point.value, outcome, "point")
}

/// At the end of a whole run: sweep.json, the plots and report.html (`--out`), sweep.json
/// (`--json`).
fn write_final(args: &SweepArgs, sweep: &SweepResults) -> Result<()> {
    if let Some(dir) = &args.bench.out {
        write_sweep_dir(dir, sweep)?;
        eprintln!(
            "wrote sweep.json, plots and report.html to {}",
            dir.display()
        );
    }
    if let Some(path) = &args.bench.json {
        sweep.write_json(path)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// After each point: the files so far (a failed write is reported, the sweep goes on).
fn write_outputs(args: &SweepArgs, sweep: &SweepResults) {
    if let Some(dir) = &args.bench.out
        && let Err(err) = write_sweep_dir(dir, sweep)
    {
        eprintln!("flashbuf: writing {}: {err}", dir.display());
    }
    if let Some(path) = &args.bench.json
        && let Err(err) = sweep.write_json(path)
    {
        eprintln!("flashbuf: writing {}: {err}", path.display());
    }
}

/// Every point's flags parsed and preflighted (with the sweep's output paths checked once, on
/// the first point). A point's values are applied device first (a device value replaces the
/// whole device string, so an option set by the other parameter must come after it).
fn prepare_points(
    args: &SweepArgs,
    specs: &[PointSpec],
    command_line: &str,
) -> Result<Vec<PreparedPoint>> {
    let mut points = Vec::with_capacity(specs.len());
    for (index, spec) in specs.iter().enumerate() {
        let shown = match spec.assignments.as_slice() {
            [(info, value)] => format!("{} = {value}", info.name),
            _ => spec.label.clone(),
        };
        let in_point = |err: Error| Error::Config(format!("point {shown}: {}", err.message()));
        let mut ordered: Vec<&(&'static ParamInfo, String)> = spec.assignments.iter().collect();
        ordered.sort_by_key(|(info, _)| info.param != Param::Device);
        let mut point = args.bench.clone();
        for (info, value) in &ordered {
            point = point_args(info, &point, value).map_err(in_point)?;
        }
        if index == 0 {
            // The sweep's own outputs, checked like bench checks them (before anything runs).
            point.json.clone_from(&args.bench.json);
            point.out.clone_from(&args.bench.out);
        }
        let (mut config, record) = bench::prepare(&point, command_line).map_err(in_point)?;
        point.json = None;
        point.out = None;
        let mut pool_keys_set = false;
        for (info, value) in &ordered {
            if let Some(key) = pool_key(info.param) {
                config.pool_config = Some(
                    with_pool_key(config.pool_config.as_deref(), key, value).map_err(in_point)?,
                );
                pool_keys_set = true;
            }
        }
        if pool_keys_set {
            super::preflight::check(&config, record.is_some(), None, None).map_err(in_point)?;
        }
        points.push(PreparedPoint {
            value: spec.label.clone(),
            args: point,
            config,
            record,
        });
    }
    Ok(points)
}

/// A record workload: one image for the points at `indices` (the points must load the same
/// database).
fn attach_records(all: &mut [PreparedPoint], indices: &[usize]) -> Result<()> {
    let mut points: Vec<&mut PreparedPoint> = all
        .iter_mut()
        .enumerate()
        .filter(|(index, _)| indices.contains(index))
        .map(|(_, point)| point)
        .collect();
    let Some(first) = points.first() else {
        return Ok(());
    };
    let Some(first_spec) = &first.record else {
        return Ok(());
    };
    let key = first_spec.load_key();
    for point in &points {
        if let Some(spec) = &point.record
            && spec.load_key() != key
        {
            return Err(Error::Config(format!(
                "point {}: loads another database ({}) than the first point ({key}); a sweep \
                 runs every point on one image",
                point.value,
                spec.load_key()
            )));
        }
    }
    let image = bench::load_image(&first.args, &first.config, first_spec)?;
    for point in &mut points {
        if let Some(spec) = point.record.take() {
            let value = point.value.clone();
            bench::attach_image(&point.args, &mut point.config, spec, Arc::clone(&image))
                .map_err(|err| err.context(format_args!("point {value}")))?;
        }
    }
    Ok(())
}

/// The schemes of every point, in first-seen order (a device point may leave `rw` out).
fn scheme_union(points: &[PreparedPoint]) -> Vec<String> {
    let mut schemes: Vec<String> = Vec::new();
    for scheme in points.iter().flat_map(|p| p.config.schemes.iter()) {
        if !schemes.contains(&scheme.name) {
            schemes.push(scheme.name.clone());
        }
    }
    schemes
}

/// The pool-config key a parameter sets, if it is one.
fn pool_key(param: Param) -> Option<&'static str> {
    match param {
        Param::LruScanDepth => Some("lru_scan_depth"),
        Param::AceNW => Some("ace_n_w"),
        Param::ListScanNs => Some("list_scan_ns"),
        _ => None,
    }
}

/// The bench flags of one point: `base` with `value` applied (pool-config keys are applied to
/// the point's configuration instead, see [`with_pool_key`]).
///
/// # Errors
/// [`Error::Config`]: a value the flag cannot take, or a conflicting flag.
pub fn point_args(info: &ParamInfo, base: &BenchArgs, value: &str) -> Result<BenchArgs> {
    let mut args = base.clone();
    args.json = None;
    args.out = None;
    match info.param {
        Param::Buffer => args.buffer = value.to_string(),
        Param::Threads => {
            args.threads = value
                .parse()
                .map_err(|_| Error::Config(format!("bad threads `{value}`: {}", info.forms)))?;
        }
        Param::ReadRatio => args.read_ratio = Some(value.to_string()),
        Param::RwRatio => {
            if args.record.mix.is_some() {
                return Err(Error::Config(
                    "--param rw-ratio sets the TPC-C mix: drop --mix".into(),
                ));
            }
            args.record.rw_ratio = Some(value.to_string());
        }
        Param::Device => args.device = value.to_string(),
        Param::Channels => args.device = with_device_option(&args.device, "channels", value)?,
        Param::Alpha => args.device = with_device_option(&args.device, "alpha", value)?,
        Param::FlushUs => {
            for (key, option) in crate::sweep::params::flush_price_options(value) {
                args.device = with_device_option(&args.device, key, &option)?;
            }
        }
        Param::LogSize => {
            if args.no_log {
                return Err(Error::Config(
                    "--param log-size varies the redo log: drop --no-log".into(),
                ));
            }
            args.log_size = value.to_string();
        }
        Param::LruScanDepth | Param::AceNW | Param::ListScanNs => {}
    }
    Ok(args)
}

/// `device` with `key=value` set (replacing an earlier `key=`).
fn with_device_option(device: &str, key: &str, value: &str) -> Result<String> {
    if !device.starts_with("emu:") {
        return Err(Error::Config(format!(
            "--param {key} sets an emu: device option, and --device is `{device}`; use an \
             emulated device (e.g. emu:ssd-a)"
        )));
    }
    let prefix = format!("{key}=");
    let mut parts: Vec<&str> = device
        .split(',')
        .filter(|part| !part.trim().starts_with(&prefix))
        .collect();
    let option = format!("{key}={value}");
    parts.push(&option);
    Ok(parts.join(","))
}

/// The pool-config TOML `text` with `key = value` added.
///
/// # Errors
/// [`Error::Config`]: the file already sets `key`, or is not TOML.
pub fn with_pool_key(text: Option<&str>, key: &str, value: &str) -> Result<String> {
    let mut table: toml::Table = text
        .unwrap_or("")
        .parse()
        .map_err(|err| Error::Config(format!("--pool-config: {err}")))?;
    if table.contains_key(key) {
        return Err(Error::Config(format!(
            "--pool-config sets `{key}`, which this sweep varies: remove it from the file"
        )));
    }
    let number = match value.parse::<i64>() {
        Ok(whole) => toml::Value::Integer(whole),
        Err(_) if key == "list_scan_ns" => value
            .parse::<f64>()
            .map(toml::Value::Float)
            .map_err(|_| Error::Config(format!("bad {key} `{value}`: a number >= 0")))?,
        Err(_) => {
            return Err(Error::Config(format!(
                "bad {key} `{value}`: a whole number >= 0"
            )));
        }
    };
    table.insert(key.to_string(), number);
    toml::to_string(&table).map_err(|err| Error::Config(format!("--pool-config: {err}")))
}

/// A sweep's output directory, if any (for callers that want the files).
#[must_use]
pub fn out_dir(args: &SweepArgs) -> Option<PathBuf> {
    args.bench.out.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_options_are_replaced() {
        assert_eq!(
            with_device_option("emu:ssd-a,channels=2,time_scale=4", "channels", "8").unwrap(),
            "emu:ssd-a,time_scale=4,channels=8"
        );
        assert!(with_device_option("mem", "channels", "8").is_err());
    }

    #[test]
    fn a_flush_price_sets_the_device_options() {
        use clap::Parser as _;
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            bench: BenchArgs,
        }
        let bench_args = |device: &str| Flags::parse_from(["bench", "--device", device]).bench;
        let info = crate::sweep::params::lookup("flush_us").unwrap();
        let base = bench_args("emu:ssd-a,time_scale=4");
        let fixed = point_args(info, &base, "500").unwrap();
        assert_eq!(fixed.device, "emu:ssd-a,time_scale=4,flush_us=500");
        let legacy = point_args(info, &base, "legacy").unwrap();
        assert_eq!(
            legacy.device,
            "emu:ssd-a,time_scale=4,slc=0,gc_defer_blocks=0,flush_commit_us=0,flush_us=model"
        );
        assert!(point_args(info, &bench_args("mem"), "500").is_err());
    }

    #[test]
    fn two_parameters_make_a_grid_of_every_pair() {
        use clap::Parser as _;
        // As reproduce parses an experiment's line: every flag overrides itself, which must not
        // drop the first --param.
        #[derive(clap::Parser)]
        #[command(args_override_self = true)]
        struct Line {
            #[command(flatten)]
            sweep: SweepArgs,
        }
        let line = Line::parse_from([
            "sweep",
            "--param",
            "alpha",
            "--values",
            "1,8",
            "--param",
            "ace_n_w",
            "--values",
            "1,4,8",
            "--device",
            "emu:ideal",
            "--schemes",
            "pg-lru,ace-lru",
        ]);
        assert_eq!(line.sweep.param, ["alpha", "ace_n_w"]);
        let axes = swept_axes(&line.sweep).unwrap();
        let grid = grid_of(&axes).unwrap();
        let specs = point_specs(&axes, Some(&grid));
        assert_eq!(specs.len(), 6);
        assert_eq!(specs[1].label, "alpha=1 ace_n_w=4");
        assert_eq!(specs[5].assignments[0].1, "8");
        assert_eq!(specs[5].assignments[1].1, "8");
        let point = point_args(axes[0].0, &line.sweep.bench, "8").unwrap();
        assert_eq!(point.device, "emu:ideal,alpha=8");
        // Unequal counts, the same parameter twice, and too many points are refused.
        let mut bad = line.sweep.clone();
        bad.values.pop();
        assert!(
            swept_axes(&bad)
                .unwrap_err()
                .to_string()
                .contains("--values 1 times")
        );
        let mut twice = line.sweep.clone();
        twice.param[1] = "alpha".into();
        assert!(
            swept_axes(&twice)
                .unwrap_err()
                .to_string()
                .contains("given twice")
        );
        let mut big = line.sweep.clone();
        big.values = vec![
            "1,2,3,4,5,6,7,8".into(),
            (1..=9).map(|n| n.to_string()).collect::<Vec<_>>().join(","),
        ];
        assert!(
            swept_axes(&big)
                .unwrap_err()
                .to_string()
                .contains("72 points")
        );
    }

    #[test]
    fn pool_keys_are_added_not_overridden() {
        let text = with_pool_key(Some("instances = 2\n"), "ace_n_w", "8").unwrap();
        let table: toml::Table = text.parse().unwrap();
        assert_eq!(table["ace_n_w"].as_integer(), Some(8));
        assert_eq!(table["instances"].as_integer(), Some(2));
        assert!(with_pool_key(Some("ace_n_w = 4"), "ace_n_w", "8").is_err());
    }
}
