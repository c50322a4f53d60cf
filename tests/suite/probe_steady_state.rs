//! The probe measures steady state: on the timing model (virtual time, no sleeping), a point
//! measured until its windows agree reports the device's sustained rate, where a short fixed
//! point on a device whose write buffer starts empty over-states it (issue 9 item 8).

use std::time::Duration;

use flashbuf::device::emulated::Model;
use flashbuf::device::emulated::profile::resolve;
use flashbuf::device::emulated::sim::{ClientKind, closed_loop};
use flashbuf::device::probe::{
    Convergence, Precondition, ProbeConfig, ProbeOp, SteadyConfig, probe_model,
};

const PAGES: u64 = 16_384;
const PAGE: usize = 16 * 1024;

/// ssd-a with its write buffer as the only transient absorber: no SLC cache and no garbage
/// collection deferred to idle time (both also absorb a fresh device's first writes, for longer
/// than a probe point; `tests/suite/emulated_sync_price.rs` covers them). The steady detector is
/// about the buffer filling.
fn ssd_a() -> flashbuf::device::emulated::profile::Profile {
    let legacy = [("slc", "0"), ("gc_defer_blocks", "0")]
        .map(|(key, value)| (key.to_string(), value.to_string()));
    resolve("ssd-a", &legacy).unwrap()
}

/// The sustained random-write rate of ssd-a at 32 writers: a long closed loop (16 region
/// passes) on a preconditioned model, whose first tenth is discarded.
fn sustained_write_iops() -> f64 {
    let profile = ssd_a();
    let mut model = Model::new(&profile, PAGE, PAGES).unwrap();
    closed_loop(
        &mut model,
        &[ClientKind::Writer; 32],
        PAGES,
        16 * PAGES,
        0,
        5,
    )
    .write_iops()
}

fn write_at_32(precondition: Precondition, steady: SteadyConfig) -> (f64, Convergence) {
    let config = ProbeConfig {
        concurrency: vec![32],
        precondition,
        steady,
        fsync: None,
        ..ProbeConfig::default()
    };
    let profile = ssd_a();
    let report = probe_model(&profile, PAGE, PAGES, &config, &mut |_| {}).unwrap();
    let point = report.point(ProbeOp::Write, 32).unwrap();
    (point.iops, point.convergence)
}

#[test]
fn steady_points_find_the_sustained_rate_and_short_points_overstate_it() {
    let sustained = sustained_write_iops();
    // Default method: random preconditioning in device time, then windows until steady.
    let (steady, convergence) = write_at_32(Precondition::default(), SteadyConfig::default());
    assert_eq!(convergence, Convergence::Steady);
    let error = (steady - sustained).abs() / sustained;
    eprintln!("sustained {sustained:.0} IOPS, steady point {steady:.0} IOPS ({error:.3})");
    assert!(error < 0.05, "steady {steady} vs sustained {sustained}");
    // No preconditioning and a short fixed point: the empty write buffer absorbs the writes.
    let (short, convergence) = write_at_32(
        Precondition::None,
        SteadyConfig::fixed(Duration::from_millis(20)),
    );
    assert_eq!(convergence, Convergence::Fixed);
    eprintln!("short point on an idle device: {short:.0} IOPS");
    assert!(
        short > 1.2 * sustained,
        "short {short} vs sustained {sustained}"
    );
    // Without preconditioning the steady detector still waits out the buffer filling.
    let (waited, convergence) = write_at_32(Precondition::None, SteadyConfig::default());
    assert_eq!(convergence, Convergence::Steady);
    assert!(
        (waited - sustained).abs() / sustained < 0.08,
        "waited {waited} vs sustained {sustained}"
    );
}
