//! Memory mappings behind [`PageStore`](super::memory::PageStore): the RAM of the `mem` and
//! emulated devices, and how a database image file becomes their contents without being read
//! into RAM (`docs/devices.md`, "Images larger than RAM").
//!
//! Two kinds of mapping:
//! - **anonymous** ([`Mapping::anonymous`]): zero pages, allocated by the OS on first write, and
//!   not charged against the commit limit (`MAP_NORESERVE`), so a device of twice the database
//!   (an image's headroom) costs only the pages written. An image file under it
//!   ([`super::image_layer`]) supplies the pages not yet written.
//! - **shared file** ([`Mapping::shared_file`]): the pages of a file; writes reach the file
//!   through the page cache, [`Mapping::flush`] makes them durable (`msync`). Used to build an
//!   image larger than RAM (`flashbuf load`).
//!
//! Invariants: the mapping's address and length never change after creation; its length is a
//! whole number of OS pages; a file is mapped only if it covers the mapping (a mapping past
//! the end of a file faults with `SIGBUS` on access), and must not be truncated while mapped.

use std::fs::File;
use std::os::fd::AsRawFd;

/// The OS page size the mappings are aligned to.
#[must_use]
pub fn os_page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(4096)
}

/// A read-write memory mapping, unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    base: *mut u8,
    len: usize,
    /// Shared file mappings need `msync` to be durable.
    shared: bool,
}

