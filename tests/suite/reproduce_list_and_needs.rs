//! `flashbuf reproduce --list` lists every experiment with its status (since issue 21 item 5
//! every experiment is runnable; the refusal of one that `needs` something not built is
//! tested on a parsed file in `src/cli/reproduce.rs`); an unknown id is refused (exit code 1)
//! before anything runs.

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
        "lruc-fig12",
        "ace-fig10h",
        "ace-fig10i",
    ] {
        assert!(text.contains(id), "{id} missing:\n{text}");
    }
    assert!(!text.contains("needs: "), "{text}");
    let total = flashbuf::reproduce::registry().unwrap().len();
    assert!(
        text.contains(&format!("{total} experiments, {total} runnable")),
        "{text}"
    );
}

#[test]
fn an_unknown_experiment_is_refused() {
    let output = flashbuf(&["reproduce", "lruc-table99"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("unknown experiment") && stderr.contains("lruc-table4"),
        "{stderr}"
    );
}
