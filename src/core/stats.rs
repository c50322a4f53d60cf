//! Counters every buffer pool reports (docs/algorithms.md section 8).
//!
//! `PoolCounters` is the live, lock-free set the pool increments; [`PoolStats`] is a plain,
//! serializable snapshot of it. `PoolStats::since` gives the counters of a measured phase.
//! Scheme-specific figures (pointer moves, TWB waits, ...) go in `extra` by name through
//! [`ExtraStats`], which makes the part that reports a figure declare it a counter
//! (accumulated since the pool opened, windowed by `since`) or a gauge (a current value, kept
//! by `since`); `extra_gauges` records the gauges' names.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use crate::sync::{AtomicU64, Mutex, MutexGuard, Ordering};

use serde::Serialize;

/// Acquisitions of and waiting time on one list mutex.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct MutexStats {
    /// Times the mutex was taken.
    pub acquisitions: u64,
    /// Times a taker found it held and had to wait.
    pub contended: u64,
    /// Total real time spent waiting for it, in nanoseconds.
    pub wait_ns: u64,
}

/// A mutex's live counters.
#[derive(Debug, Default)]
pub struct MutexCounters {
    acquisitions: AtomicU64,
    contended: AtomicU64,
    wait_ns: AtomicU64,
}

impl MutexCounters {
    /// Locks `mutex`, counting the acquisition and any wait.
    pub fn lock<'a, T>(&self, mutex: &'a Mutex<T>) -> MutexGuard<'a, T> {
        self.acquisitions.fetch_add(1, Ordering::Relaxed);
        if let Some(guard) = mutex.try_lock() {
            return guard;
        }
        let start = Instant::now();
        let guard = mutex.lock();
        self.contended.fetch_add(1, Ordering::Relaxed);
        self.wait_ns
            .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        guard
    }

    /// A snapshot.
    #[must_use]
    pub fn snapshot(&self) -> MutexStats {
        MutexStats {
            acquisitions: self.acquisitions.load(Ordering::Relaxed),
            contended: self.contended.load(Ordering::Relaxed),
            wait_ns: self.wait_ns.load(Ordering::Relaxed),
        }
    }
}

impl MutexStats {
    /// Adds `other` (the same mutex of another pool instance).
    pub fn add(&mut self, other: &MutexStats) {
        self.acquisitions += other.acquisitions;
        self.contended += other.contended;
        self.wait_ns += other.wait_ns;
    }
}

/// Stripes of a [`StripedCounter`].
const COUNTER_STRIPES: usize = 16;

/// One stripe, alone on its cache lines.
type Stripe = crate::sync::CacheLines<AtomicU64>;

/// A counter many threads bump on their hot path without sharing a cache line: each thread
/// adds to its own stripe (threads are spread over the stripes in the order they first count),
/// a reader sums the stripes.
#[derive(Debug)]
pub struct StripedCounter {
    stripes: Box<[Stripe]>,
}

impl Default for StripedCounter {
    fn default() -> Self {
        StripedCounter {
            stripes: (0..COUNTER_STRIPES).map(|_| Stripe::default()).collect(),
        }
    }
}

/// The calling thread's stripe.
fn stripe_index() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering as StdOrdering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, StdOrdering::Relaxed) % COUNTER_STRIPES;
    }
    STRIPE.with(|stripe| *stripe)
}

impl StripedCounter {
    /// Adds `n`.
    #[inline]
    pub fn add(&self, n: u64) {
        self.stripes[stripe_index()]
            .0
            .fetch_add(n, Ordering::Relaxed);
    }

    /// The sum of every stripe (not a snapshot of one instant while others add).
    #[must_use]
    pub fn sum(&self) -> u64 {
        self.stripes
            .iter()
            .map(|stripe| stripe.0.load(Ordering::Relaxed))
            .sum()
    }
}

