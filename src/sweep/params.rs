//! The parameters `flashbuf sweep` can vary (issue 13 item 4), as one table: name, what it sets,
//! how its values parse, which workloads it applies to. `sweep --help` prints the table
//! ([`params_help`]) and [`lookup`] refuses a wrong name listing the valid ones, so the help and
//! the parser cannot drift apart.
//!
//! This module only knows the names and value forms; `src/cli/sweep.rs` applies a value to the
//! bench flags, and the bench's own parsers and preflight check each point's full configuration
//! before anything runs.

use crate::device::emulated::profile::FLUSH_MODEL;
use crate::error::{Error, Result};

/// A sweepable parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Param {
    /// `--buffer`.
    Buffer,
    /// `--threads`.
    Threads,
    /// `--read-ratio` (synthetic mixes).
    ReadRatio,
    /// `--rw-ratio` (TPC-C).
    RwRatio,
    /// `--device`.
    Device,
    /// The `channels=` option of an `emu:` device.
    Channels,
    /// The sync price of an `emu:` device: its `flush_us=` option (see [`FLUSH_LEGACY`]).
    FlushUs,
    /// The `alpha=` option of the ideal device (`emu:ideal`): its write/read cost ratio.
    Alpha,
    /// The pool-config key `lru_scan_depth`.
    LruScanDepth,
    /// The pool-config key `ace_n_w`.
    AceNW,
    /// The pool-config key `list_scan_ns` (the emulated host's CPU per page a list scan
    /// inspects under its mutex).
    ListScanNs,
    /// `--log-size`.
    LogSize,
}

impl Param {
    /// Whether the values are categories with no order between them (devices): a plot over
    /// them draws markers, not lines joining one value to the next.
    #[must_use]
    pub fn is_categorical(self) -> bool {
        matches!(self, Param::Device)
    }
}

/// Whether the sweep parameter named `name` is categorical ([`Param::is_categorical`]); an
/// unknown name counts as categorical (no line is drawn that could mislead).
#[must_use]
pub fn is_categorical(name: &str) -> bool {
    lookup(name).map_or(true, |info| info.param.is_categorical())
}

/// Which workloads a parameter applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// Every workload.
    All,
    /// The synthetic page mixes (`ms`, `wis`, `ris`, `mu`).
    Synthetic,
    /// TPC-C only.
    Tpcc,
}

impl Applies {
    /// The workloads in words.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Applies::All => "every workload",
            Applies::Synthetic => "synthetic mixes (ms, wis, ris, mu)",
            Applies::Tpcc => "tpcc",
        }
    }

    /// Whether `workload` (a `--workload` name) is covered.
    #[must_use]
    pub fn covers(self, workload: &str) -> bool {
        let synthetic = matches!(workload, "ms" | "wis" | "ris" | "mu");
        match self {
            Applies::All => true,
            Applies::Synthetic => synthetic,
            Applies::Tpcc => workload == "tpcc",
        }
    }
}

/// One row of the parameter table.
#[derive(Debug, Clone, Copy)]
pub struct ParamInfo {
    /// The parameter.
    pub param: Param,
    /// Its `--param` name.
    pub name: &'static str,
    /// What a value sets.
    pub sets: &'static str,
    /// The accepted value forms.
    pub forms: &'static str,
    /// Which workloads it applies to.
    pub applies: Applies,
}

