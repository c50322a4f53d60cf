//! `flashbuf reproduce --list` lists every experiment with its status; an experiment that
//! needs something not built is refused with what it needs (exit code 1), and so is an
//! unknown id, before anything runs.

use std::process::Command;

fn flashbuf(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_list_names_every_experiment() {
    let output = flashbuf(&["reproduce", "--list"]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    for id in [
        "lruc-table4",
        "lruc-fig7a",
        "ace-fig10f",
        "selftuning-fig3",
        "rw-table2a",
    ] {
        assert!(text.contains(id), "{id} missing:\n{text}");
    }
    assert!(text.contains("needs: "), "{text}");
    assert!(text.contains("runnable"), "{text}");
}

#[test]
fn an_experiment_that_needs_something_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let output = flashbuf(&["reproduce", "lruc-fig12", "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("needs") && stderr.contains("GCP"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing is written");
    let output = flashbuf(&["reproduce", "lruc-table99"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("unknown experiment") && stderr.contains("lruc-table4"),
        "{stderr}"
    );
}
