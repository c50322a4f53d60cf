//! `file:PATH`: a real file (or block device) opened with O_DIRECT, page-granular positioned I/O.
//!
//! Three engines move the data (docs/architecture.md, "device/": file, io_uring + fallback):
//! - [`rings`] ([`FileBackend::Uring`], the default): an io_uring per submitting thread; a
//!   waiter reaps the ring its request went to itself (no reaper thread, no hand-off), which
//!   brought `device probe`'s random reads to fio's level (docs/performance.md, "The file device
//!   against fio").
//! - [`uring`] ([`FileBackend::UringReaper`]): one io_uring per device. Submitters push SQEs under
//!   a short mutex; one reaper thread submits them, waits for CQEs and completes each request's
//!   [`Completion`]. In-flight requests are bounded by the ring size ([`uring::RING_ENTRIES`]);
//!   a submitter waits when the ring is full. Kept as the measured alternative.
//! - [`threads`]: the fallback where io_uring is unavailable (old kernel, seccomp). A bounded
//!   queue ([`threads::QUEUE_CAPACITY`]) feeds a fixed pool of [`threads::WORKERS`] threads doing
//!   `pread`/`pwrite`.
//!
//! [`FileBackend::Auto`] tries the per-thread rings, then the single ring, and falls back to
//! threads when no ring can be created; the environment variable [`BACKEND_ENV`] (`uring`,
//! `uring-reaper` or `threads`) forces one, and [`FIXED_FILE_ENV`]`=1` makes the per-thread rings
//! register the file (measured no faster on this host; off by default).
//!
//! Invariants: every buffer handed to an engine passed [`DeviceInfo::validate`] (aligned, one
//! page, page in range); each request's completion is filled exactly once; dropping the device
//! waits for every in-flight request and stops the engine's threads.
//!
//! Creating a file writes every page once (zeros), so that later reads touch the medium rather
//! than unwritten extents (which the file system answers with zeros without any device I/O,
//! faking read figures).
//!
//! **Safety of existing files.** Opening never truncates, extends or writes an existing
//! non-empty file: `create` means "create if missing or empty"; an existing file whose size is
//! not a whole number of pages (not one of ours: e.g. `/bin/ls`) or is smaller than asked is
//! rejected before anything is written. Growing an existing file needs
//! [`FileOptions::extend`], which a caller sets only after validating the file's contents. A new
//! file's directory is fsynced after the file is created and filled, so the file's name is
//! durable too.
//!
//! **One holder.** Every open takes the locks of [`lock`]: a second open of the same file, in
//! this process or another, fails with [`Error::Locked`] naming the file and the holder's pid
//! while the holder lives; the lock is released when the device is dropped or its process dies.
//! An open right after the holder was killed waits (briefly) until the kernel has finished the
//! dead process's in-flight io_uring requests, instead of failing.
//!
//! Lock order: `uring` slot counter, then `uring` submission mutex (never both at once); no lock
//! is held across a system call.

pub mod lock;
pub mod rings;
pub mod threads;
pub mod uring;

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

use super::memory::AtomicStats;
use super::{
    AlignedBuf, Completion, Device, DeviceInfo, DeviceStats, IoBuffer, IoOp, IoRequest, IoTicket,
    OpenOptions, SharedDevice,
};
use crate::error::{DeviceError, Error, PageId, Result};

/// Environment variable forcing the backend of [`FileBackend::Auto`]: `uring`, `uring-reaper`
/// or `threads`.
pub const BACKEND_ENV: &str = "FLASHBUF_FILE_BACKEND";
/// Environment variable: `1` makes the per-thread rings register the file (a fixed file);
/// anything else, or unset, uses the plain descriptor.
pub const FIXED_FILE_ENV: &str = "FLASHBUF_URING_FIXED_FILE";

/// Pages written per `pwrite` while filling a new or extended file (1 MiB at 16 KiB pages).
const FILL_CHUNK_PAGES: usize = 64;

/// Which engine performs the I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileBackend {
    /// io_uring if a ring can be created (per-thread rings, else one ring with a reaper), else
    /// the thread pool ([`BACKEND_ENV`] overrides).
    Auto,
    /// io_uring with a ring per submitting thread, reaped by its waiters ([`rings`]); opening
    /// fails if no ring can be created.
    Uring,
    /// io_uring with one ring per device and a reaper thread ([`uring`]); opening fails if no
    /// ring can be created.
    UringReaper,
    /// The `pread`/`pwrite` thread pool.
    Threads,
}

