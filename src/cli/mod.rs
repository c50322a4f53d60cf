//! The `flashbuf` command line: `device probe`, `device peak`, `bench`, `sweep`, `reproduce`, `merge`, `load`, `check`, and the listings
//! `schemes`, `devices`, `config --default`.

/// `println!` through [`out`]: a closed standard output is not a panic.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::out(&format!("{}\n", format_args!($($arg)*)))
    };
}

pub mod bench;
pub mod check;
pub mod config;
pub mod devices;
pub mod given;
pub mod limits;
pub mod load;
pub mod merge;
pub mod peak;
pub mod points;
pub mod preflight;
pub mod probe;
pub mod probe_corun;
pub mod reproduce;
pub mod reproduce_probe;
pub mod schemes;
pub mod sweep;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// flashbuf: a database buffer manager for flash SSDs, and a tool to compare buffer-management
/// schemes (LRU-C, InnoDB-style, CF-LRU, WAR, RW, ...) on real and emulated devices.
#[derive(Debug, Parser)]
#[command(name = "flashbuf", version = crate::VERSION_AND_BUILD, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Device tools.
    Device {
        #[command(subcommand)]
        command: DeviceCommand,
    },
    /// Run schemes side by side on one device and database image and compare them.
    Bench(Box<bench::BenchArgs>),
    /// Verify a database image: page checksums and the structure of every B+-tree.
    Check(check::CheckArgs),
    /// Build a record workload's database image file for `bench --db`.
    Load(Box<load::LoadArgs>),
    /// List the scheme presets, the composition grammar and its parts.
    Schemes(schemes::SchemesArgs),
    /// List the device strings, emulated profiles and every `emu:` option with its defaults.
    Devices(devices::DevicesArgs),
    /// Print the default pool configuration file (`config --default`).
    Config(config::ConfigArgs),
    /// Vary one parameter (buffer, threads, read/write ratio, device, channels, sync price,
    /// scan depth, n_w, log size) across the bench's schemes; one line plot per metric.
    #[command(after_long_help = crate::sweep::params::params_help())]
    Sweep(Box<sweep::SweepArgs>),
    /// The papers' tables and figures as named experiments: `--list`, or run one (`--quick`
    /// for a small version) and compare with the paper's values, with a verdict per claim.
    Reproduce(reproduce::ReproduceArgs),
    /// Assemble a sweep's or a reproduction's report from point results files (`--point`
    /// runs, on any machines): the same files a whole run writes; missing points are named.
    Merge(merge::MergeArgs),
}

#[derive(Debug, Subcommand)]
enum DeviceCommand {
    /// Measure random-read and random-write IOPS and latency by concurrency; derive alpha, k_r, k_w.
    Probe(Box<probe::ProbeArgs>),
    /// An emulated device's sustained peak bandwidth at read/write mixes (the paper's fio rows
    /// of Table 5; the denominator of a run's bandwidth share).
    Peak(peak::PeakArgs),
}

impl Command {
    /// Records which flags the command line gave (see [`given`]).
    fn set_given(&mut self, given: given::Given) {
        match self {
            Command::Bench(args) => args.given = given,
            Command::Sweep(args) => args.bench.given = given,
            Command::Device {
                command: DeviceCommand::Probe(args),
            } => args.given = given,
            Command::Load(args) => args.given = given,
            Command::Device {
                command: DeviceCommand::Peak(_),
            }
            | Command::Check(_)
            | Command::Schemes(_)
            | Command::Devices(_)
            | Command::Config(_)
            | Command::Reproduce(_)
            | Command::Merge(_) => {}
        }
    }
}

/// Writes `text` to standard output. A closed pipe (`flashbuf bench ... | head`) is not an
/// error: the rest of the output is dropped quietly and the command goes on (so a run still
/// writes its result files); `print!` would panic there.
pub(crate) fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        && err.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("flashbuf: writing to standard output: {err}");
    }
}

/// Parses the command line and runs it; returns the process exit code.
#[must_use]
pub fn run() -> i32 {
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|err| err.exit());
    cli.command
        .set_given(given::Given::from_matches(given::leaf(&matches)));
    let result = match cli.command {
        Command::Device {
            command: DeviceCommand::Probe(args),
        } => probe::run(&args),
        Command::Device {
            command: DeviceCommand::Peak(args),
        } => peak::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Load(args) => load::run(&args),
        Command::Schemes(args) => schemes::run(&args),
        Command::Devices(args) => devices::run(&args),
        Command::Config(args) => config::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Reproduce(args) => reproduce::run(&args),
        Command::Merge(args) => merge::run(&args),
    };
    match result {
        Ok(()) => 0,
        Err(err) => {
            eprint!("{}", error_report(&err));
            1
        }
    }
}

/// What the command prints for a failure: `error: MESSAGE`, then a `caused by:` line for each
/// source whose text the lines before do not already show (an I/O error's display carries its
/// source's text, which printing the chain would repeat).
#[must_use]
pub fn error_report(err: &dyn std::error::Error) -> String {
    let mut report = format!("error: {err}\n");
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !report.contains(&text) {
            report = format!("{report}  caused by: {text}\n");
        }
        source = cause.source();
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn a_cause_is_printed_once() {
        let err = Error::io(
            "reading pool config /no/such.toml",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        );
        let report = error_report(&err);
        assert_eq!(report.lines().count(), 1, "{report}");
        assert!(
            report.starts_with("error: reading pool config /no/such.toml: "),
            "{report}"
        );
    }

    #[test]
    fn a_new_cause_is_printed() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("writing results")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let report = error_report(&Outer(std::io::Error::other("disk full")));
        assert_eq!(report, "error: writing results\n  caused by: disk full\n");
    }
}
