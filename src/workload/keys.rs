//! Page-choice distributions for the synthetic workloads (ACE paper, section VI, Table II).
//!
//! A [`KeyDistribution`] turns a random source into page ids in `0..pages`:
//! - `Uniform`: every page equally likely (the MU mix).
//! - `HotSet`: "locality 90/10" = `hot_ops_fraction` of the operations go to a hot set holding
//!   `hot_fraction` of the pages, uniformly inside it; the rest go uniformly to the cold pages.
//! - `Zipf`: a Zipfian rank distribution with exponent `theta` (Gray et al., "Quickly generating
//!   billion-record synthetic databases", as in YCSB).
//!
//! The hot set (and the Zipf ranks) are scattered over the database with a fixed affine
//! permutation `rank -> (a * rank + b) mod pages` with `gcd(a, pages) = 1`: a bijection that
//! needs no table (so a 10 GB database costs no memory) and does not put the hot pages on
//! consecutive ids. The permutation depends only on the page count, so every thread and every
//! scheme sees the same hot set.
//!
//! Invariants: every id returned is `< pages`; `pages >= 1`; the hot set holds at least one page
//! and at most `pages`. No locks; one [`KeyDistribution`] is shared read-only by all workers.

use rand::Rng;

use crate::error::{Error, PageId, Result};

/// How page ids are chosen.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Skew {
    /// Every page equally likely.
    Uniform,
    /// `hot_ops_fraction` of the operations on `hot_fraction` of the pages (90/10 = 0.9 / 0.1).
    HotSet {
        /// Fraction of the pages in the hot set, in (0, 1].
        hot_fraction: f64,
        /// Fraction of the operations that go to the hot set, in [0, 1].
        hot_ops_fraction: f64,
    },
    /// Zipfian ranks with exponent `theta` in (0, 1) (YCSB uses 0.99).
    Zipf {
        /// Skew exponent.
        theta: f64,
    },
}

