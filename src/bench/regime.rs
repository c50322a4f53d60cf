//! The regime of a run: the dimensionless quantities that govern a buffer pool's dynamics,
//! measured on the run and set beside a paper's TPC-C setup: the LRU-C paper's by default, the
//! RW paper's with `--regime-reference rw-tpcc` ([`Reference`]; `docs/regime.md`).
//!
//! A comparison of schemes transfers from a paper to a smaller experiment only when the smaller
//! one keeps the quantities that set the dynamics: how many cleaner periods the pool takes to
//! turn over, how much the cleaner can free against the miss rate, how deep it scans, how much
//! it writes per round, how long the redo log lasts, how often clients meet on a record lock,
//! and what a read stall costs. Each run reports them (`regime` in results.json, a table in
//! report.html) and, for TPC-C, the paper's value of each with its source and whether the run
//! lies within the stated factor of it; the printed table warns when it does not.
//!
//! The papers' values live in `experiments/regime/lruc-tpcc.toml` and `rw-tpcc.toml`
//! (embedded), each with the arithmetic that derives it and where its numbers are printed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::report::RunResult;
use crate::error::{Error, Result};

/// The published regimes a run can be set beside (`bench --regime-reference`): each paper's
/// TPC-C setup. The LRU-C paper's is the default; the RW experiments ask for the RW paper's,
/// whose setup (100 warehouses, 8 clients, buffer 20%, 4 KB pages) is another regime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reference {
    /// The LRU-C paper's TPC-C setup (`experiments/regime/lruc-tpcc.toml`).
    #[default]
    LrucTpcc,
    /// The RW paper's TPC-C setup (`experiments/regime/rw-tpcc.toml`).
    RwTpcc,
}

impl Reference {
    /// Every reference, in the order `--help` lists them.
    pub const ALL: [Reference; 2] = [Reference::LrucTpcc, Reference::RwTpcc];

    /// The name `--regime-reference` takes.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Reference::LrucTpcc => "lruc-tpcc",
            Reference::RwTpcc => "rw-tpcc",
        }
    }

    /// The reference called `name`.
    ///
    /// # Errors
    /// [`Error::Config`] naming the flag and the accepted names.
    pub fn parse(name: &str) -> Result<Reference> {
        Reference::ALL
            .into_iter()
            .find(|reference| reference.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Reference::ALL.iter().map(|r| r.name()).collect();
                Error::Config(format!(
                    "bad --regime-reference `{name}`: not one of {}",
                    names.join(", ")
                ))
            })
    }

    /// The embedded file's text.
    fn text(self) -> &'static str {
        match self {
            Reference::LrucTpcc => include_str!("../../experiments/regime/lruc-tpcc.toml"),
            Reference::RwTpcc => include_str!("../../experiments/regime/rw-tpcc.toml"),
        }
    }

    /// The paper's regime, parsed and checked.
    ///
    /// # Errors
    /// [`Error::Config`] when the embedded file does not parse or names a quantity runs do not
    /// report (a test keeps every file parsing).
    pub fn load(self) -> Result<PaperRegime> {
        let file = format!("experiments/regime/{}.toml", self.name());
        let regime: PaperRegime =
            toml::from_str(self.text()).map_err(|err| Error::Config(format!("{file}: {err}")))?;
        for quantity in &regime.quantity {
            if !QUANTITY_NAMES.contains(&quantity.name.as_str()) {
                return Err(Error::Config(format!(
                    "{file}: unknown quantity `{}`",
                    quantity.name
                )));
            }
        }
        Ok(regime)
    }
}

/// A paper's regime: the reference setup and each quantity's published value.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperRegime {
    /// The setup in words.
    pub reference: String,
    /// The workload it applies to (`tpcc`).
    pub workload: String,
    /// A run is inside the regime when ours / paper lies within [1/factor, factor].
    pub factor: f64,
    /// The quantities.
    pub quantity: Vec<PaperQuantity>,
}

/// One quantity's published values.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperQuantity {
    /// Its name (a key of [`Quantities`]).
    pub name: String,
    /// What it is.
    pub what: String,
    /// How the paper's value follows from the paper's numbers.
    pub derivation: String,
    /// Where those numbers are printed.
    pub source: String,
    /// A paper value of 0 is matched when ours is at most this.
    #[serde(default)]
    pub tolerance: f64,
    /// Scheme name (or `any`) to value.
    #[serde(default)]
    pub paper: BTreeMap<String, f64>,
}

