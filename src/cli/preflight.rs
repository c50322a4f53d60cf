//! Checks a `bench` run before anything runs (issue 13, item 1): the device strings (profile and
//! options), the pool configuration for every scheme, scheme/device compatibility (the fused RW
//! command), an upper bound on the real time the run would take, the output paths, and the
//! memory an in-memory or emulated database needs. Each error names the flag or key that is
//! wrong and the accepted forms; nothing is loaded or written before these pass.

use std::path::Path;
use std::time::Duration;

use crate::bench::BenchConfig;
use crate::device::DeviceSpec;
use crate::device::emulated::profile::{self, Kind};
use crate::engine::MissKind;
use crate::error::{Error, Result};
use crate::pool::PoolConfig;

/// Longest real time a run may take before it is refused (a typo in `time_scale` or
/// `--duration` must not start a run that never ends).
pub const MAX_REAL_TIME: Duration = Duration::from_hours(48);

/// The pool size the configuration is checked with before a record image is loaded.
const NOMINAL_FRAMES: usize = 4096;

/// What the checks learned about the data device.
struct DataDevice {
    time_scale: f64,
    fused_rw: bool,
}

/// Runs every check; the first problem is the error.
///
/// # Errors
/// [`Error::Config`] naming the flag, key or path.
pub fn check(
    config: &BenchConfig,
    record: bool,
    json: Option<&Path>,
    out: Option<&Path>,
) -> Result<()> {
    let data = check_device("--device", &config.device)?;
    let mut time_scale = data.time_scale;
    if let Some(log) = &config.log {
        time_scale = time_scale.max(check_device("--log-device", &log.device)?.time_scale);
    }
    check_pool_config(config, record, &data)?;
    check_real_time(config, time_scale)?;
    check_outputs(json, out)?;
    if record {
        return Ok(()); // a record image's size is known only after loading
    }
    check_memory(config)
}

fn check_device(flag: &str, spec: &DeviceSpec) -> Result<DataDevice> {
    match spec {
        DeviceSpec::Emulated { profile, options } => {
            let resolved = profile::resolve(profile, options).map_err(|err| {
                Error::Config(format!(
                    "{flag} {spec}: {} (see `flashbuf devices`)",
                    err.message()
                ))
            })?;
            Ok(DataDevice {
                time_scale: resolved.time_scale,
                fused_rw: resolved.kind == Kind::Ssd,
            })
        }
        DeviceSpec::File(_) | DeviceSpec::Memory => Ok(DataDevice {
            time_scale: 1.0,
            fused_rw: false,
        }),
    }
}

fn check_pool_config(config: &BenchConfig, record: bool, data: &DataDevice) -> Result<()> {
    // A record workload's buffer is a share of an image not loaded yet: check the keys with a
    // nominal pool (the real size is checked again when each scheme opens).
    let frames = if record {
        NOMINAL_FRAMES
    } else {
        config.buffer_pages
    };
    for scheme in &config.schemes {
        let pool = match &config.pool_config {
            Some(text) => PoolConfig::from_toml(scheme.clone(), frames, text).map_err(|err| {
                Error::Config(format!("--pool-config: {}", pool_config_detail(&err)))
            })?,
            None => PoolConfig::from_toml(scheme.clone(), frames, "")?,
        };
        pool.validate().map_err(|err| {
            err.context(format_args!("scheme `{scheme}` with this configuration"))
        })?;
        if pool.scheme.miss == MissKind::Rw && !data.fused_rw {
            return Err(Error::Config(format!(
                "scheme `{scheme}` needs the fused read-write command, which --device {} does not \
                 support (an emulated SSD does, e.g. emu:ssd-a); leave `{scheme}` out",
                config.device
            )));
        }
    }
    Ok(())
}

/// What is wrong with a `--pool-config` file, without the library's "pool config: " (the
/// caller names the flag instead).
fn pool_config_detail(err: &Error) -> String {
    let message = err.message();
    message
        .strip_prefix("pool config: ")
        .map_or_else(|| message.clone(), str::to_string)
}

