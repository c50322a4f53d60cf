//! `mem`: a RAM device with no modelled latency, and [`PageStore`], the page-content store the
//! emulated devices share.
//!
//! Invariant: a page's bytes are copied under its stripe lock, so a concurrent read never sees
//! half of a write (the buffer pool never issues two conflicting I/Os on one page anyway).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use super::image_layer::ImageLayer;
use super::mapping::Mapping;
use super::{Device, DeviceInfo, DeviceStats, IoOp, IoRequest, IoTicket};
use crate::error::{DeviceError, PageId};

const STRIPES: usize = 256;

/// Page contents in RAM, zero until written: an anonymous mapping the OS fills lazily, so a
/// large, mostly unwritten device costs little, or a shared mapping of a file
/// ([`PageStore::shared_file`]). An image file can lie under a range of pages, read until the
/// pages are written ([`PageStore::layer_file`], [`ImageLayer`]).
pub struct PageStore {
    page_size: usize,
    pages: u64,
    bytes: Mapping,
    stripes: Vec<Mutex<()>>,
    image: OnceLock<ImageLayer>,
}

impl std::fmt::Debug for PageStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageStore")
            .field("page_size", &self.page_size)
            .field("pages", &self.pages)
            .finish_non_exhaustive()
    }
}

impl PageStore {
    /// A store of `pages` zeroed pages.
    ///
    /// # Errors
    /// [`DeviceError::Io`] (kind `OutOfMemory`) when the store cannot be mapped.
    pub fn new(page_size: usize, pages: u64) -> Result<Self, DeviceError> {
        let total = Self::total_bytes(page_size, pages)?;
        let bytes = Mapping::anonymous(total).map_err(|err| DeviceError::Io {
            page: None,
            kind: std::io::ErrorKind::OutOfMemory,
            message: format!(
                "a RAM store of {pages} pages of {page_size} bytes cannot be mapped: {err}"
            ),
        })?;
        Ok(Self::over(page_size, pages, bytes))
    }

    /// A store of `pages` pages that are the first pages of `file` (open for reading and
    /// writing, at least that long): writes reach the file's page cache, and
    /// [`PageStore::flush`] makes them durable.
    ///
    /// # Errors
    /// [`DeviceError::Io`] for a file that is too short or cannot be mapped.
    pub fn shared_file(
        page_size: usize,
        pages: u64,
        file: &std::fs::File,
    ) -> Result<Self, DeviceError> {
        let total = Self::total_bytes(page_size, pages)?;
        let bytes = Mapping::shared_file(file, total).map_err(|err| DeviceError::Io {
            page: None,
            kind: err.kind(),
            message: format!("mapping {pages} pages of {page_size} bytes of a file: {err}"),
        })?;
        Ok(Self::over(page_size, pages, bytes))
    }

    fn over(page_size: usize, pages: u64, bytes: Mapping) -> Self {
        PageStore {
            page_size,
            pages,
            bytes,
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            image: OnceLock::new(),
        }
    }

    fn total_bytes(page_size: usize, pages: u64) -> Result<usize, DeviceError> {
        usize::try_from(pages)
            .ok()
            .and_then(|p| p.checked_mul(page_size))
            .filter(|&total| total > 0)
            .ok_or_else(|| DeviceError::Io {
                page: None,
                kind: std::io::ErrorKind::OutOfMemory,
                message: format!(
                    "a RAM store of {pages} pages of {page_size} bytes cannot be allocated"
                ),
            })
    }

    /// Puts pages `first_page .. first_page + count` of `file` (laid out as the device: page
    /// `p` at byte `p * page_size`) under the store: until written, those pages read from the
    /// file, and writes never reach it ([`ImageLayer`]). Returns `Ok(false)`, changing
    /// nothing, when the store already has an image under it (the caller copies instead).
    /// Takes every stripe lock, so no read or write sees the change half done.
    ///
    /// # Errors
    /// [`DeviceError::OutOfRange`] past the store; [`DeviceError::Io`] for a file that does
    /// not cover the pages.
    pub fn layer_file(
        &self,
        first_page: PageId,
        count: u64,
        file: &std::fs::File,
    ) -> Result<bool, DeviceError> {
        if count == 0 {
            return Ok(true);
        }
        let end = first_page.saturating_add(count);
        if end > self.pages {
            return Err(DeviceError::OutOfRange {
                page: end - 1,
                pages: self.pages,
            });
        }
        if self.image.get().is_some() {
            return Ok(false);
        }
        let layer = ImageLayer::new(file, self.page_size, first_page, count)?;
        let _all: Vec<_> = self.stripes.iter().map(|stripe| stripe.lock()).collect();
        Ok(self.image.set(layer).is_ok())
    }

