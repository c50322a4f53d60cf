//! NURand(A, x, y) stays in range and is non-uniform, and the run-time C constants obey
//! clause 2.1.6: C_LAST's run C differs from the load C by 65..=119 but neither 96 nor 112.

use flashbuf::workload::tpcc::random::{
    A_C_ID, A_C_LAST, A_OL_I_ID, NurandConstants, c_last_delta_ok, nurand,
};
use rand::SeedableRng;
use rand::rngs::SmallRng;

#[test]
fn nurand_stays_in_range_and_is_skewed() {
    let mut rng = SmallRng::seed_from_u64(1);
    for (a, x, y) in [
        (A_C_LAST, 0, 999),
        (A_C_ID, 1, 3000),
        (A_OL_I_ID, 1, 100_000),
    ] {
        let c = a / 3;
        let span = (y - x + 1) as usize;
        let mut counts = vec![0u32; span];
        let draws = span * 20;
        for _ in 0..draws {
            let v = nurand(&mut rng, a, c, x, y);
            assert!((x..=y).contains(&v), "NURand({a}, {x}, {y}) gave {v}");
            counts[(v - x) as usize] += 1;
        }
        // Uniform would put 20 draws on each value; NURand's OR makes some far likelier.
        let most = *counts.iter().max().unwrap();
        assert!(most > 60, "NURand({a}) max count {most} looks uniform");
    }
}

#[test]
fn the_c_delta_rule() {
    assert!(c_last_delta_ok(0, 65) && c_last_delta_ok(0, 119) && c_last_delta_ok(200, 81));
    assert!(!c_last_delta_ok(0, 64) && !c_last_delta_ok(0, 120));
    assert!(!c_last_delta_ok(0, 96) && !c_last_delta_ok(150, 38));
    assert!(!c_last_delta_ok(10, 122) && !c_last_delta_ok(200, 200));
}

#[test]
fn run_constants_obey_the_rule_for_every_load_constant() {
    let mut rng = SmallRng::seed_from_u64(2);
    for c_load in 0..=A_C_LAST {
        for _ in 0..20 {
            let run = NurandConstants::for_run(&mut rng, c_load).unwrap();
            assert!(
                c_last_delta_ok(c_load, run.c_last),
                "C_LOAD {c_load}, C_RUN {}",
                run.c_last
            );
            assert!(run.c_id <= A_C_ID && run.ol_i_id <= A_OL_I_ID);
        }
    }
    assert!(NurandConstants::for_run(&mut rng, 256).is_err());
}

#[test]
fn load_constants_cover_their_range() {
    let mut rng = SmallRng::seed_from_u64(3);
    let mut seen = [false; 256];
    for _ in 0..10_000 {
        seen[NurandConstants::load_c_last(&mut rng) as usize] = true;
    }
    assert!(seen.iter().all(|&s| s));
}
