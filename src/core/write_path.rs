//! How page writes reach the data device: the host engine's torn-page protection and fsync rules
//! (docs/architecture.md: "two more choices sit beside the table"), behind the [`WritePath`] trait.
//!
//! The core hands every write it makes (background batches, single-page flushes of read stalls,
//! the TWB, checkpoint flushing) to the pool's write path, already stamped (page LSN, checksum)
//! and with the WAL rule satisfied. [`DirectWrites`] writes in place; InnoDB's doublewrite buffer
//! (`engine::innodb::doublewrite`) writes a copy to the doublewrite area first. Both fsync the
//! data device after writes when the host engine's `flush_method` says so (InnoDB's `O_DIRECT`;
//! `O_DIRECT_NO_FSYNC` skips them), through one [`SyncGate`] per file: the data file's, and the
//! doublewrite area's own.
//!
//! **[`SyncGate`]** is InnoDB's `fil_flush` discipline: syncs of one file never run
//! concurrently (syncs of different files may), and a caller whose writes completed before a
//! sync *started* is covered by it
//! and does not sync again: it waits for that sync if it is running (InnoDB compares the file's
//! modification counter with the counter the pending flush started from). The gate counts the
//! writes that complete through it ([`SyncGate::write_completed`]) for this. A failed sync is sticky (PostgreSQL after
//! "fsyncgate"): the writes it covered may be lost, so every later sync reports the failure and
//! the pool poisons itself; nothing is retried. The gates of the files of one device
//! ([`SyncGate::sibling`]) share that failure: a failed sync may drop any file's unsynced writes,
//! so a sync of another file that starts later fails too, and one that succeeded while the
//! failed one was in flight is confirmed only once every sync that started before it ended has
//! ended (then it reports the failure).
//!
//! Lock order: the gate's mutex, then the device-sync register its siblings share (a leaf);
//! neither is held across the device's `sync`.

use std::fmt::Debug;
use std::time::Instant;

use serde::Serialize;

use crate::device::{IoBuffer, IoRequest, SharedDevice};
use crate::error::{DeviceError, PageId};
use crate::sync::{AtomicU64, Condvar, Mutex, Ordering};

/// Bound on the waits of one [`SyncGate::sync`] (each waits for one running sync to end).
const MAX_GATE_WAITS: usize = 1 << 16;

/// What kind of write the core is making.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// A foreground single-page flush (a read stall's synchronous write, or a synchronous
    /// recoverability write of one page).
    Single,
    /// A background batch (page cleaner, LRU-C flusher, TWB, checkpoint flushing).
    Batch,
}

/// One stamped page to write.
#[derive(Debug)]
pub struct PageWrite {
    /// The data page (in the pool's page numbering).
    pub page: PageId,
    /// Its bytes; valid and unchanged until the write path reports its completion.
    pub buf: IoBuffer,
}

/// Counters of a write path (device time).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct WritePathStats {
    /// Data-device syncs issued.
    pub fsyncs: u64,
    /// Total device-time milliseconds spent in those syncs.
    pub fsync_ms_total: f64,
    /// Syncs requested that an already running or later sync covered.
    pub fsyncs_shared: u64,
    /// Pages written to the doublewrite area.
    pub doublewrite_pages: u64,
    /// Doublewrite batches written.
    pub doublewrite_batches: u64,
    /// Single-page flushes that found every single-page doublewrite slot taken and waited.
    pub doublewrite_slot_waits: u64,
    /// Device-time milliseconds spent waiting for a single-page slot.
    pub doublewrite_slot_wait_ms: f64,
}

impl WritePathStats {
    /// The counters accumulated since `earlier`.
    #[must_use]
    pub fn since(&self, earlier: &WritePathStats) -> WritePathStats {
        WritePathStats {
            fsyncs: self.fsyncs.saturating_sub(earlier.fsyncs),
            fsync_ms_total: (self.fsync_ms_total - earlier.fsync_ms_total).max(0.0),
            fsyncs_shared: self.fsyncs_shared.saturating_sub(earlier.fsyncs_shared),
            doublewrite_pages: self
                .doublewrite_pages
                .saturating_sub(earlier.doublewrite_pages),
            doublewrite_batches: self
                .doublewrite_batches
                .saturating_sub(earlier.doublewrite_batches),
            doublewrite_slot_waits: self
                .doublewrite_slot_waits
                .saturating_sub(earlier.doublewrite_slot_waits),
            doublewrite_slot_wait_ms: (self.doublewrite_slot_wait_ms
                - earlier.doublewrite_slot_wait_ms)
                .max(0.0),
        }
    }

