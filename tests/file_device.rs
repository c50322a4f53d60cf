//! The `file:` device: data round-trips through io_uring and the thread fallback, concurrent
//! batches, validation errors, sizing rules, reopen after sync, drop with I/O in flight.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use flashbuf::device::file::{self, FileBackend, FileDevice};
use flashbuf::device::ticket::wait_all;
use flashbuf::device::{AlignedBuf, Device, IoRequest, OpenOptions, SharedDevice};
use flashbuf::{DeviceError, Error};

const PAGE: usize = 4096;

/// A temp dir on the build disk (`/tmp` may be tmpfs, which refuses O_DIRECT).
fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("file-device-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn options(pages: u64) -> OpenOptions {
    OpenOptions {
        page_size: PAGE,
        pages,
        create: true,
    }
}

fn open(path: &Path, pages: u64, backend: FileBackend) -> SharedDevice {
    file::open_with(path, &options(pages), backend).unwrap()
}

fn page_of(page: u64, salt: u8) -> AlignedBuf {
    let mut buf = AlignedBuf::new(PAGE);
    for (index, byte) in buf.as_mut_slice().iter_mut().enumerate() {
        *byte = (index as u64 ^ page.wrapping_mul(131)) as u8 ^ salt;
    }
    buf
}

fn round_trip(backend: FileBackend) {
    let dir = temp_dir();
    let path = dir.path().join("dev");
    let device = open(&path, 64, backend);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 64 * PAGE as u64);
    let mut back = AlignedBuf::new(PAGE);
    device.read_page(10, &mut back).unwrap();
    assert!(
        back.as_slice().iter().all(|&b| b == 0),
        "new pages are zeros"
    );
    for page in [0, 1, 33, 63] {
        device.write_page(page, &page_of(page, 7)).unwrap();
    }
    for page in [0, 1, 33, 63] {
        device.read_page(page, &mut back).unwrap();
        assert_eq!(back.as_slice(), page_of(page, 7).as_slice(), "page {page}");
    }
    let stats = device.stats();
    assert_eq!((stats.writes, stats.reads), (4, 5));
    assert_eq!(stats.read_bytes, 5 * PAGE as u64);
}

fn uring_available() -> bool {
    let dir = temp_dir();
    match file::open_with(&dir.path().join("probe"), &options(1), FileBackend::Uring) {
        Ok(_) => true,
        Err(err) => {
            eprintln!("io_uring unavailable here, uring test skipped: {err}");
            false
        }
    }
}

#[test]
fn round_trips_with_io_uring() {
    if uring_available() {
        round_trip(FileBackend::Uring);
    }
}

#[test]
fn round_trips_with_the_thread_fallback() {
    round_trip(FileBackend::Threads);
}

#[test]
fn auto_picks_a_working_backend() {
    let dir = temp_dir();
    let device = FileDevice::open(
        &dir.path().join("dev"),
        &options(4),
        FileBackend::Auto,
        &mut |_, _| {},
    )
    .unwrap();
    let expected =
        if std::env::var(file::BACKEND_ENV).is_ok_and(|v| v == "threads") || !uring_available() {
            FileBackend::Threads
        } else {
            FileBackend::Uring
        };
    assert_eq!(device.backend(), expected);
    device.write_page(3, &page_of(3, 1)).unwrap();
}

