//! `file:PATH`: a real file or block device with O_DIRECT. Being written: see issue 2.

use std::path::Path;

use crate::device::{OpenOptions, SharedDevice};
use crate::error::{Error, Result};

/// Opens a file device.
///
/// # Errors
/// Not implemented yet.
pub fn open(path: &Path, _options: &OpenOptions) -> Result<SharedDevice> {
    Err(Error::Config(format!(
        "file device {} is not implemented yet",
        path.display()
    )))
}