impl FileBackend {
    /// Parses `uring`, `uring-reaper`, `threads` or `auto`.
    ///
    /// # Errors
    /// [`Error::Config`] for anything else.
    pub fn parse(text: &str) -> Result<Self> {
        match text.trim() {
            "auto" => Ok(FileBackend::Auto),
            "uring" | "io_uring" => Ok(FileBackend::Uring),
            "uring-reaper" => Ok(FileBackend::UringReaper),
            "threads" => Ok(FileBackend::Threads),
            other => Err(Error::Config(format!(
                "{BACKEND_ENV}=`{other}`: expected uring, uring-reaper, threads or auto"
            ))),
        }
    }

    /// `Auto` refined by [`BACKEND_ENV`]; explicit choices are kept.
    fn resolve_env(self) -> Result<Self> {
        if self != FileBackend::Auto {
            return Ok(self);
        }
        match std::env::var(BACKEND_ENV) {
            Ok(text) if !text.trim().is_empty() => FileBackend::parse(&text),
            _ => Ok(FileBackend::Auto),
        }
    }
}

/// Opens (and if `options.create`, creates when missing or empty) a file device with the
/// automatic backend. Never extends an existing file.
///
/// # Errors
/// See [`FileDevice::open`].
pub fn open(path: &Path, options: &OpenOptions) -> Result<SharedDevice> {
    open_with(path, options, FileBackend::Auto)
}

/// Like [`open`], but an existing file shorter than `options.pages` is extended with zero
/// pages. Call it only after validating the file's contents (e.g. its data-file header).
///
/// # Errors
/// See [`FileDevice::open`].
pub fn open_extending(path: &Path, options: &OpenOptions) -> Result<SharedDevice> {
    let file_options = FileOptions {
        backend: FileBackend::Auto,
        extend: true,
    };
    Ok(Arc::new(FileDevice::open_with_options(
        path,
        options,
        &file_options,
        &mut |_, _| {},
    )?))
}

/// The size of an existing file or block device in whole pages, without opening it for I/O
/// (no lock, nothing written).
///
/// # Errors
/// [`Error::Io`] when it cannot be opened or sized; [`Error::Config`] when its size is not a
/// whole number of pages.
pub fn existing_pages(path: &Path, page_size: usize) -> Result<u64> {
    let mut file =
        File::open(path).map_err(|err| Error::io(format!("opening {}", path.display()), err))?;
    let length = file
        .seek(SeekFrom::End(0))
        .map_err(|err| Error::io(format!("sizing {}", path.display()), err))?;
    if page_size == 0 || !length.is_multiple_of(page_size as u64) {
        return Err(not_whole_pages(path, length, page_size));
    }
    Ok(length / page_size as u64)
}

/// How [`FileDevice::open_with_options`] opens a file beyond [`OpenOptions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileOptions {
    /// The I/O engine.
    pub backend: FileBackend,
    /// Extend an existing regular file that is shorter than `OpenOptions::pages` (zero pages
    /// appended). Off by default: set it only after validating the file's contents.
    pub extend: bool,
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions {
            backend: FileBackend::Auto,
            extend: false,
        }
    }
}

/// Opens a file device with a chosen backend.
///
/// # Errors
/// See [`FileDevice::open`].
pub fn open_with(path: &Path, options: &OpenOptions, backend: FileBackend) -> Result<SharedDevice> {
    Ok(Arc::new(FileDevice::open(
        path,
        options,
        backend,
        &mut |_, _| {},
    )?))
}

/// What the engines share: the open file, the page size and the counters.
#[derive(Debug)]
pub struct FileShared {
    file: File,
    page_size: usize,
    stats: AtomicStats,
}

impl FileShared {
    /// Byte offset of `page`.
    fn offset(&self, page: PageId) -> u64 {
        page * self.page_size as u64
    }

    /// Turns a transfer's outcome (bytes moved, or an OS error) into the request's result and
    /// counts it when it succeeded.
    fn finish(&self, job: &Job, moved: std::io::Result<usize>) {
        let result = match moved {
            Ok(bytes) if bytes == self.page_size => {
                self.stats.count(job.op, self.page_size);
                Ok(())
            }
            Ok(bytes) => Err(DeviceError::Io {
                page: Some(job.page),
                kind: std::io::ErrorKind::UnexpectedEof,
                message: format!("short transfer: {bytes} of {} bytes", self.page_size),
            }),
            Err(err) => Err(DeviceError::from_io(Some(job.page), &err)),
        };
        job.completion.complete(result);
    }
}

