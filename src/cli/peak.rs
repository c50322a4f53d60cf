//! `flashbuf device peak`: an emulated device's sustained peak bandwidth at given read/write
//! mixes, as the LRU-C paper's fio rows of Table 5 (16 KiB, queue depth 32, R:W 2:1 and 4:1),
//! computed on the profile's timing model in device time ([`crate::bench::capacity`]). It is
//! the denominator of every run's `io.bandwidth_share`, so a saved run's share can be checked
//! or recomputed from its `io.read_mbps`, `io.write_mbps` and `db_pages`.

use serde::Serialize;

use crate::bench::capacity::{self, PEAK_CONCURRENCY};
use crate::device::DeviceSpec;
use crate::error::{Error, Result};

/// Arguments of `device peak`.
#[derive(Debug, clap::Args)]
pub struct PeakArgs {
    /// An emulated device string: emu:NAME[,key=value...] (`flashbuf devices` lists them).
    #[arg(long, default_value = "emu:ssd-a")]
    pub device: String,
    /// Page size in bytes.
    #[arg(long, default_value_t = 16_384)]
    pub page_size: usize,
    /// Pages the device holds (a run's `db_pages`; the SLC cache and the garbage collector
    /// scale with it). Default: the 50-warehouse TPC-C image.
    #[arg(long, default_value_t = 233_957)]
    pub pages: u64,
    /// Shares of the I/Os that are reads, comma-separated, each from 0 to 1 (the paper's fio
    /// rows: R:W 2:1 is 0.667, 4:1 is 0.8).
    #[arg(long, value_delimiter = ',', default_values_t = vec![0.0, 0.5, 0.667, 0.8, 1.0])]
    pub read_fraction: Vec<f64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One mix's peak.
#[derive(Debug, Clone, Serialize)]
pub struct PeakRow {
    /// The read share asked for.
    pub read_fraction: f64,
    /// Sustained MB/s (10^6 bytes), reads and writes together.
    pub mbps: f64,
    /// The same in I/Os of `page_size` a second.
    pub iops: f64,
}

/// Checks the arguments before any work: an emulated device, a page size, pages, read shares.
fn validate(args: &PeakArgs) -> Result<DeviceSpec> {
    let spec = DeviceSpec::parse(&args.device).map_err(|err| err.context("--device"))?;
    if !matches!(spec, DeviceSpec::Emulated { .. }) {
        return Err(Error::InvalidArgument(format!(
            "--device: `{}` has no timing model; `device peak` needs an emulated device \
             (emu:NAME), and a real one is measured with `flashbuf device probe`",
            args.device
        )));
    }
    if args.page_size < 512 || !args.page_size.is_power_of_two() {
        return Err(Error::InvalidArgument(format!(
            "--page-size: {} is not a power of two of at least 512",
            args.page_size
        )));
    }
    if args.pages == 0 {
        return Err(Error::InvalidArgument("--pages: must be at least 1".into()));
    }
    if let Some(bad) = args
        .read_fraction
        .iter()
        .find(|f| !(0.0..=1.0).contains(*f))
    {
        return Err(Error::InvalidArgument(format!(
            "--read-fraction: {bad} is not between 0 and 1"
        )));
    }
    Ok(spec)
}

/// The peaks of `args`' mixes.
///
/// # Errors
/// [`Error::InvalidArgument`] for a bad flag (named), before any simulation.
pub fn peaks(args: &PeakArgs) -> Result<Vec<PeakRow>> {
    let spec = validate(args)?;
    args.read_fraction
        .iter()
        .map(|&read_fraction| {
            let mbps = capacity::peak_mbps(&spec, args.page_size, args.pages, read_fraction)
                .ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "--device: `{}` could not be modelled with {} pages of {} bytes",
                        args.device, args.pages, args.page_size
                    ))
                })?;
            #[allow(clippy::cast_precision_loss)]
            let iops = mbps * 1e6 / args.page_size as f64;
            Ok(PeakRow {
                read_fraction,
                mbps,
                iops,
            })
        })
        .collect()
}

/// Runs `device peak`.
///
/// # Errors
/// As [`peaks`].
pub fn run(args: &PeakArgs) -> Result<()> {
    let rows = peaks(args)?;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&rows).map_err(|e| Error::Failed(e.to_string()))?
        );
        return Ok(());
    }
    outln!(
        "{}: sustained peak at queue depth {PEAK_CONCURRENCY}, {} pages of {} bytes, after {} \
         random writes of preconditioning",
        args.device,
        args.pages,
        args.page_size,
        capacity::precondition_writes(args.pages)
    );
    outln!("{:>13}  {:>9}  {:>9}", "read share", "MB/s", "IOPS");
    for row in &rows {
        outln!(
            "{:>13.3}  {:>9.0}  {:>9.0}",
            row.read_fraction,
            row.mbps,
            row.iops
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(device: &str, fractions: Vec<f64>) -> PeakArgs {
        PeakArgs {
            device: device.into(),
            page_size: 16_384,
            pages: 8_192,
            read_fraction: fractions,
            json: false,
        }
    }

    #[test]
    fn bad_input_names_its_flag() {
        let err = peaks(&args("mem", vec![0.5])).unwrap_err().to_string();
        assert!(err.contains("--device"), "{err}");
        let err = peaks(&args("emu:nope", vec![0.5])).unwrap_err().to_string();
        assert!(err.contains("--device"), "{err}");
        let err = peaks(&args("emu:ssd-a", vec![1.5]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--read-fraction"), "{err}");
        let mut zero = args("emu:ssd-a", vec![0.5]);
        zero.pages = 0;
        assert!(peaks(&zero).unwrap_err().to_string().contains("--pages"));
    }

    #[test]
    fn more_reads_more_bandwidth_on_flash() {
        let rows = peaks(&args("emu:ssd-a", vec![0.0, 0.667, 1.0])).unwrap();
        assert_eq!(rows.len(), 3);
        assert!(rows[0].mbps < rows[1].mbps && rows[1].mbps < rows[2].mbps);
        assert!((rows[2].iops * 16_384.0 / 1e6 - rows[2].mbps).abs() < 1e-6);
    }
}
