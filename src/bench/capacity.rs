//! The device's peak bandwidth at a run's read/write mix, to say what share of it a run used
//! (LRU-C paper, Table 5: fio at queue depth 32 with the run's read:write ratio; Vanilla used
//! about 25% of SSD-A's limit, LRU-C about 64%).
//!
//! For an emulated device the peak comes from its own timing model, driven by the closed-loop
//! simulator (`device::emulated::sim`) with 32 submitters, no sleeping: readers and writers in
//! the proportion whose completed I/Os come closest to the run's read fraction. Real devices
//! have no model: the share is then unknown (`None`) unless the user measured the device with
//! `flashbuf device probe`.
//!
//! **Steady state, as the paper's fio.** The paper's fio ran for 30 minutes on a half-full
//! drive, so its peak is the drive's sustained one. A fresh model absorbs its first writes in
//! the controller's buffer and the SLC cache at several times the sustained rate (ssd-a: 162,000
//! 16 KiB writes a second for the first tens of thousands, 34,000 sustained). The model is
//! therefore first preconditioned with [`PRECONDITION_SHARE`] of its pages in random writes (at
//! least [`PRECONDITION_MIN`]), past the SLC cache (5% of the pages on ssd-a) and into garbage
//! collection, and every candidate mix then runs on that same model, one after the other, from
//! the most write-heavy. Before this, each mix ran on a fresh model for 40,000 requests and
//! measured the burst: 2-5 times the sustained peak, so shares were understated as much
//! (`docs/regime.md`, "The device's share, measured in steady state").

use crate::device::DeviceSpec;
use crate::device::emulated::sim::{ClientKind, closed_loop};
use crate::device::emulated::{Model, profile};

/// Concurrency of the peak measurement (fio's queue depth in the paper).
pub const PEAK_CONCURRENCY: usize = 32;
/// Requests simulated per candidate mix.
const REQUESTS: u64 = 40_000;
/// Random writes that precondition the model, as a share of its pages.
pub const PRECONDITION_SHARE: f64 = 0.25;
/// Random writes that precondition the model, at least.
pub const PRECONDITION_MIN: u64 = 200_000;

/// The random writes that bring a model of `pages` pages past its write buffer and SLC cache.
#[must_use]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
pub fn precondition_writes(pages: u64) -> u64 {
    ((pages as f64 * PRECONDITION_SHARE) as u64).max(PRECONDITION_MIN)
}

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
    let pages = pages.max(1);
    let mut model = Model::new(&resolved, page_size, pages).ok()?;
    let writers = vec![ClientKind::Writer; PEAK_CONCURRENCY];
    let mut now = closed_loop(
        &mut model,
        &writers,
        pages,
        precondition_writes(pages),
        0,
        3,
    )
    .end_ns;
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
        let result = closed_loop(&mut model, &clients, pages, REQUESTS, now, 7);
        now = now.max(result.end_ns);
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

    /// The peak is the sustained one of the paper's fio (LRU-C Table 1, SSD-A at 16 KiB:
    /// 190,622 read and 33,866 write IOPS), not the burst of a fresh model's write buffer and
    /// SLC cache, which a 40,000-request run on a fresh model measured at 4-5 times these.
    #[test]
    fn the_peak_is_the_sustained_one_of_table_1() {
        let spec = DeviceSpec::parse("emu:ssd-a").unwrap();
        let page = 16 * 1024;
        let mbps = |iops: f64| iops * page as f64 / 1e6;
        for pages in [8_192, 233_957] {
            let writes = peak_mbps(&spec, page, pages, 0.0).unwrap();
            let reads = peak_mbps(&spec, page, pages, 1.0).unwrap();
            assert!(
                (writes / mbps(33_866.0) - 1.0).abs() < 0.15,
                "{pages} pages: {writes} MB/s of writes"
            );
            assert!(
                (reads / mbps(190_622.0) - 1.0).abs() < 0.15,
                "{pages} pages: {reads} MB/s of reads"
            );
        }
    }

    #[test]
    fn preconditioning_covers_a_quarter_of_the_pages() {
        assert_eq!(precondition_writes(10), PRECONDITION_MIN);
        assert_eq!(precondition_writes(4_000_000), 1_000_000);
    }
}
