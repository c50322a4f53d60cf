//! Points shared between experiments (issue 21 item 7): a point of one run can stand for a
//! point of another when the second is the first with fewer schemes, so a suite need not run
//! it twice. The LRU-C paper's Table 3 reads its three LRU-C versions from Figure 6's run
//! (which adds vanilla), Table 6 reads Table 5's run, Table 7 reads Figure 7a's buffer sweep
//! (which adds CF-LRU and WAR); the self-tuning paper's Figures 3 and 4 read Figure 2's.
//!
//! **When a point covers another** ([`covering_index`]): both plans run the same command
//! (`bench` or `sweep`), their flags are the same once `--schemes` and a sweep's `--values`
//! are set aside (order does not matter; of a flag given twice the later counts, as in a
//! run), the same parameter, `--quick` and repeats, no two-parameter grid, the covering
//! plan's schemes include every scheme of the other, and the two points have the same value.
//! The covering point must be done.
//!
//! **What is taken** ([`derive()`]): the covering point with only the other plan's schemes, in
//! that plan's order, and the paired throughput ratios recomputed against its first scheme
//! ([`crate::bench::repeat::add_ratios`]): the repeats of two schemes still pair as they ran,
//! back to back. The new file keeps the covering file's provenance (who ran it, where, when)
//! and says where it came from ([`DerivedFrom`]).

use std::collections::BTreeMap;
use std::path::Path;

use super::points::{DerivedFrom, Plan, PointFile};

/// Flags whose value may differ between a plan and the plan covering it.
const SET_ASIDE: &[&str] = &["--schemes", "--values"];

/// The index of the point of `donor` that covers point `index` of `plan`, if any (see the
/// module docs).
#[must_use]
pub fn covering_index(donor: &Plan, plan: &Plan, index: usize) -> Option<usize> {
    let value = plan.values.get(index)?;
    let same_run = donor.quick == plan.quick
        && donor.repeats == plan.repeats
        && donor.param == plan.param
        && donor.grid.is_none()
        && plan.grid.is_none()
        && plan.schemes.iter().all(|s| donor.schemes.contains(s))
        && command_of(&donor.command_line) == command_of(&plan.command_line)
        && flags_of(&donor.command_line) == flags_of(&plan.command_line);
    if !same_run {
        return None;
    }
    donor.values.iter().position(|v| v == value)
}

/// The command a plan's line runs: its first words before the first flag (`flashbuf bench`).
fn command_of(command_line: &str) -> Vec<&str> {
    command_line
        .split_whitespace()
        .take_while(|word| !word.starts_with("--"))
        .collect()
}

/// A plan's flags as a map from flag to its value (the last given wins; a flag followed by
/// another flag has none), without [`SET_ASIDE`].
fn flags_of(command_line: &str) -> BTreeMap<&str, Option<&str>> {
    let words: Vec<&str> = command_line.split_whitespace().collect();
    let mut flags = BTreeMap::new();
    let mut at = words
        .iter()
        .position(|w| w.starts_with("--"))
        .unwrap_or(words.len());
    while at < words.len() {
        let word = words[at];
        at += 1;
        let (flag, value) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => match words.get(at) {
                Some(next) if !next.starts_with("--") => {
                    at += 1;
                    (word, Some(*next))
                }
                _ => (word, None),
            },
        };
        if !SET_ASIDE.contains(&flag) {
            flags.insert(flag, value);
        }
    }
    flags
}

