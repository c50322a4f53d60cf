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
        ..Measured::default()
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

/// With repeats, each compared value carries its interval: a metric's as measured, a factor's
/// the delta-method one over the repeat pairs; the reason prints it beside the value; the
/// outcome is decided by the values alone.
#[test]
fn verdicts_carry_the_intervals_of_repeats() {
    use flashbuf::bench::stats::Interval;
    let mut m = measured([300.0, 300.0, 300.0], [100.0, 100.0, 100.0]);
    for i in 0..3 {
        m.repeats.push((
            i,
            "a".into(),
            "throughput",
            vec![Some(290.0), None, Some(310.0), Some(300.0)],
        ));
        m.repeats.push((
            i,
            "b".into(),
            "throughput",
            vec![Some(100.0), Some(90.0), Some(110.0), Some(100.0)],
        ));
        m.intervals.push((
            i,
            "a".into(),
            "throughput",
            Interval {
                mean: 300.0,
                ci95: Some(24.8),
                n: 3,
            },
        ));
    }
    let ratio = judge(
        &claim(
            r#"text = "a beats b"
               kind = "ratio"
               scheme = "a"
               baseline = "b"
               metric = "throughput"
               at_least = 2.5"#,
        ),
        &m,
    );
    assert_eq!(ratio.outcome, Outcome::Reproduced, "{}", ratio.reason);
    assert_eq!(ratio.measured.len(), 3);
    let first = &ratio.measured[0];
    // Pairs (290, 100), (310, 110), (300, 100): the failed repeat 2 is left out.
    assert_eq!(first.n, 3);
    assert!((first.value - 3.0).abs() < 1e-12);
    let half = first.ci95.expect("a factor interval");
    assert!(half > 0.0 && half < 1.0, "{half}");
    assert!(ratio.reason.contains("p1: 3.000 ±"), "{}", ratio.reason);
    let range = judge(
        &claim(
            r#"text = "a in range"
               kind = "range"
               scheme = "a"
               metric = "throughput"
               min = 250.0"#,
        ),
        &m,
    );
    assert_eq!(range.measured[1].ci95, Some(24.8));
    assert_eq!(range.measured[1].n, 3);
    assert!(range.reason.contains("p2: 300 ±25"), "{}", range.reason);
    // Without repeats: values only, no interval.
    let single = judge(
        &claim(
            r#"text = "b in range"
               kind = "range"
               scheme = "b"
               metric = "throughput"
               min = 50.0"#,
        ),
        &measured([300.0, 300.0, 300.0], [100.0, 100.0, 100.0]),
    );
    assert!(single.measured.iter().all(|c| c.ci95.is_none() && c.n == 0));
    assert!(!single.reason.contains('±'));
}
