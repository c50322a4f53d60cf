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
//! Faults: fail the Nth read / write / sync (1-based ordinals per kind), fail each with a
//! probability, tear the Nth write (the medium gets a sector prefix of the new data over the old
//! page, and the write still reports success, as a lying disk would), crash after N operations.
//! Every decision is drawn from one seeded generator in submission order, so a single-threaded
//! run replays exactly from its seed.
//!
//! Execution: `submit` forwards the batch's surviving requests to the inner device in one
//! batch and waits for them before returning already-completed tickets, so that the wrapper
//! knows which writes completed (the parallelism inside a batch is kept; batches from one
//! thread no longer overlap).
//!
//! Invariants: `durable` only ever receives data of writes that completed before a successful
//! sync (or bulk loads); pending entries carry a sequence number so a sync never promotes a write
//! that completed after the sync began. Lock order: `state`, then the durable store's stripe
//! locks (memory copies only; no device I/O is done while `state` is held).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

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
    /// Operations refused because the device had crashed.
    pub refused_after_crash: u64,
    /// Whether the device has crashed.
    pub crashed: bool,
}

/// What to do with one request.
#[derive(Debug)]
enum Fate {
    /// Forward to the inner device; for writes, the data to record once it completes.
    Forward(Option<Vec<u8>>),
    /// Write only this many leading bytes of the data over the old page.
    Tear(Vec<u8>, usize),
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
        let image = MemoryDevice::new(self.info.page_size, self.info.pages)?;
        let mut page_buf = vec![0u8; self.info.page_size];
        for &page in &state.durable_pages {
            self.durable.read(page, &mut page_buf)?;
            image.store().write(page, &page_buf)?;
        }
        let policy = self.config.unsynced_on_crash;
        let State { rng, pending, .. } = &mut *state;
        for (&page, (_, data)) in pending.iter() {
            if let Some(length) = crash_fate(policy, rng, data.len()) {
                image.store().write(page, &data[..length])?;
            }
        }
        Ok(image)
    }

    /// Counts one operation; decides whether the device is (now) crashed.
    fn enter_op(&self, state: &mut State) -> Result<(), DeviceError> {
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
        if self.config.torn_writes.contains(&ordinal) && request.op == IoOp::Write {
            state.counters.torn_writes += 1;
            let length = torn_length(&mut state.rng, data.len()).unwrap_or(0);
            return Fate::Tear(data, length);
        }
        Fate::Forward(Some(data))
    }

    /// Records a completed write as pending.
    fn record(&self, page: PageId, data: Vec<u8>) {
        let mut state = self.state.lock();
        let seq = state.next_seq;
        state.next_seq += 1;
        state.pending.insert(page, (seq, data));
    }

    /// Writes `length` leading bytes of `data` over the inner device's `page`, synchronously.
    /// Returns the torn image that reached the medium.
    fn tear(&self, page: PageId, data: &[u8], length: usize) -> Result<Vec<u8>, DeviceError> {
        let mut buf = AlignedBuf::new(self.info.page_size);
        self.inner.read_page(page, &mut buf)?;
        buf.as_mut_slice()[..length].copy_from_slice(&data[..length]);
        self.inner.write_page(page, &buf)?;
        Ok(buf.as_slice().to_vec())
    }
}

/// Whether the `ordinal`-th operation of a kind fails: listed, or drawn with probability `rate`.
fn chosen(listed: &[u64], ordinal: u64, rate: f64, state: &mut State) -> bool {
    listed.contains(&ordinal) || (rate > 0.0 && state.rng.r#gen::<f64>() < rate)
}

/// A torn prefix length: whole sectors, at least one, fewer than all. `None` when the page has
/// fewer than two sectors (it cannot tear).
fn torn_length(rng: &mut StdRng, page_size: usize) -> Option<usize> {
    let sectors = page_size / SECTOR_SIZE;
    (sectors >= 2).then(|| rng.gen_range(1..sectors) * SECTOR_SIZE)
}

/// How many leading bytes of an unsynced write reach the medium at a crash (`None`: dropped).
fn crash_fate(policy: UnsyncedOnCrash, rng: &mut StdRng, page_size: usize) -> Option<usize> {
    match policy {
        UnsyncedOnCrash::DropAll => None,
        UnsyncedOnCrash::ApplyAll => Some(page_size),
        UnsyncedOnCrash::TearAll => torn_length(rng, page_size),
        UnsyncedOnCrash::Random => match rng.gen_range(0..3) {
            0 => None,
            1 => Some(page_size),
            _ => torn_length(rng, page_size),
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
        let mut torn = Vec::new();
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
                    Fate::Tear(data, length) => {
                        results.push(None);
                        torn.push((index, request.page, data, length));
                    }
                }
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
        for (index, page, data, length) in torn {
            let result = self.tear(page, &data, length).map(|image| {
                self.record(page, image);
            });
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
        let seq_limit = {
            let mut state = self.state.lock();
            self.enter_op(&mut state)?;
            state.counters.syncs += 1;
            let ordinal = state.counters.syncs;
            if chosen(
                &self.config.fail_syncs,
                ordinal,
                self.config.sync_error_rate,
                &mut state,
            ) {
                state.counters.injected_errors += 1;
                return Err(DeviceError::Injected(format!("sync {ordinal} failed")));
            }
            state.next_seq
        };
        self.inner.sync()?;
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
