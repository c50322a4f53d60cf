//! A reproduction run whole and split into points (issue 21 item 6): `reproduce ace-fig10g
//! --quick` on `mem` with short durations (`--set`), once whole and once as its `--plan`'s
//! points run by `xargs -P 2` over `--point`, then `flashbuf merge`. Throughput differs from
//! run to run, so the two reports are compared by structure: the same points, values, schemes
//! and statuses, and the same claims and criteria, each with an outcome. Whether a claim was
//! evaluated is not compared between the two runs: it depends on what a 100 ms run measured
//! (activity, the mechanism exercised), which a loaded host can change. That the merge
//! assembles exactly the report a whole run writes is checked on the whole run's own point
//! files: merging them gives the same results.json and verdicts.json.
//!
//! Also: a bad `--point` id is refused naming the flag before anything is made; a merge with a
//! point missing names it (and still writes the report); a rerun skips the points done, and
//! `--fresh` runs them again; a point killed between its runs continues from the runs its file
//! kept.

use std::path::Path;
use std::process::{Command, Output, Stdio};

const EXPERIMENT: &str = "ace-fig10g";
const SET: &str = "--device mem --log-device mem --db-size 16MiB --threads 2 --duration 100ms \
                   --warmup 50ms";

fn flashbuf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
}

