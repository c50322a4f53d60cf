//! `flashbuf bench` through its command line: bad input is refused before anything runs (no
//! banner, a message naming the flag), and a record workload runs end to end with its check.

use std::process::Command;

fn bench(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .arg("bench")
        .args(args)
        .arg("--no-progress")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_input_is_refused_before_the_run_starts() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("pool.toml");
    std::fs::write(&config, "lru_scan_depth = \"deep\"\n").unwrap();
    let config = config.to_str().unwrap().to_string();
    let cases: [(&[&str], &str); 6] = [
        (&["--pool-config", &config], "--pool-config"),
        (&["--device", "emu:ssd-a,nosuch=1"], "nosuch"),
        (&["--log-device", "emu:nosuch"], "--log-device"),
        (
            &["--device", "emu:ssd-a,time_scale=1e9"],
            "hours of real time",
        ),
        (&["--json", "/nonexistent/dir/r.json"], "--json"),
        (&["--schemes", "rw", "--device", "mem"], "fused read-write"),
    ];
    for (args, expected) in cases {
        let (ok, _, stderr) = bench(args);
        assert!(!ok, "{args:?} was accepted");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("bench: workload"),
            "{args:?} started the run before refusing it: {stderr}"
        );
    }
}

#[test]
fn a_record_workload_runs_from_the_command_line_with_its_check() {
    let (ok, stdout, stderr) = bench(&[
        "--workload",
        "ycsb-a",
        "--records",
        "3000",
        "--device",
        "mem",
        "--schemes",
        "vanilla,lru-c",
        "--duration",
        "300ms",
        "--warmup",
        "100ms",
        "--threads",
        "4",
    ]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("check clean"), "{stderr}");
    assert!(stdout.contains("lru-c"), "{stdout}");
}
