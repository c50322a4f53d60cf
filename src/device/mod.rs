//! The device layer: page-granular, batched, asynchronous block I/O.
//!
//! Every device (real file, RAM, emulated flash SSD or HDD, fault-injecting wrapper) implements
//! [`Device`]. I/O is submitted in batches ([`Device::submit`]) and each request completes
//! asynchronously through its [`IoTicket`]; the buffer pool keeps many I/Os in flight this way.
//! [`Device::sync`] makes every completed write durable. The fused read-write command of the
//! RW paper (docs/algorithms.md section 4) is [`IoOp::FusedReadWrite`]; devices that cannot do it
//! say so in [`DeviceInfo::supports_fused_rw`] and fail such requests with
//! [`DeviceError::Unsupported`].
//!
//! Time: emulated devices run `time_scale` times slower than real time so that a 2-core host can
//! keep up with a fast device model. [`DeviceInfo::time_scale`] says by how much; every figure a
//! report gives "in device time" is real time divided by it. Real devices have a scale of 1.
//!
//! Durability: [`Device::write_cache`] says what `sync` has to do on a device (a volatile cache
//! to drain, a power-loss protected one, none). Emulated devices also offer
//! [`Device::time_control`]: work that would take real time (preconditioning, waiting for the
//! device to go idle) runs in device time only.
//!
//! Buffers: requests carry raw [`IoBuffer`]s (the buffer pool does I/O straight into its frames),
//! so [`Device::submit`] is `unsafe`: the caller keeps each buffer alive and untouched until its
//! ticket completes. [`Device::read_page`] and [`Device::write_page`] are safe blocking wrappers.

pub mod buffer;
pub mod emulated;
pub mod fault;
pub mod file;
pub mod image_layer;
pub mod mapping;
pub mod memory;
pub mod probe;
pub mod region;
pub mod spec;
pub mod ticket;

use std::sync::Arc;

pub use buffer::{AlignedBuf, IoBuffer};
pub use spec::{DeviceSpec, OpenOptions, open};
pub use ticket::{Completion, IoTicket};

use crate::error::{DeviceError, PageId};

/// Default page size: 16 KiB, as InnoDB's.
pub const DEFAULT_PAGE_SIZE: usize = 16 * 1024;
/// Alignment of every I/O buffer (O_DIRECT needs the logical block size; 4 KiB covers all).
pub const IO_ALIGN: usize = 4096;

/// What an I/O request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    /// Read `page` into the buffer.
    Read,
    /// Write the buffer to `page`.
    Write,
    /// The RW paper's fused command: write the buffer's current contents to `write_page`, then
    /// read `page` into the same buffer. The device copies the write data first, so the read does
    /// not wait for the flash program.
    FusedReadWrite {
        /// Where the buffer's dirty contents go.
        write_page: PageId,
    },
}

/// One page-sized I/O.
#[derive(Debug)]
pub struct IoRequest {
    /// The operation.
    pub op: IoOp,
    /// The page read or written (for [`IoOp::FusedReadWrite`], the page read).
    pub page: PageId,
    /// The page-sized buffer (source of a write, destination of a read).
    pub buf: IoBuffer,
}

impl IoRequest {
    /// A read of `page` into `buf`.
    #[must_use]
    pub fn read(page: PageId, buf: IoBuffer) -> Self {
        IoRequest {
            op: IoOp::Read,
            page,
            buf,
        }
    }
    /// A write of `buf` to `page`.
    #[must_use]
    pub fn write(page: PageId, buf: IoBuffer) -> Self {
        IoRequest {
            op: IoOp::Write,
            page,
            buf,
        }
    }
    /// The fused command: write `buf` to `write_page`, then read `read_page` into `buf`.
    #[must_use]
    pub fn fused(write_page: PageId, read_page: PageId, buf: IoBuffer) -> Self {
        IoRequest {
            op: IoOp::FusedReadWrite { write_page },
            page: read_page,
            buf,
        }
    }
}

