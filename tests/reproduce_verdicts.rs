//! Verdict rules on hand-made measurements: reproduced, right direction only, not reproduced,
//! and not evaluated, for each kind of claim (ratio, near, trend, peak, range).

use flashbuf::reproduce::experiment::Claim;
use flashbuf::reproduce::verdict::{Measured, Outcome, judge};

fn claim(text: &str) -> Claim {
    toml::from_str(text).unwrap()
}

/// Throughput of `a` and `b` at points p1..p3.
fn measured(a: [f64; 3], b: [f64; 3]) -> Measured {
    let mut m = Measured {
        points: vec!["p1".into(), "p2".into(), "p3".into()],
        values: Vec::new(),
    };
    for i in 0..3 {
        m.values.push((i, "a".into(), "throughput", a[i]));
        m.values.push((i, "b".into(), "throughput", b[i]));
        m.values
            .push((i, "a".into(), "read_stall_pct", b[i] / 10.0));
        m.values
            .push((i, "b".into(), "read_stall_pct", a[i] / 10.0));
    }
    m
}

const RATIO: &str = r#"text = "a doubles b"
kind = "ratio"
scheme = "a"
baseline = "b"
metric = "throughput"
at_least = 2.0"#;

#[test]
fn ratio_claims() {
    let c = claim(RATIO);
    assert_eq!(
        judge(&c, &measured([200.0, 250.0, 300.0], [100.0; 3])).outcome,
        Outcome::Reproduced
    );
    let v = judge(&c, &measured([150.0, 250.0, 300.0], [100.0; 3]));
    assert_eq!(v.outcome, Outcome::RightDirection);
    assert!(v.reason.contains("1.500"), "{}", v.reason);
    assert_eq!(
        judge(&c, &measured([90.0, 250.0, 300.0], [100.0; 3])).outcome,
        Outcome::NotReproduced
    );
    // Lower-is-better metrics turn the factor around: a's stalls are b's throughput / 10.
    let stalls = claim(&RATIO.replace("throughput", "read_stall_pct"));
    assert_eq!(
        judge(&stalls, &measured([200.0; 3], [100.0; 3])).outcome,
        Outcome::Reproduced
    );
    // Across points: a at p3 vs a at p1.
    let across = claim(
        "text = \"grows\"\nkind = \"ratio\"\nscheme = \"a\"\nmetric = \"throughput\"\n\
         points = [\"p3\"]\nbaseline_point = \"p1\"\nat_least = 1.4",
    );
    assert_eq!(
        judge(&across, &measured([100.0, 120.0, 150.0], [1.0; 3])).outcome,
        Outcome::Reproduced
    );
}

#[test]
fn near_claims() {
    let c = claim(
        "text = \"1.25x\"\nkind = \"near\"\nscheme = \"a\"\nbaseline = \"b\"\nmetric = \"throughput\"\n\
         value = 1.25\ntolerance = 0.1",
    );
    assert_eq!(
        judge(&c, &measured([130.0; 3], [100.0; 3])).outcome,
        Outcome::Reproduced
    );
    assert_eq!(
        judge(&c, &measured([180.0; 3], [100.0; 3])).outcome,
        Outcome::RightDirection
    );
    assert_eq!(
        judge(&c, &measured([80.0; 3], [100.0; 3])).outcome,
        Outcome::NotReproduced
    );
}

#[test]
fn trend_peak_and_range_claims() {
    let rising = claim(
        "text = \"rises\"\nkind = \"trend\"\nscheme = \"a\"\nmetric = \"throughput\"\n\
         direction = \"increasing\"",
    );
    assert_eq!(
        judge(&rising, &measured([1.0, 2.0, 3.0], [1.0; 3])).outcome,
        Outcome::Reproduced
    );
    assert_eq!(
        judge(&rising, &measured([1.0, 0.5, 3.0], [1.0; 3])).outcome,
        Outcome::RightDirection
    );
    assert_eq!(
        judge(&rising, &measured([3.0, 2.0, 1.0], [1.0; 3])).outcome,
        Outcome::NotReproduced
    );
    let peak = claim(
        "text = \"peak\"\nkind = \"peak\"\nscheme = \"a\"\nmetric = \"throughput\"\nat = \"p2\"",
    );
    assert_eq!(
        judge(&peak, &measured([1.0, 3.0, 2.0], [1.0; 3])).outcome,
        Outcome::Reproduced
    );
    assert_eq!(
        judge(&peak, &measured([1.0, 2.0, 3.0], [1.0; 3])).outcome,
        Outcome::NotReproduced
    );
    let range = claim(
        "text = \"in\"\nkind = \"range\"\nscheme = \"a\"\nmetric = \"throughput\"\nmin = 1.0\nmax = 2.0",
    );
    assert_eq!(
        judge(&range, &measured([1.0, 1.5, 2.0], [1.0; 3])).outcome,
        Outcome::Reproduced
    );
    assert_eq!(
        judge(&range, &measured([1.0, 1.5, 2.5], [1.0; 3])).outcome,
        Outcome::NotReproduced
    );
}

#[test]
fn missing_measurements_are_not_evaluated() {
    let c = claim(&RATIO.replace("baseline = \"b\"", "baseline = \"c\""));
    let v = judge(&c, &measured([1.0; 3], [1.0; 3]));
    assert_eq!(v.outcome, Outcome::NotEvaluated);
    assert!(v.reason.contains("no throughput for c"), "{}", v.reason);
}