    /// Mean device-time milliseconds of one sync.
    #[must_use]
    pub fn fsync_mean_ms(&self) -> f64 {
        if self.fsyncs == 0 {
            0.0
        } else {
            self.fsync_ms_total / self.fsyncs as f64
        }
    }
}

/// The host engine's way of writing pages.
pub trait WritePath: Send + Sync + Debug {
    /// The path's name (`direct`, `doublewrite`).
    fn name(&self) -> &'static str;

    /// Writes `pages`, reporting each one's in-place completion through `done(index, result)`
    /// as soon as it completes (so flushers can free frames while the rest is in flight), and
    /// returns once every page has been reported and the post-write sync, if the path does one,
    /// is done. At most [`WritePath::max_batch`] pages per call.
    ///
    /// # Errors
    /// A failed doublewrite write or sync: the pages' durability is unknown and the caller must
    /// poison the pool. Pages reported through `done` before the error keep their result.
    fn write(
        &self,
        pages: &[PageWrite],
        kind: WriteKind,
        done: &mut dyn FnMut(usize, Result<(), DeviceError>),
    ) -> Result<(), DeviceError>;

    /// Before a single page is written by a command the core issues itself (the fused RW
    /// command writes its victim in place): protect it as `write` would (the doublewrite copies
    /// it to a single-page slot and syncs). Returns a token for [`WritePath::after_single`].
    ///
    /// # Errors
    /// The protective write or sync failed (the caller poisons the pool).
    fn before_single(&self, page: PageId, buf: IoBuffer) -> Result<usize, DeviceError>;

    /// After the in-place write that [`WritePath::before_single`] prepared has completed
    /// (successfully or not): counts it, then the post-write sync and release of whatever
    /// `before_single` held.
    ///
    /// # Errors
    /// The sync failed (sticky).
    fn after_single(&self, token: usize) -> Result<(), DeviceError>;

    /// An in-place write the core issued itself *without* [`WritePath::before_single`]
    /// completed (the fused RW command with the RW paper's unsynced victim): counts it on the
    /// data file's gate, so that the next sync (a checkpoint's) covers it. No copy, no sync:
    /// the page is durable only once a later sync covers it, and a torn write of it is not
    /// repairable from the doublewrite area (docs/policies.md, "RW as its paper ran it").
    fn count_unprotected_write(&self);

    /// Syncs the data device through the gate (checkpoints call it).
    ///
    /// # Errors
    /// The sync failed now or earlier (sticky).
    fn sync(&self) -> Result<(), DeviceError>;

    /// The largest number of pages one `write` call takes (the core submits larger batches in
    /// chunks of this size: the bounded burst).
    fn max_batch(&self) -> usize;

    /// Whether pages are copied to a doublewrite area before their in-place writes (InnoDB's
    /// `srv_use_doublewrite_buf`, on which MySQL 5.6's miss loop waits for a running LRU
    /// batch).
    fn is_doublewrite(&self) -> bool {
        false
    }

    /// Counters.
    fn stats(&self) -> WritePathStats;
}

#[derive(Debug, Default)]
struct GateState {
    /// A sync is running; it covers the writes counted when it started.
    running: Option<u64>,
    /// Writes covered by the newest successful sync.
    covered: u64,
}

/// Serializes and shares the syncs of one file (see the module docs); the file is the region of
/// the device its writes go to, and its sync is the device's.
#[derive(Debug)]
pub struct SyncGate {
    device: SharedDevice,
    /// Writes completed on the device through this gate's users.
    writes: AtomicU64,
    state: Mutex<GateState>,
    finished: Condvar,
    syncs: AtomicU64,
    shared: AtomicU64,
    /// Device-time nanoseconds spent in syncs.
    sync_ns: AtomicU64,
    /// The device's syncs, shared by the gates of all its files.
    device_syncs: std::sync::Arc<DeviceSyncs>,
}

/// The syncs of one device across the gates of its files: which are in flight (by ticket, in
/// the order they started) and the first failure.
#[derive(Debug, Default)]
struct DeviceSyncs {
    state: Mutex<DeviceSyncState>,
    ended: Condvar,
}

