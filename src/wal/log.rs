//! The redo log writer: concurrent append into a bounded in-memory buffer, group commit
//! (`flush_to`), checkpoints into two alternating slots, and opening with recovery (issue 5;
//! the margins are docs/algorithms.md section 1; the format is `docs/wal-format.md`).
//!
//! **Append.** A caller encodes its records outside the lock, then under `inner` reserves the
//! LSN range, stamps LSN and CRC into the frames and copies them into the page buffer (memcpy
//! only, no I/O). `append` returns the *end* LSN of the batch (= start of the next record); a
//! data page changed by these records gets `newest_modification = end`; use `append_range` for
//! the start LSN (a page's `oldest_modification`, a valid checkpoint redo LSN).
//!
//! **Group commit.** `flush_to(lsn)` returns once the log is durable up to `lsn`. The first
//! caller that finds no flush running becomes the leader: under the lock it copies every page
//! from the durable one (the partial last page is rewritten) to the current one into its private
//! I/O buffer (the last page only up to the end of the log, zeros after it), releases the lock, writes the pages in one batch and syncs once, then publishes
//! `durable_lsn` and wakes the followers that waited on the condvar. Records appended during
//! that I/O go out with the next leader.
//!
//! **Full log.** Appending never lets `current_lsn - checkpoint_lsn` exceed `capacity`: `append`
//! *blocks* on the `space` condvar until `write_checkpoint` moves the checkpoint, at most
//! `WalConfig::full_timeout`, then returns [`Error::LogFull`] (the caller should have reacted to
//! `checkpoint_age_state` long before). A full in-memory buffer makes the appender run a flush.
//!
//! **Buffer slots.** A page entering the buffer gets its header and nothing else: the bytes of
//! its slot after the end of the log are whatever an earlier page left there, and are never
//! read. Every image written to the device is cut at the end of the log and zero-filled after
//! it (`Wal::page_image`), so the device holds exactly the bytes of `docs/wal-format.md`
//! (zeros after the last record), as when slots were zeroed as pages entered them.
//!
//! **Open.** Recovery (`reader.rs`) finds the end of the valid log; the page holding it is
//! loaded into the buffer with zeros after the end and written back (synced) before `open`
//! returns, so a discarded tail never sits next to new records; records chain by CRC
//! (`prev_crc`), so a discarded record further on cannot follow a new one either.
//!
//! **Failure.** A failed write or sync poisons the log: `durable_lsn` never moves again, and
//! every later append, flush and checkpoint returns [`Error::Poisoned`] with the first cause.
//!
//! **Reads without the lock.** `current_lsn`, `checkpoint_lsn` and whether the log is poisoned
//! are mirrored in `Published` atomics, stored (release) under `inner` right after the field
//! they mirror changes, so [`Wal::current_lsn`], [`Wal::checkpoint_age`] and
//! [`Wal::poison_cause`]'s common answer take no lock: a mini-transaction asks all three
//! before its append, and each lock of `inner` by one thread moves its cache line away from
//! the others (InnoDB's `log_free_check` likewise reads without the log mutex). A value read
//! is one the field held at some instant no earlier than the last change that happened before
//! the read, as under the lock; what the caller does with it may be stale either way.
//!
//! Lock order: `checkpoint` before `inner`. No I/O under `inner` (the leader holds the
//! `flushing` flag, not the mutex, while writing). Bounds: the page buffer holds
//! `buffer_pages` pages (asserted on every copy); one leader at a time; waits are bounded by
//! `full_timeout` or by the leader's single I/O round.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::device::{AlignedBuf, IoRequest, IoTicket, SharedDevice, ticket::wait_all};
use crate::error::{DeviceError, Error, FormatProblem, Result};
use crate::page::Lsn;
use crate::sync::CacheLines;

use super::layout::{
    CheckpointSlot, Geometry, LOG_PAGE_HEADER, WalConfig, log_page_is_current, stamp_flush_start,
    stamp_log_page,
};
use super::margins::{AgeState, LogMargins};
use super::reader::{self, Recovery};
use super::record::{self, EncodedBatch, FRAME_SIZE, LogRecord, MAX_RECORD_BYTES};

/// Largest encoding buffer [`Wal::append_range`] keeps per thread for its next append (bytes).
const SPARE_BATCH_LIMIT: usize = 256 * 1024;

std::thread_local! {
    /// The encoding buffer of this thread's last [`Wal::append_range`].
    static SPARE_BATCH: Cell<Option<EncodedBatch>> = const { Cell::new(None) };
    /// The request and ticket vectors of this thread's last flush (`Wal::write_pages`).
    static WRITE_SPARE: Cell<Option<(Vec<IoRequest>, Vec<IoTicket>)>> = const { Cell::new(None) };
}

