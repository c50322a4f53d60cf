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
    /// Frames of the pool (the defaults of a few keys scale with it), at least 16.
    #[arg(long, default_value_t = 1024)]
    pub frames: usize,
}

/// Prints the default configuration.
///
/// # Errors
/// [`Error::Config`] without `--default`, for an unknown scheme, or for `--frames` that no
/// pool accepts (under 16).
pub fn run(args: &ConfigArgs) -> Result<()> {
    super::out(&render(args)?);
    Ok(())
}

/// The text `config` prints.
///
/// # Errors
/// As [`run`].
pub fn render(args: &ConfigArgs) -> Result<String> {
    if !args.default {
        return Err(Error::Config(
            "`flashbuf config` needs --default (print the default pool configuration)".into(),
        ));
    }
    let scheme = Composition::parse(&args.scheme).map_err(|err| err.context("--scheme"))?;
    if args.frames < 16 {
        return Err(Error::Config(format!(
            "--frames {}: a pool needs at least 16 frames",
            args.frames
        )));
    }
    PoolConfig::for_scheme(scheme.clone(), args.frames)
        .validate()
        .map_err(|err| err.context("--frames"))?;
    PoolConfig::default_toml(scheme, args.frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(scheme: &str, frames: usize) -> ConfigArgs {
        ConfigArgs {
            default: true,
            scheme: scheme.into(),
            frames,
        }
    }

    #[test]
    fn refuses_frames_no_pool_accepts() {
        for frames in [0, 15] {
            let err = render(&args("vanilla", frames)).unwrap_err().to_string();
            assert!(
                err.contains("--frames") && err.contains("at least 16"),
                "{err}"
            );
        }
        assert!(render(&args("vanilla", 16)).is_ok());
    }

    #[test]
    fn names_the_scheme_flag() {
        let err = render(&args("nosuch", 1024)).unwrap_err().to_string();
        assert!(err.contains("--scheme") && err.contains("nosuch"), "{err}");
        assert_eq!(err.matches("configuration error").count(), 1, "{err}");
    }
}
