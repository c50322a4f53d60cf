//! The emulated flash SSD, HDD and cloud volume, `emu:NAME[,key=value...]` (docs/algorithms.md
//! section 7; profiles, physics and calibration in `docs/devices.md`).
//!
//! Files: `profile.rs` (profiles, option overrides, the paper figures each profile is
//! calibrated against), `ftl.rs` (page map and greedy GC), `aging.rs` (the bench warm-up's
//! fast-forward of the FTL to a workload's own steady state, from its counted writes),
//! `flash.rs` (the SSD timing model: dies, channels, host link, command queue, write buffer,
//! S-Buf / R-Buf, fused RW), `hdd.rs` (one actuator), `cloud.rs` (provisioned-IOPS volume:
//! rate limiter, network, replicated servers), `sim.rs` (the models behind one interface and
//! closed-loop drivers for calibration, the probe's model runs and tests), this file (the
//! [`Device`]).
//!
//! How a request runs: the data moves at submission (a [`PageStore`], so a read sees the data
//! as of its submission); under one short mutex the timing model computes the completion time
//! in device time; the ticket completes at the real instant of that device time
//! ([`DeviceClock::instant`], [`IoTicket::at`]). No background thread. A request arrives at the
//! device time read *before* its data is copied (later only if another request has arrived
//! since: arrivals reach the model in order), so the host's copy overlaps the modelled latency
//! instead of adding to it; a copy that outlasts the modelled completion (a page fault on an
//! image larger than RAM) is counted in [`DeviceStats::late_copies`].
//!
//! Time: device time runs `time_scale` times slower than real time ([`DeviceClock`]), so that a
//! 2-core host keeps up with a device doing 10^5 IOPS; every figure the device reports (and
//! `DeviceInfo::time_scale` lets callers convert theirs) is in device time. Default scales:
//! 10 for the NVMe profiles (ssd-a, ssd-b, pcie, openssd), 20 for optane, 5 for ssd-d and
//! cloud, 2 for the SATA profiles (ssd-c, sata), 1 for the HDD. Work that needs no real time
//! (the probe's preconditioning, waiting for the device to go idle) runs in device time only
//! through [`DeviceTimeControl`]: the model runs a closed loop in virtual time and the clock
//! jumps ([`DeviceClock::advance`]).
//!
//! `sync` (cache flush) depends on power-loss protection ([`Device::write_cache`]):
//! - `plp=off` (the papers' client and consumer drives: ssd-a Intel P4101, ssd-b Samsung 970
//!   Pro, ssd-c Crucial MX500, ssd-d WD SN570, openssd): the DRAM write buffer is volatile, so a
//!   sync waits until the dirty data (writes acknowledged before it, not yet programmed; writes
//!   still in flight are not covered, as with NVMe FLUSH) is on flash, in SLC mode while the
//!   drive's SLC cache has room, then the flush commit (`flush_commit_us`, fitted); `flush_us`
//!   replaces that by a fixed latency. Garbage collection is deferred to idle die time on the
//!   client profiles (`gc_defer_blocks`), so a flush at moderate load does not wait behind it.
//!   `docs/devices.md` ("The sync price") gives the sources, the fit and the figures;
//! - `plp=off` with `flush=noop` (openssd's default: the Cosmos+ OpenSSD's firmware completes a
//!   FLUSH without draining its buffer): nothing drains; the sync costs ext4's journal commit,
//!   written through the buffer and shared between syncs as jbd2 shares it (`docs/devices.md`,
//!   "A flush the firmware ignores"). The same board writes back lazily (`writeback=lazy`): a
//!   buffered page is programmed only when its slot is taken for another page, so requests
//!   that miss a full buffer wait for a program (`docs/devices.md`, "Lazy write-back");
//! - `plp=on` (the enterprise drives: pcie Intel P4510, sata Intel S4610, optane P4800X; and
//!   the cloud volume, whose writes are durable when acknowledged): firmware time only (a
//!   network round trip for the cloud volume);
//! - the HDD has no write cache in the model (writes are on the medium when acknowledged), so
//!   a sync costs command overhead.
//!
//! Syncs are counted in [`DeviceStats::syncs`]; `flashbuf device probe` measures them.
//!
//! Calibration, with `flashbuf device probe --device emu:NAME` (its default method: random
//! preconditioning, points until steady; device time; the model figures come from
//! `cargo run --release --example emu_calibrate -- probe`, live ones are in
//! `docs/devices.md`):
//!
//! | device | page | read IOPS at 32 | Table 1 | write IOPS at 32 | Table 1 |
//! |---|---|---|---|---|---|
//! | ssd-a | 16 KiB | 195,225 | 190,622 | 34,787 | 33,866 |
//! | ssd-b | 16 KiB | 165,900 | 169,681 | 34,046 | 33,811 |
//! | ssd-c | 16 KiB | 34,156 | 39,860 | 3,870 | 3,830 |
//! | ssd-d | 16 KiB | 79,225 | 80,433 | 12,687 | 12,536 |
//! | hdd | 16 KiB | 238 | 280 | 191 | 216 |
//! | openssd | 4 KiB | 147,800 | 142,032 (RW paper) | 16,726 | 16,355 |
//!
//! The RW paper's drives at 4 KiB and 128 in flight (RW Table 1: QD32 from four fio threads;
//! see `profile::RW_TABLE_1_CONCURRENCY`):
//!
//! | device | read IOPS at 128 | RW Table 1 | write IOPS at 128 | RW Table 1 |
//! |---|---|---|---|---|
//! | rw-ssd-a | 525,950 | 529,977 | 52,793 | 51,077 |
//! | rw-ssd-b | 256,350 | 264,846 | 20,282 | 19,705 |
//! | rw-ssd-c | 717,025 | 723,241 | 71,125 | 70,983 |
//! | rw-ssd-d | 98,125 | 99,123 | 8,586 | 8,739 |
//!
//! | device | alpha | ACE Table I | k_r | Table I | k_w | Table I |
//! |---|---|---|---|---|---|---|
//! | pcie | 2.58 | 2.8 | 84.6 | 80 | 3.0 | 8 |
//! | sata | 1.54 | 1.5 | 24.8 | 25 | 2.7 | 9 |
//! | optane | 1.09 | 1.1 | 5.3 | 6 | 5.1 | 5 |
//! | cloud | 2.02 | 2.0 | 11.1 | 11 | 20.8 | 19 |
//! | pcie-fs | 2.56 | 2.8 | 84.1 | 80 | 7.9 | 8 |
//! | sata-fs | 1.56 | 1.5 | 24.7 | 25 | 9.2 | 9 |
//!
//! (ACE Table I at 4 KiB, the I/O size ACE measured at.) SSD-C's Table 1 read figure
//! (39,860 x 16 KiB = 653 MB/s) exceeds what a SATA 6 Gb/s link carries (about 560 MB/s after
//! protocol overhead); the model keeps the link honest (-14%). The HDD reads 15% under Table 1
//! (docs/algorithms.md's seek formula; command reordering approximated, see `hdd.rs`). k_w of the
//! two enterprise flash drives is where Little's law puts a write buffer that acknowledges in
//! 17-37 us (their datasheet latencies): about 3; Table I's 8 and 9 would need writes 2.5-4x
//! slower at concurrency 1, which the `-fs` variants give them with a fitted host write path
//! (`host_write_us`, added to each completion without occupying the device; `docs/devices.md`,
//! "k_w through the host stack"). The parameters are physics (dies, tR,
//! tPROG, link, buffer, firmware, network; see `profile.rs`), not the benchmark: the figures
//! above emerge from them. Preconditioning at open costs about 0.45 s per million pages.
//!
//! Simplified: no wear levelling or bad blocks; host and GC data share one append point; SLC
//! and TLC data share the FTL's blocks (the SLC cache is a budget of unfolded pages); the
//! buffer is a slot pool, not an LRU cache (a rewrite of a buffered page takes a new slot);
//! completion times handed out are never revised (a read that suspends a program delays
//! later programs only); program transfers do not queue on channels; a flush of a partly
//! filled flash page costs that page's share of tPROG, not a padded program; the HDD
//! approximates NCQ reordering statistically (best of k random candidates) rather than by true
//! positions; the cloud volume's servers add latency but no concurrency limit.
//!
//! Lock order: the model mutex only; the page store's stripe locks are taken outside it.

