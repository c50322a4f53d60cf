//! How long one scheme of a bench takes in real time, estimated before anything runs: what the
//! banner says and what the progress line's ETA starts from (it then learns from the schemes
//! that finished).
//!
//! A scheme's real time is its phases' (see [`super::progress::PhaseTimes`]):
//! - **set-up**: creating the devices and writing the image onto the data device: a memory copy
//!   for `mem` and emulated devices, a file write for `file:`; modelled at [`SET_UP_BYTES_PER_S`]
//!   (none when RAM devices map an image file, `docs/devices.md`, "Images larger than RAM");
//! - **warm-up** and **measure**: their device time times the time scale (an automatic warm-up
//!   between [`AUTO_WARMUP_MIN`] and its cap);
//! - **check** (record workloads, unless `--no-check`): the consistency check and the tree check
//!   read the whole database through the pool, one page at a time, after the run. Modelled as
//!   [`CHECK_CPU_S_PER_PAGE`] of CPU per page plus, on a real device, [`CHECK_READS_PER_PAGE`]
//!   reads per loaded page at [`FILE_READ_S`] each; an emulated device serves the check untimed
//!   (nothing after the measured phase is measured: `DeviceTimeControl::set_untimed`), and
//!   `mem` takes no time;
//! - **write-back** at shutdown: short next to the others (under a second in the README's
//!   runs), not modelled.
//!
//! The constants were fitted to runs on the 2-core development host (see their docs); a busy
//! host takes longer. The summary line after each scheme gives its real phases.

use std::time::Duration;

use super::progress::format_seconds;
use super::{BenchConfig, WarmUp};
use crate::device::DeviceSpec;
use crate::device::emulated::sim::{ClientKind, closed_loop};
use crate::device::emulated::{Model, profile};

/// The shortest an automatic warm-up is expected to be, device time (it needs a few steady
/// windows).
pub const AUTO_WARMUP_MIN: Duration = Duration::from_secs(2);
/// How fast the set-up writes the image, bytes per real second (TPC-C images onto `emu:ssd-a`:
/// 85 MB in 0.5 s, 391 MB in 1.4-3.7 s).
pub const SET_UP_BYTES_PER_S: f64 = 150e6;
/// Device reads per loaded page of the check (the TPC-C conditions scan the order tables, the
/// tree check every page, and a 10% buffer holds few of them; a scheme that leaves many dirty
/// pages also writes during the check). Fitted, when the emulated devices still timed the
/// check, to TPC-C on `emu:ssd-a` at time scale 16 with a
/// 10% buffer, on a 2-core host at a load average of 13-19: 22-56 s for 5,217 pages (1
/// warehouse), 104-222 s for 23,886 (5 warehouses; lru-c 104 s, vanilla 152 s, war 222 s), 867 s
/// for 93,922 (20 warehouses, vanilla).
pub const CHECK_READS_PER_PAGE: f64 = 4.5;
/// CPU time of the check per loaded page, real seconds (TPC-C, 1 warehouse, on `mem`: 3.3 s for
/// 5,217 pages).
pub const CHECK_CPU_S_PER_PAGE: f64 = 0.000_6;
/// Queue-depth-1 read latency assumed for a `file:` device (a flash SSD), seconds.
pub const FILE_READ_S: f64 = 100e-6;

/// One scheme's expected real time by phase, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchemeEstimate {
    /// Writing the image onto the fresh data device.
    pub set_up_s: f64,
    /// The warm-up, shortest expected.
    pub warm_up_min_s: f64,
    /// The warm-up, longest (its fixed length or its cap).
    pub warm_up_max_s: f64,
    /// The measured phase, shortest expected.
    pub measure_s: f64,
    /// The measured phase, longest (its fixed length, or the cap of `--duration auto`).
    pub measure_max_s: f64,
    /// The consistency check (0 without one).
    pub check_s: f64,
    /// Whether the set-up copies a loaded record image (else it loads a synthetic database).
    pub record: bool,
}

impl SchemeEstimate {
    /// The estimate for `config` (its device string carries the time scale).
    #[must_use]
    pub fn for_config(config: &BenchConfig) -> SchemeEstimate {
        let scale = super::progress::spec_time_scale(&config.device);
        let page_size = config.workload.page_size;
        let pages = config.workload.db_pages;
        let checked = config.record.is_some() && config.check;
        let check_s = if checked {
            // An emulated device serves the check untimed (`DeviceTimeControl::set_untimed`):
            // only a real device's reads take time.
            let read_s = match config.device {
                DeviceSpec::Emulated { .. } => 0.0,
                _ => read_latency_s(&config.device, page_size, pages),
            };
            pages as f64 * (CHECK_READS_PER_PAGE * read_s * scale + CHECK_CPU_S_PER_PAGE)
        } else {
            0.0
        };
        let (warm_min, warm_max) = match config.warmup {
            WarmUp::For(d) => (d, d),
            WarmUp::UntilSteady { max } => (AUTO_WARMUP_MIN.min(max), max),
        };
        // An image file lies under RAM devices' stores: no copy to speak of.
        let mapped = config
            .record
            .as_ref()
            .is_some_and(|driver| driver.image().is_file())
            && matches!(
                config.device,
                DeviceSpec::Memory | DeviceSpec::Emulated { .. }
            );
        let set_up_s = if mapped {
            0.0
        } else {
            pages as f64 * page_size as f64 / SET_UP_BYTES_PER_S
        };
        SchemeEstimate {
            set_up_s,
            warm_up_min_s: warm_min.as_secs_f64() * scale,
            warm_up_max_s: warm_max.as_secs_f64() * scale,
            measure_s: config.duration.as_secs_f64() * scale,
            measure_max_s: config.measure_max().as_secs_f64() * scale,
            check_s,
            record: config.record.is_some(),
        }
    }