/// Static facts about an open device.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    /// Human-readable description (the device string it was opened from).
    pub name: String,
    /// Page size in bytes (every request moves exactly one page).
    pub page_size: usize,
    /// Number of addressable pages.
    pub pages: u64,
    /// Whether [`IoOp::FusedReadWrite`] is implemented.
    pub supports_fused_rw: bool,
    /// Device time runs this many times slower than real time (1.0 for real devices).
    pub time_scale: f64,
    /// Whether the device models its own latency (emulated) rather than using real hardware.
    pub emulated: bool,
    /// The device's write concurrency `k_w` (ACE Table I: the number of concurrent random
    /// writes that reach about its peak write bandwidth), when known: emulated profiles carry
    /// their paper's figure; real devices do not know theirs (`flashbuf device probe` measures
    /// it). ACE's `n_w` and `n_e` default to it.
    pub write_concurrency: Option<usize>,
}

impl DeviceInfo {
    /// Checks a request's page number and buffer against this device.
    ///
    /// # Errors
    /// [`DeviceError::OutOfRange`] or [`DeviceError::Misaligned`].
    pub fn validate(&self, request: &IoRequest) -> Result<(), DeviceError> {
        self.check_page(request.page)?;
        if let IoOp::FusedReadWrite { write_page } = request.op {
            self.check_page(write_page)?;
        }
        request.buf.check(self.page_size)
    }

    /// Checks that `page` exists on the device.
    ///
    /// # Errors
    /// [`DeviceError::OutOfRange`].
    pub fn check_page(&self, page: PageId) -> Result<(), DeviceError> {
        if page < self.pages {
            Ok(())
        } else {
            Err(DeviceError::OutOfRange {
                page,
                pages: self.pages,
            })
        }
    }
}

/// Counters a device keeps about itself. Times are in device time.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct DeviceStats {
    /// Page reads completed (fused commands count one read and one write).
    pub reads: u64,
    /// Page writes completed.
    pub writes: u64,
    /// Fused read-write commands completed.
    pub fused: u64,
    /// Sync/flush calls.
    pub syncs: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Pages programmed to flash by garbage collection (emulated devices; 0 elsewhere).
    pub gc_writes: u64,
    /// Pages programmed to flash in total, host and GC (emulated devices; 0 elsewhere).
    pub flash_programs: u64,
    /// Requests whose data copy on the host ended after their modelled completion (emulated
    /// devices; 0 elsewhere): the host, not the model, set their latency (a read of an
    /// image larger than RAM whose page is not cached, a preempted thread).
    #[serde(default)]
    pub late_copies: u64,
    /// File-system journal pages the device wrote for syncs (emulated `flush=noop` devices,
    /// whose sync is the journal commit; 0 elsewhere). Counted in `flash_programs`, not in
    /// `writes`.
    #[serde(default)]
    pub journal_writes: u64,
    /// Device time, in nanoseconds, by which those copies overran their completions.
    #[serde(default)]
    pub late_copy_ns: u64,
    /// Host writes that found their page still dirty in the device's write buffer and so cost
    /// no flash program of their own (emulated devices with `writeback=lazy`; 0 elsewhere).
    /// Why `flash_programs` can fall below `writes`.
    #[serde(default)]
    pub buffer_write_hits: u64,
}