/// Room kept free for the `Checkpoint` record of `write_checkpoint`, so a full log can always
/// record its checkpoint: one frame plus its body, plus a page header it may cross.
const CHECKPOINT_RESERVE: u64 = (FRAME_SIZE + 8 + LOG_PAGE_HEADER) as u64;
/// Bound on the wait rounds of one `flush_to` (each round waits for one leader's I/O, or at
/// most `FOLLOWER_WAIT`).
const MAX_FLUSH_ROUNDS: usize = 1 << 20;
/// How long a follower sleeps on the condvar before looking again.
const FOLLOWER_WAIT: Duration = Duration::from_millis(50);
/// Bound on the flush-and-retry rounds of one append that finds the buffer full.
const MAX_APPEND_ROUNDS: usize = 1 << 16;

/// The LSN range an append occupied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LsnRange {
    /// LSN of the first record's first byte.
    pub start: Lsn,
    /// LSN just past the last record (what `append` returns).
    pub end: Lsn,
}

/// Counters of one log (since it was opened).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct WalStats {
    /// Records appended.
    pub appends: u64,
    /// Bytes of log appended (record bytes and the page headers they crossed).
    pub appended_bytes: u64,
    /// `flush_to` calls that returned success (commits served).
    pub commits: u64,
    /// Device syncs issued by flush leaders (group commits).
    pub flushes: u64,
    /// Log pages written (partial pages count each time they are rewritten).
    pub pages_written: u64,
    /// Bytes written to the log device by flushes.
    pub bytes_written: u64,
    /// Appends that had to wait for the checkpoint to free ring space.
    pub full_waits: u64,
    /// Checkpoints written.
    pub checkpoints: u64,
    /// Commits per sync: `commits / flushes` (0 before the first sync).
    pub mean_group_size: f64,
    /// End of the appended log.
    pub current_lsn: Lsn,
    /// The log is durable up to here.
    pub durable_lsn: Lsn,
    /// Redo LSN of the newest durable checkpoint.
    pub checkpoint_lsn: Lsn,
}

#[derive(Debug, Default)]
struct Counters {
    appends: AtomicU64,
    appended_bytes: AtomicU64,
    commits: AtomicU64,
    flushes: AtomicU64,
    pages_written: AtomicU64,
    bytes_written: AtomicU64,
    full_waits: AtomicU64,
    checkpoints: AtomicU64,
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// `Inner`'s fields that readers take without the lock (see the module docs): each stored
/// with release ordering under `inner`, right after its field changed. The end of the log,
/// written by every append, has its cache lines to itself, so that reading the two that
/// rarely change (asked before every append) does not miss the cache after each append of
/// another thread.
#[derive(Debug)]
struct Published {
    /// `Inner::current_lsn`.
    current_lsn: CacheLines<AtomicU64>,
    /// `Inner::checkpoint_lsn` and `Inner::poisoned.is_some()`, on lines of their own too
    /// (whatever the compiler places beside them may be written often).
    rare: CacheLines<RarelyChanged>,
}

/// [`Published`]'s fields that change at checkpoints and failures only.
#[derive(Debug)]
struct RarelyChanged {
    checkpoint_lsn: AtomicU64,
    poisoned: AtomicBool,
}

/// State under the log mutex.
struct Inner {
    /// `buffer_pages` log pages; stream page `k` lives in slot `k % buffer_pages`. Holds every
    /// page from `page_of(durable_lsn)` to `page_of(current_lsn)`.
    buffer: AlignedBuf,
    /// End of the appended log (a record boundary, never inside a page header).
    current_lsn: Lsn,
    /// The log is durable up to here (a record boundary, <= `current_lsn`).
    durable_lsn: Lsn,
    /// Redo LSN of the newest durable checkpoint.
    checkpoint_lsn: Lsn,
    /// A leader is writing; it owns the I/O buffer meanwhile.
    flushing: bool,
    /// The leader's private copy of the pages it writes (`None` while a leader has it).
    io_buf: Option<AlignedBuf>,
    /// The first write or sync failure.
    poisoned: Option<DeviceError>,
    /// CRC of the last record appended (the next record's `prev_crc`).
    last_crc: u32,
}

/// The newest checkpoint, under its own mutex (taken before `inner`).
struct CheckpointState {
    last: CheckpointSlot,
    page: AlignedBuf,
}

/// A write-ahead redo log on its own device.
pub struct Wal {
    device: SharedDevice,
    config: WalConfig,
    geometry: Geometry,
    margins: LogMargins,
    buffer_pages: u64,
    max_record_len: usize,
    log_id: u64,
    checkpoint: Mutex<CheckpointState>,
    inner: Mutex<Inner>,
    published: Published,
    /// Signalled when a leader finishes (durable moved, or the log is poisoned).
    flushed: Condvar,
    /// Signalled when the checkpoint moves (ring space freed).
    space: Condvar,
    counters: Counters,
}

impl std::fmt::Debug for Wal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wal")
            .field("config", &self.config)
            .field("log_id", &self.log_id)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

fn poisoned(cause: &DeviceError) -> Error {
    Error::Poisoned(cause.clone())
}

impl Wal {
    /// Formats a new, empty log on `device` (any earlier log there is forgotten).
    ///
    /// # Errors
    /// [`Error::Config`] for a bad configuration or a device that does not fit it; device
    /// errors while writing the checkpoint slots.
    pub fn create(device: SharedDevice, config: WalConfig) -> Result<Wal> {
        config.validate()?;
        check_page_size(&device, &config)?;
        check_device(&device, &config)?;
        let geometry = config.geometry();
        let log_id = rand::random::<u64>() | 1;
        let mut page = AlignedBuf::new(config.page_size);
        // Blank slot 0 first, so an older log's slot can never outrank the new one.
        device.write_page(0, &page)?;
        device.sync()?;
        let slot = CheckpointSlot {
            log_id,
            page_size: config.page_size as u32,
            log_size: config.log_size,
            seq: 1,
            redo_lsn: geometry.start_lsn(),
            durable_lsn: geometry.start_lsn(),
        };
        slot.encode(page.as_mut_slice());
        device.write_page(slot.slot(), &page)?;
        device.sync()?;
        Ok(Wal::resume(
            device,
            config,
            slot,
            geometry.start_lsn(),
            &[],
            0,
        ))
    }