    /// The shortest expected real time, seconds.
    #[must_use]
    pub fn low_s(&self) -> f64 {
        self.set_up_s + self.warm_up_min_s + self.measure_s + self.check_s
    }

    /// The longest expected real time, seconds (what the ETA starts from: it errs long).
    #[must_use]
    pub fn high_s(&self) -> f64 {
        self.set_up_s + self.warm_up_max_s + self.measure_max_s + self.check_s
    }

    /// `about 4.1 min of real time (copy 1.6 s, warm-up 32 s, measure 48 s, check about
    /// 2.6 min)`: the total and the phases of at least half a second.
    #[must_use]
    pub fn describe(&self) -> String {
        let warm_up = if self.warm_up_max_s < 0.5 {
            None
        } else if same(self.warm_up_min_s, self.warm_up_max_s) {
            Some(format!("warm-up {}", approx(self.warm_up_max_s)))
        } else {
            Some(format!(
                "warm-up {} to {}",
                approx(self.warm_up_min_s),
                approx(self.warm_up_max_s)
            ))
        };
        let set_up = if self.record { "copy" } else { "load" };
        let phases: Vec<String> = [
            (self.set_up_s >= 0.5).then(|| format!("{set_up} {}", approx(self.set_up_s))),
            warm_up,
            (self.measure_max_s >= 0.5).then(|| {
                if same(self.measure_s, self.measure_max_s) {
                    format!("measure {}", approx(self.measure_max_s))
                } else {
                    format!(
                        "measure {} to {} (until steady)",
                        approx(self.measure_s),
                        approx(self.measure_max_s)
                    )
                }
            }),
            (self.check_s > 0.0).then(|| format!("check {}", approx(self.check_s))),
        ]
        .into_iter()
        .flatten()
        .collect();
        let total = range(self.low_s(), self.high_s());
        if phases.is_empty() {
            format!("about {total} of real time")
        } else {
            format!("about {total} of real time ({})", phases.join(", "))
        }
    }
}

/// Two estimates that round to the same figure.
fn same(a: f64, b: f64) -> bool {
    approx(a) == approx(b)
}

/// `5-13 s`, `32 s`, `2.5-4 min`, `40 s to 4 min`: one figure when the two round alike, one
/// unit when both take it.
#[must_use]
pub fn range(low_s: f64, high_s: f64) -> String {
    let (low, high) = (approx(low_s), approx(high_s));
    if low == high {
        return high;
    }
    let unit = |text: &str| text.rsplit(' ').next().unwrap_or_default().to_string();
    if low_s < 0.05 || unit(&low) != unit(&high) {
        return format!("{low} to {high}");
    }
    let number = |value: f64, decimals: bool| {
        let text = if decimals {
            format!("{value:.1}")
        } else {
            format!("{value:.0}")
        };
        text.strip_suffix(".0")
            .map_or_else(|| text.clone(), str::to_string)
    };
    let (low_n, high_n) = match unit(&high).as_str() {
        "min" => (number(low_s / 60.0, true), number(high_s / 60.0, true)),
        "h" => (number(low_s / 3600.0, true), number(high_s / 3600.0, true)),
        _ if high_s >= 9.95 => (number(low_s, false), number(high_s, false)),
        _ => (format!("{low_s:.1}"), format!("{high_s:.1}")),
    };
    format!("{low_n}-{high_n} {}", unit(&high))
}

/// A duration for a reader: `under 0.1 s`, `0.4 s`, `48 s`, `2.5 min`, `1.2 h`.
#[must_use]
pub fn approx(seconds: f64) -> String {
    if seconds < 0.05 {
        "under 0.1 s".to_string()
    } else if seconds < 90.0 {
        format_seconds(seconds)
    } else if seconds < 5400.0 {
        format!("{:.1} min", seconds / 60.0).replace(".0 min", " min")
    } else {
        format!("{:.1} h", seconds / 3600.0).replace(".0 h", " h")
    }
}