// SAFETY: the mapping is plain memory; synchronisation of its contents is the owner's (the
// page store's stripe locks).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// `len` bytes of zeros (rounded up to whole OS pages), not charged against the commit
    /// limit.
    ///
    /// # Errors
    /// The OS's error (address space exhausted).
    pub fn anonymous(len: usize) -> std::io::Result<Mapping> {
        Self::fresh(
            round_up(len)?,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            None,
        )
    }

    /// `len` bytes of zeros (rounded up to whole OS pages), allocated by the OS on first touch
    /// but charged against the commit limit at once (no `MAP_NORESERVE`): memory the owner
    /// means to fill, such as a buffer pool's frames, so that a pool larger than the machine
    /// allows is refused here (under the kernel's overcommit policy) rather than on a later
    /// page fault.
    ///
    /// # Errors
    /// The OS's error (the commit limit, or address space exhausted).
    pub fn anonymous_accounted(len: usize) -> std::io::Result<Mapping> {
        Self::fresh(
            round_up(len)?,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            None,
        )
    }

    /// The first `len` bytes of `file` (which must cover them rounded up to whole OS pages,
    /// and be open for reading and writing), shared: writes reach the file.
    ///
    /// # Errors
    /// A file shorter than that; the OS's error.
    pub fn shared_file(file: &File, len: usize) -> std::io::Result<Mapping> {
        let len = round_up(len)?;
        check_covers(file, 0, len)?;
        Self::fresh(len, libc::MAP_SHARED, Some(file))
    }

    /// A new read-write mapping of `len` bytes (whole OS pages) at an address the kernel
    /// chooses: of the start of `file` when given (which covers it), else anonymous.
    fn fresh(len: usize, flags: libc::c_int, file: Option<&File>) -> std::io::Result<Mapping> {
        let fd = file.map_or(-1, AsRawFd::as_raw_fd);
        // SAFETY: a fresh mapping, placed by the kernel; a file mapping lies within the file.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                0,
            )
        };
        Self::from_raw(base, len, file.is_some())
    }

    fn from_raw(base: *mut libc::c_void, len: usize, shared: bool) -> std::io::Result<Mapping> {
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping {
            base: base.cast::<u8>(),
            len,
            shared,
        })
    }

    /// The first byte.
    #[must_use]
    pub fn as_ptr(&self) -> *mut u8 {
        self.base
    }

    /// Bytes mapped (whole OS pages).
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is mapped (never: mappings have at least one OS page).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Asks the kernel to back the whole [`HUGE_PAGE`] extents of the mapping with transparent
    /// huge pages (`madvise(MADV_HUGEPAGE)`), for memory touched page by page at random (a
    /// buffer pool's frames): one TLB entry then covers 512 pages of 4 KiB instead of one.
    /// Advice only: the contents do not change. Takes effect for pages not yet touched (the
    /// kernel's `khugepaged` may collapse touched ones later). Returns whether the kernel took
    /// the advice: false off Linux, on a kernel without transparent huge pages (or with them
    /// `never`), or for a mapping with no whole huge page.
    pub fn advise_huge_pages(&self) -> bool {
        advise_huge_pages(self.base, self.len)
    }

    /// Backs every page of a private anonymous mapping with memory now, as a first write
    /// would (`madvise(MADV_POPULATE_WRITE)`, Linux 5.14 on; elsewhere a zero written to each
    /// OS page, which the kernel maps as it would on first use): the page faults and the
    /// zeroing are paid here instead of on the first touch of each page later. The contents
    /// stay zero. Nothing for a shared (file) mapping. Call it before the memory is shared
    /// with other threads.
    pub fn populate(&self) {
        if self.shared || self.len == 0 {
            return;
        }
        if populate_write(self.base, self.len) {
            return;
        }
        let step = os_page_size();
        for offset in (0..self.len).step_by(step) {
            // SAFETY: inside the mapping, which this value owns and nobody else writes yet
            // (the caller's contract); a zero over zero leaves the contents unchanged.
            unsafe { self.base.add(offset).write_volatile(0) };
        }
    }

    /// Makes a shared file mapping's writes durable (`msync`); nothing for other mappings.
    ///
    /// # Errors
    /// The OS's error.
    pub fn flush(&self) -> std::io::Result<()> {
        if !self.shared {
            return Ok(());
        }
        // SAFETY: the whole mapping, which this value owns.
        let done = unsafe { libc::msync(self.base.cast(), self.len, libc::MS_SYNC) };
        if done == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping this value created and owns; nothing borrows it past its owner.
        let _ = unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// The size of a transparent huge page on x86-64 and most arm64 kernels (a PMD mapping).
pub const HUGE_PAGE: usize = 2 << 20;

/// [`Mapping::advise_huge_pages`] for the `len` bytes at `ptr`, memory this process owns (a
/// heap allocation too: the whole huge pages inside it). Advice only; the same return value.
pub fn advise_huge_pages(ptr: *const u8, len: usize) -> bool {
    let start = ptr as usize;
    let Some(end) = start.checked_add(len) else {
        return false;
    };
    let end = end / HUGE_PAGE * HUGE_PAGE;
    let Some(begin) = start.checked_next_multiple_of(HUGE_PAGE) else {
        return false;
    };
    if end <= begin {
        return false;
    }
    advise_huge(begin, end - begin)
}

#[cfg(target_os = "linux")]
fn advise_huge(begin: usize, len: usize) -> bool {
    // SAFETY: the range lies inside a mapping this process owns; MADV_HUGEPAGE changes no
    // contents and no protection.
    unsafe { libc::madvise(begin as *mut libc::c_void, len, libc::MADV_HUGEPAGE) == 0 }
}

/// `madvise(MADV_POPULATE_WRITE)` over the mapping's range; false when the kernel does not
/// know it (before 5.14) or refuses.
#[cfg(target_os = "linux")]
fn populate_write(base: *mut u8, len: usize) -> bool {
    // SAFETY: the range is a whole private anonymous mapping this process owns; populating it
    // for writing changes no contents and no protection.
    unsafe { libc::madvise(base.cast(), len, libc::MADV_POPULATE_WRITE) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn populate_write(_base: *mut u8, _len: usize) -> bool {
    false
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_begin: usize, _len: usize) -> bool {
    false
}

fn round_up(len: usize) -> std::io::Result<usize> {
    let os_page = os_page_size();
    len.max(1)
        .checked_next_multiple_of(os_page)
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::OutOfMemory))
}

/// Refuses a file that does not cover bytes `offset .. offset + len` (mapping past its end
/// would fault on access).
fn check_covers(file: &File, offset: usize, len: usize) -> std::io::Result<()> {
    let file_len = file.metadata()?.len();
    let end = offset as u64 + len as u64;
    if file_len < end {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the file has {file_len} bytes; mapping needs {end}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn file_of(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("image");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        (dir, file)
    }

    /// Pages of `mapping` the kernel has in memory (`mincore`).
    #[cfg(target_os = "linux")]
    fn resident_pages(mapping: &Mapping) -> usize {
        let pages = mapping.len().div_ceil(os_page_size());
        let mut vector = vec![0u8; pages];
        // SAFETY: the whole mapping, page-aligned; `vector` holds a byte per page.
        let done =
            unsafe { libc::mincore(mapping.as_ptr().cast(), mapping.len(), vector.as_mut_ptr()) };
        assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
        vector.iter().filter(|&&byte| byte & 1 == 1).count()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn populate_puts_every_page_in_memory_and_keeps_them_zero() {
        let len = 64 * os_page_size();
        let mapping = Mapping::anonymous(len).unwrap();
        mapping.populate();
        assert_eq!(resident_pages(&mapping), 64, "every page populated");
        // SAFETY: in bounds; no concurrent access.
        let bytes = unsafe { std::slice::from_raw_parts(mapping.as_ptr(), len) };
        assert!(bytes.iter().all(|&b| b == 0));
    }

    #[test]
    fn shared_file_writes_reach_the_file() {
        let page = os_page_size();
        let (_dir, file) = file_of(&vec![0u8; page]);
        let mapping = Mapping::shared_file(&file, page).unwrap();
        // SAFETY: in bounds; no concurrent access.
        unsafe { *mapping.as_ptr().add(5) = 42 };
        mapping.flush().unwrap();
        let mut on_disk = vec![0u8; 1];
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut on_disk, 5).unwrap();
        assert_eq!(on_disk[0], 42);
        assert!(
            Mapping::shared_file(&file, 2 * page).is_err(),
            "past the end"
        );
    }
}
