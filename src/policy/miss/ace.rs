//! ACE's writer and evictor (Papon and Athanassoulis, ICDE 2023; docs/algorithms.md section 5) over
//! any replacement order, on PostgreSQL's engine.
//!
//! When the page the order would evict first (the top page) is clean, it is evicted as usual.
//! When it is dirty, the **writer** writes the next `n_w` dirty pages in the order's eviction
//! sequence, top page included, *concurrently* as one batch (the device's write concurrency
//! `k_w` makes a batch of up to `k_w` writes cost about one), marks them clean, and they stay
//! cached; the **evictor** then evicts the top page. With a prefetcher, the core asks for more
//! frames through `acquire_for_prefetch`, which evicts the now-clean pages next in line (ACE's
//! `n_e`). A miss that waited for the batch is counted as a read stall; the batch's pages count
//! as synchronous replacement writes.

use crate::core::frame::{FrameId, IO_WRITE};
use crate::core::instance::Instance;
use crate::core::parts::{Acquired, Acquisition, MissPath};
use crate::core::pool::Core;
use crate::core::stats::ExtraStats;
use crate::core::write_path::WriteKind;
use crate::error::{PageId, Result};
use crate::sync::{AtomicU64, Ordering};

use super::pg::{Top, take_top};
use super::{MISS_ITERATIONS, no_frame_error};

/// ACE over the pool's replacement order.
#[derive(Debug)]
pub struct Ace {
    /// Dirty pages written concurrently when the top page is dirty (`n_w`, default `k_w`).
    pub n_w: usize,
    batches: AtomicU64,
    batch_pages: AtomicU64,
}

impl Ace {
    /// ACE writing `n_w` pages per batch.
    #[must_use]
    pub fn new(n_w: usize) -> Self {
        assert!(n_w > 0, "ACE writes at least the top page");
        Ace {
            n_w,
            batches: AtomicU64::new(0),
            batch_pages: AtomicU64::new(0),
        }
    }

    /// Claims up to `n_w - 1` more dirty, unpinned pages following the top in eviction order.
    fn claim_next_dirty(&self, core: &Core, instance: &Instance, top: FrameId) -> Vec<FrameId> {
        // The order's look-ahead, not an eviction walk: Clock Sweep's walk would age every
        // page for up to seven sweeps to find n_w dirty pages (more misses, pages written that
        // are dirtied again before they are evicted); LRU-WSR still gives its second chances.
        let mut order = instance.lock_order();
        let mut batch = vec![top];
        order.lookahead(&core.frames, &mut |id| {
            if batch.len() >= self.n_w {
                return false;
            }
            let frame = core.frame(id);
            if id != top && frame.is_dirty() && !frame.is_pinned() && frame.try_claim_io(IO_WRITE) {
                batch.push(id);
            }
            true
        });
        batch
    }

    /// The writer: write the batch concurrently; everything but the top page stays cached.
    /// Returns whether the top page was evicted.
    fn write_batch(&self, core: &Core, instance: &Instance, top: FrameId) -> Result<bool> {
        let batch = self.claim_next_dirty(core, instance, top);
        let written = core.write_frames(batch, WriteKind::Batch, false)?;
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.batch_pages
            .fetch_add(written.len() as u64, Ordering::Relaxed);
        core.counters
            .sync_replacement_writes
            .fetch_add(written.len() as u64, Ordering::Relaxed);
        let mut evicted = false;
        for id in written {
            if id == top {
                evicted = core.evict_written(instance, id);
            } else {
                core.frame(id).release_io(IO_WRITE);
            }
        }
        Ok(evicted)
    }
}

impl MissPath for Ace {
    fn name(&self) -> &'static str {
        "ace"
    }

    fn acquire(
        &self,
        core: &Core,
        instance: &Instance,
        _page: PageId,
        _read: bool,
    ) -> Result<Acquisition> {
        let mut stall_began: Option<u64> = None;
        let finish =
            |id: FrameId, stall_began: Option<u64>| Ok(Acquired::Free(id).after_stall(stall_began));
        // Bound: MISS_ITERATIONS; each takes a frame, writes a batch, or waits (a short sleep
        // from the third on: frames may all be busy in a background write).
        for n in 0..MISS_ITERATIONS {
            if let Some(id) = core.pop_free(instance) {
                return finish(id, stall_began);
            }
            match take_top(core, instance) {
                Some(Top::Evicted(id)) => return finish(id, stall_began),
                Some(Top::Dirty(top)) => {
                    core.check_poisoned()?;
                    if stall_began.is_none() {
                        stall_began = Some(core.now_us());
                    }
                    if self.write_batch(core, instance, top)? {
                        return finish(top, stall_began);
                    }
                }
                None => {
                    core.check_poisoned()?;
                    core.wake_cleaner();
                    if n > 1 {
                        crate::sync::sleep(core.device_ms(1));
                    } else {
                        crate::sync::yield_now();
                    }
                }
            }
        }
        Err(no_frame_error(core))
    }

    fn extra_stats(&self, _core: &Core, out: &mut ExtraStats) {
        out.counter("ace_batches", self.batches.load(Ordering::Relaxed) as f64);
        out.counter(
            "ace_batch_pages",
            self.batch_pages.load(Ordering::Relaxed) as f64,
        );
        out.gauge("ace_n_w", self.n_w as f64);
    }
}
