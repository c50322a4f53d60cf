//! Fault-injecting device wrapper: I/O errors, torn writes and crashes, deterministic from a seed.
//!
//! [`FaultDevice`] wraps any [`SharedDevice`] and models durability the way redb's crash backend
//! does (style.md): besides forwarding I/O, it keeps a RAM image of what is *durable*. A write
//! that completed is *pending*; the next successful [`Device::sync`] makes every write that
//! completed before it durable. [`FaultDevice::crash`] stops the device (every later operation
//! fails with [`DeviceError::Crashed`]) and returns a fresh [`MemoryDevice`] holding the durable
//! image plus, for each pending page, the outcome [`UnsyncedOnCrash`] picks: dropped, applied, or
//! torn (a prefix of whole 512-byte sectors of the new data reached the medium).
//!
//! Faults, each by 1-based ordinal (per kind) and by seeded rate, each counted in
//! [`FaultCounters`] so a test can assert it happened:
//! - fail a read / write / sync with [`DeviceError::Injected`];
//! - **torn write**: the medium gets part of the new data over the old page and the write reports
//!   success (a lying disk). [`TearMode`] picks a sector prefix, a seeded subset of sectors (not
//!   a prefix), or either;
//! - **misdirected write**: the data lands on another, seeded page; the target keeps its old
//!   contents; success is reported;
//! - **lost write**: success is reported, nothing reaches the medium;
//! - **sync failure that loses the pending writes** ([`FaultConfig::sync_failure_loses_pending`],
//!   Linux after a failed fsync, "fsyncgate"): the writes that completed before the failed sync
//!   are dropped from the durable image *and* from what reads return (the page reverts to its
//!   durable contents), and a later successful sync does not bring them back;
//! - crash after N operations, or on demand; a shared [`CrashSwitch`] crashes several devices
//!   at the same instant (the first to crash trips it; every later operation on any of them is
//!   refused).
//!
//! Write faults apply to plain writes and to the write half of a fused read-write command (the
//! fused command is then carried out as that faulty write followed by a plain read). Every
//! decision is drawn from one seeded generator in submission order, so a single-threaded run
//! replays exactly from its seed; a fault whose rate is 0 and whose ordinal list is empty draws
//! nothing, so adding new kinds of fault does not change old seeds' runs.
//!
//! Execution: `submit` forwards the batch's surviving requests to the inner device in one
//! batch and waits for them before returning already-completed tickets, so that the wrapper
//! knows which writes completed (the parallelism inside a batch is kept; batches from one
//! thread no longer overlap).
//!
//! Invariants: `durable` only ever receives data of writes that completed before a successful
//! sync (or bulk loads); pending entries carry a sequence number so a sync never promotes a write
//! that completed after the sync began. Lock order: `state`, then the durable store's stripe
//! locks (memory copies only; no device I/O is done while `state` is held). Under concurrency,
//! a write to the same page racing a sync that fails and loses pending writes may be reverted
//! with them (the single-threaded runs the campaign replays are exact).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::memory::{MemoryDevice, PageStore};
use super::{AlignedBuf, Device, DeviceInfo, DeviceStats, IoOp, IoRequest, IoTicket, SharedDevice};
use crate::error::{DeviceError, PageId};

/// Size of the unit a torn write keeps or loses (a disk sector).
pub const SECTOR_SIZE: usize = 512;

/// What happens at a crash to a page whose last write completed but was not yet synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsyncedOnCrash {
    /// Every unsynced write is lost (the exact-durability check).
    DropAll,
    /// Every unsynced write reached the medium.
    ApplyAll,
    /// Every unsynced write is torn: a seeded prefix of whole sectors, neither empty nor whole.
    TearAll,
    /// Per page, a seeded, equally likely choice of drop, apply or tear.
    Random,
}