pub mod aging;
pub mod cloud;
pub mod flash;
pub mod ftl;
pub mod hdd;
pub mod ideal;
pub mod lazy_buffer;
pub mod profile;
pub mod sim;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::memory::{AtomicStats, PageStore};
use super::{
    Device, DeviceInfo, DeviceStats, DeviceTimeControl, IoOp, IoRequest, IoTicket, OpenOptions,
    SharedDevice, WriteCache,
};
use crate::error::{DeviceError, PageId, Result};
pub use flash::DeviceNs;
pub use profile::{Flush, Kind, OPTION_NAMES, PROFILE_NAMES, Precondition, Profile, Writeback};
pub use sim::{ClientKind, ClosedLoop, Model, ModelOp};

/// Maps device time to real instants: device nanosecond `t` happens at
/// `epoch + (t - offset) x scale`. The offset only grows ([`DeviceClock::advance`]: device time
/// that passes without real time, for work done in device time only).
#[derive(Debug, Clone)]
pub struct DeviceClock {
    epoch: Instant,
    scale: f64,
    offset_ns: Arc<AtomicU64>,
}

impl DeviceClock {
    /// A clock starting now, running `scale` times slower than real time.
    #[must_use]
    pub fn new(scale: f64) -> Self {
        assert!(
            scale.is_finite() && scale > 0.0,
            "time scale must be positive"
        );
        DeviceClock {
            epoch: Instant::now(),
            scale,
            offset_ns: Arc::new(AtomicU64::new(0)),
        }
    }