impl PaperQuantity {
    /// The paper's value for `scheme`: its own, else `any`.
    #[must_use]
    pub fn value_for(&self, scheme: &str) -> Option<f64> {
        self.paper
            .get(scheme)
            .or_else(|| self.paper.get("any"))
            .copied()
    }
}

/// Every quantity a run reports, in report order.
pub const QUANTITY_NAMES: &[&str] = &[
    "turnover_over_period",
    "cleaner_capacity_over_miss_rate",
    "scan_depth_over_instance",
    "written_per_round_over_pool",
    "reads_per_transaction",
    "writes_per_transaction",
    "clients_per_warehouse",
    "lock_wait_share",
    "read_stall_ratio",
    "read_stall_wait_ms",
    "device_bandwidth_share",
    "redo_headroom_over_turnover",
    "client_ms_per_transaction",
    "stall_share_of_client_time",
    "list_mutex_share_of_client_time",
    "cleaner_freed_over_misses",
    "cleaner_round_over_period",
];

/// What the regime needs beyond the run's own record: the pool's effective shape and the
/// workload's setup.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegimeInputs {
    /// Buffer-pool instances.
    pub instances: usize,
    /// Frames per instance.
    pub instance_frames: usize,
    /// `lru_scan_depth` per instance in effect.
    pub scan_depth: usize,
    /// The page cleaner's (LRU-C flusher's) period in effect, device-time ms.
    pub cleaner_period_ms: u64,
    /// The time-constant scale in effect.
    pub time_constant_scale: f64,
    /// TPC-C warehouses (`None`: another workload).
    pub warehouses: Option<u16>,
    /// Redo-log bytes (`None`: no log).
    pub log_bytes: Option<u64>,
    /// Real nanoseconds the clients waited for record locks in the measured phase (`None`:
    /// no record locks).
    pub lock_wait_ns: Option<u64>,
}

/// One quantity of a run.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct RegimeQuantity {
    /// Its name.
    pub name: String,
    /// Ours (`None`: the run has no such thing, e.g. no misses).
    pub ours: Option<f64>,
    /// The paper's, for this scheme (`None`: not given, or no reference for this workload).
    pub paper: Option<f64>,
    /// ours / paper.
    pub ratio: Option<f64>,
    /// Whether ours lies within the factor (or tolerance) of the paper's.
    pub within: Option<bool>,
    /// The absolute difference from the paper's value that counts as within too (for values
    /// near zero, where a factor means nothing).
    pub tolerance: f64,
}

/// A run's regime (`regime` in results.json).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Regime {
    /// The reference setup (`None`: no published regime for this workload).
    pub reference: Option<String>,
    /// The factor a quantity may stray from the paper's.
    pub factor: f64,
    /// The pool's shape behind the quantities.
    pub instances: usize,
    /// Frames per instance.
    pub instance_frames: usize,
    /// Scan depth per instance.
    pub scan_depth: usize,
    /// Cleaner period, device-time ms.
    pub cleaner_period_ms: u64,
    /// Time-constant scale in effect.
    pub time_constant_scale: f64,
    /// The quantities, in [`QUANTITY_NAMES`] order.
    pub quantities: Vec<RegimeQuantity>,
    /// Names of the quantities outside the paper's regime.
    pub outside: Vec<String>,
}

/// Our value of every quantity, by name.
pub type Quantities = BTreeMap<&'static str, Option<f64>>;

