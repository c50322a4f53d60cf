//! RAW: InnoDB's miss path, `buf_LRU_get_free_block` (MySQL 5.7), as docs/algorithms.md section 1:
//! the loop of `super::raw_loop` with a single-page flush as step 4 (the read stall). Vanilla
//! uses the scan depth `lru_scan_depth`; the InnoDB-emulated CF-LRU of the LRU-C paper is the
//! same path with the scan depth set to its window.
//!
//! Percona Server's `innodb_empty_free_list_algorithm` (docs/algorithms.md section 6) chooses step
//! 4: `legacy` is the single-page flush; `backoff` never flushes and never scans the LRU: the
//! thread yields on its first empty look at the free list, then sleeps 2^i microseconds (device
//! time, at most [`BACKOFF_MAX_US`]) and looks again, leaving the writes and the evictions to the
//! page cleaner (Percona's `buf_LRU_get_free_block` loops back before its LRU scan). The wait is
//! recorded as a read stall (the query waits for a write before its read, only someone else's)
//! and counted in `backoff_waits`. Bound: the loop's [`super::MISS_ITERATIONS`].

use crate::core::instance::Instance;
use crate::core::parts::{Acquired, Acquisition, MissPath};
use crate::core::pool::Core;
use crate::error::{PageId, Result};
use crate::sync::{AtomicU64, Ordering};
use serde::{Deserialize, Serialize};

use super::{FreeBlockLoop, StallStep, raw_loop, single_page_flush};

/// What a query thread does when the free list is empty and its scan found no clean page
/// (Percona Server's `innodb_empty_free_list_algorithm`; RAW miss path only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EmptyFreeList {
    /// MySQL's: a single-page flush (the read stall).
    Legacy,
    /// Percona's: never flush; yield, then sleep 2^i microseconds up to 10 ms, and look again.
    Backoff,
}

/// Percona's longest backoff sleep: 10 ms.
pub const BACKOFF_MAX_US: u64 = 10_000;

/// InnoDB's RAW miss path.
#[derive(Debug, Clone)]
pub struct Raw {
    /// Pages scanned from the eviction end in step 2 of the first iteration.
    pub scan_depth: usize,
    /// Step 4 on an empty free list: single-page flush or Percona's backoff.
    pub empty_free_list: EmptyFreeList,
    /// MySQL 5.6's or 5.7's loop.
    pub host: FreeBlockLoop,
}

/// Step 4 of vanilla: a single-page flush.
pub(crate) struct SinglePageFlush;

impl StallStep for SinglePageFlush {
    fn is_read_stall(&self) -> bool {
        true
    }

    fn step(&self, core: &Core, instance: &Instance) -> Result<Option<Acquired>> {
        Ok(single_page_flush(core, instance)?.map(Acquired::Free))
    }

    fn frees_to_free_list(&self) -> bool {
        true
    }
}

/// Step 4 of Percona's `backoff`: wait, never write. The attempt count is per miss.
struct Backoff {
    attempt: AtomicU64,
}

/// The sleep of backoff attempt `attempt` (0: a yield), in device microseconds.
#[must_use]
pub fn backoff_sleep_us(attempt: u64) -> u64 {
    if attempt == 0 {
        0
    } else {
        1u64.checked_shl(u32::try_from(attempt).unwrap_or(u32::MAX))
            .unwrap_or(u64::MAX)
            .min(BACKOFF_MAX_US)
    }
}

impl StallStep for Backoff {
    fn is_read_stall(&self) -> bool {
        true
    }

    fn scans_lru(&self) -> bool {
        false
    }

    fn step(&self, core: &Core, _instance: &Instance) -> Result<Option<Acquired>> {
        let attempt = self.attempt.fetch_add(1, Ordering::Relaxed);
        core.counters.backoff_waits.fetch_add(1, Ordering::Relaxed);
        core.wake_cleaner();
        match backoff_sleep_us(attempt) {
            0 => std::thread::yield_now(),
            us => crate::sync::sleep(core.device_ms(1).mul_f64(us as f64 / 1000.0)),
        }
        Ok(None)
    }
}

impl MissPath for Raw {
    fn name(&self) -> &'static str {
        "raw"
    }

    fn acquire(
        &self,
        core: &Core,
        instance: &Instance,
        _page: PageId,
        _read: bool,
    ) -> Result<Acquisition> {
        match self.empty_free_list {
            EmptyFreeList::Legacy => {
                raw_loop(core, instance, self.scan_depth, self.host, &SinglePageFlush)
            }
            EmptyFreeList::Backoff => raw_loop(
                core,
                instance,
                self.scan_depth,
                self.host,
                &Backoff {
                    attempt: AtomicU64::new(0),
                },
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_yields_first_then_doubles_up_to_ten_ms() {
        assert_eq!(backoff_sleep_us(0), 0);
        assert_eq!(backoff_sleep_us(1), 2);
        assert_eq!(backoff_sleep_us(10), 1024);
        assert_eq!(backoff_sleep_us(14), BACKOFF_MAX_US);
        assert_eq!(backoff_sleep_us(200), BACKOFF_MAX_US);
    }
}