/// Which sectors of a torn write reach the medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TearMode {
    /// A seeded prefix of whole sectors (neither empty nor whole): what a disk that writes
    /// sectors in order leaves.
    Prefix,
    /// A seeded subset of sectors that is not a prefix (and neither empty nor whole): what a
    /// device that reorders sector writes (or a RAID stripe) can leave.
    Sectors,
    /// Per tear, a seeded, equally likely choice of `Prefix` or `Sectors`.
    Mixed,
}

/// A flag shared by several [`FaultDevice`]s so that they crash at the same instant: the first
/// device to crash trips it, and every later operation on any device holding it is refused
/// with [`DeviceError::Crashed`].
#[derive(Debug, Default)]
pub struct CrashSwitch {
    tripped: AtomicBool,
}

impl CrashSwitch {
    /// A switch that has not tripped.
    #[must_use]
    pub fn new() -> Arc<Self> {
        Arc::new(CrashSwitch::default())
    }

    /// Crashes every device holding this switch (their next operation is refused).
    pub fn trip(&self) {
        self.tripped.store(true, Ordering::SeqCst);
    }

    /// Whether the switch has tripped.
    pub fn is_tripped(&self) -> bool {
        self.tripped.load(Ordering::SeqCst)
    }
}

/// Which faults to inject. `Default` injects nothing and drops unsynced writes at a crash.
#[derive(Debug, Clone)]
pub struct FaultConfig {
    /// Seed of every random decision.
    pub seed: u64,
    /// Reads (1-based, counted over reads only) that fail with [`DeviceError::Injected`].
    pub fail_reads: Vec<u64>,
    /// Writes (1-based) that fail; nothing reaches the medium.
    pub fail_writes: Vec<u64>,
    /// Syncs (1-based) that fail; pending writes stay pending.
    pub fail_syncs: Vec<u64>,
    /// Writes (1-based) that are torn on the medium but report success.
    pub torn_writes: Vec<u64>,
    /// Probability that any write is torn.
    pub torn_write_rate: f64,
    /// Which sectors of a torn write land, at run time and at a crash.
    pub tear_mode: TearMode,
    /// Writes (1-based) whose data lands on another, seeded page (success is reported).
    pub misdirected_writes: Vec<u64>,
    /// Probability that any write is misdirected.
    pub misdirected_write_rate: f64,
    /// Writes (1-based) that report success and never reach the medium.
    pub lost_writes: Vec<u64>,
    /// Probability that any write is lost.
    pub lost_write_rate: f64,
    /// After a failed sync, the writes that completed before it are lost: dropped from the
    /// durable image and from what reads return, never made durable by a later sync (Linux
    /// after a failed fsync). Off: they stay pending and a later sync can still make them
    /// durable.
    pub sync_failure_loses_pending: bool,
    /// Crash together with every other device holding the same switch.
    pub crash_switch: Option<Arc<CrashSwitch>>,
    /// Probability that any read fails.
    pub read_error_rate: f64,
    /// Probability that any write fails.
    pub write_error_rate: f64,
    /// Probability that any sync fails.
    pub sync_error_rate: f64,
    /// Crash after this many operations (reads, writes and syncs): later ones fail with
    /// [`DeviceError::Crashed`].
    pub crash_after_ops: Option<u64>,
    /// The fate of unsynced writes in the crash image.
    pub unsynced_on_crash: UnsyncedOnCrash,
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            seed: 0,
            fail_reads: Vec::new(),
            fail_writes: Vec::new(),
            fail_syncs: Vec::new(),
            torn_writes: Vec::new(),
            torn_write_rate: 0.0,
            tear_mode: TearMode::Prefix,
            misdirected_writes: Vec::new(),
            misdirected_write_rate: 0.0,
            lost_writes: Vec::new(),
            lost_write_rate: 0.0,
            sync_failure_loses_pending: false,
            crash_switch: None,
            read_error_rate: 0.0,
            write_error_rate: 0.0,
            sync_error_rate: 0.0,
            crash_after_ops: None,
            unsynced_on_crash: UnsyncedOnCrash::DropAll,
        }
    }
}