/// Buckets of [`WaitHistogram`]: 4 per power of two of microseconds, up to 2^40 us.
const WAIT_BUCKETS: usize = 4 * 40;

/// Bucket of a wait of `us` microseconds: 4 sub-buckets per power of two (within 19%).
fn wait_bucket(us: u64) -> usize {
    if us < 4 {
        return us as usize;
    }
    let log = 63 - u64::from(us.leading_zeros());
    let sub = (us >> (log - 2)) & 3;
    ((log as usize) * 4 + sub as usize).min(WAIT_BUCKETS - 1)
}

/// The upper bound, in microseconds, of bucket `index`.
fn bucket_upper_us(index: usize) -> u64 {
    if index < 4 {
        return index as u64 + 1;
    }
    let log = index / 4;
    let sub = (index % 4) as u64;
    (4 + sub + 1) << (log - 2)
}

/// A lock-free histogram of waits (device-time microseconds): count, sum, max and
/// logarithmic buckets, enough for mean, p99 and max.
#[derive(Debug)]
pub struct WaitRecorder {
    count: AtomicU64,
    sum_us: AtomicU64,
    max_us: AtomicU64,
    buckets: Vec<AtomicU64>,
}

impl Default for WaitRecorder {
    fn default() -> Self {
        WaitRecorder {
            count: AtomicU64::new(0),
            sum_us: AtomicU64::new(0),
            max_us: AtomicU64::new(0),
            buckets: (0..WAIT_BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl WaitRecorder {
    /// Records one wait.
    pub fn record(&self, us: u64) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_us.fetch_add(us, Ordering::Relaxed);
        self.max_us.fetch_max(us, Ordering::Relaxed);
        if let Some(bucket) = self.buckets.get(wait_bucket(us)) {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A snapshot.
    #[must_use]
    pub fn snapshot(&self) -> WaitHistogram {
        WaitHistogram {
            count: self.count.load(Ordering::Relaxed),
            sum_us: self.sum_us.load(Ordering::Relaxed),
            max_us: self.max_us.load(Ordering::Relaxed),
            buckets: self
                .buckets
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect(),
        }
    }
}

/// A snapshot of a [`WaitRecorder`].
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct WaitHistogram {
    /// Waits recorded.
    pub count: u64,
    /// Their total, device-time microseconds.
    pub sum_us: u64,
    /// The longest (since the pool opened: `since` keeps it), device-time microseconds.
    pub max_us: u64,
    /// Logarithmic buckets (see `wait_bucket`).
    #[serde(skip)]
    pub buckets: Vec<u64>,
}

impl WaitHistogram {
    /// Mean wait in device-time milliseconds (0 when none).
    #[must_use]
    pub fn mean_ms(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_us as f64 / self.count as f64 / 1000.0
        }
    }

    /// The wait below which `quantile` of the waits fall, in device-time milliseconds (the
    /// bucket's upper bound, so within 19% above the truth).
    #[must_use]
    pub fn quantile_ms(&self, quantile: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let target = ((self.count as f64) * quantile).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (index, &count) in self.buckets.iter().enumerate() {
            seen += count;
            if seen >= target {
                return (bucket_upper_us(index).min(self.max_us.max(1))) as f64 / 1000.0;
            }
        }
        self.max_us as f64 / 1000.0
    }

    /// The distribution at `quantiles` (ascending fractions): `(wait ms, fraction)` pairs, each
    /// wait a bucket's upper bound as in [`WaitHistogram::quantile_ms`]; empty without waits.
    #[must_use]
    pub fn cdf_ms(&self, quantiles: &[f64]) -> Vec<(f64, f64)> {
        if self.count == 0 {
            return Vec::new();
        }
        quantiles
            .iter()
            .map(|&q| (self.quantile_ms(q), q))
            .collect()
    }

    /// Maximum in device-time milliseconds.
    #[must_use]
    pub fn max_ms(&self) -> f64 {
        self.max_us as f64 / 1000.0
    }

    /// The waits recorded since `earlier` (the maximum is kept: it is not decomposable).
    #[must_use]
    pub fn since(&self, earlier: &WaitHistogram) -> WaitHistogram {
        WaitHistogram {
            count: self.count.saturating_sub(earlier.count),
            sum_us: self.sum_us.saturating_sub(earlier.sum_us),
            max_us: self.max_us,
            buckets: self
                .buckets
                .iter()
                .enumerate()
                .map(|(i, &now)| now.saturating_sub(earlier.buckets.get(i).copied().unwrap_or(0)))
                .collect(),
        }
    }
}

/// A snapshot of a pool's counters.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct PoolStats {
    /// Page requests served from the pool.
    pub hits: u64,
    /// Page requests that had to read the page.
    pub misses: u64,
    /// Misses that had to wait for a write before their read (single-page flush): read stalls.
    /// Counted with the miss, so never more than `misses`: a request that stalled but found
    /// its page mapped by another thread meanwhile is a hit, and its stall is not counted.
    pub read_stalls: u64,
    /// Misses served by the fused read-write command (RW scheme).
    pub fused_reads: u64,
    /// Pages written by foreground threads to free a frame (synchronous replacement writes).
    pub sync_replacement_writes: u64,
    /// Pages written by foreground threads because the redo log was full
    /// (synchronous recoverability writes).
    pub sync_recoverability_writes: u64,
    /// Pages written by background flushing from the LRU tail / dirty region.
    pub lru_flushes: u64,
    /// Pages written by background flush-list (checkpoint) flushing.
    pub flush_list_flushes: u64,
    /// Background flush batches submitted.
    pub flush_batches: u64,
    /// Pages evicted (clean victims reused).
    pub evictions: u64,
    /// Pages read ahead (prefetch).
    pub prefetches: u64,
    /// Current free-list length.
    pub free_frames: u64,
    /// Current number of dirty pages.
    pub dirty_pages: u64,
    /// Frames in the pool.
    pub frames: u64,
    /// Per list mutex: name to counters (e.g. `lru`, `lru_m`, `lru_d`, `free`, `flush`),
    /// summed over instances.
    pub mutexes: BTreeMap<String, MutexStats>,
    /// How long read stalls waited (from finding no clean frame to having one).
    pub read_stall_wait: WaitHistogram,
    /// The write path's counters (fsyncs, doublewrite).
    pub write_path: crate::core::write_path::WritePathStats,
    /// Buffer pool instances.
    pub instances: u64,
    /// Whether the OS took the advice to back the frames' pages with transparent huge pages
    /// (pool-config key `huge_pages`; `crate::core::arena::FrameArena`).
    #[serde(default)]
    pub huge_pages: bool,
    /// Scheme-specific counters (pointer moves, scan lengths, TWB waits, ...) and gauges
    /// (current `P_scan`, dirty-region length, ...), as their parts declared them
    /// ([`ExtraStats`]). In a snapshot the counters count since the pool opened; after
    /// [`PoolStats::since`], over the window.
    pub extra: BTreeMap<String, f64>,
    /// The names in `extra` that are gauges; every other name is a counter.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub extra_gauges: BTreeSet<String>,
}

/// The scheme-specific figures the pool's parts report (`extra_stats` of the miss path, the
/// write-back, the flush-rate controller and the prefetcher): each part declares, where it
/// reports a figure, whether it is a counter or a gauge, which decides what
/// [`PoolStats::since`] does with it.
#[derive(Debug, Default)]
pub struct ExtraStats {
    values: BTreeMap<String, f64>,
    gauges: BTreeSet<String>,
}

impl ExtraStats {
    /// Reports a counter: a figure that accumulates from the pool's opening (a window's value
    /// is the difference).
    pub fn counter(&mut self, name: &str, value: f64) {
        self.values.insert(name.to_owned(), value);
        self.gauges.remove(name);
    }

    /// Reports a gauge: a current value (a controller's setting, a list's length, a running
    /// maximum), which a window keeps as it is at the window's end.
    pub fn gauge(&mut self, name: &str, value: f64) {
        self.values.insert(name.to_owned(), value);
        self.gauges.insert(name.to_owned());
    }

    /// The value reported as `name`, if any.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values.get(name).copied()
    }

    /// Whether `name` was reported as a gauge.
    #[must_use]
    pub fn is_gauge(&self, name: &str) -> bool {
        self.gauges.contains(name)
    }

    /// The values and the gauges' names, for [`PoolStats`].
    #[must_use]
    pub fn into_parts(self) -> (BTreeMap<String, f64>, BTreeSet<String>) {
        (self.values, self.gauges)
    }
}

/// `now`'s extras over the window since `earlier`: counters as differences (never below
/// zero), the gauges (`gauges`) as they are now.
fn extra_since(
    now: &BTreeMap<String, f64>,
    gauges: &BTreeSet<String>,
    earlier: &BTreeMap<String, f64>,
) -> BTreeMap<String, f64> {
    now.iter()
        .map(|(name, &value)| {
            let windowed = if gauges.contains(name) {
                value
            } else {
                (value - earlier.get(name).copied().unwrap_or(0.0)).max(0.0)
            };
            (name.clone(), windowed)
        })
        .collect()
}

impl PoolStats {
    /// Hits / (hits + misses); 1.0 when nothing was asked.
    #[must_use]
    pub fn hit_ratio(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            1.0
        } else {
            self.hits as f64 / total as f64
        }
    }

    /// Read stalls / misses (docs/algorithms.md section 1); 0 when there were no misses.
    #[must_use]
    pub fn read_stall_ratio(&self) -> f64 {
        if self.misses == 0 {
            0.0
        } else {
            self.read_stalls as f64 / self.misses as f64
        }
    }

    /// Synchronous writes (replacement + recoverability) as a percentage of all page writes.
    #[must_use]
    pub fn sync_write_pct(&self) -> f64 {
        let sync = self.sync_replacement_writes + self.sync_recoverability_writes;
        let all = sync + self.lru_flushes + self.flush_list_flushes;
        if all == 0 {
            0.0
        } else {
            100.0 * sync as f64 / all as f64
        }
    }

    /// Counters accumulated since `earlier` (gauges such as `free_frames`, and the gauges of
    /// `extra`, keep their current value).
    #[must_use]
    pub fn since(&self, earlier: &PoolStats) -> PoolStats {
        let mutexes = self
            .mutexes
            .iter()
            .map(|(name, now)| {
                let before = earlier.mutexes.get(name).cloned().unwrap_or_default();
                let delta = MutexStats {
                    acquisitions: now.acquisitions.saturating_sub(before.acquisitions),
                    contended: now.contended.saturating_sub(before.contended),
                    wait_ns: now.wait_ns.saturating_sub(before.wait_ns),
                };
                (name.clone(), delta)
            })
            .collect();
        PoolStats {
            hits: self.hits.saturating_sub(earlier.hits),
            misses: self.misses.saturating_sub(earlier.misses),
            read_stalls: self.read_stalls.saturating_sub(earlier.read_stalls),
            fused_reads: self.fused_reads.saturating_sub(earlier.fused_reads),
            sync_replacement_writes: self
                .sync_replacement_writes
                .saturating_sub(earlier.sync_replacement_writes),
            sync_recoverability_writes: self
                .sync_recoverability_writes
                .saturating_sub(earlier.sync_recoverability_writes),
            lru_flushes: self.lru_flushes.saturating_sub(earlier.lru_flushes),
            flush_list_flushes: self
                .flush_list_flushes
                .saturating_sub(earlier.flush_list_flushes),
            flush_batches: self.flush_batches.saturating_sub(earlier.flush_batches),
            evictions: self.evictions.saturating_sub(earlier.evictions),
            prefetches: self.prefetches.saturating_sub(earlier.prefetches),
            free_frames: self.free_frames,
            dirty_pages: self.dirty_pages,
            frames: self.frames,
            mutexes,
            read_stall_wait: self.read_stall_wait.since(&earlier.read_stall_wait),
            write_path: self.write_path.since(&earlier.write_path),
            instances: self.instances,
            huge_pages: self.huge_pages,
            extra: extra_since(&self.extra, &self.extra_gauges, &earlier.extra),
            extra_gauges: self.extra_gauges.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::float_cmp)] // whole numbers, exact in an f64
    fn since_windows_the_extra_counters_and_keeps_the_gauges() {
        let snapshot = |freed: f64, p_scan: f64| {
            let mut extra = ExtraStats::default();
            extra.counter("cleaner_freed_clean_pages", freed);
            extra.gauge("p_scan", p_scan);
            let (extra, extra_gauges) = extra.into_parts();
            PoolStats {
                extra,
                extra_gauges,
                ..PoolStats::default()
            }
        };
        let window = snapshot(12_947.0, 37.0).since(&snapshot(10_000.0, 100.0));
        assert_eq!(
            window.extra["cleaner_freed_clean_pages"], 2_947.0,
            "a counter"
        );
        assert_eq!(
            window.extra["p_scan"], 37.0,
            "a gauge keeps its value at the end"
        );
        assert!(window.extra_gauges.contains("p_scan"), "still a gauge");
        // A counter that was reset (or absent) before the window never goes negative.
        let reset = snapshot(10.0, 37.0).since(&snapshot(20.0, 37.0));
        assert_eq!(reset.extra["cleaner_freed_clean_pages"], 0.0);
        let fresh = snapshot(10.0, 37.0).since(&PoolStats::default());
        assert_eq!(fresh.extra["cleaner_freed_clean_pages"], 10.0);
    }

    #[test]
    #[allow(clippy::float_cmp)] // whole numbers, exact in an f64
    fn a_name_takes_the_kind_it_was_last_reported_with() {
        let mut extra = ExtraStats::default();
        extra.gauge("x", 1.0);
        extra.counter("x", 2.0);
        assert!(!extra.is_gauge("x"));
        assert_eq!(extra.get("x"), Some(2.0));
        extra.gauge("x", 3.0);
        assert!(extra.is_gauge("x"));
        assert_eq!(extra.get("y"), None);
    }

    #[test]
    fn wait_histogram_quantiles_are_close() {
        let recorder = WaitRecorder::default();
        for us in 1..=1000u64 {
            recorder.record(us);
        }
        let snapshot = recorder.snapshot();
        assert_eq!(snapshot.count, 1000);
        assert!((snapshot.mean_ms() - 0.5005).abs() < 1e-9);
        let p99 = snapshot.quantile_ms(0.99);
        assert!((0.99..=1.2).contains(&p99), "{p99}");
        assert!((snapshot.max_ms() - 1.0).abs() < 1e-12);
        for us in [0u64, 1, 3, 4, 5, 100, 1 << 30] {
            assert!(bucket_upper_us(wait_bucket(us)) > us, "{us}");
        }
        let later = recorder.snapshot().since(&snapshot);
        assert_eq!(later.count, 0);
        assert!(later.cdf_ms(&[0.5, 1.0]).is_empty(), "no waits, no CDF");
        let cdf = snapshot.cdf_ms(&[0.0, 0.5, 0.99, 1.0]);
        assert_eq!(cdf.len(), 4);
        assert!(cdf.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
        assert!((0.5..=0.6).contains(&cdf[1].0), "{cdf:?}");
        assert!(
            (cdf[3].0 - 1.0).abs() < 1e-12,
            "the last point is the maximum"
        );
    }
}
