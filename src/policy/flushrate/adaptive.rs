//! InnoDB's adaptive flushing (`page_cleaner_flush_pages_recommendation`, MySQL 5.7), as
//! docs/algorithms.md section 1 gives it. Pure arithmetic, kept apart from the thread so it can be
//! tested.

use crate::page::Lsn;
use crate::wal::LogMargins;

/// The knobs adaptive flushing reads (InnoDB's system variables of the same names).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveConfig {
    /// `innodb_io_capacity`: pages per second the cleaner aims at.
    pub io_capacity: u64,
    /// `innodb_io_capacity_max`.
    pub io_capacity_max: u64,
    /// `innodb_max_dirty_pages_pct`.
    pub max_dirty_pages_pct: f64,
    /// `innodb_max_dirty_pages_pct_lwm` (0 disables the low-water mark).
    pub max_dirty_pages_pct_lwm: f64,
    /// `innodb_adaptive_flushing_lwm` in % of log capacity.
    pub adaptive_flushing_lwm: f64,
}

/// Iterations over which rates are averaged (InnoDB: `srv_flushing_avg_loops` = 30).
pub const AVG_LOOPS: u64 = 30;

/// State carried between cleaner rounds.
#[derive(Debug, Default, Clone)]
pub struct AdaptiveState {
    iterations: u64,
    pages_sum: u64,
    lsn_at_start: Lsn,
    avg_page_rate: f64,
    lsn_avg_rate: f64,
}

/// Inputs of one recommendation.
#[derive(Debug, Clone, Copy)]
pub struct FlushInputs {
    /// Dirty pages now.
    pub dirty_pages: usize,
    /// Pages in the LRU and free lists.
    pub pool_pages: usize,
    /// Current LSN.
    pub current_lsn: Lsn,
    /// Oldest modification in the pool (0 if none).
    pub oldest_lsn: Lsn,
    /// Log capacity, if bounded.
    pub log_capacity: Option<u64>,
    /// Pages the previous round wrote from the flush lists (InnoDB's `avg_page_rate` counts
    /// those alone, not the LRU tail flush's).
    pub last_flush_list_pages: u64,
}

/// How many pages to flush from the flush list, and up to which LSN.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recommendation {
    /// Pages to flush.
    pub pages: u64,
    /// Flush only pages whose oldest modification is below this.
    pub lsn_limit: Lsn,
}

fn pct_for_dirty(config: &AdaptiveConfig, inputs: &FlushInputs) -> f64 {
    if inputs.pool_pages == 0 {
        return 0.0;
    }
    let dirty_pct = inputs.dirty_pages as f64 * 100.0 / inputs.pool_pages as f64;
    let max = config.max_dirty_pages_pct;
    if config.max_dirty_pages_pct_lwm == 0.0 {
        if dirty_pct >= max { 100.0 } else { 0.0 }
    } else if dirty_pct >= config.max_dirty_pages_pct_lwm {
        dirty_pct * 100.0 / (max + 1.0)
    } else {
        0.0
    }
}

fn pct_for_lsn(config: &AdaptiveConfig, inputs: &FlushInputs) -> f64 {
    let Some(capacity) = inputs.log_capacity else {
        return 0.0;
    };
    if inputs.oldest_lsn == 0 {
        return 0.0;
    }
    let age = inputs.current_lsn.saturating_sub(inputs.oldest_lsn) as f64;
    let lwm = capacity as f64 * config.adaptive_flushing_lwm / 100.0;
    if age < lwm {
        return 0.0;
    }
    let async_age = LogMargins::from_capacity(capacity)
        .max_modified_age_async
        .max(1) as f64;
    let factor = age * 100.0 / async_age;
    let ratio = config.io_capacity_max as f64 / config.io_capacity as f64;
    (ratio * factor * factor.sqrt() / 7.5).min(100.0)
}

impl AdaptiveState {
    /// One cleaner round's recommendation.
    pub fn recommend(&mut self, config: &AdaptiveConfig, inputs: &FlushInputs) -> Recommendation {
        if self.iterations == 0 && self.lsn_at_start == 0 {
            self.lsn_at_start = inputs.current_lsn;
        }
        self.iterations += 1;
        self.pages_sum += inputs.last_flush_list_pages;
        if self.iterations >= AVG_LOOPS {
            let loops = self.iterations as f64;
            self.avg_page_rate = f64::midpoint(self.pages_sum as f64 / loops, self.avg_page_rate);
            let lsn_rate = inputs.current_lsn.saturating_sub(self.lsn_at_start) as f64 / loops;
            self.lsn_avg_rate = f64::midpoint(lsn_rate, self.lsn_avg_rate);
            self.iterations = 0;
            self.pages_sum = 0;
            self.lsn_at_start = inputs.current_lsn;
        }
        let pct = pct_for_dirty(config, inputs).max(pct_for_lsn(config, inputs));
        let wanted = f64::midpoint(config.io_capacity as f64 * pct / 100.0, self.avg_page_rate);
        let pages = (wanted.max(0.0) as u64).min(config.io_capacity_max);
        // InnoDB flushes up to oldest + lsn_avg_rate * (age factor + 1); with no log bound the
        // limit is open.
        let lsn_limit = if inputs.log_capacity.is_some() && self.lsn_avg_rate > 0.0 {
            inputs
                .oldest_lsn
                .saturating_add((self.lsn_avg_rate * 2.0) as u64)
                .max(inputs.oldest_lsn + 1)
        } else {
            Lsn::MAX
        };
        Recommendation { pages, lsn_limit }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: AdaptiveConfig = AdaptiveConfig {
        io_capacity: 10_000,
        io_capacity_max: 20_000,
        max_dirty_pages_pct: 75.0,
        max_dirty_pages_pct_lwm: 0.0,
        adaptive_flushing_lwm: 10.0,
    };

    fn inputs(dirty: usize, age: u64) -> FlushInputs {
        FlushInputs {
            dirty_pages: dirty,
            pool_pages: 1000,
            current_lsn: 1_000_000 + age,
            oldest_lsn: 1_000_000,
            log_capacity: Some(1_000_000),
            last_flush_list_pages: 0,
        }
    }

    #[test]
    fn flushes_nothing_when_clean_and_young_and_io_capacity_when_dirty() {
        let config = CONFIG;
        let mut state = AdaptiveState::default();
        assert_eq!(state.recommend(&config, &inputs(10, 1000)).pages, 0);
        let rec = state.recommend(&config, &inputs(800, 1000));
        assert_eq!(rec.pages, config.io_capacity / 2);
    }

    #[test]
    fn log_age_drives_flushing_up_to_io_capacity_max() {
        let config = CONFIG;
        let mut state = AdaptiveState::default();
        let low = state.recommend(&config, &inputs(10, 200_000)).pages;
        let high = state.recommend(&config, &inputs(10, 700_000)).pages;
        assert!(low > 0 && high > low, "{low} {high}");
        assert!(high <= config.io_capacity_max);
    }
}
