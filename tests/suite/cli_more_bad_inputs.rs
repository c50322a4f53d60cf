//! More bad inputs (issue 18, item 4: "20 more of your own"), each accepted silently, failing
//! late or failing without naming the flag before; now each is refused before any work starts
//! with a message that names the flag, key or option. Through the built binary.

use std::process::Command;

/// Lines that mean work started.
const STARTED: [&str; 6] = [
    "bench: workload",
    "loading ",
    "read image",
    "probing ",
    "sweep: point",
    "reproduce lruc-",
];

fn refused(cases: &[(Vec<&str>, &str)]) {
    for (args, expected) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted: {stderr}");
        assert!(
            stderr.contains(expected),
            "{args:?}: `{expected}` not in: {stderr}"
        );
        for line in STARTED {
            assert!(
                !stderr.contains(line),
                "{args:?} started work (`{line}`) before refusing: {stderr}"
            );
        }
    }
}

fn with(base: &[&'static str], extra: &[&'static str]) -> Vec<&'static str> {
    base.iter().chain(extra).copied().collect()
}

const BENCH: &[&str] = &["bench", "--device", "mem", "--db-size", "2000", "--no-log"];
const PROBE: &[&str] = &[
    "device",
    "probe",
    "--device",
    "mem",
    "--region-mb",
    "1",
    "--quick",
];

#[test]
fn bench_flags() {
    let dir = tempfile::tempdir().unwrap();
    let instances = dir.path().join("instances.toml");
    std::fs::write(&instances, "instances = 64\n").unwrap();
    let instances: &'static str = Box::leak(instances.to_str().unwrap().to_string().into());
    refused(&[
        // Ignored before: a real device runs in real time whatever --model-cores says.
        (with(BENCH, &["--model-cores", "8"]), "--model-cores"),
        (
            vec![
                "bench",
                "--device",
                "emu:ssd-a,time_scale=2",
                "--log-device",
                "emu:sata,time_scale=2",
                "--model-cores",
                "8",
            ],
            "sets its own time_scale",
        ),
        // Ignored before: the page mixes have no consistency check.
        (with(BENCH, &["--no-check"]), "--no-check"),
        // Named the config field, not the flag.
        (with(BENCH, &["--threads", "0"]), "--threads `0`"),
        (
            with(BENCH, &["--regime-reference", "tpcc"]),
            "--regime-reference `tpcc`",
        ),
        (with(BENCH, &["--warmup", "25h"]), "--warmup `25h`"),
        (
            vec![
                "bench",
                "--log-device",
                "mem",
                "--flush-log-at-trx-commit",
                "3",
            ],
            "--flush-log-at-trx-commit `3`",
        ),
        // Silently capped to 12 instances before.
        (
            with(BENCH, &["--buffer", "200", "--pool-config", instances]),
            "instances = 64",
        ),
        (
            vec!["bench", "--workload", "tpcc", "--warehouses", "0"],
            "--warehouses `0`",
        ),
        (
            vec!["bench", "--workload", "ycsb-a", "--records", "2"],
            "--records `2`",
        ),
        (
            vec!["bench", "--workload", "ycsb-a", "--field-count", "0"],
            "--field-count `0`",
        ),
        (
            vec!["bench", "--workload", "linkbench", "--nodes", "1"],
            "--nodes `1`",
        ),
        (
            vec![
                "bench",
                "--workload",
                "ycsb-c",
                "--request-distribution",
                "hotspot",
            ],
            "--request-distribution `hotspot`",
        ),
        (
            vec!["bench", "--request-distribution", "uniform"],
            "--request-distribution applies to ycsb-* only",
        ),
        (
            vec!["bench", "--workload", "ycsb-c", "--key-format", "hex"],
            "--key-format `hex`",
        ),
        (
            vec!["bench", "--workload", "tpcc", "--key-format", "binary"],
            "--key-format applies to ycsb-* only",
        ),
        // An option without a key named an option `` before; without a value, its parse error.
        (
            vec!["bench", "--device", "emu:ssd-a,=4"],
            "needs both a key and a value",
        ),
        (
            vec!["bench", "--device", "emu:ssd-a,channels="],
            "needs both a key and a value",
        ),
        // Failed only after the load before.
        (
            vec![
                "load",
                "--workload",
                "ycsb-a",
                "--page-size",
                "65536",
                "--db",
                "x.img",
            ],
            "--page-size `65536`",
        ),
    ]);
}

#[test]
fn sweep_and_reproduce_flags() {
    refused(&[
        // The swept value silently replaced --read-ratio at every point before.
        (
            vec![
                "sweep",
                "--param",
                "read-ratio",
                "--values",
                "0.5,0.6",
                "--read-ratio",
                "0.9",
            ],
            "drop --read-ratio",
        ),
        // pg-lru's miss path and bgwriter never read lru_scan_depth: every point was the same.
        (
            vec![
                "sweep",
                "--param",
                "lru_scan_depth",
                "--values",
                "16,32",
                "--schemes",
                "pg-lru",
            ],
            "none of the schemes (pg-lru)",
        ),
        // --list ignored the ids.
        (vec!["reproduce", "--list", "lruc-fig9"], "--list"),
        // --set --threads was overridden by the sweep of threads at every point.
        (
            vec!["reproduce", "lruc-fig9", "--quick", "--set", "--threads 4"],
            "drop --threads",
        ),
        // The second experiment's flags are checked before the first one runs.
        (
            vec![
                "reproduce",
                "lruc-table2",
                "lruc-fig9",
                "--quick",
                "--set",
                "--threads 4",
            ],
            "experiment lruc-fig9",
        ),
    ]);
}

#[test]
fn probe_flags() {
    refused(&[
        // Ignored before: mem runs in real time.
        (with(PROBE, &["--time-scale", "4"]), "--time-scale"),
        // Ignored before: the passes are random preconditioning's.
        (
            with(
                PROBE,
                &["--precondition", "none", "--precondition-passes", "3"],
            ),
            "--precondition-passes",
        ),
        // Each pair: the second flag was silently overridden by the first.
        (with(PROBE, &["--duration-ms", "10"]), "--duration-ms"),
        (
            vec!["device", "probe", "--model", "--time-scale", "4"],
            "--time-scale",
        ),
        (
            with(PROBE, &["--no-fsync", "--fsync-burst", "8"]),
            "--fsync-burst",
        ),
        (
            vec![
                "device",
                "probe",
                "--no-precondition",
                "--precondition",
                "sequential",
            ],
            "--precondition",
        ),
        // Named neither flag before.
        (
            vec!["device", "probe", "--device", "mem", "--region-mb", "0"],
            "--region-mb 0",
        ),
        (
            vec!["device", "probe", "--device", "mem", "--page-size", "1000"],
            "--page-size 1000",
        ),
        // Failed only after the whole probe before.
        (
            with(PROBE, &["--json", "/nonexistent/dir/p.json"]),
            "--json",
        ),
    ]);
}
