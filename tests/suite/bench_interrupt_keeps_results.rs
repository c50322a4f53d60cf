//! Ctrl-C during `flashbuf bench` right after a scheme finished (issue 18): one Ctrl-C can
//! reach the process as two SIGINTs (`timeout -s INT` signals the child and then its process
//! group; so do supervisors). The bench must still print the table and write report.html with
//! the finished scheme; before the fix the second copy found the default action (the handler
//! was installed with `SA_RESETHAND`) and ended the process with nothing written.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

fn sigint(pid: u32) {
    // SAFETY: sending SIGINT to our own child process.
    unsafe {
        libc::kill(i32::try_from(pid).unwrap(), libc::SIGINT);
    }
}

#[test]
fn a_doubled_sigint_after_a_scheme_finished_keeps_the_table_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bench");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(["bench", "--schemes", "vanilla,lru-c,cflru"])
        .args(["--device", "mem", "--no-log", "--db-size", "2000"])
        .args(["--duration", "2s", "--warmup", "100ms", "--threads", "4"])
        .arg("--no-progress")
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut lines = stderr.lines();
    let mut seen = Vec::new();
    // Bounded: the bench prints a few lines per scheme.
    for line in lines.by_ref().take(200) {
        let line = line.unwrap();
        let done = line.contains("done: vanilla");
        seen.push(line);
        if done {
            break;
        }
    }
    assert!(
        seen.iter().any(|l| l.contains("done: vanilla")),
        "the first scheme did not finish: {seen:?}"
    );
    // Two copies of one Ctrl-C, the second well after the first was handled (the race's
    // losing order, made certain) but within the grace that makes them one Ctrl-C.
    sigint(child.id());
    std::thread::sleep(Duration::from_millis(50));
    sigint(child.id());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(1),
        "the interrupted bench must exit with 1 (some schemes did not run), not die by the \
         signal: {:?}; stderr: {rest:?}",
        output.status
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("vanilla") && l.contains("1.00x")),
        "no table with the finished scheme: {stdout}"
    );
    assert!(out.join("report.html").exists(), "no report.html");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["runs"].as_array().unwrap().len(), 1, "{json}");
    let failures = json["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 2, "{json}");
    assert!(
        failures
            .iter()
            .all(|f| f["error"].as_str().unwrap().contains("interrupted")),
        "{json}"
    );
}
