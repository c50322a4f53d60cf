//! YCSB's key generators (site.ycsb.generator), as the CoreWorkload uses them.
//!
//! - [`Zipfian`]: Gray et al.'s method ("Quickly Generating Billion-Record Synthetic
//!   Databases", SIGMOD 1994) with YCSB's incremental zeta: when the item count grows (the
//!   `latest` distribution follows inserts) zeta(n) is extended term by term instead of
//!   recomputed. As in YCSB, `eta` keeps using the item count the generator was built with.
//! - [`ScrambledZipfian`]: a Zipfian over 10^10 items (zeta precomputed by YCSB for the
//!   constant 0.99) whose value is FNV-hashed and reduced modulo the key space, so popular
//!   keys are scattered instead of clustered at the low key numbers.
//! - [`SkewedLatest`]: `last - zipfian(last)`: favours the most recently inserted keys.
//! - [`AcknowledgedCounter`]: the insert sequence. Inserters take the next number; readers
//!   only see numbers up to the highest one below which every insert has been acknowledged,
//!   so concurrent inserts never collide and reads never chase a key not yet inserted.
//! - [`fnv_hash64`]: YCSB's `Utils.fnvhash64` (FNV-1a over the 8 bytes, then `Math.abs`).
//!
//! Lock order: [`AcknowledgedCounter`]'s one mutex, held for set surgery only.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use rand::Rng;

use crate::error::{Error, Result};

/// YCSB's default Zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// Items of the Zipfian behind [`ScrambledZipfian`].
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;
/// zeta(10^10 + 1, 0.99) as YCSB precomputed it.
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;
/// Most acknowledgements that may wait for an earlier insert (YCSB's window, 2^20).
pub const ACK_WINDOW: usize = 1 << 20;
/// Exact zeta terms summed before the integral tail takes over (see [`zeta_approx`]).
const ZETA_EXACT_TERMS: u64 = 1 << 22;

const FNV_OFFSET_BASIS_64: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the value's 8 little-endian bytes, then the
/// absolute value as a Java `long` (so `i64::MIN` stays negative, as in Java).
#[must_use]
pub fn fnv_hash64(value: u64) -> i64 {
    let mut hash = FNV_OFFSET_BASIS_64;
    for octet in value.to_le_bytes() {
        hash ^= u64::from(octet);
        hash = hash.wrapping_mul(FNV_PRIME_64);
    }
    hash.cast_signed().wrapping_abs()
}

/// Sum of 1 / i^theta for i in (from, to] added to `initial` (YCSB's `zetastatic`).
#[must_use]
pub fn zeta(from: u64, to: u64, theta: f64, initial: f64) -> f64 {
    // Bound: `to - from` terms (the caller's item count).
    (from..to).fold(initial, |sum, i| sum + 1.0 / ((i + 1) as f64).powf(theta))
}

/// zeta(n, theta) summed exactly over the first 2^22 terms and by the midpoint integral
/// beyond (relative error below 1e-9 for theta in (0, 1)); for key spaces too large to sum.
#[must_use]
pub fn zeta_approx(n: u64, theta: f64) -> f64 {
    let exact = n.min(ZETA_EXACT_TERMS);
    let head = zeta(0, exact, theta, 0.0);
    if n <= exact {
        return head;
    }
    let integral = |x: f64| x.powf(1.0 - theta) / (1.0 - theta);
    head + integral(n as f64 + 0.5) - integral(exact as f64 + 0.5)
}

/// YCSB's `ZipfianGenerator` over `[min, max]` (see the module docs).
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: u64,
    base: u64,
    theta: f64,
    zeta_2_theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: u64,
}

impl Zipfian {
    /// Over `[min, max]` with constant `theta` in (0, 1); computes zeta (O(max - min)).
    #[must_use]
    pub fn new(min: u64, max: u64, theta: f64) -> Zipfian {
        let zetan = zeta(0, max - min + 1, theta, 0.0);
        Zipfian::with_zetan(min, max, theta, zetan)
    }

