//! LinkBench's distributions (com.facebook.LinkBench.distributions), as this port uses them.
//!
//! - [`Zipf`]: LinkBench's `ZipfDistribution` quantile (Gray et al.'s method) over `n`
//!   ids with a shape below 1; its zeta is summed exactly over the first 2^22 terms and by
//!   the integral beyond (LinkBench uses an empirical approximation for large n).
//! - [`Permutation`]: a keyed bijection on `0..n` (a 4-round Feistel network with cycle
//!   walking), standing in for LinkBench's `InvertibleShuffler`: it scatters the popular and
//!   the high-degree ids over the id space. Different keys give unrelated permutations.
//! - [`out_degree`]: the number of links a node is loaded with, a power law: a share
//!   `zero_share` of the nodes has none, the others a discretised Pareto with tail index
//!   `tail_index` (LinkBench reads the empirical Facebook distribution from its data file;
//!   see the module docs of [`super`]).
//! - [`log_normal`], [`geometric`]: payload sizes (median, sigma 1) and the multiget size
//!   (p = 0.382 in [1, 128)), as LinkBench's `LogNormalDistribution` and
//!   `GeometricDistribution` draw them.
//!
//! Pure functions and immutable values; no locks.

use rand::Rng;

use crate::workload::record::splitmix64;
use crate::workload::ycsb::generators::zeta_approx;

/// LinkBench's Zipf distribution over `[0, n)` with `shape` in (0, 1).
#[derive(Debug, Clone, Copy)]
pub struct Zipf {
    n: u64,
    shape: f64,
    zetan: f64,
    eta: f64,
    alpha: f64,
    half_pow_shape: f64,
}

impl Zipf {
    /// Over `n >= 2` ids.
    #[must_use]
    pub fn new(n: u64, shape: f64) -> Zipf {
        assert!(n >= 2, "a Zipf over {n} ids");
        assert!(
            shape > 0.0 && shape < 1.0,
            "Zipf shape {shape} outside (0, 1)"
        );
        let zetan = zeta_approx(n, shape);
        let zeta_2 = 1.0 + 0.5f64.powf(shape);
        Zipf {
            n,
            shape,
            zetan,
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - shape)) / (1.0 - zeta_2 / zetan),
            alpha: 1.0 / (1.0 - shape),
            half_pow_shape: 0.5f64.powf(shape),
        }
    }

    /// The shape parameter.
    #[must_use]
    pub fn shape(&self) -> f64 {
        self.shape
    }

    /// The rank (0 most likely) at cumulative probability `p` in [0, 1).
    #[must_use]
    pub fn quantile(&self, p: f64) -> u64 {
        let uz = p * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + self.half_pow_shape {
            return 1;
        }
        let offset = (self.n as f64 * (self.eta * p - self.eta + 1.0).powf(self.alpha)) as u64;
        offset.min(self.n - 1)
    }

    /// A random rank.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        self.quantile(rng.r#gen())
    }
}

/// A keyed bijection on `0..n` (see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// The permutation of `0..n` (n >= 1) named by `key`.
    #[must_use]
    pub fn new(n: u64, key: u64) -> Permutation {
        assert!(n >= 1, "a permutation of nothing");
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let keys = std::array::from_fn(|i| splitmix64(key ^ (i as u64 + 1)));
        Permutation { n, half_bits, keys }
    }

    fn mask(&self) -> u64 {
        (1u64 << self.half_bits) - 1
    }

    fn round(&self, half: u64, key: u64) -> u64 {
        splitmix64(half ^ key) & self.mask()
    }

    fn encrypt(&self, x: u64) -> u64 {
        let (mut left, mut right) = (x >> self.half_bits, x & self.mask());
        for key in self.keys {
            (left, right) = (right, left ^ self.round(right, key));
        }
        (left << self.half_bits) | right
    }

    fn decrypt(&self, y: u64) -> u64 {
        let (mut left, mut right) = (y >> self.half_bits, y & self.mask());
        for key in self.keys.iter().rev() {
            (left, right) = (right ^ self.round(left, *key), left);
        }
        (left << self.half_bits) | right
    }

    /// Where `i < n` goes.
    #[must_use]
    pub fn map(&self, i: u64) -> u64 {
        assert!(i < self.n, "{i} outside the permutation of {}", self.n);
        self.walk(i, Self::encrypt)
    }

    /// The `i` with `map(i) == image`.
    #[must_use]
    pub fn unmap(&self, image: u64) -> u64 {
        assert!(
            image < self.n,
            "{image} outside the permutation of {}",
            self.n
        );
        self.walk(image, Self::decrypt)
    }

    /// Cycle walking: apply `step` until the value falls in `0..n`. Bound: the Feistel
    /// domain (< 4n) is one permutation, so the walk returns within its size; expected
    /// fewer than 4 steps.
    fn walk(&self, start: u64, step: fn(&Self, u64) -> u64) -> u64 {
        let domain = 1u64 << (2 * self.half_bits);
        let mut value = step(self, start);
        let mut steps = 1u64;
        while value >= self.n {
            value = step(self, value);
            steps += 1;
            assert!(steps <= domain, "cycle walk longer than the domain");
        }
        value
    }
}