/// `--schemes all` (or `postgres`) names every preset of a family: the ones the data device
/// cannot run (`rw` without the fused command) are left out with a note rather than refused.
/// A scheme named on its own is kept, so that [`check`] refuses it with the reason.
pub fn drop_unsupported_from_groups(config: &mut BenchConfig, schemes_flag: &str) {
    let grouped = schemes_flag
        .split(',')
        .any(|name| matches!(name.trim(), "all" | "postgres"));
    let named_rw = schemes_flag
        .split(',')
        .any(|name| name.trim().starts_with("rw"));
    let Ok(data) = check_device("--device", &config.device) else {
        return; // `check` names the bad device
    };
    if !grouped || named_rw || data.fused_rw {
        return;
    }
    let before = config.schemes.len();
    config.schemes.retain(|scheme| scheme.miss != MissKind::Rw);
    if config.schemes.len() < before {
        eprintln!(
            "bench: leaving out `rw`: device {} has no fused read-write command",
            config.device
        );
    }
}

fn check_real_time(config: &BenchConfig, time_scale: f64) -> Result<()> {
    let warmup = match config.warmup {
        crate::bench::WarmUp::For(d) | crate::bench::WarmUp::UntilSteady { max: d } => d,
    };
    let per_scheme_s = (config.measure_max() + warmup).as_secs_f64() * time_scale;
    let runs = config.schemes.len() * config.repeats.max(1);
    let total_s = per_scheme_s * runs as f64;
    if !total_s.is_finite() || total_s > MAX_REAL_TIME.as_secs_f64() {
        return Err(Error::Config(format!(
            "this run would take up to {:.0} hours of real time ({} run(s): schemes x \
             --repeat, x (duration + warm-up) {:?} x time scale {time_scale}); the limit is {} \
             hours: shorten --duration/--warmup, lower --repeat or time_scale / --model-cores",
            total_s / 3600.0,
            runs,
            config.measure_max() + warmup,
            MAX_REAL_TIME.as_secs() / 3600
        )));
    }
    Ok(())
}

pub(crate) fn check_outputs(json: Option<&Path>, out: Option<&Path>) -> Result<()> {
    if let Some(path) = json {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !parent.is_dir() {
            return Err(Error::Config(format!(
                "--json {}: the directory {} does not exist",
                path.display(),
                parent.display()
            )));
        }
        if path.is_dir() {
            return Err(Error::Config(format!(
                "--json {}: is a directory; give a file name",
                path.display()
            )));
        }
        probe_writable(parent, "--json")?;
    }
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(|err| {
            Error::Config(format!("--out {}: cannot create it: {err}", dir.display()))
        })?;
        probe_writable(dir, "--out")?;
    }
    Ok(())
}

/// Creates and removes a file in `dir`, so an unwritable output is found before the run.
pub(crate) fn probe_writable(dir: &Path, flag: &str) -> Result<()> {
    let probe = dir.join(format!(".flashbuf-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|err| {
        Error::Config(format!("{flag}: cannot write in {}: {err}", dir.display()))
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// The synthetic workload's image and each scheme's device live in memory for `mem` and
/// emulated devices: refuse a database that does not fit twice in the available memory.
fn check_memory(config: &BenchConfig) -> Result<()> {
    if matches!(config.device, DeviceSpec::File(_)) {
        return Ok(()); // the database is on disk
    }
    let bytes = config
        .workload
        .db_pages
        .saturating_mul(config.workload.page_size as u64);
    let Some(available) = crate::bench::memory::available_bytes() else {
        return Ok(());
    };
    let needed = bytes.saturating_mul(2);
    if needed > available {
        return Err(Error::Config(format!(
            "--db-size: a {} MiB database needs about {} MiB of memory on {} (the image and \
             each scheme's device), and {} MiB are available; use a smaller --db-size or a \
             file: device",
            bytes >> 20,
            needed >> 20,
            config.device,
            available >> 20
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_profiles_and_options_are_named() {
        let spec = DeviceSpec::parse("emu:ssd-a,nosuch=1").unwrap();
        let err = check_device("--device", &spec).err().unwrap().to_string();
        assert!(err.contains("--device") && err.contains("nosuch"), "{err}");
        let spec = DeviceSpec::parse("emu:nosuch").unwrap();
        assert!(check_device("--device", &spec).is_err());
    }

    #[test]
    fn outputs_in_missing_directories_are_refused() {
        let err = check_outputs(Some(Path::new("/nonexistent/dir/x.json")), None)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("--json"), "{err}");
    }
}
