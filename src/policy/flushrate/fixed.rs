//! MySQL 5.7's flush rate (the self-tuning paper's "naive" Algorithm 1, docs/algorithms.md section
//! 6): every round (one second, or when a miss wakes the cleaner) flush the LRU ends with
//! `P_scan` = `lru_scan_depth` and the flush lists with `P_io` from InnoDB's adaptive flushing
//! (`page_cleaner_flush_pages_recommendation`), then sleep the rest of the second.

use super::adaptive::{AdaptiveConfig, AdaptiveState};
use super::{CleanerInputs, FlushPlan, FlushRate, RoundObservation};
use crate::core::stats::ExtraStats;

/// MySQL's fixed controller.
#[derive(Debug, Clone)]
pub struct MysqlFixed {
    /// `P_scan`: pages scanned per instance per round.
    pub lru_scan: usize,
    /// Adaptive flushing's knobs.
    pub adaptive: AdaptiveConfig,
    /// Round period in device-time milliseconds (InnoDB: 1000).
    pub period_ms: u64,
    state: AdaptiveState,
    last_requested: u64,
}

impl MysqlFixed {
    /// The controller with these settings.
    #[must_use]
    pub fn new(lru_scan: usize, adaptive: AdaptiveConfig, period_ms: u64) -> Self {
        MysqlFixed {
            lru_scan,
            adaptive,
            period_ms,
            state: AdaptiveState::default(),
            last_requested: 0,
        }
    }
}

impl FlushRate for MysqlFixed {
    fn name(&self) -> &'static str {
        "fixed"
    }

    fn initial_lru_scan(&self) -> usize {
        self.lru_scan
    }

    fn plan(&mut self, inputs: &CleanerInputs) -> FlushPlan {
        let recommendation = self
            .state
            .recommend(&self.adaptive, &inputs.adaptive_inputs());
        self.last_requested = recommendation.pages;
        FlushPlan {
            lru_scan: self.lru_scan,
            flush_list_pages: recommendation.pages,
            lsn_limit: recommendation.lsn_limit,
            sleep_ms: self.period_ms,
        }
    }

    fn observe(&mut self, _observation: &RoundObservation) {}

    fn extra_stats(&self, out: &mut ExtraStats) {
        out.gauge("p_scan", self.lru_scan as f64);
        out.gauge("p_io", self.last_requested as f64);
    }
}
