//! Bad input is refused before any work starts, with a message naming the flag (issue 18,
//! item 4), through the built binary: page sizes, buffers of fewer frames than a pool takes,
//! `--db` images checked from their header (load parameters, page size, buffer) before they
//! are read, `load` checking its output and row sizes before it loads, and conflicting,
//! duplicated or ignored flags. Every case asserts that the command failed, that the message
//! names what is wrong, and that nothing started (no banner, no load, no probe).

use std::path::Path;
use std::process::Command;

use flashbuf::bench::driver::RecordSpec;
use flashbuf::bench::image::Image;
use flashbuf::workload::ycsb::{YcsbConfig, YcsbWorkload};

/// Lines that mean work started: the bench's banner, a load, a read image, a probe's plan.
const STARTED: [&str; 5] = [
    "bench: workload",
    "loading ",
    "read image",
    "probing ",
    "sweep: point",
];

fn flashbuf(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs every case; each must fail before starting, its message containing every `expected`.
fn refused(cases: &[(Vec<&str>, Vec<&str>)]) {
    for (args, expected) in cases {
        let (ok, stderr) = flashbuf(args);
        assert!(!ok, "{args:?} was accepted: {stderr}");
        for text in expected {
            assert!(stderr.contains(text), "{args:?}: `{text}` not in: {stderr}");
        }
        for line in STARTED {
            assert!(
                !stderr.contains(line),
                "{args:?} started work (`{line}`) before refusing: {stderr}"
            );
        }
    }
}

/// The flags of a short synthetic bench on RAM.
fn bench(extra: &[&'static str]) -> Vec<&'static str> {
    let mut args = vec![
        "bench",
        "--device",
        "mem",
        "--db-size",
        "2000",
        "--no-progress",
    ];
    args.extend_from_slice(extra);
    args
}

fn ycsb_image(dir: &Path, records: u64) -> String {
    let path = dir.join("ycsb.img");
    let mut config = YcsbConfig::standard(YcsbWorkload::A, records);
    config.seed = 42; // the CLI's default --seed
    let spec = RecordSpec::Ycsb(config);
    Image::build(&spec, 8192, &mut |_| {})
        .unwrap()
        .write_file(&path)
        .unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn page_sizes_and_buffers_are_checked_up_front() {
    refused(&[
        (
            bench(&["--no-log", "--page-size", "12288"]),
            vec!["--page-size `12288`", "4096, 8192"],
        ),
        (
            bench(&["--page-size", "1048576"]),
            vec!["--page-size `1048576`"],
        ),
        (
            vec!["bench", "--workload", "tpcc", "--page-size", "65536"],
            vec!["--page-size `65536`", "at most 32768"],
        ),
        (
            bench(&["--no-log", "--buffer", "10"]),
            vec!["--buffer `10`", "at least 16"],
        ),
        (
            bench(&["--no-log", "--buffer", "0.5%"]),
            vec!["--buffer `0.5%`", "0.8%"],
        ),
        (
            vec![
                "bench",
                "--workload",
                "ycsb-a",
                "--records",
                "3000",
                "--buffer",
                "1%",
            ],
            vec!["--buffer `1%`", "at least 16"],
        ),
    ]);
    refused(&[
        (
            bench(&["--no-log", "--room", "200%"]),
            vec!["--room `200%`", "only record workloads"],
        ),
        (
            vec![
                "bench",
                "--workload",
                "tpcc",
                "--warehouses",
                "1",
                "--room",
                "4x",
            ],
            vec!["--room `4x`", "whole percentage"],
        ),
        (
            vec![
                "bench",
                "--workload",
                "tpcc",
                "--warehouses",
                "1",
                "--room",
                "100%%",
            ],
            vec!["--room `100%%`", "whole percentage"],
        ),
        (
            vec![
                "bench",
                "--workload",
                "tpcc",
                "--warehouses",
                "1",
                "--room",
                "20000%",
            ],
            vec!["--room `20000%`", "at most 10000%"],
        ),
        (
            vec![
                "bench",
                "--workload",
                "tpcc",
                "--db",
                "w.img",
                "--room",
                "400%",
            ],
            vec!["--room", "--db"],
        ),
    ]);
    let (_, help) = {
        let out = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
            .args(["bench", "--help"])
            .output()
            .unwrap();
        (true, String::from_utf8_lossy(&out.stdout).into_owned())
    };
    assert!(help.contains("a power of two from 4096 to 65536"), "{help}");
    assert!(!help.contains("a multiple of 4096"), "{help}");
}

#[test]
fn images_and_loads_are_checked_before_they_are_read_or_built() {
    let dir = tempfile::tempdir().unwrap();
    let image = ycsb_image(dir.path(), 400);
    let db = |extra: &[&'static str]| {
        let mut args = vec!["bench", "--workload", "ycsb-a", "--db", image.as_str()];
        args.extend_from_slice(extra);
        args
    };
    let missing_dir = dir.path().join("no/such/dir/x.img");
    let missing_dir = missing_dir.to_str().unwrap();
    refused(&[
        (
            db(&["--records", "401"]),
            vec!["--db", "records=400", "records=401"],
        ),
        (
            db(&["--records", "400", "--page-size", "4096"]),
            vec!["--page-size `4096`", "8192-byte pages"],
        ),
        (
            db(&["--records", "400", "--buffer", "2%"]),
            vec!["--buffer `2%`", "at least 16"],
        ),
        (
            db(&["--records", "400", "--db-size", "1GiB"]),
            vec!["--db-size"],
        ),
        (
            vec![
                "load",
                "--workload",
                "ycsb-a",
                "--records",
                "400",
                "--db",
                missing_dir,
            ],
            vec!["--db", "does not exist"],
        ),
        (
            vec![
                "load",
                "--workload",
                "ycsb-a",
                "--records",
                "400",
                "--db",
                image.as_str(),
            ],
            vec!["--db", "exists"],
        ),
        (
            vec![
                "load",
                "--workload",
                "ycsb-a",
                "--page-size",
                "4096",
                "--db",
                "x.img",
            ],
            vec!["1020 bytes", "--page-size 8192", "--field-count"],
        ),
        (
            vec![
                "load",
                "--workload",
                "linkbench",
                "--page-size",
                "4096",
                "--db",
                "x.img",
            ],
            vec!["--page-size 8192"],
        ),
    ]);
    // The image whose buffer fits runs, with the image's page size in its banner.
    let (ok, stderr) = flashbuf(&db(&[
        "--records",
        "400",
        "--buffer",
        "100%",
        "--device",
        "mem",
        "--log-device",
        "mem",
        "--schemes",
        "vanilla",
        "--duration",
        "100ms",
        "--warmup",
        "50ms",
        "--threads",
        "2",
        "--no-progress",
    ]));
    assert!(ok, "{stderr}");
    assert!(stderr.contains("pages of 8192 bytes"), "{stderr}");
}

#[test]
fn conflicting_duplicated_and_ignored_flags_are_refused() {
    refused(&[
        (
            bench(&["--no-log", "--log-size", "1MiB"]),
            vec!["--no-log", "--log-size"],
        ),
        (
            bench(&["--no-log", "--log-device", "mem"]),
            vec!["--no-log", "--log-device"],
        ),
        (
            vec![
                "bench",
                "--workload",
                "ycsb-a",
                "--db",
                "x.img",
                "--db-size",
                "1GiB",
            ],
            vec!["--db", "--db-size"],
        ),
        (
            vec!["bench", "--workload", "tpcc", "--db-size", "1GiB"],
            vec!["--db-size 1GiB", "--warehouses"],
        ),
        (
            vec![
                "sweep", "--param", "buffer", "--values", "5%,10%", "--buffer", "20%",
            ],
            vec!["--param buffer", "drop --buffer"],
        ),
        (
            vec![
                "sweep",
                "--param",
                "threads",
                "--values",
                "1,2",
                "--threads",
                "8",
            ],
            vec!["--param threads", "drop --threads"],
        ),
        (
            vec![
                "sweep",
                "--param",
                "channels",
                "--values",
                "1,2",
                "--device",
                "emu:ssd-a,channels=4",
            ],
            vec!["--param channels", "channels="],
        ),
        (
            vec![
                "sweep",
                "--param",
                "ace_n_w",
                "--values",
                "1,2",
                "--schemes",
                "vanilla",
            ],
            vec!["ace_n_w", "none of the schemes (vanilla)"],
        ),
        (
            vec![
                "device",
                "probe",
                "--concurrency",
                "1,2",
                "--max-concurrency",
                "8",
            ],
            vec!["--concurrency", "--max-concurrency"],
        ),
        (
            vec![
                "bench",
                "--no-log",
                "--device",
                "emu:ssd-a,channels=4,channels=8",
            ],
            vec!["`channels` is given twice"],
        ),
        (
            bench(&["--no-log", "--schemes", "vanilla,vanilla"]),
            vec!["`vanilla` is given twice"],
        ),
        (
            bench(&["--no-log", "--schemes", "all,lru-c"]),
            vec!["`lru-c` is given twice", "`all`"],
        ),
        (
            bench(&["--no-log", "--schemes", "vanilla,,war"]),
            vec!["scheme 2 of the list is empty"],
        ),
    ]);
}