/// Our quantities of `run`.
#[must_use]
pub fn measure_quantities(run: &RunResult, inputs: &RegimeInputs) -> Quantities {
    let pool = &run.pool_stats;
    let seconds = run.duration_s.max(f64::MIN_POSITIVE);
    let frames = (inputs.instances * inputs.instance_frames) as f64;
    let period_s = inputs.cleaner_period_ms as f64 / 1000.0;
    let miss_rate = pool.misses as f64 / seconds;
    let positive = |x: f64| (x.is_finite() && x > 0.0).then_some(x);
    let turnover_s = positive(miss_rate).map(|rate| frames / rate);
    let written = (pool.sync_replacement_writes
        + pool.sync_recoverability_writes
        + pool.lru_flushes
        + pool.flush_list_flushes) as f64;
    let per_tx = |count: f64| (run.unit == "tx/s" && run.ops > 0).then(|| count / run.ops as f64);
    let redo_s = run.log.as_ref().and_then(|log| {
        let bytes_per_s = log.mbps * 1e6;
        inputs
            .log_bytes
            .and_then(|size| positive(bytes_per_s).map(|rate| 0.9 * size as f64 / rate))
    });
    let mut q = Quantities::new();
    q.insert("turnover_over_period", turnover_s.map(|t| t / period_s));
    q.insert(
        "cleaner_capacity_over_miss_rate",
        positive(miss_rate)
            .map(|rate| (inputs.instances * inputs.scan_depth) as f64 / period_s / rate),
    );
    q.insert(
        "scan_depth_over_instance",
        Some(inputs.scan_depth as f64 / inputs.instance_frames.max(1) as f64),
    );
    q.insert(
        "written_per_round_over_pool",
        Some(written / seconds * period_s / frames.max(1.0)),
    );
    q.insert("reads_per_transaction", per_tx(pool.misses as f64));
    q.insert("writes_per_transaction", per_tx(written));
    q.insert(
        "clients_per_warehouse",
        inputs
            .warehouses
            .map(|w| run.threads as f64 / f64::from(w.max(1))),
    );
    q.insert(
        "lock_wait_share",
        inputs.lock_wait_ns.map(|ns| {
            ns as f64 / 1e9 / (run.threads as f64 * run.duration_real_s.max(f64::MIN_POSITIVE))
        }),
    );
    q.insert(
        "read_stall_ratio",
        (pool.misses > 0).then_some(run.read_stall_ratio),
    );
    q.insert(
        "read_stall_wait_ms",
        (pool.read_stall_wait.count > 0).then_some(run.read_stall_wait_ms.mean),
    );
    q.insert("device_bandwidth_share", run.io.bandwidth_share);
    q.insert(
        "redo_headroom_over_turnover",
        redo_s
            .zip(turnover_s)
            .map(|(redo, turnover)| redo / turnover),
    );
    insert_client_time(&mut q, run);
    // What the page cleaner freed (clean pages it evicted, pages it wrote from the LRU tail or
    // the dirty region) over the misses: realised, where `cleaner_capacity_over_miss_rate` is
    // nominal. Only page cleaners that count their clean frees report it.
    q.insert(
        "cleaner_freed_over_misses",
        pool.extra
            .get("cleaner_freed_clean_pages")
            .filter(|_| pool.misses > 0)
            .map(|clean| (clean + pool.lru_flushes as f64) / pool.misses as f64),
    );
    // How long a background-writer round took (the window over its rounds) over the period
    // it is meant to run at: above 1, its own writes throttle it and its nominal capacity
    // (`cleaner_capacity_over_miss_rate`) is not what it can free.
    q.insert(
        "cleaner_round_over_period",
        pool.extra
            .get("cleaner_rounds")
            .copied()
            .and_then(positive)
            .filter(|_| period_s > 0.0)
            .map(|rounds| seconds / rounds / period_s),
    );
    q
}

/// Where a client's time goes: the time per transaction of one client (device ms; Little's
/// law over the closed loop of `threads` clients), and the shares of the clients' time spent in
/// read stalls (device time) and waiting for list mutexes (real time, over real time).
fn insert_client_time(q: &mut Quantities, run: &RunResult) {
    let record = run.unit == "tx/s" && run.throughput > 0.0;
    let client_s = run.threads as f64 * run.duration_s;
    let client_real_s = run.threads as f64 * run.duration_real_s;
    q.insert(
        "client_ms_per_transaction",
        record.then(|| run.threads as f64 / run.throughput * 1000.0),
    );
    q.insert(
        "stall_share_of_client_time",
        (client_s > 0.0).then(|| run.pool_stats.read_stall_wait.sum_us as f64 / 1e6 / client_s),
    );
    q.insert(
        "list_mutex_share_of_client_time",
        (client_real_s > 0.0).then(|| run.mutex_wait_total_ms / 1000.0 / client_real_s),
    );
}

