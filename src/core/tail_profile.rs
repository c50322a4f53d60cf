//! The replacement order's eviction end, profiled: how dirty the LRU tail is, by position, and
//! how often a miss's first tail scan would find nothing to evict (docs/regime.md, "Why
//! vanilla's LRU tail stays clean").
//!
//! A read stall happens when a miss finds no free frame and its first scan of the tail
//! (InnoDB's `buf_LRU_scan_and_free_block`, `scan_depth` pages) meets only pages it cannot
//! evict: dirty, pinned or in I/O. So the stall ratio is set by the *run* of such pages at the
//! tail, not by the pool's dirty share. A sample walks each instance's order from its eviction
//! end (as [`OrderState::peek`] offers it: for the list orders, the list from its tail, with
//! no bookkeeping) over its first [`PROFILED_SHARE`] (at most [`walk_limit`] pages) and records:
//! - per position band ([`BAND_EDGES`], shares of the order's length, so a pool of any size
//!   compares with the paper's): pages, dirty pages, pages being written;
//! - the run of unevictable pages from the tail, and whether it reaches `scan_depth`.
//!
//! Everything is a counter (accumulated from the pool's opening), so a measured phase's
//! profile is the difference of two [`ExtraStats`] snapshots ([`TailProfile::from_extra`]).
//! Invariants: `dirty <= pages` and `writing <= pages` per band; `at_depth <= samples`.
//! Lock order: the instance's order mutex only, held for one walk.

use serde::Serialize;

use crate::core::frame::{Frame, IO_IDLE, IO_WRITE};
use crate::core::order::OrderState;
use crate::core::stats::ExtraStats;
use crate::sync::{AtomicU64, Ordering};

/// Band edges as shares of the order's length from its eviction end: bands
/// `[BAND_EDGES[k], BAND_EDGES[k + 1])`. The first (1%) holds the scan depth of the papers'
/// runs (1,024 of an instance of 81,920 frames in the LRU-C paper, 1.25%; the RW paper 1.6%).
pub const BAND_EDGES: [f64; 6] = [0.0, 0.01, 0.02, 0.05, 0.10, 0.25];
/// How far a sample walks: the last of [`BAND_EDGES`].
pub const PROFILED_SHARE: f64 = BAND_EDGES[BAND_EDGES.len() - 1];
/// ... and at most this many pages over the whole pool (split among its instances, each walking
/// at least its scan depth: [`walk_limit`]), so that a sample of a large pool costs tens of
/// microseconds per order mutex and a bounded share of a core, not milliseconds (a pool of more
/// than 65,536 frames has its outer bands profiled over their first pages only). A walk is a
/// chain of dependent cache misses: before the bound was per pool, in-memory TPC-C's 205,000
/// frames in 8 instances walked 51,000 pages per sample, 3-4% of a core on the control thread.
pub const MAX_WALK: usize = 16_384;

/// How many pages one instance's sample walks at most: its share of [`MAX_WALK`], but never
/// less than `scan_depth` (the run of unevictable pages is judged against it).
#[must_use]
pub fn walk_limit(instances: usize, scan_depth: usize) -> usize {
    (MAX_WALK / instances.max(1)).max(scan_depth)
}
const BANDS: usize = BAND_EDGES.len() - 1;

/// The live counters (see the module docs).
#[derive(Debug, Default)]
pub struct TailCounters {
    samples: AtomicU64,
    run_pages: AtomicU64,
    at_depth: AtomicU64,
    pages: [AtomicU64; BANDS],
    dirty: [AtomicU64; BANDS],
    writing: [AtomicU64; BANDS],
}

/// One band of a sample, before it is added to the counters.
#[derive(Debug, Default, Clone, Copy)]
struct BandCount {
    pages: u64,
    dirty: u64,
    writing: u64,
}

