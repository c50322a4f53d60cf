//! The miss path: how a foreground thread gets a frame for a page that is not cached
//! (architecture.md's second design decision).
//!
//! - [`raw`]: InnoDB's `buf_LRU_get_free_block` (algorithms.md section 1): free list, tail scan
//!   for a clean page, then a single-page flush (the read stall). Vanilla and CF-LRU.
//! - [`lru_c`]: the LRU-C pointer (section 2, Algorithm 1): the victim is always the least
//!   recently used clean page; a read stall only when no clean page is left.
//! - [`war`]: on a read stall, dirty tail pages are copied to a temporary write buffer instead of
//!   being written first (section 3).
//! - [`fused_rw`]: on a read stall, one fused command writes the victim and reads the page
//!   (section 4).

pub mod fused_rw;
pub mod lru_c;
pub mod raw;
pub mod war;

use std::sync::atomic::Ordering;

use crate::error::{Error, PageId, Result};
use crate::pool::frame::FrameId;
use crate::pool::{PoolInner, Scheme};

/// Iterations of a miss loop before it reports that no frame can be had (each iteration
/// either takes a frame, frees one, or waits for the cleaner).
pub const MISS_ITERATIONS: usize = 1000;

/// What a miss got.
#[derive(Debug)]
pub enum Acquired {
    /// A free frame: on no list, unmapped, clean, unpinned, unlatched.
    Free(FrameId),
    /// RW: a dirty victim, removed from the LRU, latched exclusive, `IO_EVICT` claimed, still
    /// mapped to `victim_page`; the fused command will write it and read the new page into it.
    Fused {
        /// The frame.
        frame: FrameId,
        /// The dirty page it holds.
        victim_page: PageId,
    },
}

impl PoolInner {
    /// Gets a frame for a miss on `page`, by the scheme's miss path.
    pub(crate) fn get_free_frame(&self, page: PageId) -> Result<Acquired> {
        let _ = page;
        if self.is_lru_c() {
            return self.lru_c_get_free_frame().map(Acquired::Free);
        }
        self.raw_get_free_frame()
    }

    /// Step 4 of the RAW loop, by scheme: what to do when no clean page was found.
    pub(crate) fn on_read_stall(&self) -> Result<Option<Acquired>> {
        match self.config.scheme {
            Scheme::War => {
                self.war_copy_tail_to_twb();
                Ok(None)
            }
            Scheme::Rw => Ok(self
                .rw_pick_victim()
                .map(|(frame, victim_page)| Acquired::Fused { frame, victim_page })),
            _ => self
                .single_page_flush()
                .map(|freed| freed.map(Acquired::Free)),
        }
    }

    pub(crate) fn no_frame_error(&self) -> Error {
        self.counters.free_waits.fetch_add(1, Ordering::Relaxed);
        Error::NoFreeFrame {
            frames: self.frames.len(),
        }
    }
}
