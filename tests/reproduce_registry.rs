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