impl TailCounters {
    /// Profiles one instance's order (`frames` are the pool's) against a first scan of
    /// `scan_depth` pages. An empty order (LRU-C's mixed region can empty into its dirty
    /// region) is a sample with no pages in which a scan finds nothing: its run is 0 and it
    /// counts as reaching the scan depth.
    pub fn sample(
        &self,
        frames: &[Frame],
        order: &dyn OrderState,
        scan_depth: usize,
        walk_limit: usize,
    ) {
        let length = order.len();
        if length == 0 {
            self.samples.fetch_add(1, Ordering::Relaxed);
            self.at_depth.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let ends: Vec<usize> = BAND_EDGES[1..]
            .iter()
            .map(|share| ((length as f64 * share).ceil() as usize).clamp(1, length))
            .collect();
        let limit = ends[BANDS - 1].min(walk_limit);
        let mut bands = [BandCount::default(); BANDS];
        let (mut position, mut run, mut in_run) = (0usize, 0usize, true);
        order.peek(frames, &mut |id| {
            if position >= limit {
                return false;
            }
            let frame = &frames[id as usize];
            let band = ends
                .iter()
                .position(|&end| position < end)
                .unwrap_or(BANDS - 1);
            let dirty = frame.is_dirty();
            let io = frame.io_state();
            bands[band].pages += 1;
            bands[band].dirty += u64::from(dirty);
            bands[band].writing += u64::from(io == IO_WRITE);
            let evictable = !dirty && !frame.is_pinned() && io == IO_IDLE;
            in_run &= !evictable;
            if in_run {
                run += 1;
            }
            position += 1;
            true
        });
        self.samples.fetch_add(1, Ordering::Relaxed);
        self.run_pages.fetch_add(run as u64, Ordering::Relaxed);
        if run >= scan_depth.min(length) {
            self.at_depth.fetch_add(1, Ordering::Relaxed);
        }
        for (k, band) in bands.iter().enumerate() {
            self.pages[k].fetch_add(band.pages, Ordering::Relaxed);
            self.dirty[k].fetch_add(band.dirty, Ordering::Relaxed);
            self.writing[k].fetch_add(band.writing, Ordering::Relaxed);
        }
    }

    /// Reports the counters (nothing before the first sample).
    pub fn report(&self, out: &mut ExtraStats) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed) as f64;
        if self.samples.load(Ordering::Relaxed) == 0 {
            return;
        }
        out.counter("tail_samples", load(&self.samples));
        out.counter("tail_run_pages", load(&self.run_pages));
        out.counter("tail_run_at_depth", load(&self.at_depth));
        for k in 0..BANDS {
            out.counter(&band_key(k, "pages"), load(&self.pages[k]));
            out.counter(&band_key(k, "dirty"), load(&self.dirty[k]));
            out.counter(&band_key(k, "writing"), load(&self.writing[k]));
        }
    }
}

fn band_key(band: usize, what: &str) -> String {
    format!("tail_b{band}_{what}")
}

/// Whether `key` is one of the counters [`TailCounters::report`] writes (summing them over runs
/// pools their samples).
#[must_use]
pub fn is_counter(key: &str) -> bool {
    key.starts_with("tail_")
}

/// The counters one timeline point's sample is the difference of (see [`TailTotals::since`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct TailTotals {
    samples: f64,
    run_pages: f64,
    last_pages: f64,
    last_dirty: f64,
}

impl TailTotals {
    /// The totals in a pool's extras (zeros before the first sample).
    #[must_use]
    pub fn of(extra: &std::collections::BTreeMap<String, f64>) -> TailTotals {
        let get = |key: &str| extra.get(key).copied().unwrap_or(0.0);
        TailTotals {
            samples: get("tail_samples"),
            run_pages: get("tail_run_pages"),
            last_pages: get(&band_key(0, "pages")),
            last_dirty: get(&band_key(0, "dirty")),
        }
    }