    fn offset(&self) -> u64 {
        self.offset_ns.load(Ordering::Acquire)
    }

    /// The current device time.
    #[must_use]
    pub fn now(&self) -> DeviceNs {
        let real = self.epoch.elapsed().as_nanos() as f64;
        (real / self.scale) as u64 + self.offset()
    }

    /// The real instant of device time `t` (instants already past for times before the last
    /// [`DeviceClock::advance`]).
    #[must_use]
    pub fn instant(&self, t: DeviceNs) -> Instant {
        let since_epoch = t.saturating_sub(self.offset());
        let real_ns = (since_epoch as f64 * self.scale).min(1.0e18) as u64;
        self.epoch + Duration::from_nanos(real_ns)
    }

    /// Device time of a real instant (e.g. a ticket's deadline).
    #[must_use]
    pub fn device_time(&self, instant: Instant) -> DeviceNs {
        let real = instant.saturating_duration_since(self.epoch).as_nanos() as f64;
        (real / self.scale) as u64 + self.offset()
    }

    /// Lets `delta` nanoseconds of device time pass at once. Deadlines handed out before keep
    /// their real instants, so call this only with no I/O in flight.
    pub fn advance(&self, delta: DeviceNs) {
        self.offset_ns.fetch_add(delta, Ordering::AcqRel);
    }
}

/// An emulated SSD or HDD.
#[derive(Debug)]
pub struct EmulatedDevice {
    info: DeviceInfo,
    profile: Profile,
    store: PageStore,
    clock: DeviceClock,
    model: Mutex<Model>,
    stats: AtomicStats,
    /// The latest arrival handed to the model (written under the model mutex).
    last_arrival: AtomicU64,
    late_copies: AtomicU64,
    late_copy_ns: AtomicU64,
    /// Requests complete at once, outside the model ([`DeviceTimeControl::set_untimed`]).
    untimed: AtomicBool,
}

impl EmulatedDevice {
    /// Builds the device `profile` describes for `options` (SSDs are preconditioned).
    ///
    /// # Errors
    /// [`crate::error::Error::Config`] when the options do not fit, or the store cannot be
    /// allocated.
    pub fn new(name: String, profile: Profile, options: &OpenOptions) -> Result<Self> {
        options.validate()?;
        let model = Model::new(&profile, options.page_size, options.pages)?;
        Ok(EmulatedDevice {
            info: DeviceInfo {
                name,
                page_size: options.page_size,
                pages: options.pages,
                supports_fused_rw: profile.kind == Kind::Ssd,
                time_scale: profile.time_scale,
                emulated: true,
                write_concurrency: if profile.kind == Kind::Ideal {
                    Some(profile.k_w as usize)
                } else {
                    profile::paper_figures(profile.name)
                        .and_then(|figures| figures.k_w)
                        .map(|k_w| k_w.round() as usize)
                },
            },
            store: PageStore::new(options.page_size, options.pages)?,
            clock: DeviceClock::new(profile.time_scale),
            model: Mutex::new(model),
            stats: AtomicStats::default(),
            last_arrival: AtomicU64::new(0),
            late_copies: AtomicU64::new(0),
            late_copy_ns: AtomicU64::new(0),
            untimed: AtomicBool::new(false),
            profile,
        })
    }

