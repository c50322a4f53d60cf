//! The emulated flash SSD and HDD (algorithms.md section 7). Being written: see issue 2.

use crate::device::{OpenOptions, SharedDevice};
use crate::error::{Error, Result};

/// Profile names accepted after `emu:`.
pub const PROFILE_NAMES: &[&str] = &[
    "ssd-a", "ssd-b", "ssd-c", "ssd-d", "hdd", "pcie", "sata", "optane", "openssd",
];

/// Opens an emulated device.
///
/// # Errors
/// Not implemented yet.
pub fn open(
    profile: &str,
    _overrides: &[(String, String)],
    _options: &OpenOptions,
) -> Result<SharedDevice> {
    Err(Error::Config(format!(
        "emulated device `{profile}` is not implemented yet"
    )))
}
