//! `flashbuf bench`. Being written (issue 3).

use crate::error::{Error, Result};

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Device string.
    #[arg(long, default_value = "emu:ssd-a")]
    pub device: String,
}

/// Runs the benchmark.
///
/// # Errors
/// Not implemented yet.
pub fn run(_args: &BenchArgs) -> Result<()> {
    Err(Error::Config("bench is not implemented yet".into()))
}
