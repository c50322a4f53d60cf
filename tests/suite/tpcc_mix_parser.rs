//! The TPC-C mix: `--mix` parsing with validation, and the read/write-ratio presets of the
//! LRU-C paper's Figure 8 with the documented rule for other ratios.

use flashbuf::workload::tpcc::{TpccMix, TxnType};
use rand::SeedableRng;
use rand::rngs::SmallRng;

fn shares(mix: &TpccMix) -> [f64; 5] {
    TxnType::ALL.map(|t| mix.percent(t))
}

#[test]
fn the_standard_mix_parses_and_prints() {
    let standard = TpccMix::standard();
    assert_eq!(shares(&standard), [45.0, 43.0, 4.0, 4.0, 4.0]);
    let text = "neworder=45,payment=43,orderstatus=4,delivery=4,stocklevel=4";
    assert_eq!(TpccMix::parse(text).unwrap(), standard);
    assert_eq!(standard.to_string(), text);
    let aliases = "NO=45, p=43, order-status=4, d=4%, stock_level=4";
    assert_eq!(TpccMix::parse(aliases).unwrap(), standard);
}

#[test]
fn left_out_types_get_zero_and_decimals_are_kept() {
    let mix = TpccMix::parse("payment=50.5,stocklevel=49.5").unwrap();
    assert_eq!(shares(&mix), [0.0, 50.5, 0.0, 0.0, 49.5]);
}

#[test]
fn bad_mixes_are_config_errors_that_say_why() {
    for (text, why) in [
        ("neworder=45,payment=43", "sum to 88"),
        ("neworder=45,bogus=55", "unknown transaction `bogus`"),
        ("neworder=50,no=50", "given twice"),
        ("neworder=abc,payment=100", "not a number"),
        ("neworder=-5,payment=105", ">= 0"),
        ("neworder", "not NAME=PERCENT"),
        ("", "no transaction given"),
    ] {
        let err = TpccMix::parse(text).unwrap_err().to_string();
        assert!(err.contains("configuration error"), "{err}");
        assert!(err.contains(why), "`{text}`: {err}");
    }
}

#[test]
fn the_paper_presets() {
    let presets = TpccMix::rw_presets();
    let names: Vec<&str> = presets.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["1:1", "2:1", "3:1", "4:1"]);
    // 2:1 is the standard mix; 4:1 is the paper's: Stock-Level 29%, New-Order and Payment 30%.
    assert_eq!(presets[1].1, TpccMix::standard());
    let four = shares(&presets[3].1);
    assert_eq!(four, [30.0, 30.0, 7.0, 4.0, 29.0]);
    // 3:1 lies halfway between; 1:1 gives the read-only share to Delivery.
    assert_eq!(shares(&presets[2].1), [37.5, 36.5, 5.5, 4.0, 16.5]);
    assert_eq!(shares(&presets[0].1), [45.0, 43.0, 0.0, 12.0, 0.0]);
    assert_eq!(TpccMix::parse_rw_ratio("4:1").unwrap(), presets[3].1);
    assert_eq!(TpccMix::parse_rw_ratio("8:2").unwrap(), presets[3].1);
}

#[test]
fn the_rule_moves_monotonically_with_the_ratio() {
    let mut previous: Option<[f64; 5]> = None;
    for tenth in 10..=60 {
        let mix = TpccMix::for_rw_ratio(f64::from(tenth) / 10.0).unwrap();
        let now = shares(&mix);
        assert!((now.iter().sum::<f64>() - 100.0).abs() < 1e-9);
        if let Some(before) = previous {
            let read_only = |s: [f64; 5]| s[2] + s[4];
            assert!(read_only(now) >= read_only(before), "read-only share grows");
        }
        previous = Some(now);
    }
    for bad in ["0.5:1", "7:1", "1:0", "4", "a:b", "-4:-1"] {
        assert!(TpccMix::parse_rw_ratio(bad).is_err(), "{bad}");
    }
}

#[test]
fn draws_follow_the_shares() {
    let mix = TpccMix::standard();
    let mut rng = SmallRng::seed_from_u64(11);
    let mut counts = [0u32; 5];
    let draws = 100_000;
    for _ in 0..draws {
        counts[mix.draw(&mut rng) as usize] += 1;
    }
    for (count, expected) in counts.iter().zip(shares(&mix)) {
        let share = f64::from(*count) * 100.0 / f64::from(draws);
        assert!((share - expected).abs() < 0.5, "{share} vs {expected}");
    }
}