impl DeviceStats {
    /// Write amplification: flash programs per host write, the file system's journal pages
    /// counted as host writes (1.0 when the device does not model it).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn write_amplification(&self) -> f64 {
        let host = self.writes + self.journal_writes;
        if host == 0 || self.flash_programs == 0 {
            1.0
        } else {
            self.flash_programs as f64 / host as f64
        }
    }

    /// Host writes that reached the flash: all of them, less the rewrites a lazy write buffer
    /// absorbed (`buffer_write_hits`).
    #[must_use]
    pub fn flash_writes(&self) -> u64 {
        self.writes.saturating_sub(self.buffer_write_hits)
    }

    /// The counters accumulated since `earlier`.
    #[must_use]
    pub fn since(&self, earlier: &DeviceStats) -> DeviceStats {
        DeviceStats {
            reads: self.reads.saturating_sub(earlier.reads),
            writes: self.writes.saturating_sub(earlier.writes),
            fused: self.fused.saturating_sub(earlier.fused),
            syncs: self.syncs.saturating_sub(earlier.syncs),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            gc_writes: self.gc_writes.saturating_sub(earlier.gc_writes),
            flash_programs: self.flash_programs.saturating_sub(earlier.flash_programs),
            late_copies: self.late_copies.saturating_sub(earlier.late_copies),
            journal_writes: self.journal_writes.saturating_sub(earlier.journal_writes),
            late_copy_ns: self.late_copy_ns.saturating_sub(earlier.late_copy_ns),
            buffer_write_hits: self
                .buffer_write_hits
                .saturating_sub(earlier.buffer_write_hits),
        }
    }
}

/// What a device's `sync` has to do: whether acknowledged writes can still be lost on power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteCache {
    /// A volatile write cache without power-loss protection (`plp=off`, client and consumer
    /// SSDs): `sync` waits until every acknowledged write is on the medium.
    Volatile,
    /// A volatile write cache whose firmware completes a flush without draining it (the Cosmos+
    /// OpenSSD's reference firmware): `sync` costs command time and whatever the file system
    /// writes for it, and acknowledged writes do not survive a power loss even after a sync.
    FlushIgnored,
    /// A power-loss protected write cache (`plp=on`, enterprise SSDs; replicated cloud volumes):
    /// acknowledged writes are durable, `sync` costs only command time.
    Protected,
    /// No write cache: a write is on the medium when acknowledged (the emulated HDD).
    WriteThrough,
    /// Not known (real devices unless found out otherwise, RAM).
    Unknown,
}

impl WriteCache {
    /// The `plp=` value a user would write for this cache, or a short word when none applies.
    #[must_use]
    pub fn plp_label(self) -> &'static str {
        match self {
            WriteCache::Volatile => "plp=off",
            WriteCache::FlushIgnored => "plp=off, flush ignored",
            WriteCache::Protected => "plp=on",
            WriteCache::WriteThrough => "no cache",
            WriteCache::Unknown => "unknown",
        }
    }

    /// One sentence on what `sync` costs with this cache.
    #[must_use]
    pub fn sync_meaning(self) -> &'static str {
        match self {
            WriteCache::Volatile => {
                "volatile write cache: sync waits until every acknowledged write is on the medium"
            }
            WriteCache::FlushIgnored => {
                "volatile write cache whose firmware ignores flushes: sync does not wait for the \
                 medium, and acknowledged writes are not durable"
            }
            WriteCache::Protected => {
                "power-loss protected: acknowledged writes are durable, sync costs only command time"
            }
            WriteCache::WriteThrough => {
                "no write cache: writes are on the medium when acknowledged, sync costs only command time"
            }
            WriteCache::Unknown => "not known whether acknowledged writes survive a power loss",
        }
    }
}

/// Device-time services of devices that model their own time (emulated devices). Call them
/// only while no I/O is in flight on the device: they move the device clock.
pub trait DeviceTimeControl: Send + Sync {
    /// The device's current time, nanoseconds of device time since it was opened.
    fn now_ns(&self) -> u64;

    /// Runs `writes` random page writes over pages `0..region_pages`, from `concurrency`
    /// closed-loop writers, in device time only: no real time passes and no data moves (page
    /// contents stay as they were). The device clock then stands where the last write
    /// completed, with the device's internal state (write buffer, flash layout, busy dies)
    /// as that load left it. Returns the device nanoseconds that passed.
    ///
    /// # Errors
    /// [`DeviceError::OutOfRange`] when the region exceeds the device.
    fn precondition(
        &self,
        region_pages: u64,
        writes: u64,
        concurrency: usize,
        seed: u64,
    ) -> Result<u64, DeviceError>;