    /// Opens the log on `device`: reads the checkpoint slots, scans the log (see
    /// [`Recovery`]) and resumes appending at the end of the valid log. Never formats. Before
    /// returning it rewrites the page holding the end with zeros after it and syncs (the
    /// garbage tail is gone before any new record is written next to it); the records found
    /// do not change, so opening twice without appends gives the same result.
    ///
    /// # Errors
    /// - [`Error::Format`]: blank slots (`Blank`: not formatted), another format version, a
    ///   page size other than the device's, a device shorter than the formatted log
    ///   (`Truncated`, naming both sizes);
    /// - [`Error::Config`]: a bad configuration or a log formatted with another log size;
    /// - [`Error::CorruptLog`]: both slots damaged; or log that was durable is unreadable:
    ///   the scan stops before the checkpoint's `durable_lsn`, or a ring page written by a
    ///   later flush proves the log was durable past where the scan stopped (the reason names
    ///   the stop, the LSN and the proving page);
    /// - device errors.
    pub fn open(device: SharedDevice, config: WalConfig) -> Result<(Wal, Recovery)> {
        config.validate()?;
        check_page_size(&device, &config)?;
        let Some(slot) = reader::read_checkpoint(device.as_ref(), &config)? else {
            return Err(Error::Format {
                device: device.info().name.clone(),
                problem: FormatProblem::Blank,
            });
        };
        check_device(&device, &config)?;
        Wal::recover(device, config, slot)
    }

    /// Opens the log, or formats one when the device is blank: both checkpoint slots *and* the
    /// first ring page all zeros ([`reader::inspect`]). A device whose slots are zeros but
    /// whose ring holds log pages (a log that lost its header) is never formatted over.
    ///
    /// # Errors
    /// As [`Wal::open`] and [`Wal::create`]; [`Error::CorruptLog`] when the slots are blank but
    /// the ring is not.
    pub fn open_or_create(device: SharedDevice, config: WalConfig) -> Result<(Wal, Recovery)> {
        config.validate()?;
        check_page_size(&device, &config)?;
        match reader::inspect(device.as_ref(), &config)? {
            reader::LogDeviceContent::Formatted(slot) => {
                check_device(&device, &config)?;
                Wal::recover(device, config, slot)
            }
            reader::LogDeviceContent::HeaderLost => Err(Error::CorruptLog {
                offset: 0,
                reason: "both checkpoint slots are blank but the ring holds log pages: the \
                         log lost its header; refusing to format over it"
                    .into(),
            }),
            reader::LogDeviceContent::Blank => {
                let wal = Wal::create(device, config)?;
                let checkpoint = wal.checkpoint.lock().last;
                let end_lsn = wal.current_lsn();
                let recovery = Recovery {
                    checkpoint,
                    records: Vec::new(),
                    end_lsn,
                    stop: reader::StopReason::Record(record::DecodeError::BadLength(0)),
                    proven_durable_lsn: end_lsn,
                };
                Ok((wal, recovery))
            }
        }
    }