#[derive(Debug, Default)]
struct DeviceSyncState {
    next_ticket: u64,
    in_flight: std::collections::BTreeSet<u64>,
    failure: Option<DeviceError>,
}

impl DeviceSyncs {
    fn failure(&self) -> Option<DeviceError> {
        self.state.lock().failure.clone()
    }

    /// A sync is about to start on the device; its ticket, or the sticky failure.
    fn begin(&self) -> Result<u64, DeviceError> {
        let mut state = self.state.lock();
        if let Some(cause) = &state.failure {
            return Err(cause.clone());
        }
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.in_flight.insert(ticket);
        Ok(ticket)
    }

    /// The sync `ticket` returned `result`. A success stands only once every sync that started
    /// before it ended has ended too without failing: a failed sync may have dropped the writes
    /// this one covered (the device drops what it had not made durable).
    fn end(&self, ticket: u64, result: Result<(), DeviceError>) -> Result<(), DeviceError> {
        let mut state = self.state.lock();
        state.in_flight.remove(&ticket);
        if let Err(cause) = &result {
            state.failure.get_or_insert_with(|| cause.clone());
        }
        self.ended.notify_all();
        result?;
        let horizon = state.next_ticket;
        for _ in 0..MAX_GATE_WAITS {
            if state
                .in_flight
                .first()
                .is_none_or(|&oldest| oldest >= horizon)
            {
                return state.failure.clone().map_or(Ok(()), Err);
            }
            let _ = self
                .ended
                .wait_for(&mut state, std::time::Duration::from_millis(50));
        }
        Err(DeviceError::Io {
            page: None,
            kind: std::io::ErrorKind::TimedOut,
            message: format!(
                "sync gate: gave up waiting for overlapping syncs after {MAX_GATE_WAITS} waits"
            ),
        })
    }
}

impl SyncGate {
    /// A gate for the file `device` (a region of the database's device, or a whole device).
    #[must_use]
    pub fn new(device: SharedDevice) -> Self {
        SyncGate {
            device,
            writes: AtomicU64::new(0),
            state: Mutex::new(GateState::default()),
            finished: Condvar::new(),
            syncs: AtomicU64::new(0),
            shared: AtomicU64::new(0),
            sync_ns: AtomicU64::new(0),
            device_syncs: std::sync::Arc::default(),
        }
    }

    /// A gate for another file, `device`, on this gate's device. Its syncs are serialized apart
    /// from this gate's, but a failure is sticky for both: a failed sync may have dropped the
    /// unsynced writes of every file on the device (Linux after "fsyncgate"), and InnoDB stops
    /// on any failed fsync.
    #[must_use]
    pub fn sibling(&self, device: SharedDevice) -> Self {
        SyncGate {
            device_syncs: std::sync::Arc::clone(&self.device_syncs),
            ..SyncGate::new(device)
        }
    }

    /// The device.
    #[must_use]
    pub fn device(&self) -> &SharedDevice {
        &self.device
    }

    /// Counts a write that completed on the device (every write path calls it after each
    /// completion, before anyone may ask for it to be durable).
    pub fn write_completed(&self) {
        self.writes.fetch_add(1, Ordering::AcqRel);
    }