/// Whether `ours` lies within `factor` of `paper`'s value, or within `tolerance` of it.
fn is_within(ours: f64, paper: f64, factor: f64, tolerance: f64) -> bool {
    if paper == 0.0 {
        ours <= tolerance
    } else {
        (1.0 / factor..=factor).contains(&(ours / paper)) || (ours - paper).abs() <= tolerance
    }
}

/// The regime of `--repeat N` runs of one scheme: each quantity the mean of the repeats that
/// measured it, judged against the paper's value again. The pool's shape is the first run's
/// (every repeat runs the same configuration). `None` without a measured regime.
#[must_use]
pub fn mean(regimes: &[&Regime]) -> Option<Regime> {
    let first = *regimes.first()?;
    let mut combined = first.clone();
    combined.outside.clear();
    for (index, quantity) in combined.quantities.iter_mut().enumerate() {
        let values: Vec<f64> = regimes
            .iter()
            .filter_map(|r| r.quantities.get(index).and_then(|q| q.ours))
            .collect();
        quantity.ours =
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
        quantity.ratio = quantity
            .ours
            .zip(quantity.paper)
            .and_then(|(o, t)| (t != 0.0).then_some(o / t));
        quantity.within = quantity
            .ours
            .zip(quantity.paper)
            .map(|(o, t)| is_within(o, t, first.factor, quantity.tolerance));
        if quantity.within == Some(false) {
            combined.outside.push(quantity.name.clone());
        }
    }
    Some(combined)
}

/// The regime of `run` against `paper` (when the run's workload is the paper's).
#[must_use]
pub fn regime(run: &RunResult, inputs: &RegimeInputs, paper: Option<&PaperRegime>) -> Regime {
    let ours = measure_quantities(run, inputs);
    let paper = paper.filter(|paper| workload_matches(run, paper));
    let factor = paper.map_or(2.0, |paper| paper.factor);
    let mut quantities = Vec::with_capacity(QUANTITY_NAMES.len());
    let mut outside = Vec::new();
    for name in QUANTITY_NAMES {
        let our = ours.get(name).copied().flatten();
        let published = paper.and_then(|p| p.quantity.iter().find(|q| q.name == *name));
        let theirs = published.and_then(|q| q.value_for(&run.scheme));
        let tolerance = published.map_or(0.0, |q| q.tolerance);
        let ratio = our
            .zip(theirs)
            .and_then(|(o, t)| (t != 0.0).then_some(o / t));
        let within = our
            .zip(theirs)
            .map(|(o, t)| is_within(o, t, factor, tolerance));
        if within == Some(false) {
            outside.push((*name).to_string());
        }
        quantities.push(RegimeQuantity {
            name: (*name).to_string(),
            ours: our,
            paper: theirs,
            ratio,
            within,
            tolerance,
        });
    }
    Regime {
        reference: paper.map(|p| p.reference.clone()),
        factor,
        instances: inputs.instances,
        instance_frames: inputs.instance_frames,
        scan_depth: inputs.scan_depth,
        cleaner_period_ms: inputs.cleaner_period_ms,
        time_constant_scale: inputs.time_constant_scale,
        quantities,
        outside,
    }
}

fn workload_matches(run: &RunResult, paper: &PaperRegime) -> bool {
    run.workload == paper.workload || run.workload.starts_with(&format!("{} ", paper.workload))
}

/// The printed warning for the runs that leave the paper's regime (empty when none do or
/// there is no reference).
#[must_use]
pub fn warnings(runs: &[RunResult]) -> String {
    let mut out = String::new();
    for run in runs {
        let Some(regime) = run.regime.as_ref() else {
            continue;
        };
        if regime.outside.is_empty() {
            continue;
        }
        let items: Vec<String> = regime
            .quantities
            .iter()
            .filter(|q| q.within == Some(false))
            .map(|q| format!("{} {} (paper {})", q.name, short(q.ours), short(q.paper)))
            .collect();
        let _ = writeln!(
            out,
            "regime: {} is outside the paper's by more than {}x in {}",
            run.scheme,
            regime.factor,
            items.join(", ")
        );
    }
    out
}