    fn recover(
        device: SharedDevice,
        config: WalConfig,
        slot: CheckpointSlot,
    ) -> Result<(Wal, Recovery)> {
        let geometry = config.geometry();
        let scan = reader::scan(device.as_ref(), geometry, &slot)?;
        if scan.end_lsn < slot.durable_lsn {
            return Err(Error::CorruptLog {
                offset: scan.end_lsn,
                reason: format!(
                    "the log ends at {} ({:?}) but checkpoint {} recorded it durable to {}",
                    scan.end_lsn, scan.stop, slot.seq, slot.durable_lsn
                ),
            });
        }
        let survey = reader::find_proof(device.as_ref(), geometry, &slot, scan.end_lsn)?;
        if let Some((stream_page, stamp)) = survey.proof {
            return Err(Error::CorruptLog {
                offset: scan.end_lsn,
                reason: format!(
                    "the record scan stops at LSN {} ({:?}), but log page {} (LSN {}, device \
                     page {}) was written by a flush that began when the log was durable to \
                     {stamp}: the log past {} had been synced, so this is corruption, not a \
                     torn tail",
                    scan.end_lsn,
                    scan.stop,
                    stream_page,
                    stream_page * geometry.page_size,
                    geometry.device_page(stream_page),
                    scan.end_lsn
                ),
            });
        }
        let proven_durable_lsn = survey.highest_at_or_below_end.max(slot.durable_lsn);
        assert!(
            proven_durable_lsn <= scan.end_lsn,
            "no proof means no stamp past the end"
        );
        let wal = Wal::resume(
            device,
            config,
            slot,
            scan.end_lsn,
            &scan.tail_page,
            scan.last_crc,
        );
        wal.rewrite_tail().map_err(Error::Device)?;
        let recovery = Recovery {
            checkpoint: slot,
            records: scan.records,
            end_lsn: scan.end_lsn,
            stop: scan.stop,
            proven_durable_lsn,
        };
        Ok((wal, recovery))
    }

    /// Builds the writer with the log durable and current at `end_lsn`; `tail_page` holds the
    /// bytes of `end_lsn`'s page before it (empty: start that page afresh); `last_crc` is the
    /// CRC of the record that ends at `end_lsn`.
    fn resume(
        device: SharedDevice,
        config: WalConfig,
        slot: CheckpointSlot,
        end_lsn: Lsn,
        tail_page: &[u8],
        last_crc: u32,
    ) -> Wal {
        let geometry = config.geometry();
        assert!(
            geometry.is_boundary(end_lsn),
            "the log resumes at a boundary"
        );
        let buffer_pages = (config.buffer_size / config.page_size) as u64;
        let mut buffer = AlignedBuf::new(config.buffer_size);
        let page = geometry.page_of(end_lsn);
        let slot_range = slot_range(page, buffer_pages, config.page_size);
        let dst = &mut buffer.as_mut_slice()[slot_range];
        if tail_page.is_empty() {
            stamp_log_page(dst, page, geometry.page_size, slot.log_id);
        } else {
            assert_eq!(tail_page.len(), geometry.offset_in_page(end_lsn));
            dst[..tail_page.len()].copy_from_slice(tail_page);
            assert!(log_page_is_current(
                dst,
                page,
                geometry.page_size,
                slot.log_id
            ));
        }
        let max_record_len = ((buffer_pages as usize - 2) * (config.page_size - LOG_PAGE_HEADER))
            .min(MAX_RECORD_BYTES);
        Wal {
            margins: LogMargins::from_capacity(geometry.capacity()),
            device,
            geometry,
            buffer_pages,
            max_record_len,
            log_id: slot.log_id,
            checkpoint: Mutex::new(CheckpointState {
                last: slot,
                page: AlignedBuf::new(config.page_size),
            }),
            inner: Mutex::new(Inner {
                buffer,
                current_lsn: end_lsn,
                durable_lsn: end_lsn,
                checkpoint_lsn: slot.redo_lsn,
                flushing: false,
                io_buf: Some(AlignedBuf::new(config.buffer_size)),
                poisoned: None,
                last_crc,
            }),
            published: Published {
                current_lsn: CacheLines(AtomicU64::new(end_lsn)),
                rare: CacheLines(RarelyChanged {
                    checkpoint_lsn: AtomicU64::new(slot.redo_lsn),
                    poisoned: AtomicBool::new(false),
                }),
            },
            config,
            flushed: Condvar::new(),
            space: Condvar::new(),
            counters: Counters::default(),
        }
    }
}

impl Wal {
    /// Writes the page holding the end of the log, as it is in the buffer (zeros after the
    /// end), and syncs. Called by `open` before anyone appends, so no leader runs.
    fn rewrite_tail(&self) -> Result<(), DeviceError> {
        let inner = self.inner.lock();
        assert!(!inner.flushing && inner.durable_lsn == inner.current_lsn);
        let page = self.geometry.page_of(inner.current_lsn);
        let mut image = AlignedBuf::new(self.config.page_size);
        self.page_image(&inner, page, image.as_mut_slice());
        stamp_flush_start(image.as_mut_slice(), inner.durable_lsn);
        drop(inner);
        self.device
            .write_page(self.geometry.device_page(page), &image)?;
        self.device.sync()
    }
}

fn check_page_size(device: &SharedDevice, config: &WalConfig) -> Result<()> {
    let info = device.info();
    if info.page_size != config.page_size {
        return Err(Error::Config(format!(
            "log page size {} differs from the log device's page size {}",
            config.page_size, info.page_size
        )));
    }
    Ok(())
}

/// Checks that the device holds the configured log (validated config, same page size).
fn check_device(device: &SharedDevice, config: &WalConfig) -> Result<()> {
    let info = device.info();
    let pages = config.log_size / config.page_size as u64;
    if info.pages < pages {
        return Err(Error::Config(format!(
            "a log of {} bytes needs {pages} pages; the device {} has {}",
            config.log_size, info.name, info.pages
        )));
    }
    Ok(())
}

fn slot_range(stream_page: u64, buffer_pages: u64, page_size: usize) -> std::ops::Range<usize> {
    let start = (stream_page % buffer_pages) as usize * page_size;
    start..start + page_size
}

impl Wal {
    /// Appends `records` contiguously and returns the end LSN of the batch.
    ///
    /// # Errors
    /// As [`Wal::append_range`].
    pub fn append(&self, records: &[LogRecord]) -> Result<Lsn> {
        Ok(self.append_range(records)?.end)
    }