    /// The dirty share of the last band and the mean unevictable run of the samples taken
    /// since `earlier`, if any.
    #[must_use]
    pub fn since(self, earlier: TailTotals) -> (Option<f64>, Option<f64>) {
        let samples = self.samples - earlier.samples;
        if samples < 1.0 {
            return (None, None);
        }
        let pages = self.last_pages - earlier.last_pages;
        let dirty = (pages > 0.0).then(|| (self.last_dirty - earlier.last_dirty) / pages);
        (dirty, Some((self.run_pages - earlier.run_pages) / samples))
    }
}

/// One position band of [`TailProfile`].
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct TailBand {
    /// Where the band begins, as a share of the order's length from its eviction end.
    pub from: f64,
    /// Where it ends.
    pub to: f64,
    /// Share of the band's pages that were dirty.
    pub dirty: f64,
    /// Share of the band's pages being written (a cleaner's batch, a stall's write).
    pub writing: f64,
}

/// The eviction end over a measured phase (see the module docs).
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct TailProfile {
    /// Instance samples taken.
    pub samples: u64,
    /// The miss path's first-scan depth the samples were judged against.
    pub scan_depth: usize,
    /// Mean run of pages a miss could not evict (dirty, pinned or in I/O) from the tail.
    pub unevictable_run_mean: f64,
    /// Share of samples whose run reached `scan_depth`: a miss then would have found no
    /// clean page in its first scan (a read stall unless a free frame was left).
    pub run_at_depth: f64,
    /// Dirty and in-write shares by position.
    pub bands: Vec<TailBand>,
}

impl TailProfile {
    /// The profile in a window's extras (counter differences); `None` without samples.
    #[must_use]
    pub fn from_extra(
        extra: &std::collections::BTreeMap<String, f64>,
        scan_depth: usize,
    ) -> Option<TailProfile> {
        let get = |key: &str| extra.get(key).copied().unwrap_or(0.0);
        let samples = get("tail_samples");
        if samples < 1.0 {
            return None;
        }
        let share = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
        let bands = (0..BANDS)
            .map(|k| {
                let pages = get(&band_key(k, "pages"));
                TailBand {
                    from: BAND_EDGES[k],
                    to: BAND_EDGES[k + 1],
                    dirty: share(get(&band_key(k, "dirty")), pages),
                    writing: share(get(&band_key(k, "writing")), pages),
                }
            })
            .collect();
        Some(TailProfile {
            samples: samples as u64,
            scan_depth,
            unevictable_run_mean: get("tail_run_pages") / samples,
            run_at_depth: get("tail_run_at_depth") / samples,
            bands,
        })
    }