impl Skew {
    /// Parses `uniform`, `90/10` (ops% / pages%) or `zipf:0.99`.
    ///
    /// # Errors
    /// [`Error::Config`] naming the accepted forms.
    pub fn parse(text: &str) -> Result<Skew> {
        let text = text.trim();
        let bad = |why: &str| {
            Error::Config(format!(
                "bad locality `{text}`: {why}; use `uniform`, `OPS/PAGES` percentages such as \
                 `90/10` (90% of operations on 10% of pages) or `zipf:THETA` with 0 < THETA < 1"
            ))
        };
        if text == "uniform" {
            return Ok(Skew::Uniform);
        }
        if let Some(theta) = text.strip_prefix("zipf:") {
            let theta: f64 = theta
                .trim()
                .parse()
                .map_err(|_| bad("theta is not a number"))?;
            let skew = Skew::Zipf { theta };
            return skew
                .validate()
                .map(|()| skew)
                .map_err(|_| bad("theta out of range"));
        }
        let Some((ops, pages)) = text.split_once('/') else {
            return Err(bad("unknown form"));
        };
        let ops: f64 = ops.trim().parse().map_err(|_| bad("not a number"))?;
        let pages: f64 = pages.trim().parse().map_err(|_| bad("not a number"))?;
        let skew = Skew::HotSet {
            hot_fraction: pages / 100.0,
            hot_ops_fraction: ops / 100.0,
        };
        skew.validate()
            .map(|()| skew)
            .map_err(|_| bad("percentages out of range (ops 0..=100, pages 0<..=100)"))
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Config`] when a fraction or theta is out of range.
    pub fn validate(&self) -> Result<()> {
        let ok = match *self {
            Skew::Uniform => true,
            Skew::HotSet {
                hot_fraction,
                hot_ops_fraction,
            } => {
                hot_fraction > 0.0 && hot_fraction <= 1.0 && (0.0..=1.0).contains(&hot_ops_fraction)
            }
            Skew::Zipf { theta } => theta > 0.0 && theta < 1.0,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::Config(format!("invalid skew {self:?}")))
        }
    }
}

impl std::fmt::Display for Skew {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Skew::Uniform => write!(f, "uniform"),
            Skew::HotSet {
                hot_fraction,
                hot_ops_fraction,
            } => write!(f, "{}/{}", hot_ops_fraction * 100.0, hot_fraction * 100.0),
            Skew::Zipf { theta } => write!(f, "zipf:{theta}"),
        }
    }
}

/// A fixed bijection on `0..n`: `i -> (a * i + b) mod n` with `gcd(a, n) = 1`.
#[derive(Debug, Clone, Copy)]
pub struct Scatter {
    n: u64,
    a: u64,
    a_inverse: u64,
    b: u64,
}

impl Scatter {
    /// The permutation for `n` pages (deterministic in `n`).
    #[must_use]
    pub fn new(n: u64) -> Scatter {
        assert!(n >= 1, "a permutation needs at least one element");
        // A multiplier near n * golden ratio spreads neighbours far apart; step up until it is
        // coprime with n. Bound: at most n steps (a = 1 is always coprime), in practice a few.
        let mut a = ((n as f64 * 0.618_033_988_75) as u64).max(1) % n.max(2);
        let mut steps = 0u64;
        while gcd(a.max(1), n) != 1 {
            a = (a + 1) % n;
            steps += 1;
            assert!(steps <= n, "no multiplier coprime with {n}");
        }
        let a = a.max(1) % n.max(2);
        let a = if n == 1 { 0 } else { a };
        let b = (n / 3) % n;
        let a_inverse = modular_inverse(a, n);
        Scatter { n, a, a_inverse, b }
    }

    /// The rank `i` with `map(i) == image` (`image < n`).
    #[must_use]
    pub fn unmap(&self, image: u64) -> u64 {
        debug_assert!(image < self.n);
        let shifted =
            (u128::from(image) + u128::from(self.n) - u128::from(self.b)) % u128::from(self.n);
        ((shifted * u128::from(self.a_inverse)) % u128::from(self.n)) as u64
    }

    /// The image of `i` (`i < n`).
    #[must_use]
    pub fn map(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        ((u128::from(self.a) * u128::from(i) + u128::from(self.b)) % u128::from(self.n)) as u64
    }
}

/// `x` with `a * x = 1 (mod n)`, for `gcd(a, n) = 1` (extended Euclid, O(log n) steps).
fn modular_inverse(a: u64, n: u64) -> u64 {
    if n <= 1 {
        return 0;
    }
    let (mut old_r, mut r) = (i128::from(a), i128::from(n));
    let (mut old_s, mut s) = (1i128, 0i128);
    while r != 0 {
        let quotient = old_r / r;
        (old_r, r) = (r, old_r - quotient * r);
        (old_s, s) = (s, old_s - quotient * s);
    }
    assert_eq!(old_r, 1, "multiplier not coprime with {n}");
    old_s.rem_euclid(i128::from(n)) as u64
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    // Euclid: bounded by O(log min(a, b)) iterations.
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Terms of the zeta sum computed exactly; beyond, the tail is integrated (relative error of
/// the tail below 1e-6 at this point), so building a distribution costs at most this many steps.
const ZETA_EXACT_TERMS: u64 = 1 << 22;

/// `zeta(n, theta) = sum_{i=1..n} 1 / i^theta`.
fn zeta(n: u64, theta: f64) -> f64 {
    let exact = n.min(ZETA_EXACT_TERMS);
    let head: f64 = (1..=exact).map(|i| 1.0 / (i as f64).powf(theta)).sum();
    if n <= exact {
        return head;
    }
    // Midpoint-corrected integral of x^-theta from exact + 0.5 to n + 0.5.
    let antiderivative = |x: f64| x.powf(1.0 - theta) / (1.0 - theta);
    head + antiderivative(n as f64 + 0.5) - antiderivative(exact as f64 + 0.5)
}

/// Precomputed constants of the Zipfian generator.
#[derive(Debug, Clone, Copy)]
struct ZipfState {
    zeta_n: f64,
    alpha: f64,
    eta: f64,
    half_pow_theta: f64,
}

impl ZipfState {
    fn new(n: u64, theta: f64) -> ZipfState {
        let zeta_n = zeta(n, theta);
        let zeta_2 = 1.0 + 1.0 / 2f64.powf(theta);
        let alpha = 1.0 / (1.0 - theta);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta_2 / zeta_n);
        ZipfState {
            zeta_n,
            alpha,
            eta,
            half_pow_theta: 1.0 + 0.5f64.powf(theta),
        }
    }

    fn rank(&self, n: u64, u: f64) -> u64 {
        let uz = u * self.zeta_n;
        if uz < 1.0 {
            return 0;
        }
        if uz < self.half_pow_theta {
            return 1.min(n - 1);
        }
        let rank = (n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        rank.min(n - 1)
    }
}

/// A page-id distribution over a database of `pages` pages, shared by all workers.
#[derive(Debug, Clone)]
pub struct KeyDistribution {
    pages: u64,
    skew: Skew,
    hot_pages: u64,
    scatter: Scatter,
    zipf: Option<ZipfState>,
}

impl KeyDistribution {
    /// Builds the distribution.
    ///
    /// # Errors
    /// [`Error::Config`] for zero pages or bad skew parameters.
    pub fn new(pages: u64, skew: Skew) -> Result<KeyDistribution> {
        if pages == 0 {
            return Err(Error::Config("the database needs at least one page".into()));
        }
        skew.validate()?;
        let hot_pages = match skew {
            Skew::HotSet { hot_fraction, .. } => {
                ((pages as f64 * hot_fraction).round() as u64).clamp(1, pages)
            }
            Skew::Uniform | Skew::Zipf { .. } => pages,
        };
        let zipf = match skew {
            Skew::Zipf { theta } => Some(ZipfState::new(pages, theta)),
            _ => None,
        };
        Ok(KeyDistribution {
            pages,
            skew,
            hot_pages,
            scatter: Scatter::new(pages),
            zipf,
        })
    }

    /// Number of pages.
    #[must_use]
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// The skew.
    #[must_use]
    pub fn skew(&self) -> Skew {
        self.skew
    }

    /// Number of pages in the hot set (all pages for uniform and Zipf).
    #[must_use]
    pub fn hot_pages(&self) -> u64 {
        self.hot_pages
    }

    /// Whether `page` is in the hot set (every page is, for uniform and Zipf).
    #[must_use]
    pub fn is_hot(&self, page: PageId) -> bool {
        match self.skew {
            Skew::HotSet { .. } => page < self.pages && self.scatter.unmap(page) < self.hot_pages,
            Skew::Uniform | Skew::Zipf { .. } => true,
        }
    }

    /// Draws one page id.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> PageId {
        let rank = match self.skew {
            Skew::Uniform => rng.gen_range(0..self.pages),
            Skew::HotSet {
                hot_ops_fraction, ..
            } => {
                let cold = self.pages - self.hot_pages;
                if cold == 0 || rng.gen_bool(hot_ops_fraction) {
                    rng.gen_range(0..self.hot_pages)
                } else {
                    self.hot_pages + rng.gen_range(0..cold)
                }
            }
            Skew::Zipf { .. } => match &self.zipf {
                Some(zipf) => zipf.rank(self.pages, rng.r#gen::<f64>()),
                None => rng.gen_range(0..self.pages),
            },
        };
        let page = self.scatter.map(rank);
        debug_assert!(page < self.pages);
        page
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    #[test]
    fn scatter_is_a_bijection_and_scatters() {
        for n in [1u64, 2, 3, 10, 97, 1000, 1024] {
            let scatter = Scatter::new(n);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let image = scatter.map(i) as usize;
                assert!(!seen[image], "n={n}: {i} collides");
                seen[image] = true;
                assert_eq!(scatter.unmap(image as u64), i);
            }
        }
        let scatter = Scatter::new(1000);
        let first: Vec<u64> = (0..100).map(|i| scatter.map(i)).collect();
        assert!(
            first.iter().any(|&p| p >= 500),
            "hot set not confined to low ids"
        );
    }

    #[test]
    fn parses_skews() {
        assert_eq!(Skew::parse("uniform").ok(), Some(Skew::Uniform));
        assert_eq!(
            Skew::parse("90/10").ok(),
            Some(Skew::HotSet {
                hot_fraction: 0.1,
                hot_ops_fraction: 0.9
            })
        );
        assert_eq!(
            Skew::parse("zipf:0.99").ok(),
            Some(Skew::Zipf { theta: 0.99 })
        );
        for bad in ["", "90", "90/0", "101/10", "zipf:1.5", "zipf:x", "a/b"] {
            assert!(Skew::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn zeta_tail_approximation_is_close() {
        let n = ZETA_EXACT_TERMS + 100_000;
        let exact: f64 = (1..=n).map(|i| 1.0 / (i as f64).powf(0.99)).sum();
        assert!((zeta(n, 0.99) - exact).abs() / exact < 1e-6);
    }

    #[test]
    fn zipf_favours_few_pages() {
        let dist = KeyDistribution::new(1000, Skew::Zipf { theta: 0.99 }).unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let mut counts = vec![0u32; 1000];
        for _ in 0..20_000 {
            counts[dist.sample(&mut rng) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top_10: u32 = counts[..10].iter().sum();
        assert!(
            top_10 > 20_000 / 5,
            "top 1% of pages got only {top_10} of 20000"
        );
    }
}