    /// Makes the writes to a [`PageStore::shared_file`] store durable; nothing otherwise.
    ///
    /// # Errors
    /// [`DeviceError::Io`] from `msync`.
    pub fn flush(&self) -> Result<(), DeviceError> {
        self.bytes.flush().map_err(|err| DeviceError::Io {
            page: None,
            kind: err.kind(),
            message: format!("syncing a file-backed store: {err}"),
        })
    }

    /// Page size in bytes.
    #[must_use]
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Number of pages.
    #[must_use]
    pub fn pages(&self) -> u64 {
        self.pages
    }

    fn range(&self, page: PageId) -> Result<*mut u8, DeviceError> {
        if page >= self.pages {
            return Err(DeviceError::OutOfRange {
                page,
                pages: self.pages,
            });
        }
        let offset = usize::try_from(page).unwrap_or(usize::MAX) * self.page_size;
        // SAFETY: `page < pages`, so the page lies inside the mapping of `pages * page_size`
        // bytes.
        Ok(unsafe { self.bytes.as_ptr().add(offset) })
    }

    /// The image layer when `page` still reads from it. Call under the page's stripe lock.
    fn image_under(&self, page: PageId) -> Option<&ImageLayer> {
        self.image.get().filter(|layer| layer.reads_file(page))
    }

    fn stripe(&self, page: PageId) -> &Mutex<()> {
        &self.stripes[usize::try_from(page % STRIPES as u64).unwrap_or(0)]
    }

    /// Copies `page` into `out` (which must be `page_size` bytes).
    ///
    /// # Errors
    /// [`DeviceError::OutOfRange`].
    pub fn read(&self, page: PageId, out: &mut [u8]) -> Result<(), DeviceError> {
        assert_eq!(out.len(), self.page_size, "page-sized buffer");
        let src = self.range(page)?;
        let _guard = self.stripe(page).lock();
        if let Some(layer) = self.image_under(page) {
            return layer.read(page, out);
        }
        // SAFETY: in bounds (checked by `range`), exclusive under the stripe lock.
        unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), self.page_size) };
        Ok(())
    }

    /// Copies `data` (a prefix of at most one page) into `page`; the rest of the page is kept.
    ///
    /// # Errors
    /// [`DeviceError::OutOfRange`].
    pub fn write(&self, page: PageId, data: &[u8]) -> Result<(), DeviceError> {
        assert!(data.len() <= self.page_size, "at most one page");
        let dst = self.range(page)?;
        let _guard = self.stripe(page).lock();
        let layer = self.image_under(page);
        if let Some(layer) = layer.filter(|_| data.len() < self.page_size) {
            // The rest of the page is the image's: bring it up first.
            // SAFETY: in bounds (checked by `range`), exclusive under the stripe lock.
            let whole = unsafe { std::slice::from_raw_parts_mut(dst, self.page_size) };
            layer.read(page, whole)?;
        }
        // SAFETY: in bounds (checked by `range`), exclusive under the stripe lock.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
        if let Some(layer) = layer {
            layer.mark_written(page);
        }
        Ok(())
    }

    /// Performs a request's data movement at once (no timing). The fused command writes first.
    ///
    /// # Safety
    /// The request's buffer must be valid and not accessed by anyone else during the call.
    ///
    /// # Errors
    /// [`DeviceError::OutOfRange`].
    pub unsafe fn apply(&self, request: &IoRequest) -> Result<(), DeviceError> {
        // SAFETY: forwarded to the caller.
        let buf = unsafe { request.buf.as_mut_slice() };
        match request.op {
            IoOp::Read => self.read(request.page, buf),
            IoOp::Write => self.write(request.page, buf),
            IoOp::FusedReadWrite { write_page } => {
                self.write(write_page, buf)?;
                self.read(request.page, buf)
            }
        }
    }
}

