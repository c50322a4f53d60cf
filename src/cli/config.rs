//! `flashbuf config --default`: prints a pool configuration file (TOML) with every key of
//! [`PoolConfig::KEYS`] at the preset's default and its meaning and range in comments
//! ([`PoolConfig::default_toml`]); `flashbuf bench --pool-config FILE` reads it back.

use crate::engine::{Composition, PoolConfig};
use crate::error::{Error, Result};

/// Arguments of `config`.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArgs {
    /// Print the default pool configuration (TOML, every key commented).
    #[arg(long)]
    pub default: bool,
    /// The scheme whose preset supplies the defaults (`flashbuf schemes`).
    #[arg(long, default_value = "vanilla")]
    pub scheme: String,
    /// Frames of the pool (the defaults of a few keys scale with it).
    #[arg(long, default_value_t = 1024)]
    pub frames: usize,
}

/// Prints the default configuration.
///
/// # Errors
/// [`Error::Config`] without `--default` or for an unknown scheme.
pub fn run(args: &ConfigArgs) -> Result<()> {
    if !args.default {
        return Err(Error::Config(
            "`flashbuf config` needs --default (print the default pool configuration)".into(),
        ));
    }
    let scheme = Composition::parse(&args.scheme)?;
    super::out(&PoolConfig::default_toml(scheme, args.frames)?);
    Ok(())
}