    /// Lets device time pass until the work queued so far (programs, garbage collection) is
    /// done, so the device is idle; returns the device nanoseconds that passed.
    fn settle(&self) -> u64;

    /// Untimed (`true`): requests and syncs complete at once, their data moved as always but
    /// outside the timing model, so that work nothing measures (the bench's consistency check
    /// and final write-back after the measured phase) costs no device time: on an emulated
    /// HDD at time scale 32 the check of a 1-warehouse TPC-C run was estimated at 2.3 hours of
    /// real time. `false` times them again (from a model that did not see the untimed ones).
    /// May be called with I/O in flight: requests submitted before complete when they were
    /// due. The default does nothing (devices whose time is the host's).
    fn set_untimed(&self, _untimed: bool) {}

    /// Starts counting host writes afresh for [`DeviceTimeControl::age_flash`].
    fn restart_write_history(&self) {}

    /// Ages a flash device's layout with the distribution of the host writes counted since
    /// [`DeviceTimeControl::restart_write_history`], in no device time (`docs/devices.md`,
    /// "Aging the flash with the workload's writes"). May be called with I/O in flight: it
    /// holds the model for its duration (about a second per million physical pages). `None`
    /// when the device has no FTL, its `age` option is off, or no writes were counted.
    fn age_flash(&self) -> Option<emulated::aging::AgingReport> {
        None
    }
}

/// A page-granular block device with batched asynchronous I/O.
pub trait Device: Send + Sync + std::fmt::Debug {
    /// Static facts: page size, capacity, capabilities, time scale.
    fn info(&self) -> &DeviceInfo;

    /// Submits a batch of requests; returns one ticket per request, in order.
    ///
    /// Requests that fail validation (out-of-range page, misaligned buffer, unsupported command)
    /// get a ticket that is already complete with the error; the others proceed. Requests in one
    /// batch may complete in any order.
    ///
    /// # Safety
    /// Every request's buffer must point to `page_size` bytes that stay valid, and that nothing
    /// else reads (for reads) or writes (for writes) until the request's ticket reports completion
    /// (`wait` returned or `is_complete` was true).
    unsafe fn submit(&self, batch: Vec<IoRequest>) -> Vec<IoTicket>;

    /// [`Device::submit`] with buffers the caller reuses: submits the requests of `batch`
    /// (leaving it empty, its capacity kept) and appends one ticket per request to `tickets`,
    /// in order. The default hands a new vector to `submit`; a device that completes requests
    /// within the call overrides it to allocate nothing (the redo log's commits on `mem`).
    ///
    /// # Safety
    /// As [`Device::submit`], for every request of `batch`.
    unsafe fn submit_into(&self, batch: &mut Vec<IoRequest>, tickets: &mut Vec<IoTicket>) {
        // Moved into a new vector: `batch` keeps its capacity.
        let mut requests = Vec::with_capacity(batch.len());
        requests.append(batch);
        // SAFETY: the caller's contract is `submit`'s, for the same requests.
        tickets.extend(unsafe { self.submit(requests) });
    }

    /// Makes every write that completed before this call durable.
    ///
    /// # Errors
    /// The device's I/O error; after one, the durability of earlier writes is unknown.
    fn sync(&self) -> Result<(), DeviceError>;

    /// Counters since the device was opened.
    fn stats(&self) -> DeviceStats;

    /// What `sync` has to do on this device (default: not known).
    fn write_cache(&self) -> WriteCache {
        WriteCache::Unknown
    }

    /// Device-time services, for devices that model their own time (default: none).
    fn time_control(&self) -> Option<&dyn DeviceTimeControl> {
        None
    }