    /// Appends `records` contiguously (no other record lands between them) and returns the
    /// LSN range they occupy. Not durable until [`Wal::flush_to`] of the end.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the batch is empty or larger than
    /// [`Wal::max_record_len`]; [`Error::LogFull`] when the checkpoint does not free room within
    /// `full_timeout`; [`Error::Poisoned`] after a write or sync failure.
    pub fn append_range(&self, records: &[LogRecord]) -> Result<LsnRange> {
        if records.is_empty() {
            return Err(Error::InvalidArgument("append of no records".into()));
        }
        let mut batch = crate::spare::take(&SPARE_BATCH);
        batch.clear();
        let result = records
            .iter()
            .try_for_each(|record| batch.push(record))
            .map_err(|e| Error::InvalidArgument(format!("record cannot be encoded: {e}")))
            .and_then(|()| self.append_batch(&mut batch));
        if batch.capacity() <= SPARE_BATCH_LIMIT {
            batch.clear();
            crate::spare::keep(&SPARE_BATCH, batch);
        }
        result
    }

    /// [`Wal::append_range`] of records already encoded into `batch` (sealed in place here);
    /// the batch is left as appended (the caller clears it to reuse its buffer).
    ///
    /// # Errors
    /// As [`Wal::append_range`].
    pub fn append_batch(&self, batch: &mut EncodedBatch) -> Result<LsnRange> {
        if batch.is_empty() {
            return Err(Error::InvalidArgument("append of no records".into()));
        }
        let total = batch.bytes().len();
        if total > self.max_record_len {
            return Err(Error::InvalidArgument(format!(
                "a batch of {total} log bytes exceeds the largest append of {} bytes \
                 (grow the log buffer)",
                self.max_record_len
            )));
        }
        let records = batch.records();
        let encoded = batch.bytes_mut();
        // The wait for log space times out `full_timeout` after the first wait: taken then, so
        // that an append that never waits reads no clock.
        let mut deadline = None;
        let mut inner = self.inner.lock();
        let mut expired = false;
        for _round in 0..MAX_APPEND_ROUNDS {
            if let Some(cause) = &inner.poisoned {
                return Err(poisoned(cause));
            }
            let start = inner.current_lsn;
            let end = self.geometry.advance(start, total);
            let limit = self.geometry.capacity() - CHECKPOINT_RESERVE;
            if end - inner.checkpoint_lsn > limit {
                if expired {
                    return Err(Error::LogFull {
                        needed: end - inner.checkpoint_lsn,
                        checkpoint_lsn: inner.checkpoint_lsn,
                        capacity: limit,
                    });
                }
                bump(&self.counters.full_waits, 1);
                // Look once more after the deadline: the checkpoint may have just moved.
                let deadline =
                    *deadline.get_or_insert_with(|| Instant::now() + self.config.full_timeout);
                expired = self.space.wait_until(&mut inner, deadline).timed_out();
                continue;
            }
            let floor = self.geometry.page_of(inner.durable_lsn);
            if self.geometry.page_of(end) - floor >= self.buffer_pages {
                // The buffer is full: write it out (as leader or follower), then retry.
                drop(inner);
                self.flush_until(start, false)?;
                inner = self.inner.lock();
                continue;
            }
            let range = self.copy_in(&mut inner, encoded);
            assert_eq!(range.end, end, "copied exactly the reserved range");
            bump(&self.counters.appends, records as u64);
            bump(&self.counters.appended_bytes, end - start);
            return Ok(range);
        }
        Err(Error::LogFull {
            needed: total as u64,
            checkpoint_lsn: inner.checkpoint_lsn,
            capacity: self.geometry.capacity(),
        })
    }