/// One validated page read or write handed to an engine.
#[derive(Debug)]
pub struct Job {
    op: IoOp,
    page: PageId,
    buf: IoBuffer,
    completion: Arc<Completion>,
}

/// The engine of an open device.
#[derive(Debug)]
enum Engine {
    Rings(rings::RingsEngine),
    Uring(uring::UringEngine),
    Threads(threads::ThreadEngine),
}

/// A file device. Dropping it drains in-flight I/O and stops its threads, then releases its
/// holder lock (fields drop in declaration order: `_holder` must stay last).
#[derive(Debug)]
pub struct FileDevice {
    info: DeviceInfo,
    shared: Arc<FileShared>,
    engine: Engine,
    _holder: lock::HolderLock,
}

impl FileDevice {
    /// Opens `path` with O_DIRECT and an exclusive lock. With `options.create`, a missing or
    /// empty file is created with `options.pages` zero pages (`progress(done, total)` is called
    /// with page counts while they are written) and its directory is fsynced. An existing
    /// non-empty file is never written here: it must be a whole number of pages and hold at
    /// least `options.pages` pages.
    ///
    /// # Errors
    /// [`Error::Locked`] when another open (a live process) holds the file; [`Error::Io`] when
    /// a killed holder's file is not released by the kernel within [`lock::DRAIN_TIMEOUT`];
    /// [`Error::Config`] for bad options,
    /// a file that is not a whole number of pages or is too short, a refused O_DIRECT or an
    /// unavailable forced backend; [`Error::Io`] for other OS errors.
    pub fn open(
        path: &Path,
        options: &OpenOptions,
        backend: FileBackend,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Self> {
        let file_options = FileOptions {
            backend,
            extend: false,
        };
        FileDevice::open_with_options(path, options, &file_options, progress)
    }

    /// [`FileDevice::open`] with [`FileOptions`] (e.g. `extend` to grow a validated file).
    ///
    /// # Errors
    /// As [`FileDevice::open`].
    pub fn open_with_options(
        path: &Path,
        options: &OpenOptions,
        file_options: &FileOptions,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Self> {
        options.validate()?;
        let backend = file_options.backend.resolve_env()?;
        let (mut file, created) = open_direct(path, options.create)?;
        let holder = lock::acquire(&file, path)?;
        let wrote = prepare_size(&mut file, path, options, file_options.extend, progress)?;
        if created || wrote {
            sync_parent_dir(path)?;
        }
        let shared = Arc::new(FileShared {
            file,
            page_size: options.page_size,
            stats: AtomicStats::default(),
        });
        let engine = start_engine(&shared, backend)?;
        let info = DeviceInfo {
            name: format!("file:{}", path.display()),
            page_size: options.page_size,
            pages: options.pages,
            supports_fused_rw: false,
            time_scale: 1.0,
            emulated: false,
            write_concurrency: None,
        };
        Ok(FileDevice {
            info,
            shared,
            engine,
            _holder: holder,
        })
    }

    /// The backend actually in use ([`FileBackend::Uring`], [`FileBackend::UringReaper`] or
    /// [`FileBackend::Threads`]).
    #[must_use]
    pub fn backend(&self) -> FileBackend {
        match self.engine {
            Engine::Rings(_) => FileBackend::Uring,
            Engine::Uring(_) => FileBackend::UringReaper,
            Engine::Threads(_) => FileBackend::Threads,
        }
    }

    /// Checks a request and turns it into a job, or says why it cannot run.
    fn job(
        &self,
        request: &IoRequest,
        completion: impl FnOnce() -> Arc<Completion>,
    ) -> Result<Job, DeviceError> {
        if let IoOp::FusedReadWrite { .. } = request.op {
            return Err(DeviceError::Unsupported {
                device: self.info.name.clone(),
                command: "fused read-write",
            });
        }
        self.info.validate(request)?;
        Ok(Job {
            op: request.op,
            page: request.page,
            buf: request.buf,
            completion: completion(),
        })
    }

    /// One request, waited for: on the per-thread rings it is submitted and waited for in one
    /// `io_uring_enter`; the other engines submit and wait as [`Device::submit`] does.
    ///
    /// # Safety
    /// As [`Device::submit`]; the call returns only once the request completed.
    unsafe fn io_now(&self, request: IoRequest) -> Result<(), DeviceError> {
        let Engine::Rings(engine) = &self.engine else {
            // SAFETY: forwarded; we wait for the ticket before returning.
            let mut tickets = unsafe { self.submit(vec![request]) };
            return tickets.pop().map_or(Ok(()), super::IoTicket::wait);
        };
        let ring = engine.ring();
        let driver: std::sync::Weak<dyn super::ticket::Driver> =
            Arc::downgrade(&ring) as std::sync::Weak<dyn super::ticket::Driver>;
        let job = self.job(&request, || Completion::with_driver(driver))?;
        let ticket = IoTicket::shared(Arc::clone(&job.completion));
        rings::RingsEngine::submit_and_wait(&ring, job);
        ticket.wait()
    }
}

impl Device for FileDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    unsafe fn submit(&self, batch: Vec<IoRequest>) -> Vec<IoTicket> {
        let mut tickets = Vec::with_capacity(batch.len());
        let mut jobs = Vec::with_capacity(batch.len());
        // The per-thread rings: the caller's ring takes the jobs, and their waiters reap it.
        let ring = match &self.engine {
            Engine::Rings(engine) => Some(engine.ring()),
            Engine::Uring(_) | Engine::Threads(_) => None,
        };
        let completion = || match &ring {
            Some(ring) => {
                let driver: std::sync::Weak<dyn super::ticket::Driver> =
                    Arc::downgrade(ring) as std::sync::Weak<dyn super::ticket::Driver>;
                Completion::with_driver(driver)
            }
            None => Completion::new(),
        };
        for request in &batch {
            match self.job(request, completion) {
                Ok(job) => {
                    tickets.push(IoTicket::shared(Arc::clone(&job.completion)));
                    jobs.push(job);
                }
                Err(err) => tickets.push(IoTicket::done(Err(err))),
            }
        }
        match (&self.engine, &ring) {
            (Engine::Rings(_), Some(ring)) => rings::RingsEngine::submit(ring, jobs),
            (Engine::Uring(engine), _) => engine.submit(jobs),
            (Engine::Threads(engine), _) => engine.submit(jobs),
            (Engine::Rings(_), None) => unreachable!("the rings engine always names a ring"),
        }
        assert_eq!(tickets.len(), batch.len(), "one ticket per request");
        tickets
    }

    fn read_page(&self, page: PageId, buf: &mut AlignedBuf) -> Result<(), DeviceError> {
        // SAFETY: `buf` is exclusively borrowed for the whole call and we wait for completion.
        unsafe { self.io_now(IoRequest::read(page, buf.io_buffer())) }
    }

    fn write_page(&self, page: PageId, buf: &AlignedBuf) -> Result<(), DeviceError> {
        // SAFETY: `buf` is borrowed for the whole call, a write only reads it, and we wait.
        unsafe { self.io_now(IoRequest::write(page, buf.io_buffer_shared())) }
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.shared
            .file
            .sync_data()
            .map_err(|err| DeviceError::from_io(None, &err))?;
        self.shared.stats.count_sync();
        Ok(())
    }

    fn stats(&self) -> DeviceStats {
        self.shared.stats.snapshot()
    }
}

fn start_engine(shared: &Arc<FileShared>, backend: FileBackend) -> Result<Engine> {
    let fixed_file = std::env::var(FIXED_FILE_ENV).is_ok_and(|value| value.trim() == "1");
    let unavailable = |err: std::io::Error| {
        Error::Config(format!(
            "io_uring is unavailable ({err}); use {BACKEND_ENV}=threads"
        ))
    };
    match backend {
        FileBackend::Threads => Ok(Engine::Threads(threads::ThreadEngine::new(shared)?)),
        FileBackend::Uring => rings::RingsEngine::new(shared, fixed_file)
            .map(Engine::Rings)
            .map_err(unavailable),
        FileBackend::UringReaper => uring::UringEngine::new(shared)
            .map(Engine::Uring)
            .map_err(unavailable),
        FileBackend::Auto => {
            if let Ok(engine) = rings::RingsEngine::new(shared, fixed_file) {
                return Ok(Engine::Rings(engine));
            }
            match uring::UringEngine::new(shared) {
                Ok(engine) => Ok(Engine::Uring(engine)),
                Err(_) => Ok(Engine::Threads(threads::ThreadEngine::new(shared)?)),
            }
        }
    }
}

/// Opens `path` read-write with O_DIRECT, with a clear message when the file system refuses it.
/// With `create`, a missing file is created (`O_CREAT | O_EXCL`, so an existing one is never
/// taken for new). Returns the file and whether this call created it.
fn open_direct(path: &Path, create: bool) -> Result<(File, bool)> {
    let open = |create_new: bool| {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(create_new)
            .custom_flags(libc::O_DIRECT)
            .open(path)
    };
    let opened = if create {
        match open(true) {
            Ok(file) => Ok((file, true)),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                open(false).map(|file| (file, false))
            }
            Err(err) => Err(err),
        }
    } else {
        open(false).map(|file| (file, false))
    };
    opened.map_err(|err| {
        if err.raw_os_error() == Some(libc::EINVAL) {
            Error::Config(format!(
                "{}: the file system refuses O_DIRECT (tmpfs does); put the file on a disk file \
                 system such as ext4 or xfs",
                path.display()
            ))
        } else {
            Error::io(format!("opening {} with O_DIRECT", path.display()), err)
        }
    })
}