/// Every sweepable parameter (`--duration` is deliberately not one: a sweep compares points of
/// equal measured length).
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        param: Param::Buffer,
        name: "buffer",
        sets: "--buffer (pool frames)",
        forms: "percent of the database (10%), pages (4096) or a size (64MiB)",
        applies: Applies::All,
    },
    ParamInfo {
        param: Param::Threads,
        name: "threads",
        sets: "--threads (worker threads)",
        forms: "a whole number 1..=4096",
        applies: Applies::All,
    },
    ParamInfo {
        param: Param::ReadRatio,
        name: "read-ratio",
        sets: "--read-ratio (share of page reads in the mix)",
        forms: "a fraction (0.9) or a percentage (90%)",
        applies: Applies::Synthetic,
    },
    ParamInfo {
        param: Param::RwRatio,
        name: "rw-ratio",
        sets: "--rw-ratio (TPC-C mix for a device read:write ratio)",
        forms: "R:W (1:1, 2:1, 3:1, 4:1)",
        applies: Applies::Tpcc,
    },
    ParamInfo {
        param: Param::Device,
        name: "device",
        sets: "--device (the data device)",
        forms: "device strings (mem, file:PATH, emu:NAME[,key=value...]); a value starts at \
                `mem`, `file:` or `emu:`, so `emu:ssd-a,channels=4,emu:ssd-b` is two values",
        applies: Applies::All,
    },
    ParamInfo {
        param: Param::Channels,
        name: "channels",
        sets: "the `channels=` option of the emu: --device",
        forms: "a whole number >= 1 (the device must be emu:)",
        applies: Applies::All,
    },
    ParamInfo {
        param: Param::FlushUs,
        name: "flush_us",
        sets: "the sync price of the emu: --device (plp=off flash): its `flush_us=` option",
        forms: "microseconds >= 0 (a fixed flush latency), `model` (the profile's SLC-cache \
                model), or `legacy` (the model before issue 19: slc=0, gc_defer_blocks=0, \
                flush_commit_us=0: dirty data drains at TLC program time behind foreground GC)",
        applies: Applies::All,
    },
    ParamInfo {
        param: Param::Alpha,
        name: "alpha",
        sets: "the `alpha=` option of the emu:ideal --device (write cost / read cost)",
        forms: "a number in 1..=64 (the device must be emu:ideal)",
        applies: Applies::All,
    },
    ParamInfo {
        param: Param::LruScanDepth,
        name: "lru_scan_depth",
        sets: "pool-config key lru_scan_depth (innodb_lru_scan_depth per instance)",
        forms: "a whole number >= 0 (0 = frames/64 in 16..=1024)",
        applies: Applies::All,
    },
    ParamInfo {
        param: Param::AceNW,
        name: "ace_n_w",
        sets: "pool-config key ace_n_w (ACE's concurrent writes n_w)",
        forms: "a whole number >= 0 (0 = the device's k_w)",
        applies: Applies::All,
    },
    ParamInfo {
        param: Param::ListScanNs,
        name: "list_scan_ns",
        sets: "pool-config key list_scan_ns (device-time ns a list scan holds its mutex per page)",
        forms: "a number of nanoseconds in 0..=1000000",
        applies: Applies::All,
    },
    ParamInfo {
        param: Param::LogSize,
        name: "log-size",
        sets: "--log-size (the redo log's size)",
        forms: "bytes with a unit (64MiB, 1GiB); not with --no-log",
        applies: Applies::All,
    },
];

/// The `flush_us` sweep value for the device model before issue 19.
pub const FLUSH_LEGACY: &str = "legacy";

/// The `emu:` options a `flush_us` sweep value sets, in order.
#[must_use]
pub fn flush_price_options(value: &str) -> Vec<(&'static str, String)> {
    if value == FLUSH_LEGACY {
        vec![
            ("slc", "0".into()),
            ("gc_defer_blocks", "0".into()),
            ("flush_commit_us", "0".into()),
            ("flush_us", FLUSH_MODEL.into()),
        ]
    } else {
        vec![("flush_us", value.to_string())]
    }
}

/// Upper bound on the points of one sweep, a two-parameter sweep's cross product included
/// (every loop is bounded).
pub const MAX_POINTS: usize = 64;

/// Upper bound on the parameters of one sweep (a grid has two axes).
pub const MAX_PARAMS: usize = 2;

fn normalise(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('_', "-")
}

/// The row named `name` (`_` and `-` are the same).
///
/// # Errors
/// [`Error::Config`] listing the valid names.
pub fn lookup(name: &str) -> Result<&'static ParamInfo> {
    let wanted = normalise(name);
    PARAMS
        .iter()
        .find(|info| normalise(info.name) == wanted)
        .ok_or_else(|| {
            let names: Vec<&str> = PARAMS.iter().map(|info| info.name).collect();
            let hint = if wanted == "duration" {
                " (duration is not a sweep parameter: every point is measured for --duration)"
            } else {
                ""
            };
            Error::Config(format!(
                "bad --param `{name}`{hint}: use one of {}",
                names.join(", ")
            ))
        })
}

/// Splits `--values` into the points, checking each value's form.
///
/// # Errors
/// [`Error::Config`] naming the bad value and the accepted forms; no value, too many values, or
/// the same value twice.
pub fn split_values(info: &ParamInfo, text: &str) -> Result<Vec<String>> {
    let pieces = text.split(',').map(str::trim);
    let values: Vec<String> = if info.param == Param::Device {
        let mut values: Vec<String> = Vec::new();
        for piece in pieces {
            let starts_value =
                piece == "mem" || piece.starts_with("emu:") || piece.starts_with("file:");
            match values.last_mut() {
                Some(last) if !starts_value => {
                    last.push(',');
                    last.push_str(piece);
                }
                _ => values.push(piece.to_string()),
            }
        }
        values
    } else {
        pieces.map(str::to_string).collect()
    };
    if values.iter().all(String::is_empty) {
        return Err(value_error(info, text, "no value given"));
    }
    if values.len() > MAX_POINTS {
        return Err(value_error(
            info,
            text,
            &format!("{} values; at most {MAX_POINTS}", values.len()),
        ));
    }
    for (index, value) in values.iter().enumerate() {
        check_form(info, value)?;
        if values[..index].contains(value) {
            return Err(value_error(info, value, "given twice"));
        }
    }
    Ok(values)
}

fn value_error(info: &ParamInfo, value: &str, why: &str) -> Error {
    Error::Config(format!(
        "bad --values `{value}` for --param {}: {why}; {} takes {}",
        info.name, info.name, info.forms
    ))
}

