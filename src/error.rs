//! Error types of the whole crate.
//!
//! Every fallible library call returns [`Result`]. Device-level failures are [`DeviceError`]
//! (cheap to clone, so a poisoned pool can hand the original cause to every later caller);
//! everything above the device wraps them in [`Error`]. Nothing here panics on bad input.

use std::io;

/// A page number on a device (page-granular addressing).
pub type PageId = u64;

/// Errors reported by a [`crate::device::Device`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// The page lies past the end of the device.
    #[error("page {page} is out of range: the device has {pages} pages")]
    OutOfRange {
        /// The page asked for.
        page: PageId,
        /// Number of pages on the device.
        pages: u64,
    },
    /// The buffer's address or length does not fit the device's alignment rules.
    #[error(
        "buffer at {addr:#x} of {len} bytes is not aligned to {align} bytes (page size {page_size})"
    )]
    Misaligned {
        /// Buffer address.
        addr: usize,
        /// Buffer length.
        len: usize,
        /// Required alignment.
        align: usize,
        /// The device's page size.
        page_size: usize,
    },
    /// The operating system (or a device model) reported an I/O error.
    #[error("I/O error{}: {message}", page.map(|p| format!(" on page {p}")).unwrap_or_default())]
    Io {
        /// The page involved, if known.
        page: Option<PageId>,
        /// The OS error kind.
        kind: io::ErrorKind,
        /// Human-readable cause.
        message: String,
    },
    /// The device does not implement this command (e.g. the fused read-write command).
    #[error("device {device} does not support the {command} command")]
    Unsupported {
        /// Device description.
        device: String,
        /// The command that was asked for.
        command: &'static str,
    },
    /// A fault injected by [`crate::device::fault::FaultDevice`].
    #[error("injected fault: {0}")]
    Injected(String),
    /// The device has (simulated) crashed; nothing more reaches the medium.
    #[error("the device has crashed")]
    Crashed,
}

impl DeviceError {
    /// Wraps an OS error, keeping its kind and text.
    #[must_use]
    pub fn from_io(page: Option<PageId>, err: &io::Error) -> Self {
        DeviceError::Io {
            page,
            kind: err.kind(),
            message: err.to_string(),
        }
    }
}

/// Errors from the library above the device layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A device failure.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A malformed or inconsistent configuration, device string or scheme name.
    #[error("configuration error: {0}")]
    Config(String),

    /// An operation failed, with what was being done: a step of a bench, sweep or reproduction
    /// while it ran (a worker's error, a failed shutdown or consistency check, schemes that
    /// failed), or an error given context by [`Error::context`]. The message says which and why.
    #[error("{0}")]
    Failed(String),

    /// The user interrupted the command (Ctrl-C).
    #[error("interrupted (Ctrl-C): {0}")]
    Interrupted(String),
    /// An argument outside what the call accepts (e.g. a page id past the end of the database).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A page failed verification on read (checksum, page id or format mismatch).
    #[error("page {page} is corrupt: {reason}")]
    CorruptPage {
        /// The page read.
        page: PageId,
        /// What did not verify.
        reason: String,
    },
    /// The redo log is corrupt where it must not be.
    #[error("log is corrupt at offset {offset}: {reason}")]
    CorruptLog {
        /// Byte offset in the log.
        offset: u64,
        /// What did not verify.
        reason: String,
    },
    /// The redo log has no room: appending would overwrite log the last checkpoint still needs
    /// (the checkpoint did not advance within the log's full timeout).
    #[error(
        "redo log full: {needed} bytes past the checkpoint at LSN {checkpoint_lsn}, capacity {capacity}"
    )]
    LogFull {
        /// LSN distance from the checkpoint the append needed.
        needed: u64,
        /// Redo LSN of the newest checkpoint.
        checkpoint_lsn: u64,
        /// Bytes appends may use past the checkpoint.
        capacity: u64,
    },
    /// An earlier write or sync failed; the pool refuses further writes.
    #[error("the buffer pool is poisoned by an earlier I/O failure: {0}")]
    Poisoned(DeviceError),
    /// The pool has no frame to give (every frame is pinned) within the retry bound.
    #[error("no free frame: all {frames} frames are pinned or in I/O")]
    NoFreeFrame {
        /// Number of frames in the pool.
        frames: usize,
    },
    /// A transaction conflicted with another (lock wait timeout, deadlock victim, or a row
    /// changed under it). Retryable: nothing of the transaction remains; run it again.
    #[error("transaction conflict (retry it): {0}")]
    Conflict(String),
    /// The key-value engine refuses work after a failure it could not undo (a rollback that
    /// failed to log its compensation): reopen the database to recover.
    #[error("the engine is unusable after an earlier failure (reopen to recover): {0}")]
    EngineFailed(String),
    /// A device's contents or size are not what the data-file or log format needs (blank,
    /// foreign, damaged header, other version or page size, truncated, bound to another log).
    #[error("{device}: {problem}")]
    Format {
        /// The device (its name, e.g. `file:/data/db`).
        device: String,
        /// What is wrong.
        problem: FormatProblem,
    },
    /// Another open of the file, by a live process (this one or another), holds its exclusive
    /// lock.
    #[error("{}: the file is in use: {}", path.display(), lock_holder_text(*holder))]
    Locked {
        /// The file.
        path: std::path::PathBuf,
        /// The pid of the process holding it, where the platform tells.
        holder: Option<u32>,
    },
    /// A host I/O error outside a device (config files, result files).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// Whether the operation may succeed if retried from the start (a transaction conflict).
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Conflict(_))
    }

    /// Wraps a host I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The message without the prefix its variant's display adds ("configuration error: ",
    /// "invalid argument: "): what goes after a caller's own context, so that a nested error
    /// does not repeat the prefix ("configuration error: --pool-config: configuration error:").
    #[must_use]
    pub fn message(&self) -> String {
        match self {
            Error::Config(message) | Error::InvalidArgument(message) | Error::Failed(message) => {
                message.clone()
            }
            other => other.to_string(),
        }
    }

    /// This error with `context` (what was being done: the flag, the scheme, the point) before
    /// its message. A configuration error, invalid argument, failure, interruption or conflict
    /// keeps its variant, a host I/O error its source; any other error becomes
    /// [`Error::Failed`] with the message `context: error`.
    #[must_use]
    pub fn context(self, context: impl std::fmt::Display) -> Error {
        match self {
            Error::Config(message) => Error::Config(format!("{context}: {message}")),
            Error::InvalidArgument(message) => {
                Error::InvalidArgument(format!("{context}: {message}"))
            }
            Error::Failed(message) => Error::Failed(format!("{context}: {message}")),
            Error::Interrupted(message) => Error::Interrupted(format!("{context}: {message}")),
            Error::Conflict(message) => Error::Conflict(format!("{context}: {message}")),
            Error::Io {
                context: inner,
                source,
            } => Error::Io {
                context: format!("{context}: {inner}"),
                source,
            },
            other => Error::Failed(format!("{context}: {other}")),
        }
    }
}