    /// `first 1% 88% dirty (3% writing), ...; run 8.1 pages, >= scan depth 38 in 0.5%`.
    #[must_use]
    pub fn describe(&self) -> String {
        let bands: Vec<String> = self
            .bands
            .iter()
            .map(|band| {
                format!(
                    "{:.0}-{:.0}% {:.0}% dirty ({:.0}% writing)",
                    band.from * 100.0,
                    band.to * 100.0,
                    band.dirty * 100.0,
                    band.writing * 100.0
                )
            })
            .collect();
        format!(
            "LRU tail by position from the eviction end: {}; unevictable run from the tail {:.1} \
             pages, at least the scan depth {} in {:.1}% of {} samples",
            bands.join(", "),
            self.unevictable_run_mean,
            self.scan_depth,
            self.run_at_depth * 100.0,
            self.samples
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::frame::FrameId;
    use crate::core::order::{HitContext, Placement, ReplacementOrder as _};
    use crate::policy::order::lru_family::Lru;

    /// 200 frames on a plain LRU, the first `dirty_tail` from the tail dirty.
    fn setup(dirty_tail: usize) -> (Vec<Frame>, Box<dyn OrderState>) {
        let frames: Vec<Frame> = (0..200).map(|_| Frame::of_instance(0)).collect();
        let mut order = Lru.new_state(0, frames.len());
        let context = HitContext {
            instance_frames: frames.len(),
            evictions: 0,
            now_ms: 0,
        };
        // Pushed at the head one by one: frame 0 ends at the tail.
        for id in 0..frames.len() {
            order.insert(&frames, id as FrameId, Placement::Head, &context);
        }
        for frame in frames.iter().take(dirty_tail) {
            frame.oldest_modification.store(1, Ordering::Relaxed);
        }
        (frames, order)
    }

    #[test]
    fn a_dirty_tail_is_a_run_and_fills_its_bands() {
        let (frames, order) = setup(12);
        let counters = TailCounters::default();
        counters.sample(&frames, &*order, 10, MAX_WALK);
        counters.sample(&frames, &*order, 20, MAX_WALK);
        let mut extra = ExtraStats::default();
        counters.report(&mut extra);
        let (values, _) = extra.into_parts();
        let profile = TailProfile::from_extra(&values, 10).unwrap();
        assert_eq!(profile.samples, 2);
        assert!((profile.unevictable_run_mean - 12.0).abs() < 1e-9);
        // The run of 12 reaches a depth of 10, not one of 20.
        assert!((profile.run_at_depth - 0.5).abs() < 1e-9);
        // 200 frames: bands of 2, 2, 6, 10 and 30 pages; 12 dirty fill the first three and
        // 2 of the fourth.
        let dirty: Vec<f64> = profile.bands.iter().map(|band| band.dirty).collect();
        assert_eq!(dirty, vec![1.0, 1.0, 1.0, 0.2, 0.0]);
        assert!(profile.bands.iter().all(|band| band.writing == 0.0));
        assert!(profile.describe().contains("0-1% 100% dirty"));
    }

    #[test]
    fn a_walk_stops_at_its_limit_but_never_before_the_scan_depth() {
        assert_eq!(walk_limit(1, 1024), MAX_WALK);
        assert_eq!(walk_limit(8, 1024), MAX_WALK / 8);
        assert_eq!(walk_limit(64, 1024), 1024);
        assert_eq!(walk_limit(0, 10), MAX_WALK);
        // 200 frames, 50 profiled (25%); a limit of 20 walks the first three bands (2, 2 and 6
        // pages) and 10 of the fourth, none of the fifth.
        let (frames, order) = setup(200);
        let counters = TailCounters::default();
        counters.sample(&frames, &*order, 10, 20);
        let mut extra = ExtraStats::default();
        counters.report(&mut extra);
        let (values, _) = extra.into_parts();
        let profile = TailProfile::from_extra(&values, 10).unwrap();
        assert!((profile.unevictable_run_mean - 20.0).abs() < 1e-9);
        assert!((profile.run_at_depth - 1.0).abs() < 1e-9);
        assert!((values["tail_b3_pages"] - 10.0).abs() < 1e-9, "{values:?}");
        assert!(values["tail_b4_pages"].abs() < 1e-9, "{values:?}");
    }

    #[test]
    fn an_empty_order_is_a_sample_in_which_a_scan_finds_nothing() {
        let frames: Vec<Frame> = (0..4).map(|_| Frame::of_instance(0)).collect();
        let order = Lru.new_state(0, frames.len());
        let counters = TailCounters::default();
        counters.sample(&frames, &*order, 10, MAX_WALK);
        let mut extra = ExtraStats::default();
        counters.report(&mut extra);
        let profile = TailProfile::from_extra(&extra.into_parts().0, 10).unwrap();
        assert_eq!(profile.samples, 1);
        assert!((profile.run_at_depth - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_clean_tail_has_no_run_and_no_samples_no_profile() {
        let (frames, order) = setup(0);
        let counters = TailCounters::default();
        let mut extra = ExtraStats::default();
        counters.report(&mut extra);
        assert!(TailProfile::from_extra(&extra.into_parts().0, 10).is_none());
        counters.sample(&frames, &*order, 10, MAX_WALK);
        let mut extra = ExtraStats::default();
        counters.report(&mut extra);
        let profile = TailProfile::from_extra(&extra.into_parts().0, 10).unwrap();
        assert!(profile.unevictable_run_mean.abs() < 1e-12);
        assert!(profile.run_at_depth.abs() < 1e-12);
    }
}