/// The out-degree of the node at degree rank `rank` (0 = most links) among `n` nodes: 0 for
/// the last `zero_share` of the ranks, else floor(s^(-1 / tail_index)) with s the rank's
/// share among the linked nodes, capped at `max`.
#[must_use]
pub fn out_degree(rank: u64, n: u64, zero_share: f64, tail_index: f64, max: u64) -> u64 {
    assert!(rank < n, "rank {rank} of {n}");
    let s = (rank as f64 + 0.5) / n as f64;
    let linked = 1.0 - zero_share;
    if s >= linked {
        return 0;
    }
    let degree = (s / linked).powf(-1.0 / tail_index).floor();
    (degree as u64).clamp(1, max)
}

/// A standard normal draw (Box-Muller).
fn gaussian<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1: f64 = rng.r#gen::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.r#gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// LinkBench's `LogNormalDistribution.choose`: round(exp(ln(median) + sigma * N(0,1))),
/// clamped into `[0, max)`.
pub fn log_normal<R: Rng + ?Sized>(rng: &mut R, median: f64, sigma: f64, max: usize) -> usize {
    assert!(max >= 1, "empty size range");
    let value = (median.ln() + sigma * gaussian(rng)).exp().round();
    (value.max(0.0) as usize).min(max - 1)
}

/// LinkBench's `GeometricDistribution.quantile` over `[min, max)` with success probability
/// `p`: min + ceil(ln(1 - r) / ln(1 - p)), truncated to `max - 1`.
pub fn geometric<R: Rng + ?Sized>(rng: &mut R, p: f64, min: u64, max: u64) -> u64 {
    assert!(
        min < max && p > 0.0 && p < 1.0,
        "geometric over [{min}, {max}) with p {p}"
    );
    let r: f64 = rng.r#gen();
    if r == 0.0 {
        return min;
    }
    let steps = ((1.0 - r).ln() / (1.0 - p).ln()).ceil() as u64;
    (min + steps).min(max - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    #[test]
    fn permutations_are_bijections_and_invert() {
        for n in [1u64, 2, 3, 10, 1000, 4097] {
            let p = Permutation::new(n, 7);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let image = p.map(i);
                assert!(!seen[image as usize]);
                seen[image as usize] = true;
                assert_eq!(p.unmap(image), i);
            }
        }
        let a = Permutation::new(1000, 1);
        let b = Permutation::new(1000, 2);
        assert!((0..1000).filter(|&i| a.map(i) == b.map(i)).count() < 20);
    }

    #[test]
    fn zipf_favours_low_ranks() {
        let zipf = Zipf::new(10_000, 0.8);
        let mut rng = SmallRng::seed_from_u64(1);
        let draws = 100_000;
        let low = (0..draws).filter(|_| zipf.sample(&mut rng) < 100).count();
        // P(rank < 100) = H(100, 0.8) / H(10000, 0.8), about 0.33.
        let expected = zeta_approx(100, 0.8) / zeta_approx(10_000, 0.8);
        let share = low as f64 / f64::from(draws);
        assert!((share - expected).abs() < 0.03, "{share} vs {expected}");
    }

    #[test]
    fn degrees_follow_a_power_law() {
        let n = 100_000;
        let degrees: Vec<u64> = (0..n)
            .map(|r| out_degree(r, n, 0.45, 1.15, 1_000_000))
            .collect();
        let zero = degrees.iter().filter(|&&d| d == 0).count() as f64 / n as f64;
        assert!((zero - 0.45).abs() < 0.01);
        assert!(degrees.windows(2).all(|w| w[0] >= w[1]), "rank order");
        let mean = degrees.iter().sum::<u64>() as f64 / n as f64;
        assert!((2.0..6.0).contains(&mean), "mean out-degree {mean}");
    }

    #[test]
    fn sizes_stay_in_range() {
        let mut rng = SmallRng::seed_from_u64(2);
        for _ in 0..10_000 {
            assert!(log_normal(&mut rng, 8.0, 1.0, 256) < 256);
            let g = geometric(&mut rng, 0.382, 1, 128);
            assert!((1..128).contains(&g));
        }
    }
}
