//! `flashbuf device probe`. Being written (issue 2).

use crate::error::{Error, Result};

/// Arguments of `device probe`.
#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    /// Device string.
    #[arg(long, default_value = "emu:ssd-a")]
    pub device: String,
}

/// Runs the probe.
///
/// # Errors
/// Not implemented yet.
pub fn run(_args: &ProbeArgs) -> Result<()> {
    Err(Error::Config("device probe is not implemented yet".into()))
}