/// Counters shared by the simple devices.
#[derive(Debug, Default)]
pub struct AtomicStats {
    reads: AtomicU64,
    writes: AtomicU64,
    fused: AtomicU64,
    syncs: AtomicU64,
    read_bytes: AtomicU64,
    write_bytes: AtomicU64,
}

impl AtomicStats {
    /// Counts one completed request of `page_size` bytes.
    pub fn count(&self, op: IoOp, page_size: usize) {
        let bytes = page_size as u64;
        match op {
            IoOp::Read => {
                self.reads.fetch_add(1, Ordering::Relaxed);
                self.read_bytes.fetch_add(bytes, Ordering::Relaxed);
            }
            IoOp::Write => {
                self.writes.fetch_add(1, Ordering::Relaxed);
                self.write_bytes.fetch_add(bytes, Ordering::Relaxed);
            }
            IoOp::FusedReadWrite { .. } => {
                self.fused.fetch_add(1, Ordering::Relaxed);
                self.reads.fetch_add(1, Ordering::Relaxed);
                self.writes.fetch_add(1, Ordering::Relaxed);
                self.read_bytes.fetch_add(bytes, Ordering::Relaxed);
                self.write_bytes.fetch_add(bytes, Ordering::Relaxed);
            }
        }
    }

    /// Counts one sync.
    pub fn count_sync(&self) {
        self.syncs.fetch_add(1, Ordering::Relaxed);
    }

    /// A snapshot.
    #[must_use]
    pub fn snapshot(&self) -> DeviceStats {
        DeviceStats {
            reads: self.reads.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            fused: self.fused.load(Ordering::Relaxed),
            syncs: self.syncs.load(Ordering::Relaxed),
            read_bytes: self.read_bytes.load(Ordering::Relaxed),
            write_bytes: self.write_bytes.load(Ordering::Relaxed),
            ..DeviceStats::default()
        }
    }
}

/// The `mem` device: every request completes at submission.
#[derive(Debug)]
pub struct MemoryDevice {
    info: DeviceInfo,
    store: PageStore,
    stats: AtomicStats,
}

impl MemoryDevice {
    /// A zeroed RAM device.
    ///
    /// # Errors
    /// When the RAM cannot be allocated.
    pub fn new(page_size: usize, pages: u64) -> Result<Self, DeviceError> {
        Ok(MemoryDevice::new_with(
            page_size,
            pages,
            PageStore::new(page_size, pages)?,
        ))
    }

    /// A RAM device whose pages are the first `pages` pages of `file` (open for reading and
    /// writing, at least that long), through a shared mapping: writes reach the file's page
    /// cache, a sync makes them durable. Builds images larger than RAM (`flashbuf load`).
    ///
    /// # Errors
    /// A file that is too short or cannot be mapped.
    pub fn on_file(
        page_size: usize,
        pages: u64,
        file: &std::fs::File,
    ) -> Result<Self, DeviceError> {
        let mut device = MemoryDevice::new_with(
            page_size,
            pages,
            PageStore::shared_file(page_size, pages, file)?,
        );
        device.info.name = "mem (file-backed)".into();
        Ok(device)
    }

    fn new_with(page_size: usize, pages: u64, store: PageStore) -> Self {
        MemoryDevice {
            info: DeviceInfo {
                name: "mem".into(),
                page_size,
                pages,
                supports_fused_rw: true,
                time_scale: 1.0,
                emulated: false,
                write_concurrency: None,
            },
            store,
            stats: AtomicStats::default(),
        }
    }

    /// The page contents (for tests and crash images).
    #[must_use]
    pub fn store(&self) -> &PageStore {
        &self.store
    }

