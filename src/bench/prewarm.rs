//! `--prewarm`: the loaded database read into the pool, in page order, before the workers start,
//! as InnoDB's buffer-pool load at startup (`innodb_buffer_pool_load_at_startup`) brings a
//! server's pool back to the pages it held.
//!
//! Why: a run whose pool holds the whole database (`--buffer 100%` and more) still misses in
//! its measured phase on every page its warm-up did not touch. TPC-C's stock and customer rows
//! are drawn from 100,000 and 3,000 per district with a skew, so after a few seconds of
//! warm-up a share of them has never been read. Each such miss reads the page from the device
//! (for `mem` over an image file, a `pread` of the file: docs/performance.md, "The in-memory
//! point's misses"), which an in-memory comparison should not count: vmcache, for one, loads
//! its database through its pool and measures with every page cached. With `--prewarm` the
//! measured phase of a pool that holds the database sees hits only; the warm-up still runs
//! (the background writers, the log and the LRU order settle in it).
//!
//! What it reads: the data pages the loaded image occupies, the first `loaded_pages` of the
//! data file (the device's pages from `DATA_START` on), one shared fetch each, in order
//! (sequential on the device),
//! until the pool has no free frame left. It stops there instead of evicting: a pool smaller
//! than the database keeps the first pages it read, as InnoDB's load stops at the pool's
//! size. (A pool of several instances can fill one instance before the others; that instance
//! then evicts clean pages it read, and the prewarm goes on until no instance has a free
//! frame; and the page cleaner, which evicts clean pages to keep some frames free as
//! InnoDB's does, can free a few frames while it runs.) The devices serve untimed while it runs where they can (emulated devices: no device
//! time passes, as in `--fill-pool`); on a real device the reads take the device's time before
//! the warm-up begins.
//!
//! Bounds: one pass over at most `loaded_pages` pages; it looks at the stop flag and the free
//! frames at least every [`CHECK_EVERY`] pages, and never reads more pages than it saw free
//! frames.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::BenchTarget;
use crate::error::{PageId, Result};

/// Pages read at most between two looks at the pool's free frames and the stop flag (fewer
/// when fewer frames are free).
pub const CHECK_EVERY: u64 = 256;

/// What the prewarm did (results.json's `prewarm`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prewarm {
    /// Real seconds it took.
    pub real_s: f64,
    /// Pages read into the pool (misses it caused).
    pub pages: f64,
    /// Pages of the loaded database it was asked to read.
    pub loaded_pages: f64,
    /// Whether it stopped because the pool had no free frame left (else it read every loaded
    /// page, or was stopped).
    pub pool_full: bool,
}

/// Reads the pages `first .. first + count` (clamped to the target's pages) into the target's
/// pool, in order, until the pool has no free frame or `stop` says so.
///
/// # Errors
/// A read that fails (device errors, a corrupt page): the run cannot start from a pool that
/// could not read its own database.
pub fn prewarm(
    target: &dyn BenchTarget,
    first: PageId,
    count: u64,
    stop: &dyn Fn() -> bool,
) -> Result<Prewarm> {
    let began = Instant::now();
    let end = first.saturating_add(count).min(target.pages());
    let misses_before = target.stats().misses;
    let mut pool_full = false;
    let mut page = first;
    // Each read takes at most one free frame, so reading no more pages than there are free
    // frames before looking again never evicts. Bound: `end - first` reads.
    while page < end {
        if stop() {
            break;
        }
        let free = target.stats().free_frames;
        if free == 0 {
            pool_full = true;
            break;
        }
        let batch_end = end.min(page.saturating_add(free.min(CHECK_EVERY)));
        while page < batch_end {
            target.read_with(page, &mut |_| {})?;
            page += 1;
        }
    }
    Ok(Prewarm {
        real_s: began.elapsed().as_secs_f64(),
        pages: target.stats().misses.saturating_sub(misses_before) as f64,
        loaded_pages: count as f64,
        pool_full,
    })
}

impl Prewarm {
    /// The mean of repeats' prewarms (`pool_full` when any stopped full); `None` when none ran.
    #[must_use]
    pub fn mean<'a>(all: impl IntoIterator<Item = &'a Prewarm>) -> Option<Prewarm> {
        let all: Vec<&Prewarm> = all.into_iter().collect();
        let n = all.len() as f64;
        let m = |f: fn(&Prewarm) -> f64| all.iter().map(|p| f(p)).sum::<f64>() / n;
        (!all.is_empty()).then(|| Prewarm {
            real_s: m(|p| p.real_s),
            pages: m(|p| p.pages),
            loaded_pages: m(|p| p.loaded_pages),
            pool_full: all.iter().any(|p| p.pool_full),
        })
    }

    /// One line for the run's summary: "prewarmed: 41,000 of 41,000 pages in 0.3 s real".
    #[must_use]
    pub fn describe(&self) -> String {
        format!(
            "prewarmed: {:.0} of {:.0} pages in {:.1} s real{}",
            self.pages,
            self.loaded_pages,
            self.real_s,
            if self.pool_full {
                " (the pool filled)"
            } else {
                ""
            }
        )
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
#[allow(clippy::expect_used)] // clippy's test allowance does not see this `cfg`
mod tests {
    use super::*;
    use crate::device::{OpenOptions, open};
    use crate::pool::{BufferPool, PoolConfig, Scheme};
    use crate::workload::PageAccess;

    fn pool(frames: usize, pages: u64) -> BufferPool {
        let device = open(
            &"mem".parse().expect("mem spec"),
            &OpenOptions {
                page_size: 4096,
                pages,
                create: true,
            },
        )
        .expect("mem device");
        BufferPool::open(device, PoolConfig::for_scheme(Scheme::Vanilla, frames)).expect("pool")
    }

    #[test]
    fn a_pool_larger_than_the_range_reads_every_page_once() {
        let pool = pool(256, 1024);
        let done = prewarm(&pool, 10, 100, &|| false).expect("prewarm");
        assert_eq!(done.pages as u64, 100);
        assert!(!done.pool_full);
        let misses = pool.stats().misses;
        for page in 10..110 {
            pool.read_with(page, &mut |_| {}).expect("read");
        }
        assert_eq!(pool.stats().misses, misses, "every prewarmed page is a hit");
    }

    #[test]
    fn it_stops_when_the_pool_is_full_instead_of_reading_on() {
        let pool = pool(64, 1024);
        let done = prewarm(&pool, 0, 1000, &|| false).expect("prewarm");
        assert!(done.pool_full);
        // At most the frames, plus any the page cleaner freed meanwhile by evicting clean
        // pages; far from the 1,000 asked for.
        assert!(done.pages < 128.0, "{done:?}");
    }

    #[test]
    fn a_stop_ends_it_before_any_read() {
        let pool = pool(64, 1024);
        let done = prewarm(&pool, 0, 1000, &|| true).expect("prewarm");
        assert_eq!(done.pages as u64, 0);
    }
}
