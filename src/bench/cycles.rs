//! How many whole background-writer cycles a measured phase held (issue 19 item 6): the page
//! cleaner's (InnoDB's tail flush), the LRU-C flusher's or PostgreSQL's bgwriter's period, from
//! the scheme's pool configuration, and `floor(measured device seconds / period)`.
//!
//! Throughput of a scheme with a periodic writer moves with its cycle (LRU-C's flusher writes
//! most of a small pool each round), so a window of few cycles measures where in the cycle it
//! began and ended as much as the scheme. A phase holding fewer than [`MIN_WHOLE_CYCLES`]
//! gets a warning in `steadiness.cycles_warning`, its verdict and under the table.

use super::report::{RunResult, Steadiness};
use crate::engine::{Composition, PoolConfig, WritebackKind};

/// Whole writer cycles a measured phase should hold at least.
pub const MIN_WHOLE_CYCLES: u64 = 5;

/// A scheme's background writer and its period.
#[derive(Debug, Clone, PartialEq)]
pub struct WriterCycle {
    /// `page cleaner`, `LRU-C flusher` or `bgwriter`.
    pub writer: &'static str,
    /// Its period, device seconds.
    pub period_s: f64,
}

/// The background writer of `scheme` with `frames` frames and the `--pool-config` text
/// `overrides`; `None` when the configuration does not parse (the run itself reports that) or
/// the pool runs no background writer.
#[must_use]
pub fn writer_cycle(
    scheme: &Composition,
    frames: usize,
    overrides: Option<&str>,
) -> Option<WriterCycle> {
    let config = match overrides {
        Some(text) => PoolConfig::from_toml(scheme.clone(), frames, text).ok()?,
        None => PoolConfig::for_scheme(scheme.clone(), frames),
    };
    if !config.background {
        return None;
    }
    // The period the pool runs: scaled with the instance size (docs/regime.md).
    let instances = config.effective_instances(0);
    let cleaner_period_ms = config.effective_cleaner_period_ms(config.frames / instances);
    let (writer, period_ms) = match config.scheme.writeback {
        WritebackKind::InnodbTail => ("page cleaner", cleaner_period_ms),
        WritebackKind::LruCFixed | WritebackKind::LruCDynamic => {
            ("LRU-C flusher", cleaner_period_ms)
        }
        WritebackKind::Postgres => ("bgwriter", config.bgwriter_delay_ms),
    };
    (period_ms > 0).then(|| WriterCycle {
        writer,
        period_s: period_ms as f64 / 1000.0,
    })
}

/// Whole cycles of `period_s` in `duration_s` (device seconds).
#[must_use]
pub fn whole_cycles(duration_s: f64, period_s: f64) -> u64 {
    if period_s > 0.0 && duration_s.is_finite() && duration_s > 0.0 {
        // A hair over, so 3 s of 1 s cycles measured as 2.9999 s still holds 3.
        ((duration_s / period_s) + 1e-6).floor() as u64
    } else {
        0
    }
}

/// Records `cycle` and the whole cycles `duration_s` held in `steadiness`, with the warning
/// (also appended to the verdict) when they are fewer than [`MIN_WHOLE_CYCLES`].
pub fn record(steadiness: &mut Steadiness, cycle: Option<&WriterCycle>, duration_s: f64) {
    let Some(cycle) = cycle else {
        return;
    };
    let cycles = whole_cycles(duration_s, cycle.period_s);
    steadiness.cycle_s = Some(cycle.period_s);
    steadiness.cycle_of = Some(cycle.writer.to_string());
    steadiness.whole_cycles = Some(cycles);
    steadiness.cycles_warning = (cycles < MIN_WHOLE_CYCLES).then(|| {
        format!(
            "the measured {duration_s:.1} s held {cycles} whole {:.2} s {} cycles, fewer than \
             {MIN_WHOLE_CYCLES}: its throughput depends on where in the cycle it began; \
             measure at least {:.1} s (--duration)",
            cycle.period_s,
            cycle.writer,
            cycle.period_s * MIN_WHOLE_CYCLES as f64
        )
    });
    let held = format!(
        "; held {cycles} whole {:.2} s {} cycles{}",
        cycle.period_s,
        cycle.writer,
        if cycles < MIN_WHOLE_CYCLES {
            format!(" (fewer than {MIN_WHOLE_CYCLES})")
        } else {
            String::new()
        }
    );
    steadiness.verdict.push_str(&held);
}

/// `scheme: warning` per run whose measured phase held too few writer cycles.
pub fn warnings(runs: &[RunResult]) -> Vec<String> {
    runs.iter()
        .filter_map(|run| {
            run.steadiness
                .cycles_warning
                .as_ref()
                .map(|warning| format!("{}: {warning}", run.scheme))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_and_periods_by_scheme() {
        let parse = |name: &str| Composition::parse(name).unwrap();
        let vanilla = writer_cycle(&parse("vanilla"), 1024, None).unwrap();
        assert_eq!(vanilla.writer, "page cleaner");
        let lruc = writer_cycle(&parse("lru-c"), 1024, None).unwrap();
        assert_eq!(lruc.writer, "LRU-C flusher");
        let pg = writer_cycle(&parse("pg-clock"), 1024, None).unwrap();
        assert_eq!(pg.writer, "bgwriter");
        assert!(vanilla.period_s > 0.0 && pg.period_s > 0.0);
        // The period is the one the pool runs, scaled with its instances (1,024 frames: one
        // instance, scale 1024/81920, 1 s becomes 12.5 ms).
        let scaled =
            PoolConfig::for_scheme(parse("vanilla"), 1024).effective_cleaner_period_ms(1024);
        assert!((vanilla.period_s - scaled as f64 / 1000.0).abs() < 1e-12);
        assert!(vanilla.period_s < 0.1, "{}", vanilla.period_s);
        // An override of the period is seen (unscaled with time_constant_scale = 1).
        let faster = writer_cycle(
            &parse("vanilla"),
            1024,
            Some("cleaner_period_ms = 250\ntime_constant_scale = 1"),
        );
        assert!((faster.unwrap().period_s - 0.25).abs() < 1e-12);
        assert!(writer_cycle(&parse("vanilla"), 1024, Some("not toml [")).is_none());
    }

    #[test]
    fn whole_cycles_and_the_warning() {
        assert_eq!(whole_cycles(3.0, 1.0), 3);
        assert_eq!(whole_cycles(2.999_999_9, 1.0), 3);
        assert_eq!(whole_cycles(2.9, 1.0), 2);
        assert_eq!(whole_cycles(10.0, 0.2), 50);
        assert_eq!(whole_cycles(0.0, 1.0), 0);
        assert_eq!(whole_cycles(3.0, 0.0), 0);
        let cycle = WriterCycle {
            writer: "page cleaner",
            period_s: 1.0,
        };
        let mut short = Steadiness {
            verdict: "yes".into(),
            ..Steadiness::default()
        };
        record(&mut short, Some(&cycle), 3.0);
        assert_eq!(short.whole_cycles, Some(3));
        assert!(
            short
                .cycles_warning
                .as_deref()
                .unwrap()
                .contains("fewer than 5")
        );
        assert!(
            short
                .verdict
                .starts_with("yes; held 3 whole 1.00 s page cleaner cycles")
        );
        let mut long = Steadiness::default();
        record(&mut long, Some(&cycle), 12.0);
        assert_eq!(long.whole_cycles, Some(12));
        assert!(long.cycles_warning.is_none());
        let mut none = Steadiness::default();
        record(&mut none, None, 12.0);
        assert_eq!(none, Steadiness::default());
    }
}
