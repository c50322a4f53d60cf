//! YCSB's key distributions, checked statistically with fixed seeds: zipfian (0.99) puts
//! the predicted share on the lowest ranks, scrambled zipfian keeps that skew but spreads
//! the hot keys over the key space, latest favours the newest keys and follows inserts, and
//! the acknowledged insert counter hands out each number once under concurrency.

use flashbuf::workload::ycsb::generators::{ZIPFIAN_CONSTANT, zeta};
use flashbuf::workload::ycsb::{AcknowledgedCounter, ScrambledZipfian, SkewedLatest, Zipfian};
use rand::SeedableRng;
use rand::rngs::SmallRng;

const DRAWS: usize = 200_000;

fn histogram(items: usize, mut draw: impl FnMut() -> u64) -> Vec<u32> {
    let mut counts = vec![0u32; items];
    for _ in 0..DRAWS {
        counts[draw() as usize] += 1;
    }
    counts
}

fn share(count: u32) -> f64 {
    f64::from(count) / DRAWS as f64
}

#[test]
fn zipfian_matches_its_probabilities() {
    let mut rng = SmallRng::seed_from_u64(1);
    let mut zipfian = Zipfian::new(0, 999, ZIPFIAN_CONSTANT);
    let counts = histogram(1000, || zipfian.next(&mut rng));
    let zetan = zeta(0, 1000, ZIPFIAN_CONSTANT, 0.0);
    // P(rank 0) = 1 / zeta(n); P(rank 1) = 2^-0.99 / zeta(n).
    let p0 = 1.0 / zetan;
    let p1 = 0.5f64.powf(ZIPFIAN_CONSTANT) / zetan;
    assert!(
        (share(counts[0]) - p0).abs() < 0.01,
        "{} vs {p0}",
        share(counts[0])
    );
    assert!(
        (share(counts[1]) - p1).abs() < 0.01,
        "{} vs {p1}",
        share(counts[1])
    );
    // The lowest 10% of ranks get about zeta(100) / zeta(1000) of the draws.
    let top: u32 = counts[..100].iter().sum();
    let expected = zeta(0, 100, ZIPFIAN_CONSTANT, 0.0) / zetan;
    assert!(
        (share(top) - expected).abs() < 0.02,
        "{} vs {expected}",
        share(top)
    );
    assert!(counts[0] > counts[10] && counts[10] > counts[500]);
}

#[test]
fn scrambled_zipfian_is_skewed_but_spread() {
    let mut rng = SmallRng::seed_from_u64(2);
    let mut scrambled = ScrambledZipfian::new(0, 9999, ZIPFIAN_CONSTANT);
    let counts = histogram(10_000, || scrambled.next(&mut rng));
    // Skewed: the hottest key gets about 1 / zeta(10^10) = 3.8% (uniform: 0.01%).
    let hottest = *counts.iter().max().unwrap();
    assert!(share(hottest) > 0.03, "{}", share(hottest));
    // Spread: every tenth of the key space gets a fair part, unlike plain zipfian.
    for decile in counts.chunks(1000) {
        let part = share(decile.iter().sum());
        assert!((0.04..0.25).contains(&part), "decile share {part}");
    }
    let mut ranked: Vec<usize> = (0..10_000).collect();
    ranked.sort_by_key(|&k| std::cmp::Reverse(counts[k]));
    let hot_in_low_keys = ranked[..20].iter().filter(|&&k| k < 1000).count();
    assert!(
        hot_in_low_keys < 10,
        "hot keys cluster at low numbers: {:?}",
        &ranked[..20]
    );
}

#[test]
fn latest_favours_recent_keys_and_follows_inserts() {
    let mut rng = SmallRng::seed_from_u64(3);
    let mut latest = SkewedLatest::new(9_999, ZIPFIAN_CONSTANT, None);
    let counts = histogram(10_000, || latest.next(&mut rng, 9_999));
    let newest_tenth: u32 = counts[9_000..].iter().sum();
    assert!(share(newest_tenth) > 0.6, "{}", share(newest_tenth));
    let hottest = (0..10_000).max_by_key(|&k| counts[k]).unwrap();
    assert_eq!(hottest, 9_999, "the newest key is the most popular");
    // After 10,000 more inserts the popular keys move with them.
    let counts = histogram(20_000, || latest.next(&mut rng, 19_999));
    let old_half: u32 = counts[..10_000].iter().sum();
    assert!(share(old_half) < 0.15, "{}", share(old_half));
}

#[test]
fn concurrent_inserts_never_collide() {
    let counter = AcknowledgedCounter::new(1000);
    let taken = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                let mut mine = Vec::new();
                for _ in 0..1000 {
                    let n = counter.next_value();
                    assert!(
                        counter.last_value() < n,
                        "readers never see an unacknowledged key"
                    );
                    mine.push(n);
                    counter.acknowledge(n).unwrap();
                }
                taken.lock().unwrap().extend(mine);
            });
        }
    });
    let mut taken = taken.into_inner().unwrap();
    taken.sort_unstable();
    assert_eq!(taken, (1000..9000).collect::<Vec<u64>>());
    assert_eq!(counter.last_value(), 8999);
}
