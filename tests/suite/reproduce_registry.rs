//! Every experiment file in `experiments/` is embedded, parses, and (when runnable) names known
//! schemes, workloads, devices and pool keys: its full and quick command lines pass every
//! check `bench`/`sweep` make before running, and its claims name schemes and points of the
//! full run. An experiment that needs something says what.

use flashbuf::cli::reproduce::check_experiment;
use flashbuf::reproduce::experiment::{FILES, registry};

#[test]
fn every_file_is_embedded_and_parses() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".toml"))
        .collect();
    on_disk.sort();
    let mut embedded: Vec<String> = FILES.iter().map(|(name, _)| (*name).to_string()).collect();
    embedded.sort();
    assert_eq!(on_disk, embedded, "experiments/ and FILES differ");
    let experiments = registry().unwrap();
    assert_eq!(experiments.len(), FILES.len());
    for experiment in &experiments {
        assert_eq!(
            FILES
                .iter()
                .filter(|(n, _)| *n == format!("{}.toml", experiment.id))
                .count(),
            1,
            "{}: the file is named after the id",
            experiment.id
        );
    }
}

#[test]
fn runnable_experiments_pass_the_checks_and_the_others_say_what_they_need() {
    let experiments = registry().unwrap();
    let mut runnable = 0;
    for experiment in &experiments {
        if !experiment.runnable() {
            assert!(
                experiment.needs.len() > 20,
                "{}: say what it needs",
                experiment.id
            );
            continue;
        }
        runnable += 1;
        for quick in [false, true] {
            if let Err(err) = check_experiment(experiment, quick) {
                panic!("{} (quick {quick}): {err}", experiment.id);
            }
        }
    }
    assert!(runnable >= 25, "{runnable} runnable");
}

/// A full reproduction repeats every scheme 3 times, a quick one once; `--repeat` overrides
/// both, and `--set` flags come after (they win).
#[test]
fn full_runs_repeat_three_times_and_quick_runs_once() {
    use flashbuf::cli::reproduce::{FULL_REPEATS, command_line, repeats};
    let experiments = registry().unwrap();
    let experiment = experiments.iter().find(|e| e.runnable()).unwrap();
    let repeat_of = |line: &[String]| {
        let at = line.iter().rposition(|arg| arg == "--repeat").unwrap();
        line[at + 1].clone()
    };
    assert_eq!(FULL_REPEATS, 3);
    assert_eq!(repeats(experiment, false, None), 3);
    assert_eq!(repeats(experiment, true, None), 1);
    assert_eq!(repeats(experiment, false, Some(5)), 5);
    assert_eq!(repeat_of(&command_line(experiment, false, None, None)), "3");
    assert_eq!(repeat_of(&command_line(experiment, true, None, None)), "1");
    let line = command_line(experiment, false, Some(2), Some("--repeat 4"));
    assert_eq!(repeat_of(&line), "4", "--set comes last");
}

/// Every paper value says where in the paper it is: a table, a figure or a section (with the
/// sentence or the derivation), or it is a baseline (a value of 1 in units of a scheme). The
/// parser refuses an empty source; this holds the experiment files to naming the place.
#[test]
fn every_paper_value_carries_its_source() {
    let mut checked = 0;
    for experiment in registry().unwrap() {
        for value in &experiment.paper_values {
            let source = value.source.trim();
            let place = ["Table ", "Figure ", "Section "]
                .iter()
                .any(|kind| source.contains(kind));
            let baseline = matches!(source, "baseline" | "the baseline")
                && (value.value - 1.0).abs() < 1e-12
                && value.unit.starts_with("x ");
            assert!(
                place || baseline,
                "{}: paper value {} {} at {} has source `{source}`: name the table, figure or \
                 section",
                experiment.id,
                value.scheme,
                value.metric,
                value.point
            );
            assert!(!value.unit.trim().is_empty(), "{}: a unit", experiment.id);
            checked += 1;
        }
    }
    assert!(checked >= 140, "{checked} paper values");
    // lruc-table4 carries Table 4's twelve numbers.
    let table4 = flashbuf::reproduce::experiment::find("lruc-table4").unwrap();
    let tps: Vec<f64> = table4
        .paper_values
        .iter()
        .filter(|v| v.metric == "throughput")
        .map(|v| v.value)
        .collect();
    assert_eq!(tps, [243.0, 247.0, 255.0, 346.0, 329.0, 316.0]);
    let stalls: Vec<f64> = table4
        .paper_values
        .iter()
        .filter(|v| v.metric == "read_stall_pct")
        .map(|v| v.value)
        .collect();
    assert_eq!(stalls, [34.0, 33.0, 31.0, 5.0, 2.0, 1.0]);
}

/// A paper value without a source, and claim criteria that do not hold together, are refused
/// when the file is parsed.
#[test]
fn a_value_without_a_source_and_bad_criteria_are_refused() {
    use flashbuf::reproduce::experiment::Experiment;
    let (_, text) = flashbuf::reproduce::experiment::FILES
        .iter()
        .find(|(name, _)| *name == "lruc-table4.toml")
        .unwrap();
    let unsourced = text.replacen(
        "source = \"Table 4, row TPS, lru_scan_depth 512 (ours 18)\"",
        "source = \" \"",
        1,
    );
    let err = Experiment::parse("x.toml", &unsourced)
        .unwrap_err()
        .to_string();
    assert!(err.contains("has no source"), "{err}");
    let reversed = text.replacen("at_least = 1.19", "at_least = 1.19\nat_most = 1.1", 1);
    let err = Experiment::parse("x.toml", &reversed)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at_most >= at_least"), "{err}");
    let below_one = text.replacen("at_least = 1.19", "at_least = 0.9", 1);
    let err = Experiment::parse("x.toml", &below_one)
        .unwrap_err()
        .to_string();
    assert!(err.contains("at_least >= 1"), "{err}");
}