    /// Over `[min, max]` with a precomputed zeta(max - min + 1, theta).
    #[must_use]
    pub fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64) -> Zipfian {
        assert!(max >= min, "empty Zipfian range [{min}, {max}]");
        assert!(
            theta > 0.0 && theta < 1.0,
            "Zipfian constant {theta} outside (0, 1)"
        );
        let items = max - min + 1;
        let zeta_2_theta = zeta(0, 2, theta, 0.0);
        Zipfian {
            items,
            base: min,
            theta,
            zeta_2_theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: eta(items, theta, zeta_2_theta, zetan),
            count_for_zeta: items,
        }
    }

    /// Number of items the generator was built for.
    #[must_use]
    pub fn items(&self) -> u64 {
        self.items
    }

    /// zeta over the current item count.
    #[must_use]
    pub fn zetan(&self) -> f64 {
        self.zetan
    }

    /// A value in `[min, min + item_count)`, rank 0 most likely; extends zeta when
    /// `item_count` grew (never shrinks it, as YCSB by default).
    pub fn next_long<R: Rng + ?Sized>(&mut self, rng: &mut R, item_count: u64) -> u64 {
        if item_count > self.count_for_zeta {
            self.zetan = zeta(self.count_for_zeta, item_count, self.theta, self.zetan);
            self.count_for_zeta = item_count;
            self.eta = eta(self.items, self.theta, self.zeta_2_theta, self.zetan);
        }
        let u: f64 = rng.r#gen();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        let rank = (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        self.base + rank.min(item_count.saturating_sub(1))
    }

    /// A value over the generator's own item count.
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        self.next_long(rng, self.items)
    }
}

fn eta(items: u64, theta: f64, zeta_2_theta: f64, zetan: f64) -> f64 {
    (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta_2_theta / zetan)
}

/// YCSB's `ScrambledZipfianGenerator` over `[min, max]`.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    min: u64,
    item_count: u64,
    zipfian: Zipfian,
}

impl ScrambledZipfian {
    /// Over `[min, max]` with constant `theta` (0.99 uses YCSB's precomputed zeta; any other
    /// constant computes it with [`zeta_approx`]).
    #[must_use]
    pub fn new(min: u64, max: u64, theta: f64) -> ScrambledZipfian {
        #[allow(clippy::float_cmp)] // YCSB compares the constant exactly too
        let zetan = if theta == ZIPFIAN_CONSTANT {
            SCRAMBLED_ZETAN
        } else {
            zeta_approx(SCRAMBLED_ITEM_COUNT + 1, theta)
        };
        ScrambledZipfian {
            min,
            item_count: max - min + 1,
            zipfian: Zipfian::with_zetan(0, SCRAMBLED_ITEM_COUNT, theta, zetan),
        }
    }

    /// A value in `[min, max]`.
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> u64 {
        let value = self.zipfian.next(rng);
        self.min + fnv_hash64(value).unsigned_abs() % self.item_count
    }
}

/// YCSB's `SkewedLatestGenerator`: `last - zipfian(last)`.
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// For an insert sequence whose last acknowledged value is `last` (at least 2); `zetan`
    /// = zeta(last, theta) when precomputed (shared by all clients).
    #[must_use]
    pub fn new(last: u64, theta: f64, zetan: Option<f64>) -> SkewedLatest {
        assert!(
            last >= 2,
            "the latest distribution needs at least 3 records"
        );
        let zetan = zetan.unwrap_or_else(|| zeta(0, last, theta, 0.0));
        SkewedLatest {
            zipfian: Zipfian::with_zetan(0, last - 1, theta, zetan),
        }
    }

    /// A key number in `[1, last]`, the newest most likely.
    pub fn next<R: Rng + ?Sized>(&mut self, rng: &mut R, last: u64) -> u64 {
        last - self.zipfian.next_long(rng, last)
    }
}