    /// Seals and copies the records of `encoded` (back to back) at `current_lsn`; the caller
    /// checked buffer and ring room.
    fn copy_in(&self, inner: &mut Inner, encoded: &mut [u8]) -> LsnRange {
        let start = inner.current_lsn;
        let mut lsn = start;
        let mut rest = encoded;
        while !rest.is_empty() {
            let len = record::leading_record_len(rest);
            let (bytes, tail) = rest.split_at_mut(len);
            inner.last_crc = record::seal(bytes, lsn, inner.last_crc);
            lsn = self.copy_bytes(inner, lsn, bytes);
            rest = tail;
        }
        inner.current_lsn = lsn;
        self.published.current_lsn.0.store(lsn, Ordering::Release);
        LsnRange { start, end: lsn }
    }

    /// Copies `bytes` at boundary `lsn` into the page buffer; stamps each page it enters.
    fn copy_bytes(&self, inner: &mut Inner, mut lsn: Lsn, mut bytes: &[u8]) -> Lsn {
        let page_size = self.config.page_size;
        let floor = self.geometry.page_of(inner.durable_lsn);
        // Bounded: each pass consumes the rest of one page.
        while !bytes.is_empty() {
            let page = self.geometry.page_of(lsn);
            assert!(page - floor < self.buffer_pages, "page buffer overrun");
            let offset = self.geometry.offset_in_page(lsn);
            let take = (page_size - offset).min(bytes.len());
            let slot = slot_range(page, self.buffer_pages, page_size);
            inner.buffer.as_mut_slice()[slot.start + offset..slot.start + offset + take]
                .copy_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            lsn += take as u64;
            if lsn.is_multiple_of(page_size as u64) {
                let next = self.geometry.page_of(lsn);
                assert!(next - floor < self.buffer_pages, "page buffer overrun");
                let slot = slot_range(next, self.buffer_pages, page_size);
                // Only the header: the rest of the slot is cut off when the page is written
                // (`Wal::page_image`).
                let dst = &mut inner.buffer.as_mut_slice()[slot];
                stamp_log_page(dst, next, self.geometry.page_size, self.log_id);
                lsn += LOG_PAGE_HEADER as u64;
            }
        }
        lsn
    }

    /// Returns once the log is durable up to `lsn` (clamped to [`Wal::current_lsn`]). One
    /// caller at a time writes and syncs for everyone waiting (group commit).
    ///
    /// # Errors
    /// [`Error::Poisoned`] when this or an earlier write or sync failed: the log is then not
    /// known to be durable past [`Wal::durable_lsn`].
    pub fn flush_to(&self, lsn: Lsn) -> Result<()> {
        self.flush_until(lsn, true)
    }

    /// `flush_to`; `commit` says whether the call counts as a commit served (internal flushes
    /// of a full buffer or of a checkpoint do not).
    fn flush_until(&self, lsn: Lsn, commit: bool) -> Result<()> {
        let mut inner = self.inner.lock();
        for _round in 0..MAX_FLUSH_ROUNDS {
            if let Some(cause) = &inner.poisoned {
                return Err(poisoned(cause));
            }
            let target = lsn.min(inner.current_lsn);
            if inner.durable_lsn >= target {
                bump(&self.counters.commits, u64::from(commit));
                return Ok(());
            }
            if inner.flushing {
                self.flushed.wait_for(&mut inner, FOLLOWER_WAIT);
                continue;
            }
            self.lead_flush(&mut inner);
        }
        Err(Error::InvalidArgument(format!(
            "flush_to({lsn}) gave up after {MAX_FLUSH_ROUNDS} rounds"
        )))
    }

    /// Writes and syncs every page from the durable one to the current one, without holding
    /// the mutex during the I/O; publishes the new `durable_lsn` or poisons the log.
    fn lead_flush(&self, inner: &mut MutexGuard<'_, Inner>) {
        assert!(!inner.flushing, "one leader at a time");
        let target = inner.current_lsn;
        let first = self.geometry.page_of(inner.durable_lsn);
        let count = self.geometry.page_of(target) - first + 1;
        assert!(count <= self.buffer_pages, "pending pages fit the buffer");
        let page_size = self.config.page_size;
        let mut io = inner
            .io_buf
            .take()
            .unwrap_or_else(|| AlignedBuf::new(self.config.buffer_size));
        // Every page this flush writes says the log was durable to here when it began: a
        // page stamped past where a later recovery scan stops proves corruption (reader.rs).
        let flush_start = inner.durable_lsn;
        for index in 0..count {
            let at = index as usize * page_size;
            let dst = &mut io.as_mut_slice()[at..at + page_size];
            self.page_image(inner, first + index, dst);
            stamp_flush_start(dst, flush_start);
        }
        inner.flushing = true;
        let result = MutexGuard::unlocked(inner, || self.write_pages(&io, first, count));
        inner.flushing = false;
        inner.io_buf = Some(io);
        match result {
            Ok(()) => {
                assert!(target >= inner.durable_lsn, "durable LSN only grows");
                inner.durable_lsn = target;
                bump(&self.counters.flushes, 1);
                bump(&self.counters.pages_written, count);
                bump(&self.counters.bytes_written, count * page_size as u64);
            }
            Err(cause) => {
                self.poison(inner, cause);
            }
        }
        self.flushed.notify_all();
        self.space.notify_all();
    }

