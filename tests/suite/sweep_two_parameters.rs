//! A two-parameter sweep end to end on `mem` (issue 21 item 5): `--param` and `--values` twice
//! run every pair (the first parameter outer), `--plan` lists one id per pair with its
//! coordinates, a `--point` run writes its file and a whole run into the same `--out` skips it
//! (resume), and sweep.json keeps both coordinates of every point, the printed table has the
//! grid of ratios, and report.html a self-contained heat map per scheme after the first.

use std::process::Command;

fn flashbuf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
}

const GRID: &[&str] = &[
    "sweep",
    "--param",
    "buffer",
    "--values",
    "5%,20%",
    "--param",
    "threads",
    "--values",
    "1,2,3",
    "--schemes",
    "vanilla,lru-c",
    "--device",
    "mem",
    "--log-device",
    "mem",
    "--db-size",
    "16MiB",
    "--duration",
    "60ms",
    "--warmup",
    "30ms",
    "--no-progress",
];

#[test]
fn every_pair_runs_once_and_the_report_has_a_heat_map() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("grid");
    // The plan: six points, the first parameter outer, each with its coordinates.
    let plan = flashbuf().args(GRID).arg("--plan=json").output().unwrap();
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let records: Vec<serde_json::Value> = String::from_utf8(plan.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), 6);
    assert_eq!(records[4]["id"], "p5");
    assert_eq!(records[4]["value"], "buffer=20% threads=2");
    assert_eq!(records[4]["coordinates"][0]["value"], "20%");
    assert_eq!(records[4]["coordinates"][1]["param"], "threads");
    // One point alone, as a worker would run it.
    let point = flashbuf()
        .args(GRID)
        .args(["--point", "p5", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        point.status.success(),
        "{}",
        String::from_utf8_lossy(&point.stderr)
    );
    assert!(out.join("points/p5.point.json").is_file());
    // The whole run into the same directory resumes: p5 is not run again.
    let whole = flashbuf()
        .args(GRID)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&whole.stderr);
    let stdout = String::from_utf8_lossy(&whole.stdout);
    assert!(whole.status.success(), "{stderr}");
    assert!(
        stderr.contains("point p5 (buffer x threads = buffer=20% threads=2) already done"),
        "{stderr}"
    );
    assert!(!stderr.contains("point 5 of 6"), "{stderr}");
    assert!(
        stderr.contains("point 6 of 6: buffer x threads = buffer=20% threads=3"),
        "{stderr}"
    );
    // The printed grid of ratios: rows buffer, columns threads.
    assert!(
        stdout.contains("lru-c / vanilla (throughput ratio): rows buffer, columns threads"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(json["param"], "buffer x threads");
    assert_eq!(
        json["grid"]["rows"]["values"],
        serde_json::json!(["5%", "20%"])
    );
    assert_eq!(json["grid"]["columns"]["param"], "threads");
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    for (index, point) in points.iter().enumerate() {
        assert_eq!(point["status"], "done");
        let (buffer, threads) = (["5%", "20%"][index / 3], index % 3 + 1);
        assert_eq!(point["coordinates"][0]["value"], buffer);
        assert_eq!(point["coordinates"][1]["value"], threads.to_string());
        let run = &point["results"]["runs"][0];
        assert_eq!(run["threads"].as_u64().unwrap(), threads as u64);
        let pages = if buffer == "5%" { 51 } else { 205 };
        assert_eq!(run["buffer_pages"].as_u64().unwrap(), pages);
    }
    assert_eq!(json["series"][1]["rows"][5]["coordinates"][1]["value"], "3");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("data-plot=\"heatmap-lru-c\""), "no heat map");
    assert!(
        !html.contains("<script src") && !html.contains("href=\"http"),
        "not self-contained"
    );
    let svg = std::fs::read_to_string(out.join("sweep-heatmap-lru-c.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("threads") && svg.contains("buffer"));
}

#[test]
fn bad_grids_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never");
    let mut unequal: Vec<&str> = GRID.to_vec();
    // Drop the second --values.
    let at = unequal.iter().rposition(|a| *a == "--values").unwrap();
    unequal.drain(at..at + 2);
    let output = flashbuf()
        .args(&unequal)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--values"));
    assert!(!out.exists());
}
