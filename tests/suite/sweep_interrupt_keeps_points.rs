//! Ctrl-C during `flashbuf sweep`: the finished point stays in sweep.json and the report, the
//! interrupted point is recorded with its scheme interrupted, the remaining point is "not run",
//! and the exit code says the sweep did not complete.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn ctrl_c_keeps_the_finished_points() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(["sweep", "--param", "threads", "--values", "1,2,4"])
        .args([
            "--schemes",
            "vanilla",
            "--device",
            "mem",
            "--log-device",
            "mem",
        ])
        .args([
            "--db-size",
            "16MiB",
            "--duration",
            "1500ms",
            "--warmup",
            "100ms",
        ])
        .arg("--no-progress")
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut lines = stderr.lines();
    // Bounded: the sweep prints a few lines per point.
    for line in lines.by_ref().take(200) {
        let line = line.unwrap();
        if line.contains("point 2 of 3") {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(400));
    // SAFETY: sending SIGINT to our own child process.
    unsafe {
        libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT);
    }
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "an interrupted sweep did not complete: {rest:?}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "{json}");
    assert_eq!(points[0]["status"], "done");
    assert_eq!(points[0]["results"]["runs"].as_array().unwrap().len(), 1);
    assert_eq!(points[1]["status"], "schemes_failed");
    let failure = points[1]["results"]["failures"][0]["error"]
        .as_str()
        .unwrap();
    assert!(failure.contains("interrupted"), "{failure}");
    assert_eq!(points[2]["status"], "not_run");
    assert!(out.join("report.html").exists());
}