    /// Copies stream page `page` from the buffer into `dst` as it goes to the device: a page
    /// before the one holding `current_lsn` whole, that one up to `current_lsn` with zeros
    /// after it (the slot's bytes past the end are stale, see the module docs).
    fn page_image(&self, inner: &Inner, page: u64, dst: &mut [u8]) {
        let current = self.geometry.page_of(inner.current_lsn);
        assert!(page <= current, "no page past the end of the log");
        let valid = if page == current {
            self.geometry.offset_in_page(inner.current_lsn)
        } else {
            dst.len()
        };
        let src = slot_range(page, self.buffer_pages, self.config.page_size);
        let (head, tail) = dst.split_at_mut(valid);
        head.copy_from_slice(&inner.buffer.as_slice()[src][..valid]);
        tail.fill(0);
    }

    /// Writes `count` pages of `io` to the ring, starting at stream page `first`, and syncs.
    /// The request and ticket vectors are the thread's spare (`WRITE_SPARE`), so that a
    /// commit's flush allocates nothing on a device that completes within the call.
    fn write_pages(&self, io: &AlignedBuf, first: u64, count: u64) -> Result<(), DeviceError> {
        let page_size = self.config.page_size;
        let (mut batch, mut tickets) = crate::spare::take(&WRITE_SPARE);
        batch.extend((0..count).map(|index| {
            let device_page = self.geometry.device_page(first + index);
            IoRequest::write(device_page, io.chunk_io_buffer(index as usize, page_size))
        }));
        // SAFETY: `io` is borrowed for the whole call, nobody writes it (the leader owns it
        // while `flushing` is set) and every ticket is waited for before returning.
        unsafe { self.device.submit_into(&mut batch, &mut tickets) };
        let written = wait_all(tickets.drain(..));
        crate::spare::keep(&WRITE_SPARE, (batch, tickets));
        written?;
        self.device.sync()
    }

    /// Writes a checkpoint: every change before `redo_lsn` is in the data pages. Appends a
    /// `Checkpoint` record (when the reserve has room), makes the log durable to the current
    /// end, then writes and syncs the next checkpoint slot. Frees ring space up to `redo_lsn`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `redo_lsn` is not a record boundary, is behind the
    /// previous checkpoint or ahead of the log; [`Error::Poisoned`] on a write or sync failure.
    pub fn write_checkpoint(&self, redo_lsn: Lsn) -> Result<()> {
        let mut checkpoint = self.checkpoint.lock();
        let end = {
            let mut inner = self.inner.lock();
            if let Some(cause) = &inner.poisoned {
                return Err(poisoned(cause));
            }
            if !self.geometry.is_boundary(redo_lsn)
                || redo_lsn < checkpoint.last.redo_lsn
                || redo_lsn > inner.current_lsn
            {
                return Err(Error::InvalidArgument(format!(
                    "checkpoint redo LSN {redo_lsn} is not a record boundary between the last \
                     checkpoint {} and the end of the log {}",
                    checkpoint.last.redo_lsn, inner.current_lsn
                )));
            }
            self.append_checkpoint_record(&mut inner, redo_lsn)
        };
        self.flush_until(end, false)?;
        let slot = CheckpointSlot {
            seq: checkpoint.last.seq + 1,
            redo_lsn,
            durable_lsn: end,
            ..checkpoint.last
        };
        slot.encode(checkpoint.page.as_mut_slice());
        let written = self
            .device
            .write_page(slot.slot(), &checkpoint.page)
            .and_then(|()| self.device.sync());
        let mut inner = self.inner.lock();
        if let Err(cause) = written {
            let cause = self.poison(&mut inner, cause);
            self.flushed.notify_all();
            self.space.notify_all();
            return Err(Error::Poisoned(cause));
        }
        checkpoint.last = slot;
        inner.checkpoint_lsn = redo_lsn;
        self.published
            .rare
            .0
            .checkpoint_lsn
            .store(redo_lsn, Ordering::Release);
        bump(&self.counters.checkpoints, 1);
        self.space.notify_all();
        Ok(())
    }

    /// Records the first failure (a later one keeps the first cause); returns the cause.
    fn poison(&self, inner: &mut Inner, cause: DeviceError) -> DeviceError {
        let first = inner.poisoned.get_or_insert(cause).clone();
        self.published
            .rare
            .0
            .poisoned
            .store(true, Ordering::Release);
        first
    }

