//! `reproduce --reuse` (issue 21 item 7): an experiment whose run is another's with fewer
//! schemes takes its points from the other's point files instead of running them. Here
//! `lruc-fig6 --quick` (vanilla and three LRU-C versions, 2 repeats, on `mem` with short
//! durations) is run once, then `lruc-table3 --quick` (the three LRU-C versions) with
//! `--reuse` on its directory: it must run nothing, write a point file that says where it
//! came from, report exactly fig6's records of its schemes in its own order, and pair the
//! throughput ratios against its own first scheme. A run that differs in any flag is not
//! covered and runs; a `--reuse` path that does not exist is refused before anything is made.

use std::path::Path;
use std::process::{Command, Output};

const SET: &str = "--device mem --log-device mem --threads 2 --duration 100ms --warmup 50ms";

fn reproduce(id: &str, out: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(["reproduce", id, "--quick", "--repeat", "2", "--set", SET])
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The runs of the only point of a bench experiment's results.json.
fn runs(dir: &Path) -> Vec<serde_json::Value> {
    json(&dir.join("results.json"))["points"][0]["results"]["runs"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_covered_experiment_takes_its_points_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let fig6 = tmp.path().join("fig6");
    let table3 = tmp.path().join("table3");
    let run = reproduce("lruc-fig6", &fig6, &[]);
    assert!(run.status.success(), "{}", text(&run.stderr));

    let reused = reproduce("lruc-table3", &table3, &["--reuse", fig6.to_str().unwrap()]);
    let stderr = text(&reused.stderr);
    assert!(reused.status.success(), "{stderr}");
    assert!(
        stderr.contains("taken from lruc-fig6.p1") && stderr.contains("leaving out vanilla"),
        "{stderr}"
    );
    assert!(!stderr.contains("bench: workload"), "ran a bench: {stderr}");

    let point = json(&table3.join("points/lruc-table3.p1.point.json"));
    assert_eq!(point["derived_from"]["id"], "lruc-fig6.p1");
    assert_eq!(point["plan"]["experiment"], "lruc-table3");
    let fig6_runs = runs(&fig6);
    let table3_runs = runs(&table3);
    let schemes: Vec<&str> = table3_runs
        .iter()
        .map(|r| r["scheme"].as_str().unwrap())
        .collect();
    assert_eq!(schemes, ["lru-c-basic", "lru-c-dbw", "lru-c"]);
    for run in &table3_runs {
        let same = fig6_runs
            .iter()
            .find(|r| r["scheme"] == run["scheme"])
            .unwrap();
        assert_eq!(run["throughput"], same["throughput"]);
        assert_eq!(run["runs"], same["runs"]);
    }
    // The ratios pair against table3's first scheme, lru-c-basic, no longer vanilla.
    let first_ratio = &table3_runs[0]["summary"]["ratio"]["mean"];
    assert!(
        (first_ratio.as_f64().unwrap() - 1.0).abs() < 1e-9,
        "{first_ratio}"
    );
    assert!(table3.join("verdicts.json").is_file());
}

#[test]
fn a_run_with_other_flags_is_not_covered_and_a_missing_path_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nowhere");
    let out = tmp.path().join("out");
    let refused = reproduce("lruc-table3", &out, &["--reuse", missing.to_str().unwrap()]);
    assert!(!refused.status.success());
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("--reuse") && stderr.contains("nowhere"),
        "{stderr}"
    );
    assert!(!out.exists(), "made {} before refusing", out.display());

    // table5 and table6 run the same command; table6 with one more flag is not covered.
    let table5 = tmp.path().join("table5");
    let run = reproduce("lruc-table5", &table5, &[]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let table6 = tmp.path().join("table6");
    let other = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args([
            "reproduce",
            "lruc-table6",
            "--quick",
            "--repeat",
            "2",
            "--set",
        ])
        .arg(format!("{SET} --seed 7"))
        .arg("--out")
        .arg(&table6)
        .args(["--reuse", table5.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = text(&other.stderr);
    assert!(other.status.success(), "{stderr}");
    assert!(!stderr.contains("taken from"), "{stderr}");
    let point = json(&table6.join("points/lruc-table6.p1.point.json"));
    assert!(point.get("derived_from").is_none());
}