/// What the wrapper has seen and done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FaultCounters {
    /// Operations seen (reads, writes, fused commands and syncs that passed validation).
    pub ops: u64,
    /// Reads seen (a fused command counts one read and one write).
    pub reads: u64,
    /// Writes seen.
    pub writes: u64,
    /// Syncs seen.
    pub syncs: u64,
    /// Errors injected (not counting [`DeviceError::Crashed`]).
    pub injected_errors: u64,
    /// Writes torn at run time.
    pub torn_writes: u64,
    /// Writes whose data landed on another page.
    pub misdirected_writes: u64,
    /// Writes reported successful that never reached the medium.
    pub lost_writes: u64,
    /// Syncs that failed (injected or from the inner device).
    pub failed_syncs: u64,
    /// Pending page writes dropped by failed syncs (`sync_failure_loses_pending`).
    pub lost_on_sync_failure: u64,
    /// Operations refused because the device had crashed.
    pub refused_after_crash: u64,
    /// Whether the device has crashed.
    pub crashed: bool,
}

/// What a faulty write does instead of writing its page.
#[derive(Debug)]
enum WriteFault {
    /// Nothing reaches the medium.
    Lost,
    /// The data lands on `page` instead.
    Misdirected { data: Vec<u8>, page: PageId },
    /// Only the sectors marked `true` reach the medium over the old contents.
    Torn { data: Vec<u8>, landed: Vec<bool> },
}

/// What to do with one request.
#[derive(Debug)]
enum Fate {
    /// Forward to the inner device; for writes, the data to record once it completes.
    Forward(Option<Vec<u8>>),
    /// Carry out the faulty write to `target` (synchronously), then, for a fused command,
    /// forward the read half as a plain read.
    Faulty {
        fault: WriteFault,
        target: PageId,
        then_read: bool,
    },
    /// Fail at once.
    Fail(DeviceError),
}

#[derive(Debug)]
struct State {
    rng: StdRng,
    counters: FaultCounters,
    /// Completed, unsynced writes: page -> (sequence number, data).
    pending: BTreeMap<PageId, (u64, Vec<u8>)>,
    next_seq: u64,
    /// Pages of `durable` that may be non-zero (so a crash copies only those).
    durable_pages: BTreeSet<PageId>,
}

/// The fault-injecting wrapper. See the module docs.
#[derive(Debug)]
pub struct FaultDevice {
    inner: SharedDevice,
    info: DeviceInfo,
    config: FaultConfig,
    durable: PageStore,
    state: Mutex<State>,
}

impl FaultDevice {
    /// Wraps `inner`, whose current contents are taken as durable (read page by page: O(pages);
    /// meant for test-sized devices).
    ///
    /// # Errors
    /// The inner device's read errors, or no RAM for the image.
    pub fn new(inner: SharedDevice, config: FaultConfig) -> Result<Self, DeviceError> {
        let device = Self::new_zeroed(inner, config)?;
        let mut buf = AlignedBuf::new(device.info.page_size);
        let mut state = device.state.lock();
        for page in 0..device.info.pages {
            device.inner.read_page(page, &mut buf)?;
            if buf.as_slice().iter().any(|&b| b != 0) {
                device.durable.write(page, buf.as_slice())?;
                state.durable_pages.insert(page);
            }
        }
        drop(state);
        Ok(device)
    }

    /// Wraps `inner` without reading it: the caller asserts it is all zeros (a fresh device).
    ///
    /// # Errors
    /// No RAM for the image.
    pub fn new_zeroed(inner: SharedDevice, config: FaultConfig) -> Result<Self, DeviceError> {
        let inner_info = inner.info().clone();
        let info = DeviceInfo {
            name: format!("fault({})", inner_info.name),
            ..inner_info
        };
        Ok(FaultDevice {
            durable: PageStore::new(info.page_size, info.pages)?,
            state: Mutex::new(State {
                rng: StdRng::seed_from_u64(config.seed),
                counters: FaultCounters::default(),
                pending: BTreeMap::new(),
                next_seq: 0,
                durable_pages: BTreeSet::new(),
            }),
            inner,
            info,
            config,
        })
    }

