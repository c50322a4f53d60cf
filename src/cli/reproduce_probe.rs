//! Experiments whose command is a co-run `device probe` (`command = "probe"`): the line's
//! `--device` flags are the points, and the probe runs once per device with the rest of the
//! line; each run's read stream and write stream become the schemes `read` and `write`, their
//! IOPS the `throughput` (and `read_iops` / `write_iops`), their latencies `mean_ms`, `p95_ms`
//! and `p99_ms`, so that the ordinary claims and report apply.
//!
//! The line must say `--corun` (the sweep probe has no streams to compare). `--repeat N`,
//! which reproduce appends to every line, is accepted: the model co-run is deterministic for a
//! seed, so each device runs once and the results say `repeats = 1` (no interval is claimed).

use clap::{CommandFactory, FromArgMatches, Parser};

use super::probe::ProbeArgs;
use crate::bench::report::{BenchResults, Header, LatencyMs, RunResult};
use crate::device::probe::{CorunReport, ProbeOp, StreamStats};
use crate::error::{Error, Result};
use crate::sweep::results::{PointStatus, SweepPoint, SweepResults};

/// The schemes of a co-run experiment.
pub const STREAMS: [&str; 2] = ["read", "write"];

#[derive(Debug, Parser)]
#[command(name = "device probe", args_override_self = true)]
struct ProbeLine {
    #[command(flatten)]
    args: ProbeArgs,
}

/// A co-run line split: the devices (points) and the probe line without them.
struct Split {
    devices: Vec<String>,
    rest: Vec<String>,
}

/// Takes every `--device X` (or `--device=X`) and `--repeat N` out of `line`.
fn split(line: &[String]) -> Result<Split> {
    let mut devices = Vec::new();
    let mut rest = Vec::new();
    let mut tokens = line.iter();
    while let Some(token) = tokens.next() {
        if let Some(value) = token.strip_prefix("--device=") {
            devices.push(value.to_string());
        } else if token == "--device" {
            let value = tokens
                .next()
                .ok_or_else(|| Error::Config("--device needs a value".into()))?;
            devices.push(value.clone());
        } else if token == "--repeat" {
            tokens.next();
        } else if !token.starts_with("--repeat=") {
            rest.push(token.clone());
        }
    }
    if devices.is_empty() {
        return Err(Error::Config(
            "a probe experiment needs at least one --device (each is a point)".into(),
        ));
    }
    Ok(Split { devices, rest })
}

/// Parses the probe line for one device.
fn parse(rest: &[String], device: &str) -> Result<ProbeArgs> {
    let mut line = rest.to_vec();
    line.push("--device".into());
    line.push(device.to_string());
    let matches = ProbeLine::command()
        .try_get_matches_from(&line)
        .map_err(|err| Error::Config(err.render().to_string()))?;
    let mut parsed =
        ProbeLine::from_arg_matches(&matches).map_err(|err| Error::Config(err.to_string()))?;
    parsed.args.given = super::given::Given::from_matches(&matches);
    if !parsed.args.corun {
        return Err(Error::Config(
            "a probe experiment runs the co-run probe: its line needs --corun".into(),
        ));
    }
    Ok(parsed.args)
}

/// Checks the line without running anything; returns the schemes and the points.
///
/// # Errors
/// [`Error::Config`] naming the problem.
pub fn check_line(line: &[String]) -> Result<(Vec<String>, Vec<String>)> {
    let Split { devices, rest } = split(line)?;
    for device in &devices {
        let args = parse(&rest, device)?;
        super::probe::resolve(&args)?;
    }
    Ok((STREAMS.iter().map(ToString::to_string).collect(), devices))
}

/// Runs the co-run on every device of the line.
///
/// # Errors
/// A bad line (nothing ran), the first failed co-run.
pub fn run_line(line: &[String], shown: &str) -> Result<SweepResults> {
    check_line(line)?;
    let Split { devices, rest } = split(line)?;
    let schemes = STREAMS.iter().map(ToString::to_string).collect();
    let mut sweep = SweepResults::new(
        shown,
        "device",
        "the device the two streams co-run on",
        devices.clone(),
        schemes,
    );
    for device in &devices {
        let args = parse(&rest, device)?;
        let report = super::probe_corun::measure(&args)?;
        let _ = super::probe_corun::write_report(&mut std::io::stderr().lock(), &report);
        sweep.push(SweepPoint {
            value: device.clone(),
            status: PointStatus::Done,
            error: None,
            results: Some(BenchResults {
                header: Header::new(shown),
                runs: vec![
                    stream_run(&report, &report.read, "read"),
                    stream_run(&report, &report.write, "write"),
                ],
                failures: Vec::new(),
            }),
            coordinates: Vec::new(),
        });
    }
    Ok(sweep)
}

/// One stream as a run: IOPS as the throughput, its latencies, its I/Os.
fn stream_run(report: &CorunReport, stream: &StreamStats, name: &str) -> RunResult {
    let ms = |us: f64| us / 1000.0;
    let mut run = RunResult {
        scheme: name.to_string(),
        workload: format!("co-run {name} stream (device probe --corun)"),
        device: report.device.clone(),
        threads: stream.concurrency,
        page_size: report.page_size,
        duration_s: report.duration_ms / 1000.0,
        warmup_s: report.warmup_ms / 1000.0,
        time_scale: report.time_scale,
        ops: stream.ios,
        throughput: stream.iops,
        unit: "IOPS".into(),
        latency_ms: LatencyMs {
            mean: ms(stream.latency_mean_us),
            p95: ms(stream.latency_p95_us),
            p99: ms(stream.latency_p99_us),
            ..LatencyMs::default()
        },
        ..RunResult::default()
    };
    match stream.op {
        ProbeOp::Read => {
            run.read_ops = stream.ios;
            run.io.read_iops = stream.iops;
            run.io.read_mbps = stream.mb_s;
        }
        ProbeOp::Write => {
            run.write_ops = stream.ios;
            run.io.write_iops = stream.iops;
            run.io.write_mbps = stream.mb_s;
        }
    }
    run
}