/// Four threads, each writing then reading back batches larger than the ring.
fn concurrent_batches(backend: FileBackend) {
    let dir = temp_dir();
    let device = open(&dir.path().join("dev"), 1024, backend);
    let threads: Vec<_> = (0..4u64)
        .map(|thread| {
            let device = Arc::clone(&device);
            std::thread::spawn(move || {
                for round in 0..3u8 {
                    let pages: Vec<u64> = (0..300).map(|i| thread * 256 + i % 256).collect();
                    let pages = &pages[..256];
                    let bufs: Vec<AlignedBuf> = pages.iter().map(|&p| page_of(p, round)).collect();
                    let batch = pages
                        .iter()
                        .zip(&bufs)
                        .map(|(&p, b)| IoRequest::write(p, b.io_buffer_shared()))
                        .collect();
                    // SAFETY: `bufs` outlives the wait below.
                    wait_all(unsafe { device.submit(batch) }).unwrap();
                    let mut backs: Vec<AlignedBuf> =
                        pages.iter().map(|_| AlignedBuf::new(PAGE)).collect();
                    let batch = pages
                        .iter()
                        .zip(backs.iter_mut())
                        .map(|(&p, b)| IoRequest::read(p, b.io_buffer()))
                        .collect();
                    // SAFETY: `backs` outlives the wait and is not touched before it.
                    wait_all(unsafe { device.submit(batch) }).unwrap();
                    for ((&p, back), buf) in pages.iter().zip(&backs).zip(&bufs) {
                        assert_eq!(back.as_slice(), buf.as_slice(), "page {p} round {round}");
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(device.stats().writes, 4 * 3 * 256);
}

#[test]
fn many_concurrent_batches_with_io_uring() {
    if uring_available() {
        concurrent_batches(FileBackend::Uring);
    }
}

#[test]
fn many_concurrent_batches_with_threads() {
    concurrent_batches(FileBackend::Threads);
}

#[test]
fn the_single_ring_with_a_reaper_still_works() {
    if uring_available() {
        round_trip(FileBackend::UringReaper);
        concurrent_batches(FileBackend::UringReaper);
    }
}

#[test]
fn the_file_can_be_registered_in_the_rings() {
    if uring_available() {
        // SAFETY (of set_var): this test binary's other tests do not read FIXED_FILE_ENV, and
        // a concurrent open seeing it only registers the file, which is correct either way.
        unsafe { std::env::set_var(file::FIXED_FILE_ENV, "1") };
        round_trip(FileBackend::Uring);
        // SAFETY: as above.
        unsafe { std::env::remove_var(file::FIXED_FILE_ENV) };
    }
}

/// Per-thread rings: a request submitted by one thread is waited for by another (which must
/// reap the submitter's ring itself while the submitter sleeps), and polling `is_complete`
/// alone brings a request to completion.
#[test]
fn a_request_completes_for_a_waiter_on_another_thread() {
    if !uring_available() {
        return;
    }
    let dir = temp_dir();
    let device = open(&dir.path().join("dev"), 64, FileBackend::Uring);
    let bufs: Vec<AlignedBuf> = (0..8u64).map(|p| page_of(p, 3)).collect();
    let batch = bufs
        .iter()
        .enumerate()
        .map(|(p, b)| IoRequest::write(p as u64, b.io_buffer_shared()))
        .collect();
    // SAFETY: `bufs` outlives every wait below.
    let mut tickets = unsafe { device.submit(batch) };
    let last = tickets.pop().unwrap();
    let waiter = std::thread::spawn(move || wait_all(tickets));
    waiter.join().unwrap().unwrap();
    // Bounded: the write is in flight on this thread's ring; polling reaps it.
    let mut polls = 0u64;
    while !last.is_complete() {
        polls += 1;
        assert!(polls < 100_000_000, "polling never completed the request");
        std::hint::spin_loop();
    }
    last.wait().unwrap();
    let mut back = AlignedBuf::new(PAGE);
    for page in 0..8u64 {
        device.read_page(page, &mut back).unwrap();
        assert_eq!(back.as_slice(), page_of(page, 3).as_slice(), "page {page}");
    }
}

/// More submitting threads than rings: the threads past the bound share rings, and every
/// request completes with the right data.
#[test]
fn threads_beyond_the_ring_bound_share_rings() {
    if !uring_available() {
        return;
    }
    let dir = temp_dir();
    let device = open(&dir.path().join("dev"), 512, FileBackend::Uring);
    let threads = file::rings::MAX_RINGS + 8;
    std::thread::scope(|scope| {
        for thread in 0..threads as u64 {
            let device = &device;
            scope.spawn(move || {
                let page = thread % 512;
                device.write_page(page, &page_of(page, 9)).unwrap();
                let mut back = AlignedBuf::new(PAGE);
                device.read_page(page, &mut back).unwrap();
                assert_eq!(back.as_slice(), page_of(page, 9).as_slice());
            });
        }
    });
    assert_eq!(device.stats().writes, threads as u64);
}

/// The synchronous calls (`read_page`/`write_page`: on the rings, submit and wait in one
/// `io_uring_enter`) while the same thread has a batch in flight on its ring, whose
/// completions may be what that enter returns for: each call still returns only once its own
/// request is complete, with the right data, and the batch completes too; a bad page fails
/// at once. Every backend.
#[test]
fn synchronous_calls_beside_a_batch_in_flight() {
    let mut backends = vec![FileBackend::Threads];
    if uring_available() {
        backends.extend([FileBackend::Uring, FileBackend::UringReaper]);
    }
    for backend in backends {
        let dir = temp_dir();
        let device = open(&dir.path().join("dev"), 256, backend);
        for round in 0..4u8 {
            let bufs: Vec<AlignedBuf> = (0..48u64).map(|p| page_of(p, round)).collect();
            let batch = bufs
                .iter()
                .enumerate()
                .map(|(p, b)| IoRequest::write(p as u64, b.io_buffer_shared()))
                .collect();
            // SAFETY: `bufs` outlives the wait below.
            let tickets = unsafe { device.submit(batch) };
            for page in 100..116u64 {
                device.write_page(page, &page_of(page, round)).unwrap();
                let mut back = AlignedBuf::new(PAGE);
                device.read_page(page, &mut back).unwrap();
                assert_eq!(
                    back.as_slice(),
                    page_of(page, round).as_slice(),
                    "{backend:?} page {page} round {round}"
                );
            }
            wait_all(tickets).unwrap();
            let mut back = AlignedBuf::new(PAGE);
            for page in 0..48u64 {
                device.read_page(page, &mut back).unwrap();
                assert_eq!(back.as_slice(), page_of(page, round).as_slice());
            }
        }
        let mut back = AlignedBuf::new(PAGE);
        assert!(matches!(
            device.read_page(256, &mut back),
            Err(DeviceError::OutOfRange { .. })
        ));
        let stats = device.stats();
        assert_eq!(stats.writes, 4 * (48 + 16), "{backend:?}");
        assert_eq!(stats.reads, 4 * (16 + 48), "{backend:?}");
    }
}

#[test]
fn rejects_bad_requests_without_stopping_the_batch() {
    for backend in [FileBackend::Auto, FileBackend::Threads] {
        let dir = temp_dir();
        let device = open(&dir.path().join("dev"), 8, backend);
        let good = page_of(2, 3);
        let small = AlignedBuf::new(PAGE / 2);
        let unaligned = AlignedBuf::new(2 * PAGE);
        // SAFETY: an in-bounds pointer into `unaligned`, which outlives the request.
        let shifted = unsafe {
            flashbuf::device::IoBuffer::from_raw(
                std::ptr::NonNull::new(unaligned.as_slice().as_ptr().add(512).cast_mut()).unwrap(),
                PAGE,
            )
        };
        let batch = vec![
            IoRequest::write(8, good.io_buffer_shared()),
            IoRequest::write(1, small.io_buffer_shared()),
            IoRequest::write(1, shifted),
            IoRequest::fused(1, 2, good.io_buffer_shared()),
            IoRequest::write(2, good.io_buffer_shared()),
        ];
        // SAFETY: every buffer outlives the waits.
        let tickets = unsafe { device.submit(batch) };
        let results: Vec<_> = tickets.into_iter().map(|t| t.wait()).collect();
        assert!(matches!(
            results[0],
            Err(DeviceError::OutOfRange { page: 8, pages: 8 })
        ));
        assert!(matches!(results[1], Err(DeviceError::Misaligned { .. })));
        assert!(matches!(results[2], Err(DeviceError::Misaligned { .. })));
        assert!(matches!(results[3], Err(DeviceError::Unsupported { .. })));
        assert_eq!(results[4], Ok(()));
        assert!(!device.info().supports_fused_rw);
        assert_eq!(device.stats().writes, 1);
    }
}

#[test]
fn reopen_sees_synced_data_and_sizes_are_checked() {
    let dir = temp_dir();
    let path = dir.path().join("dev");
    {
        let device = open(&path, 16, FileBackend::Auto);
        device.write_page(5, &page_of(5, 9)).unwrap();
        device.sync().unwrap();
        assert_eq!(device.stats().syncs, 1);
    }
    let existing = OpenOptions {
        create: false,
        ..options(16)
    };
    let device = file::open(&path, &existing).unwrap();
    let mut back = AlignedBuf::new(PAGE);
    device.read_page(5, &mut back).unwrap();
    assert_eq!(back.as_slice(), page_of(5, 9).as_slice());
    drop(device);

    let too_big = OpenOptions {
        create: false,
        ..options(32)
    };
    let err = file::open(&path, &too_big).unwrap_err();
    assert!(
        matches!(&err, Error::Config(m) if m.contains("holds")),
        "{err}"
    );
    let missing = file::open(&dir.path().join("missing"), &too_big).unwrap_err();
    assert!(matches!(missing, Error::Io { .. }), "{missing}");
}

#[test]
fn extending_writes_only_the_new_pages_and_keeps_old_data() {
    let dir = temp_dir();
    let path = dir.path().join("dev");
    {
        let device = open(&path, 8, FileBackend::Threads);
        device.write_page(7, &page_of(7, 4)).unwrap();
        device.sync().unwrap();
    }
    let mut calls = Vec::new();
    let file_options = file::FileOptions {
        backend: FileBackend::Threads,
        extend: true,
    };
    let device = FileDevice::open_with_options(&path, &options(200), &file_options, &mut |d, t| {
        calls.push((d, t));
    })
    .unwrap();
    assert_eq!(
        calls.last(),
        Some(&(192, 192)),
        "progress counts the new pages"
    );
    assert!(calls.windows(2).all(|w| w[0].0 < w[1].0));
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 200 * PAGE as u64);
    let mut back = AlignedBuf::new(PAGE);
    device.read_page(7, &mut back).unwrap();
    assert_eq!(back.as_slice(), page_of(7, 4).as_slice());
    device.read_page(199, &mut back).unwrap();
    assert!(back.as_slice().iter().all(|&b| b == 0));
}

#[test]
fn dropping_the_device_drains_in_flight_io() {
    for backend in [FileBackend::Auto, FileBackend::Threads] {
        let dir = temp_dir();
        let path = dir.path().join("dev");
        let device = open(&path, 512, backend);
        let bufs: Vec<AlignedBuf> = (0..512).map(|p| page_of(p, 5)).collect();
        let batch = bufs
            .iter()
            .enumerate()
            .map(|(p, b)| IoRequest::write(p as u64, b.io_buffer_shared()))
            .collect();
        // SAFETY: `bufs` outlives the tickets' wait.
        let tickets = unsafe { device.submit(batch) };
        drop(device);
        wait_all(tickets).unwrap();
        let device = open(&path, 512, backend);
        let mut back = AlignedBuf::new(PAGE);
        device.read_page(511, &mut back).unwrap();
        assert_eq!(back.as_slice(), bufs[511].as_slice());
    }
}

#[test]
fn backend_names_parse() {
    assert_eq!(FileBackend::parse("threads").unwrap(), FileBackend::Threads);
    assert_eq!(FileBackend::parse("uring").unwrap(), FileBackend::Uring);
    assert!(FileBackend::parse("aio").is_err());
}

#[test]
fn device_strings_open_files() {
    let dir = temp_dir();
    let path: PathBuf = dir.path().join("via-spec");
    let spec = flashbuf::device::DeviceSpec::parse(&format!("file:{}", path.display())).unwrap();
    let device = flashbuf::device::open(&spec, &options(4)).unwrap();
    assert_eq!(device.info().pages, 4);
    assert!(device.info().name.starts_with("file:"));
}