/// A value's syntactic form (the bench's parsers check the rest per point).
fn check_form(info: &ParamInfo, value: &str) -> Result<()> {
    let whole = |min: u64, max: u64| -> Result<()> {
        match value.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(()),
            Ok(_) => Err(value_error(info, value, &format!("out of {min}..={max}"))),
            Err(_) => Err(value_error(info, value, "not a whole number")),
        }
    };
    match info.param {
        Param::Threads => whole(1, crate::bench::MAX_THREADS as u64),
        Param::Channels => whole(1, 1 << 16),
        Param::FlushUs => {
            let microseconds = value
                .parse::<f64>()
                .is_ok_and(|us| us.is_finite() && us >= 0.0);
            if microseconds || value == FLUSH_MODEL || value == FLUSH_LEGACY {
                Ok(())
            } else {
                Err(value_error(
                    info,
                    value,
                    "not microseconds, `model` or `legacy`",
                ))
            }
        }
        Param::LruScanDepth | Param::AceNW => whole(0, 1 << 30),
        Param::ListScanNs => match value.parse::<f64>() {
            Ok(ns) if (0.0..=crate::engine::config::MAX_LIST_SCAN_NS).contains(&ns) => Ok(()),
            _ => Err(value_error(
                info,
                value,
                "not a number of nanoseconds in 0..=1000000",
            )),
        },
        Param::Alpha => match value.parse::<f64>() {
            Ok(alpha) if (1.0..=64.0).contains(&alpha) => Ok(()),
            _ => Err(value_error(info, value, "not a number in 1..=64")),
        },
        Param::Device => {
            if value == "mem" || value.starts_with("emu:") || value.starts_with("file:") {
                Ok(())
            } else {
                Err(value_error(info, value, "not a device string"))
            }
        }
        Param::RwRatio => {
            let ok = value
                .split_once(':')
                .is_some_and(|(r, w)| r.parse::<u32>().is_ok() && w.parse::<u32>().is_ok());
            if ok {
                Ok(())
            } else {
                Err(value_error(info, value, "not R:W"))
            }
        }
        Param::Buffer | Param::ReadRatio | Param::LogSize => {
            if value.is_empty() {
                Err(value_error(info, value, "empty"))
            } else {
                Ok(())
            }
        }
    }
}

/// The table for `flashbuf sweep --help`.
#[must_use]
pub fn params_help() -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "Parameters (--param NAME --values V1,V2,...; give --param and --values twice for a \
         two-parameter sweep over every pair, a heat map per scheme in report.html):\n",
    );
    for info in PARAMS {
        let _ = writeln!(
            out,
            "  {:15} sets {}\n  {:15} values: {}; applies to {}",
            info.name,
            info.sets,
            "",
            info.forms,
            info.applies.describe()
        );
    }
    out.push_str("Every other flag is bench's (`flashbuf bench --help`).");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_looked_up_with_either_separator() {
        assert_eq!(lookup("lru-scan-depth").unwrap().param, Param::LruScanDepth);
        assert_eq!(lookup("read_ratio").unwrap().param, Param::ReadRatio);
        let err = lookup("duration").unwrap_err().to_string();
        assert!(
            err.contains("not a sweep parameter") && err.contains("buffer"),
            "{err}"
        );
    }

    #[test]
    fn device_values_keep_their_options() {
        let info = lookup("device").unwrap();
        let values = split_values(info, "emu:ssd-a,channels=4,emu:ssd-b,mem").unwrap();
        assert_eq!(values, ["emu:ssd-a,channels=4", "emu:ssd-b", "mem"]);
        assert!(split_values(info, "ssd-a").is_err());
    }

    #[test]
    fn flush_prices_are_microseconds_model_or_legacy() {
        let info = lookup("flush-us").unwrap();
        assert_eq!(
            split_values(info, "50,500,1000,3000,10000,model,legacy").unwrap(),
            ["50", "500", "1000", "3000", "10000", "model", "legacy"]
        );
        assert!(split_values(info, "fast").is_err());
        assert!(split_values(info, "-1").is_err());
        let legacy = flush_price_options(FLUSH_LEGACY);
        assert!(legacy.contains(&("slc", "0".to_string())), "{legacy:?}");
        assert_eq!(
            flush_price_options("500"),
            [("flush_us", "500".to_string())]
        );
    }

    #[test]
    fn bad_values_name_the_forms() {
        let info = lookup("threads").unwrap();
        let err = split_values(info, "4,x").unwrap_err().to_string();
        assert!(err.contains("`x`") && err.contains("whole number"), "{err}");
        assert!(split_values(info, "4,4").is_err());
        assert!(split_values(info, "0").is_err());
        assert!(split_values(lookup("rw-ratio").unwrap(), "2-1").is_err());
        assert_eq!(
            split_values(lookup("buffer").unwrap(), "5%, 10%").unwrap(),
            ["5%", "10%"]
        );
    }
}