    /// Writes `data` (a whole number of pages) starting at `first_page` and syncs, outside any
    /// measurement: emulated devices skip their timing model. Used to load database images.
    ///
    /// # Errors
    /// Out-of-range pages or the device's I/O error.
    fn bulk_load(&self, first_page: PageId, data: &[u8]) -> Result<(), DeviceError> {
        let page_size = self.info().page_size;
        let mut buf = AlignedBuf::new(page_size);
        for (index, chunk) in data.chunks(page_size).enumerate() {
            buf.as_mut_slice()[..chunk.len()].copy_from_slice(chunk);
            self.write_page(first_page + index as u64, &buf)?;
        }
        self.sync()
    }

    /// Loads pages `first_page .. first_page + pages` from the same pages of `file` (laid out
    /// as the device: page `p` at byte `p * page_size`), outside any measurement, and syncs.
    /// The default reads the file in chunks into [`Device::bulk_load`]; RAM devices put the
    /// file under their store instead (read until a page is written,
    /// [`image_layer::ImageLayer`]), so an image larger than RAM costs only the pages a run
    /// writes (`docs/devices.md`, "Images larger than RAM").
    ///
    /// # Errors
    /// Out-of-range pages, a file that does not cover them, the device's I/O error.
    fn load_file(
        &self,
        first_page: PageId,
        file: &std::fs::File,
        pages: u64,
    ) -> Result<(), DeviceError> {
        copy_file_pages(self, first_page, file, pages)
    }

    /// Reads one page, blocking until it arrives.
    ///
    /// # Errors
    /// Validation or I/O errors.
    fn read_page(&self, page: PageId, buf: &mut AlignedBuf) -> Result<(), DeviceError> {
        let request = IoRequest::read(page, buf.io_buffer());
        // SAFETY: `buf` is exclusively borrowed for the whole call and we wait for completion.
        let mut tickets = unsafe { self.submit(vec![request]) };
        tickets.pop().map_or(Ok(()), IoTicket::wait)
    }

    /// Writes one page, blocking until the device acknowledges it (not necessarily durable).
    ///
    /// # Errors
    /// Validation or I/O errors.
    fn write_page(&self, page: PageId, buf: &AlignedBuf) -> Result<(), DeviceError> {
        let request = IoRequest::write(page, buf.io_buffer_shared());
        // SAFETY: `buf` is borrowed for the whole call, a write only reads it, and we wait.
        let mut tickets = unsafe { self.submit(vec![request]) };
        tickets.pop().map_or(Ok(()), IoTicket::wait)
    }
}

/// A shared handle to any device.
pub type SharedDevice = Arc<dyn Device>;

/// Pages per chunk of [`copy_file_pages`] (4 MiB of 16 KiB pages).
const LOAD_CHUNK_PAGES: u64 = 256;

/// [`Device::load_file`] by copying: the file's pages in chunks into [`Device::bulk_load`].
///
/// # Errors
/// A file that does not cover the pages; the device's errors.
pub fn copy_file_pages<D: Device + ?Sized>(
    device: &D,
    first_page: PageId,
    file: &std::fs::File,
    pages: u64,
) -> Result<(), DeviceError> {
    use std::os::unix::fs::FileExt as _;
    let page_size = device.info().page_size;
    let mut chunk = Vec::new();
    let mut done = 0;
    // Bound: pages / LOAD_CHUNK_PAGES iterations.
    while done < pages {
        let count = (pages - done).min(LOAD_CHUNK_PAGES);
        let page = first_page + done;
        chunk.resize(count as usize * page_size, 0);
        file.read_exact_at(&mut chunk, page * page_size as u64)
            .map_err(|err| DeviceError::Io {
                page: Some(page),
                kind: err.kind(),
                message: format!(
                    "reading pages {page}..{} of an image file: {err}",
                    page + count
                ),
            })?;
        device.bulk_load(page, &chunk)?;
        done += count;
    }
    device.sync()
}
