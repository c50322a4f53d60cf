//! One tiny reproduction end to end: `reproduce ace-fig8a --quick` with its devices and
//! durations overridden (`--set`, for a fast run on `mem`) writes report.html (verdicts, the
//! paper's values beside ours, plots), results.json and verdicts.json with a verdict per claim.
//! A single-point experiment's schemes are categories: its paper-vs-ours plots are bars, with
//! no line joining one scheme to the next, and our run's comparison is an HTML table.
//! The numbers on `mem` mean nothing; the test checks the plumbing, not the outcome.

use std::process::Command;

#[test]
#[allow(clippy::suspicious_command_arg_space)] // `--set` takes the flags as one string
fn a_quick_reproduction_writes_its_report_and_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ace");
    let output = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(["reproduce", "ace-fig8a", "--quick", "--out"])
        .arg(&out)
        .arg("--set")
        .arg(
            "--device mem --log-device mem --db-size 16MiB --threads 2 --duration 100ms \
             --warmup 50ms",
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("ace-fig8a verdicts:"), "{stdout}");
    let verdicts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("verdicts.json")).unwrap()).unwrap();
    let list = verdicts["verdicts"].as_array().unwrap();
    assert_eq!(list.len(), 4, "one verdict per claim");
    let allowed = [
        "reproduced",
        "right_direction",
        "not_reproduced",
        "not_evaluated",
    ];
    for verdict in list {
        let outcome = verdict["outcome"].as_str().unwrap();
        assert!(allowed.contains(&outcome), "{outcome}");
        assert!(!verdict["reason"].as_str().unwrap().is_empty());
    }
    // Quick runs the Clock and LRU families: their claims are judged, CFLRU's are not.
    assert_ne!(list[0]["outcome"], "not_evaluated");
    assert_eq!(list[2]["outcome"], "not_evaluated");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(
        results["points"][0]["results"]["runs"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for needle in [
        "Verdicts",
        "The paper's values and ours",
        "data-plot=\"compare-throughput\"",
        "paper (hatched) vs ours (solid)",
    ] {
        assert!(html.contains(needle), "{needle} missing");
    }
    // Bars, not lines: the only polylines of the plot are hatching and axes (black or white),
    // none in a scheme colour.
    let start = html.find("data-plot=\"compare-throughput\"").unwrap();
    let figure = &html[start..start + html[start..].find("</figure>").unwrap()];
    for polyline in figure.split("<polyline").skip(1) {
        let polyline = &polyline[..polyline.find("/>").unwrap()];
        let stroke = polyline.split("stroke=\"").nth(1).unwrap_or("");
        assert!(
            stroke.starts_with("#000000") || stroke.starts_with("#FFFFFF"),
            "a coloured line in a plot over schemes: {}",
            &polyline[..polyline.len().min(200)]
        );
    }
    assert!(figure.contains("<rect"), "no bars");
    // Our run: an HTML table with a row per scheme, not a preformatted block.
    let our_run = &html[html.find("<h2>Our run</h2>").unwrap()..];
    assert!(!our_run.contains("<pre"));
    for scheme in ["pg-clock", "ace-clock", "pg-lru", "ace-lru"] {
        assert!(
            our_run.contains(&format!("<th scope=\"row\">{scheme}</th>")),
            "{scheme} row missing"
        );
    }
    // Self-contained: nothing fetched (the SVG namespace is a name, not a fetch); the one
    // script is the inline table sorter.
    let fetched = html.replace("http://www.w3.org/2000/svg", "");
    for external in ["http://", "https://", "src=", "<link", "url("] {
        assert!(!fetched.contains(external), "self-contained: {external}");
    }
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains(flashbuf::bench::table::SORT_SCRIPT));
}
