//! Device strings (the `--device` contract of docs/architecture.md) and opening devices from them.
//!
//! Forms: `mem`, `file:PATH`, `emu:NAME[,key=value...]` where NAME is one of
//! [`crate::device::emulated::PROFILE_NAMES`].

use std::path::PathBuf;
use std::sync::Arc;

use super::{DEFAULT_PAGE_SIZE, SharedDevice};
use crate::error::{Error, Result};

/// The valid forms, for error messages and `--help` (`flashbuf devices` lists profiles and
/// options).
pub const DEVICE_FORMS: &str = "mem | file:PATH | emu:NAME[,key=value...] with NAME one of \
     ssd-a, ssd-b, ssd-c, ssd-d, hdd, pcie, sata, optane, cloud, openssd, ideal, gcp-pd-ssd, \
     azure-premium \
     (e.g. emu:ssd-a,channels=4,rbuf=on,time_scale=4; `flashbuf devices` lists every option)";

/// A parsed device string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSpec {
    /// RAM, no modelled latency.
    Memory,
    /// A real file or block device, O_DIRECT.
    File(PathBuf),
    /// An emulated device: profile name and `key=value` overrides, in order.
    Emulated {
        /// Profile name (`ssd-a`, `hdd`, ...).
        profile: String,
        /// Option overrides, validated by the emulator.
        options: Vec<(String, String)>,
    },
}

impl DeviceSpec {
    /// Parses a device string.
    ///
    /// # Errors
    /// [`Error::Config`] naming the valid forms.
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        if text == "mem" {
            return Ok(DeviceSpec::Memory);
        }
        if let Some(path) = text.strip_prefix("file:") {
            if path.is_empty() {
                return Err(bad_spec(text, "file: needs a path"));
            }
            return Ok(DeviceSpec::File(PathBuf::from(path)));
        }
        if let Some(rest) = text.strip_prefix("emu:") {
            let mut parts = rest.split(',');
            let profile = parts.next().unwrap_or_default().trim().to_string();
            if profile.is_empty() {
                return Err(bad_spec(text, "emu: needs a profile name"));
            }
            let mut options: Vec<(String, String)> = Vec::new();
            for part in parts {
                let Some((key, value)) = part.split_once('=') else {
                    return Err(bad_spec(text, &format!("option `{part}` is not key=value")));
                };
                let (key, value) = (key.trim(), value.trim());
                if key.is_empty() || value.is_empty() {
                    return Err(bad_spec(
                        text,
                        &format!("option `{part}` needs both a key and a value"),
                    ));
                }
                if options.iter().any(|(seen, _)| seen == key) {
                    return Err(bad_spec(
                        text,
                        &format!("option `{key}` is given twice; give it once"),
                    ));
                }
                options.push((key.to_string(), value.to_string()));
            }
            return Ok(DeviceSpec::Emulated { profile, options });
        }
        Err(bad_spec(text, "unknown device kind"))
    }
}

impl std::fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSpec::Memory => write!(f, "mem"),
            DeviceSpec::File(path) => write!(f, "file:{}", path.display()),
            DeviceSpec::Emulated { profile, options } => {
                write!(f, "emu:{profile}")?;
                for (key, value) in options {
                    write!(f, ",{key}={value}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::str::FromStr for DeviceSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        DeviceSpec::parse(s)
    }
}

fn bad_spec(text: &str, why: &str) -> Error {
    Error::Config(format!(
        "bad device string `{text}`: {why}; valid forms: {DEVICE_FORMS}"
    ))
}

/// How to open a device.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Page size in bytes (a multiple of 4096).
    pub page_size: usize,
    /// Number of pages the device must hold.
    pub pages: u64,
    /// For files: create (or extend) the file and write every page once, so that reads touch
    /// the medium instead of unwritten extents.
    pub create: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            page_size: DEFAULT_PAGE_SIZE,
            pages: 65_536,
            create: true,
        }
    }
}

impl OpenOptions {
    /// Checks the page size and capacity.
    ///
    /// # Errors
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        if self.page_size == 0 || !self.page_size.is_multiple_of(super::IO_ALIGN) {
            return Err(Error::Config(format!(
                "page size {} is not a positive multiple of {}",
                self.page_size,
                super::IO_ALIGN
            )));
        }
        if self.pages == 0 {
            return Err(Error::Config("a device needs at least one page".into()));
        }
        Ok(())
    }
}

/// Opens the device a spec names.
///
/// # Errors
/// [`Error::Config`] for bad options, [`Error::Device`]/[`Error::Io`] when opening fails.
pub fn open(spec: &DeviceSpec, options: &OpenOptions) -> Result<SharedDevice> {
    options.validate()?;
    match spec {
        DeviceSpec::Memory => Ok(Arc::new(super::memory::MemoryDevice::new(
            options.page_size,
            options.pages,
        )?)),
        DeviceSpec::File(path) => super::file::open(path, options),
        DeviceSpec::Emulated {
            profile,
            options: overrides,
        } => super::emulated::open(profile, overrides, options),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!(DeviceSpec::parse("mem").ok(), Some(DeviceSpec::Memory));
        assert_eq!(
            DeviceSpec::parse("file:/tmp/x").ok(),
            Some(DeviceSpec::File("/tmp/x".into()))
        );
        let spec = DeviceSpec::parse("emu:ssd-a,channels=4,rbuf=on").ok();
        assert_eq!(
            spec,
            Some(DeviceSpec::Emulated {
                profile: "ssd-a".into(),
                options: vec![
                    ("channels".into(), "4".into()),
                    ("rbuf".into(), "on".into())
                ],
            })
        );
        assert_eq!(
            spec.map(|s| s.to_string()),
            Some("emu:ssd-a,channels=4,rbuf=on".to_string())
        );
    }

    #[test]
    fn bad_strings_list_the_valid_forms() {
        for bad in [
            "",
            "disk:/x",
            "file:",
            "emu:",
            "emu:ssd-a,channels",
            "emu:ssd-a,channels=4,channels=8",
            "emu:ssd-a,=4",
            "emu:ssd-a,channels=",
        ] {
            let err = DeviceSpec::parse(bad)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(err.contains("valid forms"), "{bad}: {err}");
        }
        let twice = DeviceSpec::parse("emu:ssd-a,channels=4,channels=8").err();
        assert!(
            twice.is_some_and(|e| e.to_string().contains("`channels` is given twice")),
            "a repeated option must be named"
        );
    }
}