    /// Validates and applies one request now; its ticket is already complete.
    ///
    /// # Safety
    /// [`Device::submit`]'s contract for `request`'s buffer.
    unsafe fn complete(&self, request: &IoRequest) -> IoTicket {
        let result = self.info.validate(request).and_then(|()| {
            // SAFETY: the caller's submit contract covers the buffer.
            unsafe { self.store.apply(request) }
        });
        if result.is_ok() {
            self.stats.count(request.op, self.info.page_size);
        }
        IoTicket::done(result)
    }
}

impl Device for MemoryDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    unsafe fn submit(&self, batch: Vec<IoRequest>) -> Vec<IoTicket> {
        batch
            .into_iter()
            // SAFETY: the caller's submit contract covers every request.
            .map(|request| unsafe { self.complete(&request) })
            .collect()
    }

    unsafe fn submit_into(&self, batch: &mut Vec<IoRequest>, tickets: &mut Vec<IoTicket>) {
        // SAFETY: as `submit`.
        tickets.extend(
            batch
                .drain(..)
                .map(|request| unsafe { self.complete(&request) }),
        );
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.stats.count_sync();
        self.store.flush()
    }

    fn stats(&self) -> DeviceStats {
        self.stats.snapshot()
    }

    fn bulk_load(&self, first_page: PageId, data: &[u8]) -> Result<(), DeviceError> {
        for (index, chunk) in data.chunks(self.info.page_size).enumerate() {
            self.store.write(first_page + index as u64, chunk)?;
        }
        Ok(())
    }

    fn load_file(
        &self,
        first_page: PageId,
        file: &std::fs::File,
        pages: u64,
    ) -> Result<(), DeviceError> {
        if self.store.layer_file(first_page, pages, file)? {
            Ok(())
        } else {
            super::copy_file_pages(self, first_page, file, pages)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::AlignedBuf;

    #[test]
    fn round_trips_pages_and_rejects_bad_requests() {
        let device = MemoryDevice::new(4096, 8).unwrap();
        let mut buf = AlignedBuf::new(4096);
        buf.as_mut_slice()[..4].copy_from_slice(b"abcd");
        assert!(device.write_page(3, &buf).is_ok());
        let mut back = AlignedBuf::new(4096);
        assert!(device.read_page(3, &mut back).is_ok());
        assert_eq!(&back.as_slice()[..4], b"abcd");
        assert!(matches!(
            device.read_page(8, &mut back),
            Err(DeviceError::OutOfRange { page: 8, pages: 8 })
        ));
        let mut small = AlignedBuf::new(2048);
        assert!(matches!(
            device.read_page(0, &mut small),
            Err(DeviceError::Misaligned { .. })
        ));
        assert_eq!(device.stats().writes, 1);
        assert_eq!(device.stats().reads, 1);
    }

    #[test]
    fn an_image_under_the_store_reads_until_written_and_is_never_written() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("image");
        let mut file = std::fs::File::create(&path).unwrap();
        for fill in 1..=3u8 {
            file.write_all(&[fill; 512]).unwrap();
        }
        let file = std::fs::File::open(&path).unwrap();
        let store = PageStore::new(512, 4).unwrap();
        store.write(1, &[9; 512]).unwrap();
        assert!(store.layer_file(0, 3, &file).unwrap());
        assert!(
            !store.layer_file(0, 3, &file).unwrap(),
            "one image per store"
        );
        let mut out = vec![0u8; 512];
        store.read(1, &mut out).unwrap();
        assert!(
            out.iter().all(|&b| b == 2),
            "the image hides earlier writes"
        );
        store.write(2, &[7; 100]).unwrap();
        store.read(2, &mut out).unwrap();
        assert!(out[..100].iter().all(|&b| b == 7), "the write");
        assert!(
            out[100..].iter().all(|&b| b == 3),
            "the rest of the image's page"
        );
        store.write(0, &[5; 512]).unwrap();
        store.read(0, &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 5));
        store.read(3, &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 0), "past the image: zeros");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            [[1u8; 512], [2; 512], [3; 512]].concat(),
            "the file is untouched"
        );
        assert!(matches!(
            store.layer_file(2, 3, &file),
            Err(DeviceError::OutOfRange { page: 4, pages: 4 })
        ));
    }
}