/// A compact number for tables.
#[must_use]
pub fn short(value: Option<f64>) -> String {
    match value {
        None => "-".to_string(),
        Some(0.0) => "0".to_string(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// The regime as an HTML section: one row per quantity, one column pair (ours, paper) per
/// scheme; cells outside the factor are marked.
#[must_use]
pub fn html(runs: &[RunResult]) -> String {
    let with: Vec<&RunResult> = runs.iter().filter(|r| r.regime.is_some()).collect();
    let Some(first) = with.first().and_then(|r| r.regime.as_ref()) else {
        return String::new();
    };
    let esc = super::plot::escape;
    let mut out = String::new();
    let _ = writeln!(out, "<h2 id=\"regime\">Regime</h2>");
    let _ = writeln!(
        out,
        "<p>The quantities that govern the pool's dynamics (docs/regime.md){}. \
         <span class=\"out\">Marked</span> cells lie outside the paper's by more than {}x.</p>",
        first
            .reference
            .as_ref()
            .map_or_else(String::new, |r| format!(", beside the {}", esc(r))),
        first.factor
    );
    let _ = write!(out, "<table class=\"regime\"><tr><th>quantity</th>");
    for run in &with {
        let _ = write!(out, "<th>{} ours</th><th>paper</th>", esc(&run.scheme));
    }
    let _ = writeln!(out, "</tr>");
    for (i, name) in QUANTITY_NAMES.iter().enumerate() {
        let _ = write!(out, "<tr><td><code>{name}</code></td>");
        for run in &with {
            let Some(q) = run.regime.as_ref().and_then(|r| r.quantities.get(i)) else {
                let _ = write!(out, "<td></td><td></td>");
                continue;
            };
            let class = if q.within == Some(false) {
                " class=\"out\""
            } else {
                ""
            };
            let _ = write!(
                out,
                "<td{class}>{}</td><td>{}</td>",
                short(q.ours),
                short(q.paper)
            );
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</table>");
    out
}

/// The eviction end's profile per run (`tail_profile`, docs/regime.md, "Why vanilla's LRU tail
/// stays clean"), as an HTML table; empty when no run sampled it.
#[must_use]
pub fn tail_html(runs: &[RunResult]) -> String {
    let with: Vec<(&RunResult, &crate::core::tail_profile::TailProfile)> = runs
        .iter()
        .filter_map(|run| run.tail_profile.as_ref().map(|tail| (run, tail)))
        .collect();
    let Some((_, first)) = with.first() else {
        return String::new();
    };
    let esc = super::plot::escape;
    let mut out = String::new();
    let _ = writeln!(out, "<h2 id=\"tail\">LRU tail</h2>");
    let _ = writeln!(
        out,
        "<p>The replacement order's eviction end, sampled once a timeline step: the dirty share \
         (in parentheses, the share being written) by position from the tail, as shares of the \
         order's length, and the run of pages a miss could not evict from the tail. A miss \
         that finds no free frame stalls when that run reaches its first scan's depth \
         (docs/regime.md, \"Why vanilla's LRU tail stays clean\").</p>"
    );
    let _ = write!(
        out,
        "<table class=\"regime\"><tr><th>scheme</th><th>samples</th><th>run (pages)</th>\
         <th>run at the scan depth</th>"
    );
    for band in &first.bands {
        let _ = write!(
            out,
            "<th>{:.0}-{:.0}%</th>",
            band.from * 100.0,
            band.to * 100.0
        );
    }
    let _ = writeln!(out, "</tr>");
    for (run, tail) in &with {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}% (depth {})</td>",
            esc(&run.scheme),
            tail.samples,
            tail.unevictable_run_mean,
            tail.run_at_depth * 100.0,
            tail.scan_depth
        );
        for band in &tail.bands {
            let _ = write!(
                out,
                "<td>{:.0}% ({:.0}%)</td>",
                band.dirty * 100.0,
                band.writing * 100.0
            );
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</table>");
    out
}

/// CSS for [`html`].
pub const CSS: &str = "table.regime{border-collapse:collapse}table.regime td,table.regime th\
{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}table.regime td:first-child\
{text-align:left}.out{background:#fde2e1}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_file_parses_and_names_known_quantities_with_sources() {
        let paper = Reference::LrucTpcc.load().unwrap();
        assert_eq!(paper.workload, "tpcc");
        assert!(paper.factor > 1.0);
        for q in &paper.quantity {
            assert!(
                !q.source.is_empty() && !q.derivation.is_empty(),
                "{}",
                q.name
            );
        }
        let turnover = paper
            .quantity
            .iter()
            .find(|q| q.name == "turnover_over_period")
            .unwrap();
        assert_eq!(turnover.value_for("vanilla"), Some(95.5));
        assert_eq!(turnover.value_for("pg-clock"), None);
        let depth = paper
            .quantity
            .iter()
            .find(|q| q.name == "scan_depth_over_instance")
            .unwrap();
        assert_eq!(depth.value_for("war"), Some(0.0125));
        assert_eq!(depth.value_for("cflru"), Some(0.333));
    }

    #[test]
    fn the_paper_values_follow_from_the_papers_numbers() {
        // Table 5 and §5.1: 655,360 frames, 6,860 reads/s, 8 x 1,024 per 1 s round.
        let frames: f64 = 655_360.0;
        assert!((frames / 6_860.0 - 95.5).abs() < 0.1);
        assert!((8.0_f64 * 1024.0 / 6_860.0 - 1.19).abs() < 0.01);
        assert!((3_968.0 / frames - 0.0061).abs() < 0.0001);
        assert!((6_860.0_f64 / 247.0 - 27.8).abs() < 0.05);
    }

    #[test]
    fn every_reference_parses_and_gives_each_value_a_source() {
        for reference in Reference::ALL {
            let paper = reference.load().unwrap();
            assert_eq!(paper.workload, "tpcc", "{}", reference.name());
            assert_eq!(Reference::parse(reference.name()).unwrap(), reference);
            for q in &paper.quantity {
                assert!(
                    !q.source.is_empty() && !q.derivation.is_empty(),
                    "{}: {}",
                    reference.name(),
                    q.name
                );
            }
        }
        assert_eq!(Reference::default(), Reference::LrucTpcc);
        let err = Reference::parse("tpcc").unwrap_err().to_string();
        assert!(
            err.contains("--regime-reference") && err.contains("rw-tpcc"),
            "{err}"
        );
    }

    #[test]
    fn the_rw_values_follow_from_the_rw_papers_numbers() {
        // §5.1: 10 GB of 4 KB pages, buffer 20%, 8 clients, 100 warehouses; the authors'
        // my.cnf: 8 instances, scan depth 1,024; Table 4: 15,857 TpmC, 2,778 / 2,477 IOPS.
        let frames = 0.2 * 10.0 * 1024.0 * 1024.0 * 1024.0 / 4096.0;
        assert!((frames - 524_288.0_f64).abs() < 1.0);
        let tx_per_s = 15_857.0 / 60.0 / 0.45;
        let paper = Reference::RwTpcc.load().unwrap();
        let value = |name: &str| {
            paper
                .quantity
                .iter()
                .find(|q| q.name == name)
                .and_then(|q| q.value_for("vanilla"))
                .unwrap()
        };
        let close = |ours: f64, theirs: f64| (ours / theirs - 1.0).abs() < 0.01;
        assert!(close(frames / 2_778.0, value("turnover_over_period")));
        assert!(close(
            8.0 * 1024.0 / 2_778.0,
            value("cleaner_capacity_over_miss_rate")
        ));
        assert!(close(
            1024.0 / (frames / 8.0),
            value("scan_depth_over_instance")
        ));
        assert!(close(
            2_477.0 / frames,
            value("written_per_round_over_pool")
        ));
        assert!(close(2_778.0 / tx_per_s, value("reads_per_transaction")));
        assert!(close(2_477.0 / tx_per_s, value("writes_per_transaction")));
        assert!(close(8.0 / 100.0, value("clients_per_warehouse")));
        assert!(close(
            8.0 * 1000.0 / tx_per_s,
            value("client_ms_per_transaction")
        ));
    }

    #[test]
    fn the_reference_decides_what_a_run_is_set_beside() {
        // 8 clients on 50 warehouses (0.16) lie inside the RW paper's 0.08 by its factor of 2;
        // 64 clients on 5 (12.8) lie far outside.
        let mut run = run_with(70_000, 2_500, 10.0);
        run.threads = 8;
        let mut small = inputs();
        let rw = Reference::RwTpcc.load().unwrap();
        let quantity = |regime: &Regime| {
            regime
                .quantities
                .iter()
                .find(|q| q.name == "clients_per_warehouse")
                .cloned()
                .unwrap()
        };
        let at_50 = regime(&run, &small, Some(&rw));
        assert_eq!(at_50.reference.as_deref(), Some(rw.reference.as_str()));
        assert_eq!(quantity(&at_50).paper, Some(0.08));
        assert_eq!(quantity(&at_50).within, Some(true));
        run.threads = 64;
        small.warehouses = Some(5);
        let at_5 = regime(&run, &small, Some(&rw));
        assert_eq!(quantity(&at_5).within, Some(false));
        assert!(
            at_5.outside
                .iter()
                .any(|name| name == "clients_per_warehouse")
        );
    }

    fn run_with(misses: u64, ops: u64, seconds: f64) -> RunResult {
        let mut run = RunResult {
            scheme: "vanilla".into(),
            workload: "tpcc".into(),
            unit: "tx/s".into(),
            threads: 64,
            duration_s: seconds,
            duration_real_s: seconds * 4.0,
            ops,
            ..RunResult::default()
        };
        run.pool_stats.misses = misses;
        run.pool_stats.lru_flushes = misses / 2;
        run
    }

    fn inputs() -> RegimeInputs {
        RegimeInputs {
            instances: 8,
            instance_frames: 3_000,
            scan_depth: 37,
            cleaner_period_ms: 37,
            time_constant_scale: 3_000.0 / 81_920.0,
            warehouses: Some(50),
            log_bytes: None,
            lock_wait_ns: Some(64 * 40_000_000_000 / 100),
        }
    }

    #[test]
    fn the_cleaners_realised_freeing_counts_its_clean_frees_and_its_lru_writes() {
        let mut run = run_with(70_000, 2_500, 10.0);
        let q = measure_quantities(&run, &inputs());
        assert_eq!(
            q["cleaner_freed_over_misses"], None,
            "a cleaner that does not count its clean frees reports nothing"
        );
        run.pool_stats
            .extra
            .insert("cleaner_freed_clean_pages".into(), 14_000.0);
        let q = measure_quantities(&run, &inputs());
        // 14,000 clean frees and 35,000 LRU writes for 70,000 misses.
        assert!((q["cleaner_freed_over_misses"].unwrap() - 0.7).abs() < 1e-9);
        run.pool_stats.misses = 0;
        assert_eq!(
            measure_quantities(&run, &inputs())["cleaner_freed_over_misses"],
            None,
            "no misses: nothing to compare with"
        );
    }

    #[test]
    fn a_cleaner_slower_than_its_period_shows_in_its_round_time() {
        let mut run = run_with(70_000, 2_500, 10.0);
        assert_eq!(
            measure_quantities(&run, &inputs())["cleaner_round_over_period"],
            None,
            "no rounds counted, nothing reported"
        );
        // 130 rounds in 10 s of a 37 ms period: each round took 77 ms, 2.1 periods.
        run.pool_stats.extra.insert("cleaner_rounds".into(), 130.0);
        let period_s = inputs().cleaner_period_ms as f64 / 1000.0;
        let expected = 10.0 / 130.0 / period_s;
        let q = measure_quantities(&run, &inputs());
        assert!((q["cleaner_round_over_period"].unwrap() - expected).abs() < 1e-9);
    }

    #[test]
    fn quantities_follow_from_the_counters() {
        // 7,000 misses a second for 10 s on 24,000 frames: turnover 3.43 s, 92.7 periods.
        let run = run_with(70_000, 2_500, 10.0);
        let q = measure_quantities(&run, &inputs());
        let turnover = q["turnover_over_period"].unwrap();
        assert!(
            (turnover - 24_000.0 / 7_000.0 / 0.037).abs() < 0.01,
            "{turnover}"
        );
        let capacity = q["cleaner_capacity_over_miss_rate"].unwrap();
        assert!((capacity - 8.0 * 37.0 / 0.037 / 7_000.0).abs() < 1e-9);
        assert!((q["reads_per_transaction"].unwrap() - 28.0).abs() < 1e-9);
        assert!((q["writes_per_transaction"].unwrap() - 14.0).abs() < 1e-9);
        assert!((q["clients_per_warehouse"].unwrap() - 1.28).abs() < 1e-9);
        assert!((q["lock_wait_share"].unwrap() - 0.01).abs() < 1e-9);
        assert_eq!(q["read_stall_wait_ms"], None, "no stall, no wait");
    }

    #[test]
    fn a_run_far_from_the_paper_is_flagged_and_a_close_one_is_not() {
        let paper = Reference::LrucTpcc.load().unwrap();
        let close = regime(&run_with(70_000, 2_500, 10.0), &inputs(), Some(&paper));
        assert!(close.reference.is_some());
        assert!(
            !close.outside.contains(&"turnover_over_period".to_string()),
            "{close:?}"
        );
        let mut fast = inputs();
        fast.cleaner_period_ms = 1000;
        let far = regime(&run_with(70_000, 2_500, 10.0), &fast, Some(&paper));
        assert!(far.outside.contains(&"turnover_over_period".to_string()));
        let mut run = run_with(70_000, 2_500, 10.0);
        run.regime = Some(far);
        assert!(warnings(&[run]).contains("turnover_over_period"));
    }

    #[test]
    fn another_workload_has_no_reference_and_no_verdicts() {
        let paper = Reference::LrucTpcc.load().unwrap();
        let mut run = run_with(70_000, 2_500, 10.0);
        run.workload = "ms".into();
        let r = regime(&run, &inputs(), Some(&paper));
        assert!(r.reference.is_none());
        assert!(r.quantities.iter().all(|q| q.within.is_none()));
        assert!(r.outside.is_empty());
    }

    #[test]
    fn a_zero_paper_value_is_matched_within_its_tolerance() {
        let paper = Reference::LrucTpcc.load().unwrap();
        let mut run = run_with(70_000, 2_500, 10.0);
        run.scheme = "lru-c".into();
        run.read_stall_ratio = 0.005;
        let r = regime(&run, &inputs(), Some(&paper));
        let stalls = r
            .quantities
            .iter()
            .find(|q| q.name == "read_stall_ratio")
            .unwrap();
        assert_eq!(stalls.within, Some(true));
        run.read_stall_ratio = 0.05;
        let r = regime(&run, &inputs(), Some(&paper));
        assert!(r.outside.contains(&"read_stall_ratio".to_string()));
    }

    #[test]
    fn where_a_clients_time_goes() {
        // 64 clients at 250 tx/s: 256 ms each. 160 s of stalls in 640 client-seconds: 25%.
        let mut run = run_with(70_000, 2_500, 10.0);
        run.throughput = 250.0;
        run.pool_stats.read_stall_wait.sum_us = 160_000_000;
        run.mutex_wait_total_ms = 256_000.0;
        let q = measure_quantities(&run, &inputs());
        assert!((q["client_ms_per_transaction"].unwrap() - 256.0).abs() < 1e-9);
        assert!((q["stall_share_of_client_time"].unwrap() - 0.25).abs() < 1e-9);
        // Mutex waits are real time: 256 s over 64 clients x 40 real seconds.
        assert!((q["list_mutex_share_of_client_time"].unwrap() - 0.1).abs() < 1e-9);
        run.unit = "ops/s".into();
        assert_eq!(
            measure_quantities(&run, &inputs())["client_ms_per_transaction"],
            None
        );
    }

    #[test]
    fn repeats_average_each_quantity_and_judge_the_mean_again() {
        let paper = Reference::LrucTpcc.load().unwrap();
        let mut fast = inputs();
        fast.cleaner_period_ms = 1000;
        let near = regime(&run_with(70_000, 2_500, 10.0), &inputs(), Some(&paper));
        let far = regime(&run_with(70_000, 2_500, 10.0), &fast, Some(&paper));
        let turnover = |r: &Regime| {
            r.quantities
                .iter()
                .find(|q| q.name == "turnover_over_period")
                .and_then(|q| q.ours)
                .unwrap()
        };
        let both = mean(&[&near, &far]).unwrap();
        let expected = f64::midpoint(turnover(&near), turnover(&far));
        assert!((turnover(&both) - expected).abs() < 1e-9);
        assert_eq!(
            both.outside.contains(&"turnover_over_period".to_string()),
            !(1.0 / both.factor..=both.factor).contains(&(expected / 95.5))
        );
        assert!(mean(&[]).is_none());
    }
}
