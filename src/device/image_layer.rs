//! An image file under a [`PageStore`](super::memory::PageStore): how the `mem` and emulated
//! devices start from a database image without reading it into RAM (`docs/devices.md`,
//! "Images larger than RAM").
//!
//! The layer covers pages `first_page .. first_page + count` of the store. Until a page is
//! written, reads of it come from the file (`pread`, through the page cache); the first write
//! marks it in a bitmap and from then on the store's own RAM holds it. A write never reaches the
//! file, and never reads it either when it covers the whole page (as every buffer-pool write
//! does): a copy-on-write mapping would read the file page from the disk before the first
//! write to it, a disk read for every page a run dirties when the image is larger than RAM.
//! Reads ask the kernel for no readahead (`POSIX_FADV_RANDOM`): one page, one disk read.
//!
//! Invariants: a page's bit is read and set only under the store's stripe lock for that page
//! (so `Relaxed` suffices); a bit once set is never cleared; the file is not modified while a
//! store uses it (images are written once: `flashbuf load` refuses an existing file).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{DeviceError, PageId};

/// The pages of an image file, laid out as the device (page `p` at byte `p * page_size`), under
/// a store.
#[derive(Debug)]
pub struct ImageLayer {
    file: File,
    page_size: usize,
    first_page: PageId,
    count: u64,
    /// One bit per covered page: set once the store holds the page.
    written: Vec<AtomicU64>,
}

impl ImageLayer {
    /// A layer of pages `first_page .. first_page + count` of `file`, which must cover them.
    ///
    /// # Errors
    /// [`DeviceError::Io`] when the file is shorter than the pages or cannot be reopened.
    pub fn new(
        file: &File,
        page_size: usize,
        first_page: PageId,
        count: u64,
    ) -> Result<Self, DeviceError> {
        let io_error = |err: std::io::Error, what: &str| DeviceError::Io {
            page: Some(first_page),
            kind: err.kind(),
            message: format!("{what} an image file of {count} pages: {err}"),
        };
        let end_byte = first_page
            .checked_add(count)
            .and_then(|end| end.checked_mul(page_size as u64))
            .ok_or_else(|| {
                io_error(
                    std::io::ErrorKind::InvalidInput.into(),
                    "addressing the pages of",
                )
            })?;
        let file_len = file
            .metadata()
            .map_err(|err| io_error(err, "reading the length of"))?
            .len();
        if file_len < end_byte {
            return Err(io_error(
                std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("the file has {file_len} bytes, the pages need {end_byte}"),
                ),
                "layering",
            ));
        }
        let file = file.try_clone().map_err(|err| io_error(err, "reopening"))?;
        advise_random(&file);
        let words = usize::try_from(count.div_ceil(64)).unwrap_or(usize::MAX);
        Ok(ImageLayer {
            file,
            page_size,
            first_page,
            count,
            written: (0..words).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// Whether `page` still reads from the file (covered and never written). Call under the
    /// page's stripe lock.
    #[must_use]
    pub fn reads_file(&self, page: PageId) -> bool {
        self.bit(page)
            .is_some_and(|(word, mask)| self.written[word].load(Ordering::Relaxed) & mask == 0)
    }

    /// Marks `page` as held by the store from now on. Call under the page's stripe lock, after
    /// the store holds the page's bytes.
    pub fn mark_written(&self, page: PageId) {
        if let Some((word, mask)) = self.bit(page) {
            self.written[word].fetch_or(mask, Ordering::Relaxed);
        }
    }

    /// Copies `page`'s bytes in the file into `out` (at most one page).
    ///
    /// # Errors
    /// [`DeviceError::Io`] from the read.
    pub fn read(&self, page: PageId, out: &mut [u8]) -> Result<(), DeviceError> {
        debug_assert!(out.len() <= self.page_size, "at most one page");
        let offset = page * self.page_size as u64;
        self.file
            .read_exact_at(out, offset)
            .map_err(|err| DeviceError::Io {
                page: Some(page),
                kind: err.kind(),
                message: format!("reading page {page} of an image file: {err}"),
            })
    }

    fn bit(&self, page: PageId) -> Option<(usize, u64)> {
        let index = page
            .checked_sub(self.first_page)
            .filter(|&i| i < self.count)?;
        Some((usize::try_from(index / 64).ok()?, 1u64 << (index % 64)))
    }
}

/// Asks the kernel not to read ahead on `file` (random page reads). Advice only: a failure
/// changes nothing but speed.
fn advise_random(file: &File) {
    // SAFETY: a valid descriptor; the advice does not touch memory.
    let _ = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn image(pages: &[u8], page_size: usize) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("image");
        let mut file = File::create(&path).unwrap();
        for &fill in pages {
            file.write_all(&vec![fill; page_size]).unwrap();
        }
        (dir, File::open(&path).unwrap())
    }

    #[test]
    fn covered_pages_read_the_file_until_written() {
        let (_dir, file) = image(&[1, 2, 3, 4], 512);
        let layer = ImageLayer::new(&file, 512, 1, 2).unwrap();
        assert!(!layer.reads_file(0), "before the layer");
        assert!(layer.reads_file(1) && layer.reads_file(2));
        assert!(!layer.reads_file(3), "past the layer");
        let mut out = vec![0u8; 512];
        layer.read(2, &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 3));
        layer.mark_written(2);
        assert!(!layer.reads_file(2));
        assert!(layer.reads_file(1), "one bit per page");
        layer.mark_written(7);
        assert!(
            !layer.reads_file(7),
            "marking an uncovered page changes nothing"
        );
    }

    #[test]
    fn refuses_a_file_shorter_than_its_pages() {
        let (_dir, file) = image(&[1, 2], 512);
        let err = ImageLayer::new(&file, 512, 1, 2).unwrap_err();
        assert!(
            matches!(
                err,
                DeviceError::Io {
                    kind: std::io::ErrorKind::UnexpectedEof,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(ImageLayer::new(&file, 512, 0, 2).is_ok());
    }
}
