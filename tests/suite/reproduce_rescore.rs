//! `reproduce --rescore DIR` judges a saved run again without running it: on a run just made
//! (with repeats, so factors carry intervals from the per-repeat values), it gives exactly the
//! verdicts the run wrote, reason and intervals included; bad directories are refused naming
//! the flag.

use std::process::Command;

fn flashbuf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
}

#[test]
#[allow(clippy::suspicious_command_arg_space)] // `--set` takes the flags as one string
fn rescoring_a_fresh_run_gives_its_own_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fig8a");
    let output = flashbuf()
        .args([
            "reproduce",
            "ace-fig8a",
            "--quick",
            "--repeat",
            "2",
            "--out",
        ])
        .arg(&out)
        .arg("--set")
        .arg(
            "--device mem --log-device mem --db-size 16MiB --threads 2 --duration 100ms \
             --warmup 50ms",
        )
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rescore = flashbuf()
        .args(["reproduce", "--rescore"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&rescore.stdout);
    assert!(
        rescore.status.success(),
        "{}",
        String::from_utf8_lossy(&rescore.stderr)
    );
    assert!(
        stdout.contains("ace-fig8a rescored (quick run)"),
        "{stdout}"
    );
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap()
    };
    let written = read("verdicts.json");
    let rescored = read("verdicts-rescored.json");
    let written = written["verdicts"].as_array().unwrap();
    let again = rescored["verdicts"].as_array().unwrap();
    assert_eq!(written.len(), 4);
    assert_eq!(written.len(), again.len());
    for (before, after) in written.iter().zip(again) {
        for key in ["claim", "criterion", "outcome", "reason"] {
            assert_eq!(
                before[key], after[key],
                "{key}: rescoring the same run, same rules"
            );
        }
        // Values re-read from JSON: equal to the last bits serde_json's parser keeps.
        let numbers = |v: &serde_json::Value| -> Vec<f64> {
            v["measured"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|c| [c["value"].as_f64(), c["ci95"].as_f64(), c["n"].as_f64()])
                .flatten()
                .collect()
        };
        let (a, b) = (numbers(before), numbers(after));
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-12 * x.abs().max(1.0), "{x} vs {y}");
        }
    }
    // The judged claims (Clock and LRU) carry intervals from the two repeats.
    assert_eq!(again[0]["measured"][0]["n"], 2, "{}", again[0]);
    assert!(again[0]["measured"][0]["ci95"].is_number(), "{}", again[0]);
    assert_eq!(rescored["before"].as_array().unwrap().len(), 4);
    // Nothing changed, so no line is marked.
    assert!(
        !stdout.lines().any(|line| line.starts_with('*')),
        "{stdout}"
    );
}

#[test]
fn a_directory_without_a_saved_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = flashbuf()
        .args(["reproduce", "--rescore"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("--rescore"), "{stderr}");
    assert!(stderr.contains("verdicts.json"), "{stderr}");
    let output = flashbuf()
        .args(["reproduce", "lruc-fig6", "--rescore"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success(), "an id and --rescore conflict");
}