fn reproduce(extra: &[&str]) -> Output {
    flashbuf()
        .args(["reproduce", EXPERIMENT, "--quick", "--set", SET])
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

/// results.json without its header's date (the time of assembly).
fn results(dir: &Path) -> serde_json::Value {
    let mut value = json(&dir.join("results.json"));
    value["header"]
        .as_object_mut()
        .unwrap()
        .remove("date")
        .unwrap();
    value
}

/// Per point: value, status, and the schemes that ran.
fn shape(results: &serde_json::Value) -> Vec<(String, String, Vec<String>)> {
    results["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|point| {
            let schemes = point["results"]["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|run| run["scheme"].as_str().unwrap().to_string())
                .collect();
            (
                point["value"].as_str().unwrap().to_string(),
                point["status"].as_str().unwrap().to_string(),
                schemes,
            )
        })
        .collect()
}

/// Per claim: its text and its criterion (each verdict must carry a known outcome).
fn verdict_classes(dir: &Path) -> Vec<(String, String)> {
    json(&dir.join("verdicts.json"))["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let outcome = v["outcome"].as_str().unwrap();
            assert!(
                [
                    "reproduced",
                    "right_direction",
                    "not_reproduced",
                    "not_evaluated"
                ]
                .contains(&outcome),
                "{outcome}"
            );
            (
                v["claim"].as_str().unwrap().to_string(),
                v["criterion"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
#[allow(clippy::suspicious_command_arg_space)] // `--set` takes the flags as one string
fn whole_and_split_runs_make_the_same_report() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let split = tmp.path().join("split");
    let merged = tmp.path().join("merged");

    let run = reproduce(&["--out", whole.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));

    let plan = reproduce(&["--plan"]);
    assert!(plan.status.success(), "{}", text(&plan.stderr));
    let ids = text(&plan.stdout);
    assert_eq!(
        ids.lines().collect::<Vec<_>>(),
        ["ace-fig10g.p1", "ace-fig10g.p2", "ace-fig10g.p3"]
    );
    let mut xargs = Command::new("xargs")
        .args(["-P", "2", "-I{}", env!("CARGO_BIN_EXE_flashbuf")])
        .args([
            "reproduce",
            EXPERIMENT,
            "--quick",
            "--set",
            SET,
            "--point",
            "{}",
        ])
        .arg("--out")
        .arg(&split)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        xargs
            .stdin
            .take()
            .unwrap()
            .write_all(ids.as_bytes())
            .unwrap();
    }
    let workers = xargs.wait_with_output().unwrap();
    assert!(workers.status.success(), "{}", text(&workers.stderr));
    assert!(
        !split.join("report.html").exists(),
        "a --point run writes no report"
    );

    // Every point file carries its provenance.
    let point = json(&split.join("points/ace-fig10g.p2.point.json"));
    assert_eq!(point["id"], "ace-fig10g.p2");
    let provenance = &point["provenance"];
    assert_eq!(provenance["flashbuf_version"], env!("CARGO_PKG_VERSION"));
    let command = provenance["command"].as_str().unwrap();
    assert!(command.contains("--point ace-fig10g.p2"), "{command}");
    for key in ["host", "started", "ended"] {
        assert!(!provenance[key].as_str().unwrap().is_empty(), "{key}");
    }

    let merge = flashbuf()
        .arg("merge")
        .arg(&split)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(merge.status.success(), "{}", text(&merge.stderr));
    assert!(text(&merge.stdout).contains("ace-fig10g verdicts:"));
    for file in ["results.json", "verdicts.json", "report.html"] {
        assert!(merged.join(file).is_file(), "{file} missing");
    }
    let (whole_results, merged_results) = (results(&whole), results(&merged));
    assert_eq!(shape(&whole_results), shape(&merged_results));
    assert_eq!(shape(&whole_results).len(), 3);
    assert!(shape(&whole_results).iter().all(|(_, status, schemes)| {
        status == "done" && schemes == &["pg-lru".to_string(), "ace-lru".to_string()]
    }));
    assert_eq!(
        whole_results["header"]["command_line"],
        merged_results["header"]["command_line"]
    );
    assert_eq!(verdict_classes(&whole), verdict_classes(&merged));
    assert!(!verdict_classes(&whole).is_empty());

    // Merging the whole run's own point files gives exactly its report.
    let again = tmp.path().join("again");
    let merge = flashbuf()
        .arg("merge")
        .arg(&whole)
        .arg("--out")
        .arg(&again)
        .output()
        .unwrap();
    assert!(merge.status.success(), "{}", text(&merge.stderr));
    assert_eq!(results(&whole), results(&again));
    assert_eq!(
        json(&whole.join("verdicts.json")),
        json(&again.join("verdicts.json"))
    );

    // The same point from two places is refused, naming both files.
    let twice = flashbuf()
        .arg("merge")
        .arg(&whole)
        .arg(&split)
        .arg("--out")
        .arg(tmp.path().join("twice"))
        .output()
        .unwrap();
    assert!(!twice.status.success());
    assert!(
        text(&twice.stderr).contains("two results files"),
        "{}",
        text(&twice.stderr)
    );
}

#[test]
#[allow(clippy::suspicious_command_arg_space)]
fn a_bad_point_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("never");
    let run = reproduce(&["--point", "ace-fig10g.p7", "--out", out.to_str().unwrap()]);
    assert!(!run.status.success());
    let stderr = text(&run.stderr);
    assert!(stderr.contains("--point ace-fig10g.p7"), "{stderr}");
    assert!(
        stderr.contains("ace-fig10g.p1, ace-fig10g.p2, ace-fig10g.p3"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("reproduce ace-fig10g ("),
        "started: {stderr}"
    );
    assert!(!out.exists());
    let not_an_id = flashbuf()
        .args(["reproduce", "--point", "fig10g", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!not_an_id.status.success());
    assert!(text(&not_an_id.stderr).contains("--point fig10g"));
    assert!(!out.exists());
    // A sweep's --point needs --out.
    let sweep = flashbuf()
        .args([
            "sweep", "--param", "threads", "--values", "1,2", "--device", "mem", "--point", "p1",
        ])
        .output()
        .unwrap();
    assert!(!sweep.status.success());
    assert!(text(&sweep.stderr).contains("--point needs --out"));
}

#[test]
#[allow(clippy::suspicious_command_arg_space)]
fn a_missing_point_is_named_and_a_rerun_skips_done_points() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("points");
    let run = reproduce(&[
        "--point",
        "ace-fig10g.p1,ace-fig10g.p3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));

    let merged = tmp.path().join("merged");
    let merge = flashbuf()
        .arg("merge")
        .arg(&out)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(!merge.status.success());
    let stderr = text(&merge.stderr);
    assert!(stderr.contains("1 of 3 points missing"), "{stderr}");
    assert!(stderr.contains("ace-fig10g.p2"), "{stderr}");
    let results = json(&merged.join("results.json"));
    assert_eq!(results["points"][1]["status"], "not_run");
    assert!(
        results["points"][1]["error"]
            .as_str()
            .unwrap()
            .contains("missing")
    );

    // A whole run into the same directory runs only the missing point.
    let p1 = out.join("points/ace-fig10g.p1.point.json");
    let before = std::fs::read_to_string(&p1).unwrap();
    let rerun = reproduce(&["--out", out.to_str().unwrap()]);
    assert!(rerun.status.success(), "{}", text(&rerun.stderr));
    let stderr = text(&rerun.stderr);
    assert!(
        stderr.contains("point ace-fig10g.p1 (ace_n_w = 1) already done"),
        "{stderr}"
    );
    assert!(stderr.contains("point ace-fig10g.p3"), "{stderr}");
    assert!(!stderr.contains("point ace-fig10g.p2 (ace_n_w = 4) already done"));
    assert_eq!(
        std::fs::read_to_string(&p1).unwrap(),
        before,
        "p1 ran again"
    );
    assert!(out.join("points/ace-fig10g.p2.point.json").is_file());
    let results = json(&out.join("results.json"));
    assert!(
        results["points"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["status"] == "done")
    );

    // --fresh runs everything again.
    let fresh = reproduce(&["--out", out.to_str().unwrap(), "--fresh"]);
    assert!(fresh.status.success(), "{}", text(&fresh.stderr));
    assert!(!text(&fresh.stderr).contains("already done"));
    assert_ne!(
        std::fs::read_to_string(&p1).unwrap(),
        before,
        "p1 not rerun"
    );

    // Another plan into the same directory is refused, naming --out and --fresh.
    let other = flashbuf()
        .args([
            "reproduce",
            EXPERIMENT,
            "--quick",
            "--repeat",
            "2",
            "--set",
            SET,
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!other.status.success());
    let stderr = text(&other.stderr);
    assert!(
        stderr.contains("--out") && stderr.contains("--fresh"),
        "{stderr}"
    );
}

/// A point killed between its runs leaves its file under way with the runs that ended; a
/// rerun into the same directory takes those (the same records) and runs only the rest.
#[test]
fn a_point_killed_between_runs_continues_from_the_runs_its_file_kept() {
    const SLOWER: &str = "--device mem --log-device mem --db-size 16MiB --threads 2 \
                          --duration 300ms --warmup 50ms";
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let args = |extra: &[&str]| {
        let mut command = flashbuf();
        command
            .args(["reproduce", EXPERIMENT, "--quick", "--repeat", "2"])
            .args(["--set", SLOWER, "--point", "ace-fig10g.p1", "--out"])
            .arg(&out)
            .args(extra);
        command
    };
    let file = out.join("points/ace-fig10g.p1.point.json");
    let mut child = args(&[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let under_way = loop {
        assert!(std::time::Instant::now() < deadline, "no file under way");
        if let Ok(text) = std::fs::read_to_string(&file) {
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            if value["point"]["status"] == "not_run" {
                break value;
            }
            panic!("the point ended before a file under way was seen: {value}");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = under_way["ended_runs"].as_array().unwrap().clone();
    assert!(!kept.is_empty() && kept.len() < 4, "{under_way}");
    let error = under_way["point"]["error"].as_str().unwrap();
    assert!(error.contains("of 4 runs ended"), "{error}");
    // merge counts it as not done, and its table says so rather than calling it failed.
    let merged = flashbuf()
        .arg("merge")
        .arg(&out)
        .arg("--out")
        .arg(tmp.path().join("merged"))
        .output()
        .unwrap();
    assert!(!merged.status.success());
    let table = text(&merged.stdout);
    assert!(
        table.contains("not run") && table.contains("under way"),
        "{table}"
    );
    assert!(!table.contains("failed"), "{table}");
    let stderr = text(&merged.stderr);
    assert!(
        stderr.contains("did not complete") && stderr.contains("runs ended"),
        "{stderr}"
    );

    let rerun = args(&[]).output().unwrap();
    let stderr = text(&rerun.stderr);
    assert!(rerun.status.success(), "{stderr}");
    let file_now = json(&file);
    // The killed process may have ended one more run and rewritten the file before it died.
    let continued = (kept.len()..4).any(|n| {
        stderr.contains(&format!(
            "continues an interrupted attempt: {n} of 4 runs kept"
        ))
    });
    assert!(continued, "{stderr}");
    assert!(stderr.contains("  kept: "), "{stderr}");
    assert_eq!(file_now["point"]["status"], "done");
    assert!(
        file_now.get("ended_runs").is_none(),
        "a done point keeps no ended runs"
    );
    let origins = file_now["provenance"]["kept_runs"].as_array().unwrap();
    assert!(origins.len() >= kept.len(), "{origins:?}");
    let named = |o: &serde_json::Value, key: &str| !o[key].as_str().unwrap().is_empty();
    assert!(
        origins
            .iter()
            .all(|o| named(o, "host") && named(o, "ended")),
        "{origins:?}"
    );
    // Each kept run is the record of its repeat in the completed point, unchanged.
    let runs = file_now["point"]["results"]["runs"].as_array().unwrap();
    for ended in &kept {
        let scheme = ended["scheme"].as_str().unwrap();
        let repeat = ended["repeat"].as_u64().unwrap() as usize;
        let record = runs
            .iter()
            .find(|run| run["scheme"] == scheme)
            .unwrap_or_else(|| panic!("{scheme} missing"));
        assert_eq!(
            record["runs"][repeat]["throughput"], ended["run"]["throughput"],
            "{scheme} repeat {repeat}"
        );
    }

    // --fresh drops the kept runs and runs all four.
    let fresh = args(&["--fresh"]).output().unwrap();
    assert!(fresh.status.success());
    assert!(!text(&fresh.stderr).contains("runs kept"));
}
