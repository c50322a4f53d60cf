//! How much RAM a run holds, estimated before it starts, against what the host has available.
//!
//! A run holds its pool's frames (`--buffer` pages of `--page-size` bytes) for its whole length,
//! and a RAM-backed data device (`mem`, every `emu:` profile) keeps in RAM the database pages
//! it holds: all of them when the set-up loads a synthetic database, only the pages the run
//! writes when an image file lies under the device (`docs/devices.md`, "Images larger than
//! RAM"). A `file:` device keeps nothing. The schemes and repeats of one bench run one after
//! another, so one pool at a time.
//!
//! `cli::preflight` refuses a loaded database that does not fit twice in the available memory;
//! the banner says the estimate; when what the run holds for certain (the pool, and a loaded
//! database) exceeds the host's available memory (`MemAvailable` of `/proc/meminfo`) it also
//! warns, before any work, that the kernel may stop the run: on a shared host, runs side by side add up (six 50-warehouse TPC-C points with
//! pools of 10-60% beside about 20 emulated runs did run a 24 GiB host out of memory).

use super::BenchConfig;
use crate::device::DeviceSpec;

/// The RAM one run of a bench holds, estimated from its configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// The pool's frames.
    pub pool_bytes: u64,
    /// The most the data device keeps in RAM (0 for `file:`).
    pub device_bytes_max: u64,
    /// Whether an image file lies under the device (it then keeps only the pages written).
    pub image_under_device: bool,
}

impl MemoryEstimate {
    /// The estimate for `config`.
    #[must_use]
    pub fn for_config(config: &BenchConfig) -> MemoryEstimate {
        let page = config.workload.page_size as u64;
        let in_ram = !matches!(config.device, DeviceSpec::File(_));
        let image_under_device = in_ram
            && config
                .record
                .as_ref()
                .is_some_and(|driver| driver.image().is_file());
        MemoryEstimate {
            pool_bytes: config.buffer_pages as u64 * page,
            device_bytes_max: if in_ram {
                config.workload.db_pages * page
            } else {
                0
            },
            image_under_device,
        }
    }

    /// `holds a pool of 2.4 GiB and up to 3.9 GiB of the pages it writes in the device's RAM`.
    #[must_use]
    pub fn describe(&self) -> String {
        let pool = format!("holds a pool of {}", gib(self.pool_bytes));
        match (self.device_bytes_max, self.image_under_device) {
            (0, _) => pool,
            (device, true) => format!(
                "{pool} and up to {} of the pages it writes in the device's RAM",
                gib(device)
            ),
            (device, false) => format!(
                "{pool} and the database's {} in the device's RAM",
                gib(device)
            ),
        }
    }

    /// What the run holds for certain: the pool, and the whole database when the device
    /// loads it (no image file under it).
    #[must_use]
    pub fn certain_bytes(&self) -> u64 {
        let loaded = if self.image_under_device {
            0
        } else {
            self.device_bytes_max
        };
        self.pool_bytes.saturating_add(loaded)
    }

    /// A warning when what the run holds for certain exceeds `available` bytes (`None`: not
    /// known).
    #[must_use]
    pub fn warning(&self, available: Option<u64>) -> Option<String> {
        let available = available?;
        let needed = self.certain_bytes();
        (needed > available).then(|| {
            format!(
                "warning: this run needs at least {} of memory and this host has {} available \
                 (MemAvailable): the kernel may stop it for want of memory, or it may swap; a \
                 smaller --buffer or database, or fewer runs side by side, avoids it",
                gib(needed),
                gib(available)
            )
        })
    }
}

/// The host's available memory in bytes (`MemAvailable` of `/proc/meminfo`; `None` elsewhere).
#[must_use]
pub fn available_bytes() -> Option<u64> {
    parse_mem_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemAvailable:  12345678 kB` in bytes.
fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo
        .lines()
        .find(|line| line.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `2.4 GiB`, `310 MiB`.
fn gib(bytes: u64) -> String {
    const MIB: f64 = (1u64 << 20) as f64;
    let mib = bytes as f64 / MIB;
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes() {
        let meminfo = "MemTotal:       24554232 kB\nMemFree:         1000 kB\n\
                       MemAvailable:   10485760 kB\nBuffers:  1 kB\n";
        assert_eq!(parse_mem_available(meminfo), Some(10 << 30));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(parse_mem_available("MemAvailable: lots kB\n"), None);
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(gib(310 << 20), "310 MiB");
        assert_eq!(gib(5 << 29), "2.5 GiB");
    }

    fn estimate(pool_bytes: u64, device_bytes_max: u64, image: bool) -> MemoryEstimate {
        MemoryEstimate {
            pool_bytes,
            device_bytes_max,
            image_under_device: image,
        }
    }

    #[test]
    fn the_description_says_what_the_device_keeps() {
        assert_eq!(
            estimate(1 << 30, 0, false).describe(),
            "holds a pool of 1.0 GiB"
        );
        assert_eq!(
            estimate(1 << 30, 4 << 30, true).describe(),
            "holds a pool of 1.0 GiB and up to 4.0 GiB of the pages it writes in the device's RAM"
        );
        assert_eq!(
            estimate(64 << 20, 512 << 20, false).describe(),
            "holds a pool of 64 MiB and the database's 512 MiB in the device's RAM"
        );
    }

    #[test]
    fn it_warns_only_when_what_the_run_surely_holds_exceeds_what_is_available() {
        let over_image = estimate(3 << 30, 4 << 30, true);
        assert_eq!(
            over_image.certain_bytes(),
            3 << 30,
            "the pages it writes are not certain"
        );
        assert_eq!(over_image.warning(None), None);
        assert_eq!(over_image.warning(Some(4 << 30)), None);
        let warning = over_image
            .warning(Some(2 << 30))
            .expect("3 GiB of pool, 2 available");
        assert!(
            warning.contains("3.0 GiB") && warning.contains("2.0 GiB"),
            "{warning}"
        );
        let loaded = estimate(3 << 30, 4 << 30, false);
        assert_eq!(
            loaded.certain_bytes(),
            7 << 30,
            "a loaded database is certain"
        );
        assert!(loaded.warning(Some(6 << 30)).is_some());
    }

    #[test]
    fn a_file_device_keeps_nothing_in_ram() {
        use crate::bench::WarmUp;
        use std::time::Duration;
        let second = Duration::from_secs(1);
        let mut config =
            crate::bench::estimate::tests::config("emu:ssd-a", WarmUp::For(second), second);
        let emulated = MemoryEstimate::for_config(&config);
        assert_eq!(emulated.pool_bytes, 3_277 * 16_384);
        assert_eq!(emulated.device_bytes_max, 32_768 * 16_384);
        assert!(!emulated.image_under_device);
        config.device = DeviceSpec::parse("file:/tmp/x").expect("a device");
        assert_eq!(MemoryEstimate::for_config(&config).device_bytes_max, 0);
    }
}