/// Point `index` of `plan` taken from `donor`'s point (which covers it: [`covering_index`]),
/// read from `source`: `plan`'s schemes only, in its order, ratios recomputed.
#[must_use]
pub fn derive(donor: &PointFile, source: &Path, plan: &Plan, index: usize) -> PointFile {
    let mut point = donor.point.clone();
    point.value.clone_from(&plan.values[index]);
    if let Some(results) = point.results.as_mut() {
        let mut runs = Vec::with_capacity(plan.schemes.len());
        for scheme in &plan.schemes {
            if let Some(at) = results.runs.iter().position(|r| &r.scheme == scheme) {
                runs.push(results.runs.swap_remove(at));
            }
        }
        crate::bench::repeat::add_ratios(&mut runs);
        results.runs = runs;
        results
            .failures
            .retain(|failure| plan.schemes.contains(&failure.scheme));
    }
    let dropped = donor
        .plan
        .schemes
        .iter()
        .filter(|s| !plan.schemes.contains(s))
        .cloned()
        .collect();
    PointFile {
        format: donor.format.clone(),
        id: plan.id(index),
        index,
        plan: plan.clone(),
        provenance: donor.provenance.clone(),
        point,
        derived_from: Some(DerivedFrom {
            file: source.display().to_string(),
            id: donor.id.clone(),
            command_line: donor.plan.command_line.clone(),
            schemes_left_out: dropped,
            taken: crate::bench::report::utc_now_iso8601(),
        }),
        ended_runs: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(experiment: &str, line: &str, schemes: &[&str], values: &[&str]) -> Plan {
        Plan {
            experiment: Some(experiment.into()),
            quick: false,
            command_line: line.into(),
            param: if values == ["-"] { "run" } else { "buffer" }.into(),
            param_sets: String::new(),
            values: values.iter().map(|v| (*v).to_string()).collect(),
            schemes: schemes.iter().map(|s| (*s).to_string()).collect(),
            repeats: 3,
            grid: None,
        }
    }

    const FIG6: &str = "flashbuf bench --schemes vanilla,lru-c-basic,lru-c --buffer 10% \
                        --threads 64 --repeat 3 --db w50.img --no-check";

    #[test]
    fn a_run_with_more_schemes_covers_one_with_fewer() {
        let fig6 = plan(
            "lruc-fig6",
            FIG6,
            &["vanilla", "lru-c-basic", "lru-c"],
            &["-"],
        );
        let table3 = plan(
            "lruc-table3",
            "flashbuf bench --threads 64 --schemes lru-c-basic,lru-c --buffer 10% --repeat 3 \
             --db w50.img --no-check",
            &["lru-c-basic", "lru-c"],
            &["-"],
        );
        assert_eq!(covering_index(&fig6, &table3, 0), Some(0));
        // Not the other way round: fig6 has vanilla, which table3 did not run.
        assert_eq!(covering_index(&table3, &fig6, 0), None);
    }

    #[test]
    fn any_other_difference_breaks_the_cover() {
        let fig6 = plan("lruc-fig6", FIG6, &["vanilla", "lru-c"], &["-"]);
        let other = |line: &str| plan("x", line, &["lru-c"], &["-"]);
        let threads = FIG6.replace("--threads 64", "--threads 32");
        assert_eq!(covering_index(&fig6, &other(&threads), 0), None);
        let more = format!("{FIG6} --page-size 4096");
        assert_eq!(covering_index(&fig6, &other(&more), 0), None);
        let sweep = FIG6.replace("bench", "sweep");
        assert_eq!(covering_index(&fig6, &other(&sweep), 0), None);
        let mut repeats = other(FIG6);
        repeats.repeats = 1;
        assert_eq!(covering_index(&fig6, &repeats, 0), None);
        let mut quick = other(FIG6);
        quick.quick = true;
        assert_eq!(covering_index(&fig6, &quick, 0), None);
        // The later of a repeated flag counts, as in a run.
        let overridden = format!(
            "{} --threads 64",
            FIG6.replace("--threads 64", "--threads 8")
        );
        assert_eq!(covering_index(&fig6, &other(&overridden), 0), Some(0));
    }

    #[test]
    fn a_sweep_point_is_matched_by_its_value() {
        let fig7a = plan(
            "lruc-fig7a",
            "flashbuf sweep --param buffer --values 5%,10%,15% --schemes vanilla,war,lru-c",
            &["vanilla", "war", "lru-c"],
            &["5%", "10%", "15%"],
        );
        let table7 = plan(
            "lruc-table7",
            "flashbuf sweep --param buffer --values 10%,15%,30% --schemes vanilla,lru-c",
            &["vanilla", "lru-c"],
            &["10%", "15%", "30%"],
        );
        assert_eq!(covering_index(&fig7a, &table7, 0), Some(1));
        assert_eq!(covering_index(&fig7a, &table7, 1), Some(2));
        assert_eq!(covering_index(&fig7a, &table7, 2), None);
    }

    #[test]
    fn flags_are_read_with_and_without_equals() {
        let flags = flags_of("flashbuf bench --threads=4 --no-check --buffer 10% --schemes a,b");
        assert_eq!(flags.get("--threads"), Some(&Some("4")));
        assert_eq!(flags.get("--no-check"), Some(&None));
        assert_eq!(flags.get("--buffer"), Some(&Some("10%")));
        assert!(!flags.contains_key("--schemes"));
    }
}