    /// The counters so far.
    pub fn counters(&self) -> FaultCounters {
        self.state.lock().counters
    }

    /// The wrapped device.
    pub fn inner(&self) -> &SharedDevice {
        &self.inner
    }

    /// Crashes the device now (later operations fail with [`DeviceError::Crashed`]) and returns
    /// what the medium holds: the durable image, plus each unsynced page's fate under
    /// [`FaultConfig::unsynced_on_crash`] (drawn from the seeded generator in page order).
    /// Calling it again (or after a crash by op count) builds another image from the same state.
    ///
    /// # Errors
    /// No RAM for the image.
    pub fn crash(&self) -> Result<MemoryDevice, DeviceError> {
        let mut state = self.state.lock();
        state.counters.crashed = true;
        if let Some(switch) = &self.config.crash_switch {
            switch.trip();
        }
        let image = MemoryDevice::new(self.info.page_size, self.info.pages)?;
        let mut page_buf = vec![0u8; self.info.page_size];
        for &page in &state.durable_pages {
            self.durable.read(page, &mut page_buf)?;
            image.store().write(page, &page_buf)?;
        }
        let policy = self.config.unsynced_on_crash;
        let mode = self.config.tear_mode;
        let State { rng, pending, .. } = &mut *state;
        for (&page, (_, data)) in pending.iter() {
            match crash_fate(policy, mode, rng, data.len()) {
                Landing::Dropped => {}
                Landing::Whole => image.store().write(page, data)?,
                Landing::Torn(landed) => {
                    // The durable image is already in `image`; overlay the sectors that landed.
                    image.store().read(page, &mut page_buf)?;
                    overlay(&mut page_buf, data, &landed);
                    image.store().write(page, &page_buf)?;
                }
            }
        }
        Ok(image)
    }

    /// Counts one operation; decides whether the device is (now) crashed.
    fn enter_op(&self, state: &mut State) -> Result<(), DeviceError> {
        let switch = self.config.crash_switch.as_deref();
        if switch.is_some_and(CrashSwitch::is_tripped) {
            state.counters.crashed = true;
        }
        if state.counters.crashed {
            state.counters.refused_after_crash += 1;
            return Err(DeviceError::Crashed);
        }
        if self
            .config
            .crash_after_ops
            .is_some_and(|limit| state.counters.ops >= limit)
        {
            state.counters.crashed = true;
            if let Some(switch) = switch {
                switch.trip();
            }
            state.counters.refused_after_crash += 1;
            return Err(DeviceError::Crashed);
        }
        state.counters.ops += 1;
        Ok(())
    }

    /// Decides one request's fate (validation already passed).
    fn decide(&self, state: &mut State, request: &IoRequest) -> Fate {
        if let Err(err) = self.enter_op(state) {
            return Fate::Fail(err);
        }
        let reads = matches!(request.op, IoOp::Read | IoOp::FusedReadWrite { .. });
        let writes = matches!(request.op, IoOp::Write | IoOp::FusedReadWrite { .. });
        if reads {
            state.counters.reads += 1;
            let ordinal = state.counters.reads;
            if chosen(
                &self.config.fail_reads,
                ordinal,
                self.config.read_error_rate,
                state,
            ) {
                state.counters.injected_errors += 1;
                return Fate::Fail(DeviceError::Injected(format!("read {ordinal} failed")));
            }
        }
        if !writes {
            return Fate::Forward(None);
        }
        state.counters.writes += 1;
        let ordinal = state.counters.writes;
        if chosen(
            &self.config.fail_writes,
            ordinal,
            self.config.write_error_rate,
            state,
        ) {
            state.counters.injected_errors += 1;
            return Fate::Fail(DeviceError::Injected(format!("write {ordinal} failed")));
        }
        // SAFETY: the submit contract keeps the buffer valid and unwritten until completion.
        let data = unsafe { request.buf.as_slice() }.to_vec();
        let target = match request.op {
            IoOp::FusedReadWrite { write_page } => write_page,
            IoOp::Read | IoOp::Write => request.page,
        };
        let then_read = request.op != IoOp::Write;
        match self.write_fault(state, ordinal, target, data) {
            Ok(fault) => Fate::Faulty {
                fault,
                target,
                then_read,
            },
            Err(data) => Fate::Forward(Some(data)),
        }
    }