    /// Returns once every write that completed before the call is durable: covered by a sync
    /// that started after it, run by this caller or shared with another.
    ///
    /// # Errors
    /// This sync failed, or an earlier one did (sticky; see the module docs).
    pub fn sync(&self) -> Result<(), DeviceError> {
        let needed = self.writes.load(Ordering::Acquire);
        let mut state = self.state.lock();
        for _ in 0..MAX_GATE_WAITS {
            if let Some(cause) = self.failure() {
                return Err(cause);
            }
            if state.covered >= needed && needed > 0 {
                self.shared.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            if state.running.is_some() {
                // Either that sync covers our writes (and we share it), or it does not and ours
                // starts once it is done: one sync of a file at a time.
                let _ = self
                    .finished
                    .wait_for(&mut state, std::time::Duration::from_millis(50));
                continue;
            }
            let covers = self.writes.load(Ordering::Acquire);
            let ticket = self.device_syncs.begin()?;
            state.running = Some(covers);
            drop(state);
            let began = Instant::now();
            let result = self.device_syncs.end(ticket, self.device.sync());
            let scale = self.device.info().time_scale.max(f64::MIN_POSITIVE);
            self.sync_ns.fetch_add(
                (began.elapsed().as_nanos() as f64 / scale) as u64,
                Ordering::Relaxed,
            );
            self.syncs.fetch_add(1, Ordering::Relaxed);
            let mut state = self.state.lock();
            state.running = None;
            if result.is_ok() {
                state.covered = state.covered.max(covers);
            }
            drop(state);
            self.finished.notify_all();
            return result;
        }
        Err(DeviceError::Io {
            page: None,
            kind: std::io::ErrorKind::TimedOut,
            message: format!("sync gate: gave up after {MAX_GATE_WAITS} waits"),
        })
    }

    /// The sticky failure, if a sync of this gate or of a sibling failed.
    pub fn failure(&self) -> Option<DeviceError> {
        self.device_syncs.failure()
    }

    /// Adds this gate's sync counters to `stats` (a write path with several files adds each).
    pub fn fill_stats(&self, stats: &mut WritePathStats) {
        stats.fsyncs += self.syncs.load(Ordering::Relaxed);
        stats.fsyncs_shared += self.shared.load(Ordering::Relaxed);
        stats.fsync_ms_total += self.sync_ns.load(Ordering::Relaxed) as f64 / 1e6;
    }
}

/// Writes in place, no torn-page protection of its own (the redo log's page images, or none),
/// and syncs after each call when `fsync_after_writes` (InnoDB's `O_DIRECT`; off is
/// `O_DIRECT_NO_FSYNC`).
#[derive(Debug)]
pub struct DirectWrites {
    gate: std::sync::Arc<SyncGate>,
    fsync_after_writes: bool,
    max_batch: usize,
}

impl DirectWrites {
    /// In-place writes to the gate's device, at most `max_batch` pages per call.
    #[must_use]
    pub fn new(gate: std::sync::Arc<SyncGate>, fsync_after_writes: bool, max_batch: usize) -> Self {
        assert!(max_batch > 0, "a write call takes at least one page");
        DirectWrites {
            gate,
            fsync_after_writes,
            max_batch,
        }
    }
}

/// Submits `pages` in place on the gate's device and reports each completion in order,
/// counting completed writes in the gate.
///
/// # Safety
/// As [`crate::device::Device::submit`]: every buffer stays valid and unchanged until its
/// completion is reported (the caller's page latches guarantee it).
pub(crate) unsafe fn write_in_place(
    gate: &SyncGate,
    pages: &[PageWrite],
    done: &mut dyn FnMut(usize, Result<(), DeviceError>),
) {
    let requests = pages
        .iter()
        .map(|write| IoRequest::write(write.page, write.buf))
        .collect();
    // SAFETY: forwarded from the caller.
    let tickets = unsafe { gate.device().submit(requests) };
    for (index, ticket) in tickets.into_iter().enumerate() {
        let result = ticket.wait();
        if result.is_ok() {
            gate.write_completed();
        }
        done(index, result);
    }
}

impl WritePath for DirectWrites {
    fn name(&self) -> &'static str {
        "direct"
    }

    fn write(
        &self,
        pages: &[PageWrite],
        kind: WriteKind,
        done: &mut dyn FnMut(usize, Result<(), DeviceError>),
    ) -> Result<(), DeviceError> {
        let _ = kind;
        assert!(pages.len() <= self.max_batch, "the core chunks its batches");
        // SAFETY: the WritePath contract: buffers stay valid until reported.
        unsafe { write_in_place(&self.gate, pages, done) };
        if self.fsync_after_writes {
            self.gate.sync()?;
        }
        Ok(())
    }

    fn before_single(&self, _page: PageId, _buf: IoBuffer) -> Result<usize, DeviceError> {
        Ok(0)
    }

    fn after_single(&self, _token: usize) -> Result<(), DeviceError> {
        // The caller's own in-place write has completed: count it before syncing.
        self.gate.write_completed();
        if self.fsync_after_writes {
            self.gate.sync()?;
        }
        Ok(())
    }

    fn count_unprotected_write(&self) {
        self.gate.write_completed();
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.gate.sync()
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn stats(&self) -> WritePathStats {
        let mut stats = WritePathStats::default();
        self.gate.fill_stats(&mut stats);
        stats
    }
}
