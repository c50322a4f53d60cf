//! `--repeat N` end to end on `mem` (issue 19 item 6): `bench --repeat 2` runs the schemes
//! interleaved, prints the table with `±` intervals and writes results.json whose scheme
//! records are the means, with every run under `runs` and per metric a `summary` {mean, ci95,
//! n} (and the ratio to the first scheme); `sweep --repeat 2` carries the intervals into its
//! series; a bad `--repeat` is refused before anything runs. The figures on `mem` mean
//! nothing: the test checks the plumbing and the arithmetic, not the outcome.

use std::process::Command;

fn flashbuf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
}

const SMALL: &[&str] = &[
    "--schemes",
    "vanilla,lru-c",
    "--device",
    "mem",
    "--log-device",
    "mem",
    "--db-size",
    "16MiB",
    "--threads",
    "2",
    "--duration",
    "200ms",
    "--warmup",
    "50ms",
    "--no-progress",
];

fn number(value: &serde_json::Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

#[test]
fn bench_repeat_writes_runs_and_a_summary_with_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bench");
    let output = flashbuf()
        .args(["bench", "--repeat", "2"])
        .args(SMALL)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stderr}");
    // Interleaved: vanilla, lru-c, vanilla, lru-c.
    let order: Vec<&str> = stderr
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("done: "))
        .map(|rest| rest.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(order, ["vanilla", "lru-c", "vanilla", "lru-c"], "{stderr}");
    assert!(stdout.contains("mean of 2 of 2 repeats"), "{stdout}");
    assert!(stdout.contains(" ±"), "{stdout}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["header"]["repeats"], 2);
    let records = json["runs"].as_array().unwrap();
    assert_eq!(records.len(), 2, "one record per scheme");
    for record in records {
        let runs = record["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "every repeat's record");
        let each: Vec<f64> = runs.iter().map(|r| number(&r["throughput"])).collect();
        assert!(runs.iter().all(|r| r["scheme"] == record["scheme"]));
        assert!(runs.iter().all(|r| r.get("runs").is_none()));
        // The record's own field is the mean; the summary's interval is Student t with 1 dof.
        let mean = (each[0] + each[1]) / 2.0;
        assert!((number(&record["throughput"]) - mean).abs() <= 1e-6 * mean.max(1.0));
        let summary = &record["summary"]["throughput"];
        assert_eq!(summary["n"], 2);
        assert!((number(&summary["mean"]) - mean).abs() <= 1e-6 * mean.max(1.0));
        let half = 12.7062 * (each[0] - each[1]).abs() / 2.0;
        assert!(
            (number(&summary["ci95"]) - half).abs() <= 1e-3 * half.max(1.0),
            "{summary} vs {each:?}"
        );
        for path in ["latency_ms.p95", "hit_ratio", "io.write_iops", "ratio"] {
            let entry = &record["summary"][path];
            assert_eq!(entry["n"], 2, "{path}: {entry}");
            assert!(entry["ci95"].is_number(), "{path}: {entry}");
        }
        assert!(
            record["steadiness"]["verdict"]
                .as_str()
                .unwrap()
                .starts_with("steady in ")
        );
    }
    // The first scheme's ratio to itself is 1 with no width.
    let own = &records[0]["summary"]["ratio"];
    assert!((number(&own["mean"]) - 1.0).abs() < 1e-12);
    assert!(number(&own["ci95"]).abs() < 1e-9);
    // The report shows the table with its intervals.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("±"), "report.html without intervals");
}

#[test]
fn sweep_repeat_carries_intervals_into_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let output = flashbuf()
        .args([
            "sweep", "--param", "buffer", "--values", "5%,20%", "--repeat", "2",
        ])
        .args(SMALL)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains(" ±"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(json["header"]["repeats"], 2);
    for series in json["series"].as_array().unwrap() {
        for row in series["rows"].as_array().unwrap() {
            let throughput = &row["intervals"]["throughput"];
            assert_eq!(throughput["n"], 2, "{row}");
            assert!(throughput["ci95"].is_number(), "{row}");
            assert!(
                (number(&throughput["mean"]) - number(&row["metrics"]["throughput"])).abs() < 1e-6
            );
            assert!(row["intervals"]["ratio"]["ci95"].is_number(), "{row}");
        }
    }
}

#[test]
fn a_bad_repeat_is_refused_before_anything_runs() {
    for bad in ["0", "101"] {
        let output = flashbuf()
            .args(["bench", "--repeat", bad])
            .args(SMALL)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert!(stderr.contains("--repeat"), "{stderr}");
        assert!(!stderr.contains("done:"), "{stderr}");
    }
}
