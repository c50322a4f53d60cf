//! RAW: InnoDB's miss path, `buf_LRU_get_free_block` (MySQL 5.7), as algorithms.md section 1:
//! the loop of `super::raw_loop` with a single-page flush as step 4 (the read stall). Vanilla
//! uses the scan depth `lru_scan_depth`; the InnoDB-emulated CF-LRU of the LRU-C paper is the
//! same path with the scan depth set to its window.

use crate::core::instance::Instance;
use crate::core::parts::{Acquired, MissPath};
use crate::core::pool::Core;
use crate::error::{PageId, Result};

use super::{StallStep, raw_loop, single_page_flush};

/// InnoDB's RAW miss path.
#[derive(Debug, Clone)]
pub struct Raw {
    /// Pages scanned from the eviction end in step 2 of the first iteration.
    pub scan_depth: usize,
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
    ) -> Result<Acquired> {
        raw_loop(core, instance, self.scan_depth, &SinglePageFlush)
    }
}
