//! Judges the steadiness of saved runs again with today's rule (`bench::timeline::
//! judge_steadiness`), from the timelines their results files keep: for results saved before a
//! change of the rule (docs/regime.md, "Steadiness and the warm-up").
//!
//! ```text
//! cargo run --release --example rejudge_steadiness -- results/reproduction/lruc-fig7a/results.json ...
//! ```
//!
//! Any JSON file flashbuf writes (a bench's results.json, a sweep's or reproduction's
//! results.json, a point file) is searched for runs: objects holding a `timeline` and a
//! `steadiness` (the mean of a run's repeats is left out: its repeats are judged). Prints, per file, one line per run whose verdict changed and the counts of
//! steady runs under the saved verdicts and under today's rule.

use flashbuf::bench::timeline::{TimelinePoint, judge_steadiness};
use serde_json::Value;

/// A run found in a results file: its scheme, its saved verdict and today's.
struct Judged {
    scheme: String,
    saved: bool,
    saved_reason: String,
    today: bool,
    today_reason: String,
}

/// The run `map` judged again, if it is a run (a `timeline` and a `steadiness`) and not the
/// mean of repeats (which keeps a timeline too; its repeats are judged).
fn judge(map: &serde_json::Map<String, Value>) -> Option<Judged> {
    let steadiness = map.get("steadiness")?;
    let points: Vec<TimelinePoint> = serde_json::from_value(map.get("timeline")?.clone()).ok()?;
    let is_mean = map
        .get("runs")
        .and_then(Value::as_array)
        .is_some_and(|runs| !runs.is_empty());
    if points.is_empty() || is_mean {
        return None;
    }
    let verdict = judge_steadiness(&points);
    Some(Judged {
        scheme: map
            .get("scheme")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string(),
        saved: steadiness["steady"].as_bool().unwrap_or(false),
        saved_reason: steadiness["verdict"].as_str().unwrap_or("").to_string(),
        today: verdict.steady,
        today_reason: verdict.reason,
    })
}

fn collect(value: &Value, out: &mut Vec<Judged>) {
    match value {
        Value::Object(map) => {
            out.extend(judge(map));
            for child in map.values() {
                collect(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect(item, out)),
        _ => {}
    }
}

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: rejudge_steadiness RESULTS.json ...");
        std::process::exit(2);
    }
    for file in files {
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(err) => {
                eprintln!("{file}: {err}");
                std::process::exit(1);
            }
        };
        let value: Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(err) => {
                eprintln!("{file}: not JSON: {err}");
                std::process::exit(1);
            }
        };
        let mut runs = Vec::new();
        collect(&value, &mut runs);
        for run in runs.iter().filter(|run| run.saved != run.today) {
            println!(
                "{file}: {}: saved {} -> today {}",
                run.scheme, run.saved_reason, run.today_reason
            );
        }
        let saved = runs.iter().filter(|run| run.saved).count();
        let today = runs.iter().filter(|run| run.today).count();
        println!(
            "{file}: {} runs, steady {saved} as saved, {today} by today's rule",
            runs.len()
        );
    }
}
