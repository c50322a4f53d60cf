//! The locks that keep a file device to one holder, and let a restarted process in as soon as
//! the previous holder is dead.
//!
//! Two locks, on two open file descriptions of the same file:
//! - **The holder lock**: an exclusive `flock` on a descriptor of its own ([`HolderLock`]),
//!   which is never handed to an I/O engine. The kernel drops it while a killed process exits
//!   (before its parent's `wait` returns), so it is held exactly while the holder lives. An open
//!   that finds it taken fails with [`Error::Locked`] naming the holder's pid, read from
//!   `/proc/locks` (`None` where that is unavailable, e.g. another pid namespace).
//! - **The drain lock**: an exclusive open-file-description (OFD) lock on the descriptor that
//!   does the I/O. Its kernel file object is also referenced by the io_uring requests in flight,
//!   and is released only when the last of them completed and the ring was torn down, which
//!   for a killed process happens asynchronously, after it is gone. An open that got the holder
//!   lock but finds the drain lock taken waits for it (up to [`DRAIN_TIMEOUT`]), so no write of
//!   a dead holder can land after the new holder started reading.
//!
//! `flock` and OFD locks are independent on local file systems, so the two never conflict with
//! each other; `flock(1)` and older flashbuf versions (which `flock`ed the I/O descriptor)
//! conflict with the holder lock as they should.
//!
//! Invariant: the holder lock is taken before the drain lock and released after the device's
//! engine stopped (the [`HolderLock`] is the last field dropped).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How long an open waits for a dead holder's file to be released by the kernel.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);
/// The first and the longest pause between two tries of the drain lock.
const DRAIN_POLL_FIRST: Duration = Duration::from_micros(200);
const DRAIN_POLL_MAX: Duration = Duration::from_millis(20);

/// The holder lock of an open device: released when dropped (or when the process dies).
#[derive(Debug)]
pub struct HolderLock {
    _file: File,
}

/// Takes both locks for `data`, the descriptor doing the I/O on `path`: fails with
/// [`Error::Locked`] if a live holder has the file, and waits while the kernel still releases
/// a dead holder's file.
///
/// # Errors
/// [`Error::Locked`] for a live holder; [`Error::Io`] when the file cannot be opened again or
/// locked, was replaced meanwhile, or a dead holder's file is not released within
/// [`DRAIN_TIMEOUT`].
pub fn acquire(data: &File, path: &Path) -> Result<HolderLock> {
    let holder = open_same_file(data, path)?;
    lock_holder(&holder, path)?;
    wait_for_drain_lock(data, path, DRAIN_TIMEOUT)?;
    Ok(HolderLock { _file: holder })
}

/// A second open file description of the file behind `data` (checked to be the same inode).
fn open_same_file(data: &File, path: &Path) -> Result<File> {
    let holder = File::open(path)
        .map_err(|err| Error::io(format!("opening {} to lock it", path.display()), err))?;
    let identity = |file: &File| {
        file.metadata()
            .map(|meta| (meta.dev(), meta.ino()))
            .map_err(|err| Error::io(format!("stat {}", path.display()), err))
    };
    if identity(&holder)? != identity(data)? {
        return Err(Error::io(
            format!("locking {}", path.display()),
            std::io::Error::other("the file was replaced while it was being opened"),
        ));
    }
    Ok(holder)
}

/// The exclusive, non-blocking `flock` of the holder descriptor.
fn lock_holder(holder: &File, path: &Path) -> Result<()> {
    // SAFETY: flock on a file descriptor we own; no memory is passed.
    let rc = unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Err(Error::Locked {
            path: path.to_path_buf(),
            holder: flock_holder_pid(holder),
        })
    } else {
        Err(Error::io(format!("locking {}", path.display()), err))
    }
}