/// Fsyncs the directory holding `path`, so a newly created file's name is durable.
fn sync_parent_dir(path: &Path) -> Result<()> {
    let parent = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(parent)
        .and_then(|dir| dir.sync_all())
        .map_err(|err| Error::io(format!("syncing directory {}", parent.display()), err))
}

fn not_whole_pages(path: &Path, length: u64, page_size: usize) -> Error {
    Error::Config(format!(
        "{} holds {length} bytes, not a whole number of {page_size}-byte pages: it is not a \
         device file of this page size (nothing was written to it)",
        path.display()
    ))
}

/// Makes sure the file holds `options.pages` pages: a new or empty file (with `create`) is
/// filled with zero pages; an existing one must be a whole number of pages and long enough,
/// or (with `extend`) is extended. Returns whether pages were written.
fn prepare_size(
    file: &mut File,
    path: &Path,
    options: &OpenOptions,
    extend: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<bool> {
    let needed = options
        .pages
        .checked_mul(options.page_size as u64)
        .ok_or_else(|| Error::Config(format!("{} pages overflow a file size", options.pages)))?;
    let is_block = file
        .metadata()
        .map_err(|err| Error::io(format!("stat {}", path.display()), err))?
        .file_type()
        .is_block_device();
    let length = file
        .seek(SeekFrom::End(0))
        .map_err(|err| Error::io(format!("sizing {}", path.display()), err))?;
    if length == 0 && options.create && !is_block {
        fill_pages(file, path, options, 0, progress)?;
        return Ok(true);
    }
    if !is_block && !length.is_multiple_of(options.page_size as u64) {
        return Err(not_whole_pages(path, length, options.page_size));
    }
    if length >= needed {
        return Ok(false);
    }
    if !extend || is_block {
        return Err(Error::Config(format!(
            "{} holds {length} bytes but {} pages of {} bytes need {needed}{}",
            path.display(),
            options.pages,
            options.page_size,
            if is_block {
                " (a block device cannot grow)"
            } else {
                "; nothing was written (an existing file grows only when opened with extend, \
                 after its contents were validated)"
            }
        )));
    }
    fill_pages(
        file,
        path,
        options,
        length / options.page_size as u64,
        progress,
    )?;
    Ok(true)
}

/// Writes zero pages from `first` to `options.pages` (one pass, chunks of [`FILL_CHUNK_PAGES`]),
/// then syncs data and size.
fn fill_pages(
    file: &File,
    path: &Path,
    options: &OpenOptions,
    first: PageId,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<()> {
    let page_size = options.page_size as u64;
    let total = options.pages - first;
    let zeros = AlignedBuf::new(FILL_CHUNK_PAGES * options.page_size);
    let mut page = first;
    // Bounded: `page` grows by at least one each turn up to `options.pages`.
    while page < options.pages {
        let count = (options.pages - page).min(FILL_CHUNK_PAGES as u64);
        let bytes = count as usize * options.page_size;
        file.write_all_at(&zeros.as_slice()[..bytes], page * page_size)
            .map_err(|err| fill_error(path, err))?;
        page += count;
        progress(page - first, total);
    }
    file.sync_all()
        .map_err(|err| Error::io(format!("syncing {}", path.display()), err))
}

fn fill_error(path: &Path, err: std::io::Error) -> Error {
    if err.raw_os_error() == Some(libc::EINVAL) {
        Error::Config(format!(
            "{}: the file system refuses O_DIRECT writes; use a disk file system such as ext4",
            path.display()
        ))
    } else {
        Error::io(format!("writing pages of {}", path.display()), err)
    }
}