/// A device's mean read latency at queue depth 1, device seconds: an emulated device's from
/// its timing model (the closed-loop simulator, no sleeping), [`FILE_READ_S`] for `file:`, 0
/// for `mem`.
#[must_use]
pub fn read_latency_s(spec: &DeviceSpec, page_size: usize, pages: u64) -> f64 {
    match spec {
        DeviceSpec::Memory => 0.0,
        DeviceSpec::File(_) => FILE_READ_S,
        DeviceSpec::Emulated {
            profile: name,
            options,
        } => {
            let Ok(resolved) = profile::resolve(name, options) else {
                return FILE_READ_S;
            };
            // A small model: the latency at queue depth 1 does not depend on the size.
            let pages = pages.clamp(1, 4096);
            let Ok(mut model) = Model::new(&resolved, page_size, pages) else {
                return FILE_READ_S;
            };
            let result = closed_loop(&mut model, &[ClientKind::Reader], pages, 500, 0, 7);
            result.read_latency_us() / 1e6
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_range_that_rounds_alike_is_one_figure() {
        assert_eq!(range(32.2, 32.4), "32 s");
        assert_eq!(range(0.01, 0.02), "under 0.1 s");
        assert_eq!(range(0.01, 0.4), "under 0.1 s to 0.4 s");
        assert_eq!(range(0.3, 0.4), "0.3-0.4 s");
        assert_eq!(range(5.0, 13.0), "5-13 s");
        assert_eq!(range(2.0, 4.5), "2.0-4.5 s");
        assert_eq!(range(150.0, 240.0), "2.5-4 min");
        assert_eq!(range(40.0, 240.0), "40 s to 4 min");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(approx(0.0), "under 0.1 s");
        assert_eq!(approx(0.44), "0.4 s");
        assert_eq!(approx(48.2), "48 s");
        assert_eq!(approx(150.0), "2.5 min");
        assert_eq!(approx(240.0), "4 min");
        assert_eq!(approx(7200.0), "2 h");
    }

    /// A synthetic bench of 32,768 pages of 16 KiB and 3,277 frames on `device` (also the
    /// memory estimate's tests).
    pub(crate) fn config(device: &str, warmup: WarmUp, duration: Duration) -> BenchConfig {
        use crate::workload::synthetic::{Mix, SyntheticConfig};
        BenchConfig {
            workload: SyntheticConfig::new(Mix::Ms, 32_768, 16_384),
            schemes: vec![crate::engine::Composition::parse("vanilla").unwrap()],
            device: DeviceSpec::parse(device).unwrap(),
            log: None,
            step: super::super::timeline::STEP,
            buffer_pages: 3277,
            threads: 64,
            duration,
            measure_cap: None,
            warmup,
            fill_pool: false,
            prewarm: false,
            pool_config: None,
            command_line: String::new(),
            progress: false,
            record: None,
            check: true,
            repeats: 1,
            regime_reference: crate::bench::regime::Reference::default(),
        }
    }

    #[test]
    fn a_fixed_warm_up_gives_one_figure() {
        let fixed = config(
            "emu:ssd-a,time_scale=16",
            WarmUp::For(Duration::from_secs(1)),
            Duration::from_secs(1),
        );
        let text = SchemeEstimate::for_config(&fixed).describe();
        // 512 MiB loaded at SET_UP_BYTES_PER_S, then 16 s + 16 s.
        assert_eq!(
            text,
            "about 36 s of real time (load 3.6 s, warm-up 16 s, measure 16 s)"
        );
    }

    #[test]
    fn a_tiny_run_is_not_zero_seconds() {
        let tiny = config(
            "mem",
            WarmUp::For(Duration::ZERO),
            Duration::from_millis(100),
        );
        let estimate = SchemeEstimate::for_config(&tiny);
        assert!(estimate.warm_up_max_s == 0.0);
        let text = estimate.describe();
        assert!(!text.contains("0-0") && !text.contains("warm-up"), "{text}");
        assert!(text.starts_with("about 3.7 s of real time"), "{text}");
    }

    #[test]
    fn an_automatic_warm_up_gives_a_range() {
        let auto = config(
            "mem",
            WarmUp::UntilSteady {
                max: Duration::from_secs(10),
            },
            Duration::from_secs(3),
        );
        let text = SchemeEstimate::for_config(&auto).describe();
        assert!(text.starts_with("about 9-17 s of real time"), "{text}");
        assert!(text.contains("warm-up 2.0 s to 10 s"), "{text}");
    }

    #[test]
    fn an_emulated_read_costs_its_model_latency() {
        let ssd = read_latency_s(&DeviceSpec::parse("emu:ssd-a").unwrap(), 16384, 1 << 20);
        assert!(ssd > 50e-6 && ssd < 500e-6, "{ssd}");
        let hdd = read_latency_s(&DeviceSpec::parse("emu:hdd").unwrap(), 16384, 1 << 20);
        assert!(hdd > 10.0 * ssd, "{hdd} {ssd}");
        assert!(read_latency_s(&DeviceSpec::Memory, 4096, 16).abs() < f64::EPSILON);
    }
}