    /// Decides whether the `ordinal`-th write (to `target`) is lost, misdirected or torn, in
    /// that order of precedence; gives the data back when it is none of them.
    fn write_fault(
        &self,
        state: &mut State,
        ordinal: u64,
        target: PageId,
        data: Vec<u8>,
    ) -> Result<WriteFault, Vec<u8>> {
        let config = &self.config;
        if chosen(&config.lost_writes, ordinal, config.lost_write_rate, state) {
            state.counters.lost_writes += 1;
            return Ok(WriteFault::Lost);
        }
        let pages = self.info.pages;
        if pages >= 2
            && chosen(
                &config.misdirected_writes,
                ordinal,
                config.misdirected_write_rate,
                state,
            )
        {
            state.counters.misdirected_writes += 1;
            // Any page but the target, uniformly.
            let drawn = state.rng.gen_range(0..pages - 1);
            let page = if drawn >= target { drawn + 1 } else { drawn };
            return Ok(WriteFault::Misdirected { data, page });
        }
        if chosen(&config.torn_writes, ordinal, config.torn_write_rate, state) {
            state.counters.torn_writes += 1;
            let landed = tear_sectors(&mut state.rng, config.tear_mode, data.len())
                .unwrap_or_else(|| vec![false; (data.len() / SECTOR_SIZE).max(1)]);
            return Ok(WriteFault::Torn { data, landed });
        }
        Err(data)
    }

    /// Records a completed write as pending.
    fn record(&self, page: PageId, data: Vec<u8>) {
        let mut state = self.state.lock();
        let seq = state.next_seq;
        state.next_seq += 1;
        state.pending.insert(page, (seq, data));
    }

    /// Carries out a faulty write to `target` on the inner device, synchronously, and records
    /// what reached the medium as pending.
    fn execute(&self, fault: WriteFault, target: PageId) -> Result<(), DeviceError> {
        match fault {
            WriteFault::Lost => Ok(()),
            WriteFault::Misdirected { data, page } => {
                let mut buf = AlignedBuf::new(self.info.page_size);
                buf.as_mut_slice().copy_from_slice(&data);
                self.inner.write_page(page, &buf)?;
                self.record(page, data);
                Ok(())
            }
            WriteFault::Torn { data, landed } => {
                let mut buf = AlignedBuf::new(self.info.page_size);
                self.inner.read_page(target, &mut buf)?;
                overlay(buf.as_mut_slice(), &data, &landed);
                self.inner.write_page(target, &buf)?;
                self.record(target, buf.as_slice().to_vec());
                Ok(())
            }
        }
    }

    /// After a failed sync (with `sync_failure_loses_pending`): drops the pending writes that
    /// completed before it and reverts those pages on the inner device to their durable
    /// contents, so reads no longer see them. I/O is done after releasing `state`.
    fn lose_pending(&self, seq_limit: u64) -> Result<(), DeviceError> {
        let lost: Vec<PageId> = {
            let mut state = self.state.lock();
            let lost: Vec<PageId> = state
                .pending
                .iter()
                .filter(|(_, (seq, _))| *seq < seq_limit)
                .map(|(&page, _)| page)
                .collect();
            for page in &lost {
                state.pending.remove(page);
            }
            state.counters.lost_on_sync_failure += lost.len() as u64;
            lost
        };
        let mut buf = AlignedBuf::new(self.info.page_size);
        for page in lost {
            self.durable.read(page, buf.as_mut_slice())?;
            self.inner.write_page(page, &buf)?;
        }
        Ok(())
    }
}