    /// The resolved profile (defaults with overrides applied).
    #[must_use]
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The device clock (device time of ticket deadlines: `clock().device_time(deadline)`).
    #[must_use]
    pub fn clock(&self) -> &DeviceClock {
        &self.clock
    }

    /// Tells the model that pages `first_page .. first_page + count` hold data, with no time
    /// spent (an image loaded outside any measurement).
    fn map_untimed(&self, first_page: PageId, count: u64) {
        let mut model = self.model.lock();
        // Bound: `count` iterations.
        for page in first_page..first_page + count {
            model.map_untimed(page);
        }
    }

    /// The page contents.
    #[must_use]
    pub fn store(&self) -> &PageStore {
        &self.store
    }

    /// The arrival time of a request read at `submitted`: no earlier than the latest arrival
    /// the model has seen, so that arrivals stay in order. Call with the model mutex held.
    fn arrival(&self, submitted: DeviceNs) -> DeviceNs {
        let previous = self.last_arrival.fetch_max(submitted, Ordering::Relaxed);
        previous.max(submitted)
    }

    /// Counts a request whose copy ended at `now`, after its modelled completion `done`.
    fn note_late_copy(&self, done: DeviceNs, now: DeviceNs) {
        if now > done {
            self.late_copies.fetch_add(1, Ordering::Relaxed);
            self.late_copy_ns.fetch_add(now - done, Ordering::Relaxed);
        }
    }

    fn model_op(request: &IoRequest) -> ModelOp {
        match request.op {
            IoOp::Read => ModelOp::Read(request.page),
            IoOp::Write => ModelOp::Write(request.page),
            IoOp::FusedReadWrite { write_page } => ModelOp::Fused {
                write: write_page,
                read: request.page,
            },
        }
    }

    fn check(&self, request: &IoRequest) -> std::result::Result<(), DeviceError> {
        self.info.validate(request)?;
        if matches!(request.op, IoOp::FusedReadWrite { .. }) && !self.info.supports_fused_rw {
            return Err(DeviceError::Unsupported {
                device: self.info.name.clone(),
                command: "fused read-write",
            });
        }
        Ok(())
    }
}

impl Device for EmulatedDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    unsafe fn submit(&self, batch: Vec<IoRequest>) -> Vec<IoTicket> {
        // The batch arrives now; its data moves first, outside the model lock (stripe locks
        // only), during the modelled latency.
        let submitted = self.clock.now();
        let mut timed: Vec<(usize, ModelOp)> = Vec::with_capacity(batch.len());
        let mut results: Vec<std::result::Result<(), DeviceError>> =
            Vec::with_capacity(batch.len());
        for (index, request) in batch.iter().enumerate() {
            let result = self.check(request).and_then(|()| {
                // SAFETY: the caller's submit contract covers the buffer.
                unsafe { self.store.apply(request) }
            });
            if result.is_ok() {
                self.stats.count(request.op, self.info.page_size);
                timed.push((index, Self::model_op(request)));
            }
            results.push(result);
        }
        let mut done_at: Vec<Option<DeviceNs>> = vec![None; batch.len()];
        if !timed.is_empty() && !self.untimed.load(Ordering::Acquire) {
            let mut model = self.model.lock();
            let arrival = self.arrival(submitted);
            let now = self.clock.now();
            for (index, op) in timed {
                let done = model.submit(arrival, op);
                if let Some(done) = done {
                    self.note_late_copy(done, now);
                }
                done_at[index] = done;
            }
        }
        results
            .into_iter()
            .zip(done_at)
            .map(|(result, at)| match at {
                Some(t) => IoTicket::at(self.clock.instant(t), result),
                None => IoTicket::done(result),
            })
            .collect()
    }

    fn sync(&self) -> std::result::Result<(), DeviceError> {
        self.stats.count_sync();
        if self.untimed.load(Ordering::Acquire) {
            return Ok(());
        }
        let done = {
            let mut model = self.model.lock();
            let now = self.arrival(self.clock.now());
            model.submit(now, ModelOp::Sync).unwrap_or(now)
        };
        super::ticket::sleep_until(self.clock.instant(done));
        Ok(())
    }

    fn write_cache(&self) -> WriteCache {
        self.profile.write_cache()
    }

    fn time_control(&self) -> Option<&dyn DeviceTimeControl> {
        Some(self)
    }

    fn stats(&self) -> DeviceStats {
        let flash = self.model.lock().flash_stats();
        let mut stats = self.stats.snapshot();
        stats.gc_writes = flash.gc_writes;
        stats.flash_programs = flash.flash_programs;
        stats.journal_writes = flash.journal_writes;
        stats.buffer_write_hits = flash.buffer_write_hits;
        stats.late_copies = self.late_copies.load(Ordering::Relaxed);
        stats.late_copy_ns = self.late_copy_ns.load(Ordering::Relaxed);
        stats
    }

    fn bulk_load(&self, first_page: PageId, data: &[u8]) -> std::result::Result<(), DeviceError> {
        let page_size = self.info.page_size;
        let count = data.len().div_ceil(page_size) as u64;
        if count > 0 {
            self.info.check_page(first_page + count - 1)?;
        }
        for (index, chunk) in data.chunks(page_size).enumerate() {
            self.store.write(first_page + index as u64, chunk)?;
        }
        self.map_untimed(first_page, count);
        Ok(())
    }

    fn load_file(
        &self,
        first_page: PageId,
        file: &std::fs::File,
        pages: u64,
    ) -> std::result::Result<(), DeviceError> {
        if !self.store.layer_file(first_page, pages, file)? {
            return super::copy_file_pages(self, first_page, file, pages);
        }
        self.map_untimed(first_page, pages);
        Ok(())
    }
}