    /// Appends the informational `Checkpoint` record if it fits the ring (it may use the
    /// reserve); never waits. Returns the end of the log.
    fn append_checkpoint_record(&self, inner: &mut Inner, redo_lsn: Lsn) -> Lsn {
        let Ok(mut bytes) = (LogRecord::Checkpoint { redo_lsn }).encode_unsealed() else {
            return inner.current_lsn;
        };
        let end = self.geometry.advance(inner.current_lsn, bytes.len());
        let floor = self.geometry.page_of(inner.durable_lsn);
        let fits_ring = end - inner.checkpoint_lsn <= self.geometry.capacity();
        let fits_buffer = self.geometry.page_of(end) - floor < self.buffer_pages;
        if fits_ring && fits_buffer {
            let start = inner.current_lsn;
            self.copy_in(inner, &mut bytes);
            bump(&self.counters.appends, 1);
            bump(&self.counters.appended_bytes, end - start);
        }
        inner.current_lsn
    }

    /// Flushes everything appended so far (a clean shutdown; dropping the log without it is a
    /// crash as far as the log is concerned).
    ///
    /// # Errors
    /// As [`Wal::flush_to`].
    #[must_use = "close() returns the errors of the final write-back; dropping can only print them"]
    pub fn close(self) -> Result<()> {
        self.flush_until(Lsn::MAX, false)
    }
}

impl Wal {
    /// End of the appended log (where the next record starts).
    pub fn current_lsn(&self) -> Lsn {
        self.published.current_lsn.0.load(Ordering::Acquire)
    }

    /// The log is durable up to here.
    pub fn durable_lsn(&self) -> Lsn {
        self.inner.lock().durable_lsn
    }

    /// The random id of this log (its checkpoint slots' `log_id`): what a data file's header
    /// binds to (`DataFile::bind_log`, `DataFile::check_log`).
    pub fn log_id(&self) -> u64 {
        self.log_id
    }

    /// The newest durable checkpoint slot.
    pub fn newest_checkpoint(&self) -> CheckpointSlot {
        self.checkpoint.lock().last
    }

    /// Redo LSN of the newest durable checkpoint.
    pub fn checkpoint_lsn(&self) -> Lsn {
        self.inner.lock().checkpoint_lsn
    }

    /// The first write or sync failure, if any.
    pub fn poison_cause(&self) -> Option<DeviceError> {
        if !self.published.rare.0.poisoned.load(Ordering::Acquire) {
            return None; // the common answer, without the lock
        }
        self.inner.lock().poisoned.clone()
    }

    /// Hard capacity in bytes of LSN distance (see [`Geometry::capacity`]).
    pub fn capacity(&self) -> u64 {
        self.geometry.capacity()
    }

    /// The largest batch one append takes, in encoded bytes.
    pub fn max_record_len(&self) -> usize {
        self.max_record_len
    }

    /// The InnoDB margins of this log (docs/algorithms.md section 1).
    pub fn margins(&self) -> LogMargins {
        self.margins
    }

    /// `current_lsn - checkpoint_lsn`: the checkpoint age, without the lock. The checkpoint
    /// is read first: it only moves forward, so the age returned is at least the age at the
    /// instant the end of the log was read (never an underestimate from a torn pair).
    pub fn checkpoint_age(&self) -> u64 {
        let checkpoint = self.published.rare.0.checkpoint_lsn.load(Ordering::Acquire);
        let current = self.published.current_lsn.0.load(Ordering::Acquire);
        current.saturating_sub(checkpoint)
    }

    /// Checkpoint and modified ages and what the pool should do about them;
    /// `oldest_dirty_lsn` is the smallest `oldest_modification` of a dirty page (0: none).
    pub fn checkpoint_age_state(&self, oldest_dirty_lsn: Lsn) -> AgeState {
        let (current, checkpoint) = {
            let inner = self.inner.lock();
            (inner.current_lsn, inner.checkpoint_lsn)
        };
        self.margins.classify(current, checkpoint, oldest_dirty_lsn)
    }

    /// The configuration.
    pub fn config(&self) -> &WalConfig {
        &self.config
    }

    /// The LSN arithmetic of this log.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// Counters and LSNs.
    pub fn stats(&self) -> WalStats {
        let (current_lsn, durable_lsn, checkpoint_lsn) = {
            let inner = self.inner.lock();
            (inner.current_lsn, inner.durable_lsn, inner.checkpoint_lsn)
        };
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let commits = load(&self.counters.commits);
        let flushes = load(&self.counters.flushes);
        WalStats {
            appends: load(&self.counters.appends),
            appended_bytes: load(&self.counters.appended_bytes),
            commits,
            flushes,
            pages_written: load(&self.counters.pages_written),
            bytes_written: load(&self.counters.bytes_written),
            full_waits: load(&self.counters.full_waits),
            checkpoints: load(&self.counters.checkpoints),
            mean_group_size: if flushes == 0 {
                0.0
            } else {
                commits as f64 / flushes as f64
            },
            current_lsn,
            durable_lsn,
            checkpoint_lsn,
        }
    }
}
