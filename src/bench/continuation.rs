//! Continuing an interrupted multi-run bench (issue 21 item 7): the runs that ended are kept,
//! and a rerun of the same point runs only the rest.
//!
//! A point of a full reproduction is every scheme times every repeat, interleaved: `ace-fig8a`'s
//! one point is 8 schemes x 3 repeats of about 15 minutes each on a 2-core host at time scale
//! 128, six hours, longer than a sitting. Without this, a point killed after five hours loses
//! them all. [`run_bench_with`](super::harness::run_bench_with) takes a [`Continuation`]: the
//! runs kept from an earlier attempt ([`EndedRun`]: which repeat of which scheme, and its
//! record) each take their place in the interleaved order instead of running again, and after
//! every completed run the continuation's `on_ended` sees every run ended so far (kept and
//! new, in the interleaved order), which `cli::points` writes into the point's results file.
//!
//! Invariants:
//! - only completed runs are kept; a run that failed or was interrupted runs again;
//! - a kept run is taken only for the (repeat, scheme) it was measured as, and at most once;
//!   kept runs of a repeat or scheme the configuration does not have are left out (the point
//!   file's plan guarantees they match; `cli::points::resume` refuses another plan's files).
//!
//! What continuing costs: repeat k of two schemes may then have run in different sittings,
//! not back to back, so the paired ratio interval ([`super::stats::ratio_interval`]) pairs
//! runs further apart in time than in an uninterrupted point; each run's record keeps its own
//! time scale and host lateness, which the verdicts judge per run.

use serde::{Deserialize, Serialize};

use super::report::RunResult;

/// One completed run of one scheme, kept so that a rerun of its point need not repeat it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndedRun {
    /// Which repeat it was (0-based).
    pub repeat: usize,
    /// The scheme's name.
    pub scheme: String,
    /// Where and by what it ran.
    #[serde(default)]
    pub origin: RunOrigin,
    /// The run's own record (one repeat's, not a mean).
    pub run: RunResult,
}

/// Where a run ran, by what, and when it ended: a point continued from an earlier attempt
/// names its kept runs' origins in its provenance, since they may differ from its own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOrigin {
    /// Which repeat (0-based).
    pub repeat: usize,
    /// The scheme's name.
    pub scheme: String,
    /// The source flashbuf was built from ([`crate::BUILD`]).
    pub flashbuf_build: String,
    /// The host's name.
    pub host: String,
    /// UTC end time, ISO 8601.
    pub ended: String,
}

impl RunOrigin {
    /// Repeat `repeat` of `scheme`, ending now on this host with this build.
    #[must_use]
    pub fn now(repeat: usize, scheme: &str) -> RunOrigin {
        RunOrigin {
            repeat,
            scheme: scheme.to_string(),
            flashbuf_build: crate::BUILD.to_string(),
            host: super::report::host_name(),
            ended: super::report::utc_now_iso8601(),
        }
    }
}

/// Who keeps a bench's runs as they end: called with every run ended so far.
pub type OnEnded<'a> = &'a mut dyn FnMut(&[EndedRun]);

/// What a bench continues from, and who keeps its runs as they end.
pub struct Continuation<'a> {
    kept: Vec<EndedRun>,
    on_ended: Option<OnEnded<'a>>,
    ended: Vec<EndedRun>,
    taken: Vec<RunOrigin>,
}

impl std::fmt::Debug for Continuation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Continuation")
            .field("kept", &self.kept.len())
            .field("ended", &self.ended.len())
            .field("on_ended", &self.on_ended.is_some())
            .finish()
    }
}