/// YCSB's `AcknowledgedCounterGenerator` (see the module docs).
#[derive(Debug)]
pub struct AcknowledgedCounter {
    next: AtomicU64,
    limit: AtomicU64,
    pending: Mutex<BTreeSet<u64>>,
}

impl AcknowledgedCounter {
    /// A counter whose first value is `start` (>= 1); `last_value` starts at `start - 1`.
    #[must_use]
    pub fn new(start: u64) -> AcknowledgedCounter {
        assert!(
            start >= 1,
            "the insert sequence starts after at least one record"
        );
        AcknowledgedCounter {
            next: AtomicU64::new(start),
            limit: AtomicU64::new(start - 1),
            pending: Mutex::new(BTreeSet::new()),
        }
    }

    /// Takes the next number to insert.
    pub fn next_value(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The highest number below which every number taken was acknowledged.
    #[must_use]
    pub fn last_value(&self) -> u64 {
        self.limit.load(Ordering::Acquire)
    }

    /// Marks `value` done (inserted or failed) and advances `last_value` over the contiguous
    /// run of acknowledged numbers.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when more than [`ACK_WINDOW`] acknowledgements wait for an
    /// earlier number (an insert that never finished), as YCSB refuses too.
    pub fn acknowledge(&self, value: u64) -> Result<()> {
        let mut pending = self.pending.lock();
        if pending.len() >= ACK_WINDOW {
            return Err(Error::InvalidArgument(format!(
                "{ACK_WINDOW} insert acknowledgements wait for number {}",
                self.last_value() + 1
            )));
        }
        pending.insert(value);
        let mut limit = self.limit.load(Ordering::Acquire);
        // Bound: the set's size.
        while pending.remove(&(limit + 1)) {
            limit += 1;
        }
        self.limit.store(limit, Ordering::Release);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    #[test]
    fn fnv_matches_ycsb() {
        // FNV-1a of eight zero bytes, as Java computes it.
        let mut h = FNV_OFFSET_BASIS_64;
        for _ in 0..8 {
            h = h.wrapping_mul(FNV_PRIME_64);
        }
        assert_eq!(fnv_hash64(0), h.cast_signed().wrapping_abs());
        assert!(fnv_hash64(1) >= 0);
        assert_ne!(fnv_hash64(1), fnv_hash64(2));
    }

    #[test]
    fn zeta_approximation_agrees_with_the_sum() {
        let n = ZETA_EXACT_TERMS * 3;
        let exact = zeta(0, n, 0.99, 0.0);
        let approx = zeta_approx(n, 0.99);
        assert!(
            ((exact - approx) / exact).abs() < 1e-9,
            "{exact} vs {approx}"
        );
        // YCSB's constant for 10^10 + 1 items.
        let ycsb = zeta_approx(SCRAMBLED_ITEM_COUNT + 1, 0.99);
        assert!((ycsb - SCRAMBLED_ZETAN).abs() < 1e-6, "{ycsb}");
    }

    #[test]
    fn incremental_zeta_equals_a_fresh_one() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut grown = Zipfian::new(0, 999, 0.99);
        grown.next_long(&mut rng, 5000);
        let fresh = Zipfian::new(0, 4999, 0.99);
        assert!((grown.zetan() - fresh.zetan()).abs() < 1e-9);
    }

    #[test]
    fn acknowledgements_advance_only_over_contiguous_runs() {
        let counter = AcknowledgedCounter::new(10);
        let a = counter.next_value();
        let b = counter.next_value();
        assert_eq!((a, b, counter.last_value()), (10, 11, 9));
        counter.acknowledge(b).unwrap();
        assert_eq!(counter.last_value(), 9);
        counter.acknowledge(a).unwrap();
        assert_eq!(counter.last_value(), 11);
    }
}