/// Who holds a locked file, for [`Error::Locked`]'s message.
fn lock_holder_text(holder: Option<u32>) -> String {
    match holder {
        Some(pid) if pid == std::process::id() => {
            format!("another open in this process (pid {pid}) holds its lock")
        }
        Some(pid) => format!("process {pid} holds its lock"),
        None => "another open (this process or another) holds its lock".to_string(),
    }
}

/// What is wrong with a device's format (see [`Error::Format`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatProblem {
    /// The header pages are all zeros: nothing was ever formatted here.
    #[error("the device is blank (not formatted)")]
    Blank,
    /// The header pages hold something that is not ours (another program's file).
    #[error("not a flashbuf {what}: {reason}")]
    Foreign {
        /// What was expected ("data file", "log").
        what: &'static str,
        /// What was found.
        reason: String,
    },
    /// The header carries our magic but no copy of it verifies.
    #[error("the {what} header is damaged: {reason}")]
    Damaged {
        /// What was expected ("data file", "log").
        what: &'static str,
        /// What did not verify.
        reason: String,
    },
    /// A format version this build does not read.
    #[error("format version {found} is not supported (this build reads version {supported})")]
    UnsupportedVersion {
        /// The version on the device.
        found: u32,
        /// The version this build reads and writes.
        supported: u32,
    },
    /// The device was formatted with another page size.
    #[error("formatted with {found}-byte pages, opened with {expected}-byte pages")]
    PageSize {
        /// The page size on the device.
        found: u64,
        /// The page size asked for.
        expected: u64,
    },
    /// The device is shorter than its header says (a truncated file).
    #[error("truncated: the header says {needed_bytes} bytes, the device holds {present_bytes}")]
    Truncated {
        /// Bytes the format needs.
        needed_bytes: u64,
        /// Bytes the device holds.
        present_bytes: u64,
    },
    /// The data file is bound to another log than the one it was opened with.
    #[error("bound to log {expected:#x}, but the log has id {found:#x}")]
    WrongLog {
        /// The log id the data file's header names.
        expected: u64,
        /// The log id found.
        found: u64,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_does_not_repeat_the_prefix() {
        let err = Error::Config("frames must be at least 16".into()).context("--pool-config");
        assert_eq!(
            err.to_string(),
            "configuration error: --pool-config: frames must be at least 16"
        );
        let nested = Error::Config(format!("scheme `war`: {}", err.message()));
        assert_eq!(
            nested.to_string().matches("configuration error").count(),
            1,
            "{nested}"
        );
    }

    #[test]
    fn context_keeps_the_variant_and_source() {
        let io = Error::io("reading x", io::Error::from(io::ErrorKind::NotFound)).context("--db");
        assert!(matches!(&io, Error::Io { context, .. } if context == "--db: reading x"));
        assert!(std::error::Error::source(&io).is_some());
        let interrupted = Error::Interrupted("partial".into()).context("scheme lru-c");
        assert!(matches!(interrupted, Error::Interrupted(_)));
        let device = Error::Device(DeviceError::Crashed).context("opening");
        assert_eq!(device.to_string(), "opening: the device has crashed");
        let failed = Error::Failed("worker 3 failed".into());
        assert_eq!(failed.to_string(), "worker 3 failed");
        assert_eq!(failed.message(), "worker 3 failed");
    }
}
