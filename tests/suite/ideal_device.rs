//! The ideal asymmetric device (`emu:ideal`, ACE Figure 10h): measured in device time, a write
//! costs `alpha` reads and `k_w` writes run at once. Two measurements: the live device's ticket
//! deadlines (device time, no sleeping), and the device probe's method on the timing model
//! (closed loops at concurrency 1..=16, PIO's alpha and k_w as ACE Table I reports them).

use flashbuf::device::emulated::profile::resolve;
use flashbuf::device::emulated::{self};
use flashbuf::device::probe::{ProbeConfig, ProbeOp, probe_model};
use flashbuf::device::{AlignedBuf, Device, DeviceTimeControl, IoRequest, OpenOptions};

fn overrides(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

#[test]
fn live_latencies_are_alpha_apart_and_k_w_writes_overlap() {
    // A huge time scale: device time stands almost still while the batch is submitted, so a
    // deadline minus the clock is the modelled latency.
    let options = OpenOptions {
        page_size: 4096,
        pages: 1024,
        create: true,
    };
    for (alpha, k_w) in [(3.0_f64, 8_usize), (1.0, 2), (8.0, 5)] {
        let device = emulated::open_emulated(
            "ideal",
            &overrides(&[
                ("alpha", &alpha.to_string()),
                ("k_w", &k_w.to_string()),
                ("time_scale", "1e7"),
            ]),
            &options,
        )
        .unwrap();
        assert_eq!(device.info().write_concurrency, Some(k_w));
        let mut buffers: Vec<AlignedBuf> = (0..=k_w).map(|_| AlignedBuf::new(4096)).collect();
        let latency = |requests: Vec<IoRequest>| -> Vec<f64> {
            let now = device.clock().now();
            // SAFETY: the buffers outlive the device; the emulator moves data at submit.
            let tickets = unsafe { device.submit(requests) };
            tickets
                .iter()
                .map(|t| (device.clock().device_time(t.deadline().unwrap()) - now) as f64)
                .collect()
        };
        let read = latency(vec![IoRequest::read(1, buffers[0].io_buffer())])[0];
        device.settle();
        let writes: Vec<IoRequest> = buffers
            .iter_mut()
            .enumerate()
            .map(|(page, buf)| IoRequest::write(page as u64, buf.io_buffer()))
            .collect();
        let ends = latency(writes);
        let write = ends[0];
        let ratio = write / read;
        assert!(
            (ratio - alpha).abs() <= 0.01 * alpha,
            "alpha {alpha}: write/read latency {ratio}"
        );
        // The first k_w writes end together; write k_w + 1 waits one whole write more.
        for end in &ends[..k_w] {
            assert!((end - write).abs() <= 0.01 * write, "{ends:?}");
        }
        let last = ends[k_w];
        assert!((last - 2.0 * write).abs() <= 0.01 * write, "{ends:?}");
    }
}

#[test]
fn the_probe_measures_alpha_and_k_w() {
    for (alpha, k_w) in [("3", 8_usize), ("8", 8), ("2", 4)] {
        // k_r = k_w: PIO's alpha is the ratio of peak bandwidths, which is the cost ratio
        // times k_r / k_w.
        let k = k_w.to_string();
        let profile = resolve(
            "ideal",
            &overrides(&[("alpha", alpha), ("k_w", &k), ("k_r", &k)]),
        )
        .unwrap();
        let config = ProbeConfig {
            concurrency: (1..=16).collect(),
            stop_at_plateau: false,
            fsync: None,
            ..ProbeConfig::default()
        };
        let report = probe_model(&profile, 4096, 16_384, &config, &mut |_| {}).unwrap();
        let alpha: f64 = alpha.parse().unwrap();
        eprintln!(
            "alpha {alpha} k_w {k_w}: measured alpha {:.3}, k_w {} ({:.2})",
            report.alpha, report.k_w, report.k_w_exact
        );
        assert!(
            (report.alpha - alpha).abs() <= 0.02 * alpha,
            "{}",
            report.alpha
        );
        // The knee: the first concurrency whose write bandwidth is the peak (within 1%).
        let at = |n: usize| report.point(ProbeOp::Write, n).unwrap().iops;
        let peak = report.peak_write_iops;
        let knee = (1..=16).find(|&n| at(n) >= 0.99 * peak).unwrap();
        assert_eq!(knee, k_w);
        // The probe's k_w is where bandwidth reaches 90% of the peak (PIO's definition),
        // interpolated: on a linear rise to a sharp knee that is 0.9 x k_w.
        let expected = flashbuf::device::probe::SATURATION_FRACTION * k_w as f64;
        assert!(
            (report.k_w_exact - expected).abs() <= 0.02 * k_w as f64,
            "{}",
            report.k_w_exact
        );
        // Write bandwidth grows linearly up to k_w, and not past it.
        assert!((at(k_w) / at(1) - k_w as f64).abs() <= 0.02 * k_w as f64);
        assert!((at(2 * k_w) / at(k_w) - 1.0).abs() <= 0.02);
        // The latency ratio at concurrency 1 is alpha too (no write buffer to hide it).
        assert!((report.alpha_latency - alpha).abs() <= 0.02 * alpha);
    }
}

#[test]
fn ideal_options_are_refused_elsewhere_and_checked() {
    let err = resolve("ssd-a", &overrides(&[("alpha", "2")])).unwrap_err();
    assert!(err.to_string().contains("emu:ideal"), "{err}");
    assert!(resolve("ideal", &overrides(&[("alpha", "0.5")])).is_err());
    assert!(resolve("ideal", &overrides(&[("k_w", "0")])).is_err());
    let err = resolve("pcie", &overrides(&[("size_gib", "100")])).unwrap_err();
    assert!(err.to_string().contains("size_gib"), "{err}");
}