/// Takes the OFD write lock on the whole of `data`, retrying while it is taken, up to `timeout`.
/// Kernels without OFD locks (before 3.15, which have no io_uring either) skip it.
fn wait_for_drain_lock(data: &File, path: &Path, timeout: Duration) -> Result<()> {
    let started = Instant::now();
    let mut pause = DRAIN_POLL_FIRST;
    // Bounded by `timeout`: each turn sleeps, and the loop ends once it has passed.
    loop {
        match try_ofd_lock(data) {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(err) if err.raw_os_error() == Some(libc::EINVAL) => return Ok(()),
            Err(err) => return Err(Error::io(format!("locking {}", path.display()), err)),
        }
        if started.elapsed() >= timeout {
            return Err(Error::io(
                format!("opening {}", path.display()),
                std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "no live process holds the file, but the kernel has not released the \
                         previous holder's open of it within {} s (I/O of a killed process \
                         still in flight?); try again later",
                        timeout.as_secs()
                    ),
                ),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(DRAIN_POLL_MAX);
    }
}

/// One non-blocking try of the whole-file OFD write lock: `Ok(false)` when it is taken.
fn try_ofd_lock(data: &File) -> std::io::Result<bool> {
    // SAFETY: an all-zero `flock` is a valid value of this plain C struct.
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_type = libc::F_WRLCK as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    request.l_start = 0;
    request.l_len = 0; // to the end of the file, however long it grows
    // SAFETY: fcntl on a descriptor we own, with a pointer to a live, initialised struct.
    let rc = unsafe { libc::fcntl(data.as_raw_fd(), libc::F_OFD_SETLK, &raw mut request) };
    if rc == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EAGAIN | libc::EACCES) => Ok(false),
        _ => Err(err),
    }
}

/// The pid of the process holding a `flock` on `file`'s inode, from `/proc/locks`.
fn flock_holder_pid(file: &File) -> Option<u32> {
    let meta = file.metadata().ok()?;
    let table = std::fs::read_to_string("/proc/locks").ok()?;
    flock_pid_in(
        &table,
        libc::major(meta.dev()),
        libc::minor(meta.dev()),
        meta.ino(),
    )
}

/// Finds, in the text of `/proc/locks`, the pid of a granted `FLOCK` on the inode
/// `major:minor:inode` (lines read `1: FLOCK  ADVISORY  WRITE 4242 fe:00:1234 0 EOF`; waiters
/// have `->` after the number and are skipped; a pid of 0 or less means "not visible here").
fn flock_pid_in(table: &str, major: u32, minor: u32, inode: u64) -> Option<u32> {
    table.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 6 || fields[1] != "FLOCK" {
            return None;
        }
        let mut id = fields[5].split(':');
        let matches = id
            .next()
            .and_then(|text| u32::from_str_radix(text, 16).ok())
            == Some(major)
            && id
                .next()
                .and_then(|text| u32::from_str_radix(text, 16).ok())
                == Some(minor)
            && id.next().and_then(|text| text.parse::<u64>().ok()) == Some(inode);
        if !matches {
            return None;
        }
        fields[4]
            .parse::<i64>()
            .ok()
            .filter(|&pid| pid > 0)
            .map(|pid| pid as u32)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "1: POSIX  ADVISORY  WRITE 77 fe:00:1234 0 EOF\n\
                         2: FLOCK  ADVISORY  WRITE 4242 fe:00:1234 0 EOF\n\
                         2: -> FLOCK  ADVISORY  WRITE 5151 fe:00:1234 0 EOF\n\
                         3: FLOCK  ADVISORY  WRITE 99 103:02:1234 0 EOF\n\
                         4: OFDLCK ADVISORY  WRITE -1 fe:00:555 0 EOF\n";

    #[test]
    fn finds_the_granted_flock_of_the_inode() {
        assert_eq!(flock_pid_in(TABLE, 0xfe, 0, 1234), Some(4242));
        assert_eq!(flock_pid_in(TABLE, 0x103, 2, 1234), Some(99));
    }

    #[test]
    fn ignores_other_inodes_lock_kinds_and_hidden_pids() {
        assert_eq!(flock_pid_in(TABLE, 0xfe, 0, 555), None);
        assert_eq!(flock_pid_in(TABLE, 0xfe, 1, 1234), None);
        let hidden = "1: FLOCK  ADVISORY  WRITE 0 fe:00:7 0 EOF\n";
        assert_eq!(flock_pid_in(hidden, 0xfe, 0, 7), None);
        assert_eq!(flock_pid_in("", 0xfe, 0, 7), None);
    }

    #[test]
    fn a_taken_drain_lock_is_waited_for_then_reported_without_locked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let first = File::create(&path).unwrap();
        assert!(try_ofd_lock(&first).unwrap());
        let second = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        assert!(!try_ofd_lock(&second).unwrap(), "OFD locks conflict");
        let err = wait_for_drain_lock(&second, &path, Duration::from_millis(30)).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
        assert!(err.to_string().contains("no live process holds"), "{err}");
        drop(first);
        wait_for_drain_lock(&second, &path, Duration::from_millis(30)).unwrap();
    }
}