/// Copies the sectors of `new` marked in `landed` over `page`.
fn overlay(page: &mut [u8], new: &[u8], landed: &[bool]) {
    assert_eq!(page.len(), new.len(), "same page size");
    for (sector, &took) in landed.iter().enumerate() {
        let range = sector * SECTOR_SIZE..((sector + 1) * SECTOR_SIZE).min(page.len());
        if took {
            page[range.clone()].copy_from_slice(&new[range]);
        }
    }
}

/// Whether the `ordinal`-th operation of a kind fails: listed, or drawn with probability `rate`.
fn chosen(listed: &[u64], ordinal: u64, rate: f64, state: &mut State) -> bool {
    listed.contains(&ordinal) || (rate > 0.0 && state.rng.r#gen::<f64>() < rate)
}

/// Which sectors of a torn write land (`true`): neither none nor all; a prefix or a non-prefix
/// subset as `mode` says. `None` when the page has fewer than two sectors (it cannot tear).
/// `Prefix` draws exactly one number (the draw older seeds replay).
fn tear_sectors(rng: &mut StdRng, mode: TearMode, page_size: usize) -> Option<Vec<bool>> {
    let sectors = page_size / SECTOR_SIZE;
    if sectors < 2 {
        return None;
    }
    let prefix = match mode {
        TearMode::Prefix => true,
        TearMode::Sectors => false,
        TearMode::Mixed => rng.gen_bool(0.5),
    };
    if prefix {
        let length = rng.gen_range(1..sectors);
        return Some((0..sectors).map(|s| s < length).collect());
    }
    if sectors == 2 {
        // Two sectors have no non-prefix subset but "only the second".
        return Some(vec![false, true]);
    }
    // Bounded: a uniform subset is a valid non-prefix tear with probability at least 1/2 for
    // three or more sectors; after 64 tries fall back to "only the last sector".
    for _attempt in 0..64 {
        let landed: Vec<bool> = (0..sectors).map(|_| rng.gen_bool(0.5)).collect();
        let count = landed.iter().filter(|&&b| b).count();
        let is_prefix = landed.iter().skip_while(|&&b| b).all(|&b| !b);
        if count > 0 && count < sectors && !is_prefix {
            return Some(landed);
        }
    }
    Some((0..sectors).map(|s| s == sectors - 1).collect())
}

/// What reaches the medium of an unsynced write at a crash.
#[derive(Debug)]
enum Landing {
    Dropped,
    Whole,
    Torn(Vec<bool>),
}

/// The fate of one unsynced write at a crash.
fn crash_fate(
    policy: UnsyncedOnCrash,
    mode: TearMode,
    rng: &mut StdRng,
    page_size: usize,
) -> Landing {
    let torn = |rng: &mut StdRng| {
        tear_sectors(rng, mode, page_size).map_or(Landing::Dropped, Landing::Torn)
    };
    match policy {
        UnsyncedOnCrash::DropAll => Landing::Dropped,
        UnsyncedOnCrash::ApplyAll => Landing::Whole,
        UnsyncedOnCrash::TearAll => torn(rng),
        UnsyncedOnCrash::Random => match rng.gen_range(0..3) {
            0 => Landing::Dropped,
            1 => Landing::Whole,
            _ => torn(rng),
        },
    }
}

impl Device for FaultDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    unsafe fn submit(&self, batch: Vec<IoRequest>) -> Vec<IoTicket> {
        let count = batch.len();
        let mut results: Vec<Option<Result<(), DeviceError>>> = Vec::with_capacity(count);
        let mut forwarded = Vec::new();
        let mut faulty = Vec::new();
        {
            let mut state = self.state.lock();
            for (index, request) in batch.into_iter().enumerate() {
                if let Err(err) = self.inner.info().validate(&request) {
                    results.push(Some(Err(err)));
                    continue;
                }
                match self.decide(&mut state, &request) {
                    Fate::Fail(err) => results.push(Some(Err(err))),
                    Fate::Forward(data) => {
                        results.push(None);
                        forwarded.push((index, request, data));
                    }
                    Fate::Faulty {
                        fault,
                        target,
                        then_read,
                    } => {
                        results.push(None);
                        faulty.push((index, request, fault, target, then_read));
                    }
                }
            }
        }
        // Faulty writes first: a fused command's write half precedes its read half.
        for (index, request, fault, target, then_read) in faulty {
            match self.execute(fault, target) {
                Err(err) => results[index] = Some(Err(err)),
                Ok(()) if then_read => {
                    forwarded.push((index, IoRequest::read(request.page, request.buf), None));
                }
                Ok(()) => results[index] = Some(Ok(())),
            }
        }
        let (meta, requests): (Vec<_>, Vec<_>) = forwarded
            .into_iter()
            .map(|(index, request, data)| ((index, request.page, request.op, data), request))
            .unzip();
        // SAFETY: forwarded from our caller's contract; we wait for every ticket below.
        let tickets = unsafe { self.inner.submit(requests) };
        for ((index, page, op, data), ticket) in meta.into_iter().zip(tickets) {
            let result = ticket.wait();
            if let (Ok(()), Some(data)) = (&result, data) {
                let target = match op {
                    IoOp::FusedReadWrite { write_page } => write_page,
                    IoOp::Read | IoOp::Write => page,
                };
                self.record(target, data);
            }
            results[index] = Some(result);
        }
        let tickets: Vec<IoTicket> = results
            .into_iter()
            .map(|result| IoTicket::done(result.unwrap_or(Err(DeviceError::Crashed))))
            .collect();
        assert_eq!(tickets.len(), count, "one ticket per request");
        tickets
    }

    fn sync(&self) -> Result<(), DeviceError> {
        let (seq_limit, injected) = {
            let mut state = self.state.lock();
            self.enter_op(&mut state)?;
            state.counters.syncs += 1;
            let ordinal = state.counters.syncs;
            let fails = chosen(
                &self.config.fail_syncs,
                ordinal,
                self.config.sync_error_rate,
                &mut state,
            );
            if fails {
                state.counters.injected_errors += 1;
            }
            let injected = fails.then(|| DeviceError::Injected(format!("sync {ordinal} failed")));
            (state.next_seq, injected)
        };
        let outcome = match injected {
            Some(err) => Err(err),
            None => self.inner.sync(),
        };
        if let Err(err) = outcome {
            self.state.lock().counters.failed_syncs += 1;
            if self.config.sync_failure_loses_pending {
                self.lose_pending(seq_limit)?;
            }
            return Err(err);
        }
        let mut state = self.state.lock();
        let promoted: Vec<PageId> = state
            .pending
            .iter()
            .filter(|(_, (seq, _))| *seq < seq_limit)
            .map(|(&page, _)| page)
            .collect();
        for page in promoted {
            if let Some((_, data)) = state.pending.remove(&page) {
                self.durable.write(page, &data)?;
                state.durable_pages.insert(page);
            }
        }
        Ok(())
    }

    fn stats(&self) -> DeviceStats {
        self.inner.stats()
    }

    /// Loads straight into the inner device and the durable image; no faults, not counted.
    fn bulk_load(&self, first_page: PageId, data: &[u8]) -> Result<(), DeviceError> {
        if self.state.lock().counters.crashed {
            return Err(DeviceError::Crashed);
        }
        self.inner.bulk_load(first_page, data)?;
        let mut state = self.state.lock();
        for (index, chunk) in data.chunks(self.info.page_size).enumerate() {
            let page = first_page + index as u64;
            self.durable.write(page, chunk)?;
            state.durable_pages.insert(page);
            state.pending.remove(&page);
        }
        Ok(())
    }
}

/// Wraps a device into a shared fault device (convenience for tests).
///
/// # Errors
/// See [`FaultDevice::new`].
pub fn wrap(inner: SharedDevice, config: FaultConfig) -> Result<Arc<FaultDevice>, DeviceError> {
    FaultDevice::new(inner, config).map(Arc::new)
}
