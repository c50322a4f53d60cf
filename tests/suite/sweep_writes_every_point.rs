//! `flashbuf sweep` end to end on `mem`: two buffer points for two schemes write sweep.json
//! (every point's full results and the per-scheme series), one SVG per metric and report.html;
//! a wrong parameter or value is refused before anything runs or is written.

use std::process::Command;

fn flashbuf() -> Command {
    Command::new(env!("CARGO_BIN_EXE_flashbuf"))
}

const SMALL: &[&str] = &[
    "--schemes",
    "vanilla,lru-c",
    "--device",
    "mem",
    "--log-device",
    "mem",
    "--db-size",
    "16MiB",
    "--threads",
    "2",
    "--duration",
    "100ms",
    "--warmup",
    "50ms",
    "--no-progress",
];

#[test]
fn a_buffer_sweep_writes_every_point_and_a_plot_per_metric() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let status = flashbuf()
        .args(["sweep", "--param", "buffer", "--values", "5%,20%"])
        .args(SMALL)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&status.stderr);
    let stdout = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{stderr}");
    assert!(stderr.contains("point 1 of 2: buffer = 5%"), "{stderr}");
    assert!(
        stdout.contains("buffer |") && stdout.contains("20%"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(json["param"], "buffer");
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    let buffers: Vec<u64> = points
        .iter()
        .map(|p| p["results"]["runs"][0]["buffer_pages"].as_u64().unwrap())
        .collect();
    assert_eq!(buffers, [51, 205], "5% and 20% of 1024 pages");
    for point in points {
        assert_eq!(point["status"], "done");
        assert_eq!(point["results"]["runs"].as_array().unwrap().len(), 2);
    }
    let series = json["series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    assert_eq!(series[1]["scheme"], "lru-c");
    assert!(
        series[1]["rows"][1]["metrics"]["throughput"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!((series[0]["rows"][0]["metrics"]["ratio"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    for name in [
        "sweep-throughput.svg",
        "sweep-ratio.svg",
        "sweep-p99_ms.svg",
        "report.html",
    ] {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        assert!(text.contains("<svg") || name == "report.html", "{name}");
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("data-plot=\"read_stall_pct\""),
        "a plot per metric"
    );
}

#[test]
fn wrong_names_and_values_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--param", "duration", "--values", "1s,2s"],
            "not a sweep parameter",
        ),
        (
            &["--param", "buffer", "--values", "5%,150%"],
            "buffer = 150%",
        ),
        (&["--param", "threads", "--values", "2,two"], "whole number"),
        (
            &["--param", "rw-ratio", "--values", "1:1"],
            "applies to tpcc",
        ),
        (&["--param", "channels", "--values", "2,4"], "emu: device"),
        (
            &["--param", "device", "--values", "mem,emu:nosuch"],
            "nosuch",
        ),
        (&["--param", "ace_n_w", "--values", "4,x"], "whole number"),
    ];
    for (index, (flags, expected)) in cases.iter().enumerate() {
        let out = dir.path().join(format!("case{index}"));
        // A device sweep sets --device itself (giving both is refused).
        let mut small = SMALL.to_vec();
        if flags[1] == "device" {
            let at = small.iter().position(|flag| *flag == "--device").unwrap();
            small.drain(at..at + 2);
        }
        let output = flashbuf()
            .arg("sweep")
            .args(*flags)
            .args(&small)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{flags:?}");
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
        assert!(!stderr.contains("sweep: point"), "{flags:?} ran: {stderr}");
        assert!(!out.join("sweep.json").exists(), "{flags:?} wrote");
    }
}