impl DeviceTimeControl for EmulatedDevice {
    fn now_ns(&self) -> u64 {
        self.clock.now()
    }

    fn set_untimed(&self, untimed: bool) {
        self.untimed.store(untimed, Ordering::Release);
    }

    fn precondition(
        &self,
        region_pages: u64,
        writes: u64,
        concurrency: usize,
        seed: u64,
    ) -> std::result::Result<u64, DeviceError> {
        if region_pages == 0 {
            return Ok(0);
        }
        self.info.check_page(region_pages - 1)?;
        let mut model = self.model.lock();
        let start = self.clock.now();
        let clients = vec![ClientKind::Writer; concurrency.clamp(1, 4096)];
        let mut load = ClosedLoop::new(&clients, region_pages, start, seed);
        load.run_requests(&mut model, writes);
        let end = load.drained_at().max(start);
        self.clock.advance(end - start);
        for _ in 0..writes {
            self.stats.count(IoOp::Write, self.info.page_size);
        }
        Ok(end - start)
    }

    fn restart_write_history(&self) {
        self.model.lock().restart_write_history();
    }

    fn age_flash(&self) -> Option<aging::AgingReport> {
        self.model.lock().age()
    }

    fn settle(&self) -> u64 {
        let model = self.model.lock();
        let now = self.clock.now();
        let idle = model.quiescent_at();
        let delta = idle.saturating_sub(now);
        self.clock.advance(delta);
        delta
    }
}

/// Opens an emulated device: profile `profile` with `overrides` applied.
///
/// # Errors
/// [`crate::error::Error::Config`] for an unknown profile or option (listing the valid ones),
/// a bad value, or a device too large for the model.
pub fn open(
    profile: &str,
    overrides: &[(String, String)],
    options: &OpenOptions,
) -> Result<SharedDevice> {
    let device: SharedDevice = open_emulated(profile, overrides, options)?;
    Ok(device)
}

/// Like [`open`], but returns the concrete device (its [`DeviceClock`] converts ticket
/// deadlines to device time: `device.clock().device_time(ticket.deadline()?)`).
///
/// # Errors
/// As [`open`].
pub fn open_emulated(
    profile: &str,
    overrides: &[(String, String)],
    options: &OpenOptions,
) -> Result<Arc<EmulatedDevice>> {
    let resolved = profile::resolve(profile, overrides)?;
    let name = super::DeviceSpec::Emulated {
        profile: profile.to_string(),
        options: overrides.to_vec(),
    }
    .to_string();
    Ok(Arc::new(EmulatedDevice::new(name, resolved, options)?))
}