impl<'a> Continuation<'a> {
    /// A fresh start whose runs nobody keeps.
    #[must_use]
    pub fn none() -> Continuation<'static> {
        Continuation {
            kept: Vec::new(),
            on_ended: None,
            ended: Vec::new(),
            taken: Vec::new(),
        }
    }

    /// Continues from `kept`, calling `on_ended` after every completed run with every run
    /// ended so far.
    #[must_use]
    pub fn new(kept: Vec<EndedRun>, on_ended: OnEnded<'a>) -> Continuation<'a> {
        Continuation {
            kept,
            on_ended: Some(on_ended),
            ended: Vec::new(),
            taken: Vec::new(),
        }
    }

    /// How many kept runs are not taken yet.
    #[must_use]
    pub fn kept_count(&self) -> usize {
        self.kept.len()
    }

    /// Takes the kept run of `scheme`'s repeat `repeat`, if there is one: it counts as ended
    /// (without calling `on_ended`: nothing new to keep).
    pub fn take(&mut self, repeat: usize, scheme: &str) -> Option<RunResult> {
        let at = self
            .kept
            .iter()
            .position(|run| run.repeat == repeat && run.scheme == scheme)?;
        let kept = self.kept.swap_remove(at);
        let run = kept.run.clone();
        self.taken.push(RunOrigin {
            repeat,
            scheme: scheme.to_string(),
            ..kept.origin.clone()
        });
        self.ended.push(kept);
        Some(run)
    }

    /// Where the runs taken from the earlier attempt ran ([`Continuation::take`]), in the
    /// order taken.
    #[must_use]
    pub fn taken(&self) -> &[RunOrigin] {
        &self.taken
    }

    /// Records a run that just completed and hands every ended run to `on_ended`.
    pub fn ended(&mut self, repeat: usize, scheme: &str, run: &RunResult) {
        self.ended.push(EndedRun {
            repeat,
            scheme: scheme.to_string(),
            origin: RunOrigin::now(repeat, scheme),
            run: run.clone(),
        });
        if let Some(on_ended) = self.on_ended.as_mut() {
            on_ended(&self.ended);
        }
    }

    /// Every run ended so far (kept ones and new ones, in the order they were taken or ran).
    #[must_use]
    pub fn ended_runs(&self) -> &[EndedRun] {
        &self.ended
    }

    /// Every run to keep for a later attempt: those ended, then the kept ones not taken (a
    /// point that failed before its runs began loses none).
    #[must_use]
    pub fn into_runs(self) -> Vec<EndedRun> {
        let mut runs = self.ended;
        runs.extend(self.kept);
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(scheme: &str, throughput: f64) -> RunResult {
        RunResult {
            scheme: scheme.to_string(),
            throughput,
            ..RunResult::default()
        }
    }

    fn ended(repeat: usize, scheme: &str, throughput: f64) -> EndedRun {
        EndedRun {
            repeat,
            scheme: scheme.to_string(),
            origin: RunOrigin {
                host: "elsewhere".into(),
                ..RunOrigin::default()
            },
            run: run(scheme, throughput),
        }
    }

    #[test]
    fn a_kept_run_is_taken_once_for_its_own_repeat_and_scheme() {
        let mut continuation = Continuation::none();
        continuation.kept = vec![ended(0, "a", 1.0), ended(1, "a", 2.0), ended(0, "b", 3.0)];
        assert!(continuation.take(2, "a").is_none());
        assert!(continuation.take(0, "c").is_none());
        assert_eq!(continuation.take(1, "a").map(|r| r.throughput), Some(2.0));
        assert!(continuation.take(1, "a").is_none(), "taken twice");
        assert_eq!(continuation.take(0, "b").map(|r| r.throughput), Some(3.0));
        assert_eq!(continuation.ended_runs().len(), 2);
        let taken: Vec<(usize, &str, &str)> = continuation
            .taken()
            .iter()
            .map(|o| (o.repeat, o.scheme.as_str(), o.host.as_str()))
            .collect();
        assert_eq!(taken, [(1, "a", "elsewhere"), (0, "b", "elsewhere")]);
        continuation.kept.push(ended(2, "b", 6.0));
        let all: Vec<(usize, String)> = continuation
            .into_runs()
            .into_iter()
            .map(|r| (r.repeat, r.scheme))
            .collect();
        assert_eq!(
            all,
            [
                (1, "a".into()),
                (0, "b".into()),
                (0, "a".into()),
                (2, "b".into())
            ],
            "ended first, then the kept runs not taken"
        );
    }

    #[test]
    fn every_completed_run_reaches_on_ended_with_every_run_ended_before_it() {
        let mut seen: Vec<Vec<(usize, String)>> = Vec::new();
        let mut keep = |runs: &[EndedRun]| {
            seen.push(runs.iter().map(|r| (r.repeat, r.scheme.clone())).collect());
        };
        let mut continuation = Continuation::new(vec![ended(0, "a", 1.0)], &mut keep);
        assert_eq!(continuation.kept_count(), 1);
        assert!(continuation.take(0, "a").is_some());
        continuation.ended(0, "b", &run("b", 4.0));
        continuation.ended(1, "a", &run("a", 5.0));
        drop(continuation);
        assert_eq!(
            seen,
            vec![
                vec![(0, "a".to_string()), (0, "b".to_string())],
                vec![
                    (0, "a".to_string()),
                    (0, "b".to_string()),
                    (1, "a".to_string())
                ],
            ]
        );
    }
}
