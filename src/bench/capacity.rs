//! The device's peak bandwidth at a run's read/write mix, to say what share of it a run used
//! (LRU-C paper, Table 5: fio at queue depth 32 with the run's read:write ratio; Vanilla used
//! about 25% of SSD-A's limit, LRU-C about 64%).
//!
//! For an emulated device the peak comes from its own timing model, driven by the closed-loop
//! simulator (`device::emulated::sim`) with 32 submitters, no sleeping: readers and writers in
//! the proportion whose completed I/Os come closest to the run's read fraction. Real devices
//! have no model: the share is then unknown (`None`) unless the user measured the device with
//! `flashbuf device probe`.

use crate::device::DeviceSpec;
use crate::device::emulated::sim::{ClientKind, closed_loop};
use crate::device::emulated::{Model, profile};

/// Concurrency of the peak measurement (fio's queue depth in the paper).
pub const PEAK_CONCURRENCY: usize = 32;
/// Requests simulated per candidate mix.
const REQUESTS: u64 = 40_000;

/// The peak bandwidth of `spec` at `read_fraction` of I/Os being reads, in MB/s (10^6 bytes),
/// for a device of `pages` pages of `page_size` bytes. `None` for devices without a model.
#[must_use]
pub fn peak_mbps(
    spec: &DeviceSpec,
    page_size: usize,
    pages: u64,
    read_fraction: f64,
) -> Option<f64> {
    let DeviceSpec::Emulated {
        profile: name,
        options,
    } = spec
    else {
        return None;
    };
    let resolved = profile::resolve(name, options).ok()?;
    let read_fraction = read_fraction.clamp(0.0, 1.0);
    let mut best: Option<(f64, f64)> = None; // (distance from the target fraction, MB/s)
    for readers in 0..=PEAK_CONCURRENCY {
        let clients: Vec<ClientKind> = (0..PEAK_CONCURRENCY)
            .map(|i| {
                if i < readers {
                    ClientKind::Reader
                } else {
                    ClientKind::Writer
                }
            })
            .collect();
        let mut model = Model::new(&resolved, page_size, pages.max(1)).ok()?;
        let result = closed_loop(&mut model, &clients, pages.max(1), REQUESTS, 0, 7);
        let total = (result.reads + result.writes) as f64;
        if total == 0.0 || result.elapsed_ns == 0 {
            continue;
        }
        let fraction = result.reads as f64 / total;
        let mbps = total * page_size as f64 / (result.elapsed_ns as f64 / 1e9) / 1e6;
        let distance = (fraction - read_fraction).abs();
        if best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, mbps));
        }
    }
    best.map(|(_, mbps)| mbps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_cost_more_than_reads_on_a_flash_model() {
        let spec = DeviceSpec::parse("emu:ssd-a").unwrap();
        let reads = peak_mbps(&spec, 16 * 1024, 8192, 1.0).unwrap();
        let writes = peak_mbps(&spec, 16 * 1024, 8192, 0.0).unwrap();
        let mixed = peak_mbps(&spec, 16 * 1024, 8192, 0.67).unwrap();
        assert!(reads > 2.0 * writes, "{reads} {writes}");
        assert!(mixed < reads && mixed > writes, "{mixed}");
        assert!(peak_mbps(&DeviceSpec::Memory, 4096, 16, 0.5).is_none());
    }
}
