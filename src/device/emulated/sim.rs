//! The timing models behind one interface ([`Model`]) and closed-loop drivers for them
//! ([`closed_loop`] for a number of requests, [`ClosedLoop`] window by window of device time):
//! `clients` virtual submitters, each with one request in flight, submitting the next when the
//! previous completes, exactly what `clients` threads doing submit + wait do against the live
//! device, minus the host's CPU and timer noise. Used by the calibration example, the device
//! probe's model runs (preconditioning in device time, tests of its steady-state logic) and
//! tests that need many I/Os without sleeping. Deterministic for a seed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::cloud::CloudModel;
use super::flash::{DeviceNs, FlashStats, SsdModel};
use super::hdd::HddModel;
use super::ideal::IdealModel;
use super::profile::{Kind, Profile};
use crate::error::Result;

/// One request to a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelOp {
    /// Read a page.
    Read(u64),
    /// Write a page.
    Write(u64),
    /// The fused RW command: write `write`, then read `read`.
    Fused {
        /// Page written.
        write: u64,
        /// Page read.
        read: u64,
    },
    /// Flush the write cache.
    Sync,
}

/// An SSD or HDD timing model.
#[derive(Debug)]
pub enum Model {
    /// Flash SSD.
    Ssd(Box<SsdModel>),
    /// Hard disk.
    Hdd(Box<HddModel>),
    /// Cloud volume.
    Cloud(Box<CloudModel>),
    /// Ideal asymmetric device.
    Ideal(Box<IdealModel>),
}

impl Model {
    /// The model of `profile` for `pages` pages of `page_size` bytes (SSDs preconditioned).
    ///
    /// # Errors
    /// [`crate::error::Error::Config`] when the device is too large.
    pub fn new(profile: &Profile, page_size: usize, pages: u64) -> Result<Self> {
        Ok(match profile.kind {
            Kind::Ssd => Model::Ssd(Box::new(SsdModel::new(profile, page_size, pages)?)),
            Kind::Hdd => Model::Hdd(Box::new(HddModel::new(profile, page_size, pages))),
            Kind::Cloud => Model::Cloud(Box::new(CloudModel::new(profile, page_size))),
            Kind::Ideal => Model::Ideal(Box::new(IdealModel::new(profile))),
        })
    }

    /// Completion time of `op` submitted at `now`; `None` if the model lacks the command
    /// (fused RW on an HDD).
    pub fn submit(&mut self, now: DeviceNs, op: ModelOp) -> Option<DeviceNs> {
        match (self, op) {
            (Model::Ssd(m), ModelOp::Read(p)) => Some(m.read(now, p)),
            (Model::Ssd(m), ModelOp::Write(p)) => Some(m.write(now, p)),
            (Model::Ssd(m), ModelOp::Fused { write, read }) => Some(m.fused(now, write, read)),
            (Model::Ssd(m), ModelOp::Sync) => Some(m.sync(now)),
            (Model::Hdd(m), ModelOp::Read(p)) => Some(m.read(now, p)),
            (Model::Hdd(m), ModelOp::Write(p)) => Some(m.write(now, p)),
            (Model::Hdd(m), ModelOp::Sync) => Some(m.sync(now)),
            (Model::Cloud(m), ModelOp::Read(_)) => Some(m.read(now)),
            (Model::Cloud(m), ModelOp::Write(_)) => Some(m.write(now)),
            (Model::Hdd(_) | Model::Cloud(_) | Model::Ideal(_), ModelOp::Fused { .. }) => None,
            (Model::Cloud(m), ModelOp::Sync) => Some(m.sync(now)),
            (Model::Ideal(m), ModelOp::Read(_)) => Some(m.read(now)),
            (Model::Ideal(m), ModelOp::Write(_)) => Some(m.write(now)),
            (Model::Ideal(m), ModelOp::Sync) => Some(m.sync(now)),
        }
    }

    /// When the work queued so far is done (the device is idle from then on if left alone).
    #[must_use]
    pub fn quiescent_at(&self) -> DeviceNs {
        match self {
            Model::Ssd(m) => m.quiescent_at(),
            Model::Hdd(m) => m.quiescent_at(),
            Model::Cloud(m) => m.quiescent_at(),
            Model::Ideal(m) => m.quiescent_at(),
        }
    }

    /// Flash counters (zero for the HDD).
    #[must_use]
    pub fn flash_stats(&self) -> FlashStats {
        match self {
            Model::Ssd(m) => m.stats(),
            Model::Hdd(_) | Model::Cloud(_) | Model::Ideal(_) => FlashStats::default(),
        }
    }

    /// Forgets the host writes counted for [`Model::age`] (SSDs; others count none).
    pub fn restart_write_history(&mut self) {
        if let Model::Ssd(m) = self {
            m.restart_write_history();
        }
    }

    /// Ages an SSD's flash layout with the host writes counted since the last restart
    /// ([`SsdModel::age`]); `None` for other models, `age=off` or no writes counted.
    pub fn age(&mut self) -> Option<super::aging::AgingReport> {
        match self {
            Model::Ssd(m) => m.age(),
            Model::Hdd(_) | Model::Cloud(_) | Model::Ideal(_) => None,
        }
    }

    /// Maps a page without timing (bulk loads).
    pub fn map_untimed(&mut self, page: u64) {
        if let Model::Ssd(m) = self {
            m.map_untimed(page);
        }
    }
}

/// What each virtual client does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// Random reads.
    Reader,
    /// Random writes.
    Writer,
    /// Random fused RW commands.
    Fused,
    /// A random write, and when it completes a random read (the RAW protocol the fused
    /// command replaces); counted as one request with the pair's latency under `fused`.
    WriteThenRead,
}

/// Results of a closed-loop run (device time; the first tenth of the requests is warm-up and
/// not counted).
#[derive(Debug, Clone, Copy, Default)]
pub struct SimResult {
    /// Reads counted.
    pub reads: u64,
    /// Writes counted.
    pub writes: u64,
    /// Fused commands counted.
    pub fused: u64,
    /// Device time the counted requests spanned.
    pub elapsed_ns: u64,
    /// Device time the last counted request completed (start the next run from here).
    pub end_ns: DeviceNs,
    /// Sum of read latencies.
    pub read_latency_ns: u64,
    /// Sum of write latencies.
    pub write_latency_ns: u64,
    /// Sum of fused latencies.
    pub fused_latency_ns: u64,
}

#[allow(clippy::cast_precision_loss)]
fn per_second(count: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        count as f64 * 1.0e9 / ns as f64
    }
}

#[allow(clippy::cast_precision_loss)]
fn mean_us(sum_ns: u64, count: u64) -> f64 {
    if count == 0 {
        0.0
    } else {
        sum_ns as f64 / count as f64 / 1000.0
    }
}

impl SimResult {
    /// Reads per second of device time.
    #[must_use]
    pub fn read_iops(&self) -> f64 {
        per_second(self.reads, self.elapsed_ns)
    }
    /// Writes per second of device time.
    #[must_use]
    pub fn write_iops(&self) -> f64 {
        per_second(self.writes, self.elapsed_ns)
    }
    /// Mean read latency, microseconds.
    #[must_use]
    pub fn read_latency_us(&self) -> f64 {
        mean_us(self.read_latency_ns, self.reads)
    }
    /// Mean write latency, microseconds.
    #[must_use]
    pub fn write_latency_us(&self) -> f64 {
        mean_us(self.write_latency_ns, self.writes)
    }
    /// Mean fused latency, microseconds.
    #[must_use]
    pub fn fused_latency_us(&self) -> f64 {
        mean_us(self.fused_latency_ns, self.fused)
    }
}

/// Runs `clients` closed-loop submitters (uniform random pages in `0..pages`) for `requests`
/// requests in total, starting at device time `start`. Bounded by `requests`.
pub fn closed_loop(
    model: &mut Model,
    clients: &[ClientKind],
    pages: u64,
    requests: u64,
    start: DeviceNs,
    seed: u64,
) -> SimResult {
    assert!(pages > 0, "pages to address");
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut ready: BinaryHeap<Reverse<(DeviceNs, usize)>> =
        (0..clients.len()).map(|i| Reverse((start, i))).collect();
    let warmup = requests / 10;
    let mut result = SimResult::default();
    let mut measured_from = start;
    let mut last = start;
    // WriteThenRead clients between their two phases: when the write was submitted.
    let mut pending_read: Vec<Option<DeviceNs>> = vec![None; clients.len()];
    for issued in 0..requests {
        let Some(Reverse((now, client))) = ready.pop() else {
            break;
        };
        if issued == warmup {
            measured_from = now;
        }
        let page = rng.gen_range(0..pages);
        let done = match clients[client] {
            ClientKind::Reader => model.submit(now, ModelOp::Read(page)),
            ClientKind::Writer => model.submit(now, ModelOp::Write(page)),
            ClientKind::Fused => {
                let write = rng.gen_range(0..pages);
                model.submit(now, ModelOp::Fused { write, read: page })
            }
            ClientKind::WriteThenRead => {
                if let Some(started) = pending_read[client].take() {
                    // Phase 2: the write completed at `now`; read, counted from the write's start.
                    let done = model.submit(now, ModelOp::Read(page)).unwrap_or(now);
                    if issued >= warmup {
                        result.fused += 1;
                        result.fused_latency_ns += done - started;
                        last = last.max(done);
                    }
                    ready.push(Reverse((done, client)));
                } else {
                    // Phase 1: the write; the client comes back at its completion for the read.
                    let written = model.submit(now, ModelOp::Write(page)).unwrap_or(now);
                    pending_read[client] = Some(now);
                    ready.push(Reverse((written, client)));
                }
                continue;
            }
        }
        .unwrap_or(now);
        if issued >= warmup {
            let latency = done - now;
            match clients[client] {
                ClientKind::Reader => {
                    result.reads += 1;
                    result.read_latency_ns += latency;
                }
                ClientKind::Writer => {
                    result.writes += 1;
                    result.write_latency_ns += latency;
                }
                ClientKind::Fused | ClientKind::WriteThenRead => {
                    // (WriteThenRead is counted in its phase 2 above and never reaches here.)
                    result.fused += 1;
                    result.fused_latency_ns += latency;
                }
            }
            last = last.max(done);
        }
        ready.push(Reverse((done, client)));
    }
    result.elapsed_ns = last.saturating_sub(measured_from);
    result.end_ns = last;
    result
}

/// What one window of a [`ClosedLoop`] saw: the requests that completed in it.
#[derive(Debug, Clone, Default)]
pub struct Window {
    /// Device time the window started.
    pub start_ns: DeviceNs,
    /// Device time the window ended (exclusive).
    pub end_ns: DeviceNs,
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Fused commands completed.
    pub fused: u64,
    /// Latency of every request completed in the window, device nanoseconds.
    pub latencies_ns: Vec<u64>,
    /// The kind of client each of `latencies_ns` came from (same order and length), so a
    /// mixed load can be split into its streams.
    pub kinds: Vec<ClientKind>,
}

impl Window {
    /// Requests completed in the window.
    #[must_use]
    pub fn requests(&self) -> u64 {
        self.reads + self.writes + self.fused
    }

    /// Requests per second of device time.
    #[must_use]
    pub fn iops(&self) -> f64 {
        per_second(self.requests(), self.end_ns.saturating_sub(self.start_ns))
    }
}

/// A closed loop that keeps its state between windows, so a measurement can run until steady:
/// each client's next request is submitted when its previous one completes, and a request
/// counts in the window its completion falls in. No sleeping; deterministic for a seed.
/// `WriteThenRead` clients are not supported here (use [`closed_loop`]).
#[derive(Debug)]
pub struct ClosedLoop {
    clients: Vec<ClientKind>,
    pages: u64,
    rng: SmallRng,
    /// (when the client is ready again, client, its outstanding request's submission time).
    ready: BinaryHeap<Reverse<(DeviceNs, usize, Option<DeviceNs>)>>,
    now: DeviceNs,
}

impl ClosedLoop {
    /// `clients` submitters over pages `0..pages`, all ready at device time `start`.
    #[must_use]
    pub fn new(clients: &[ClientKind], pages: u64, start: DeviceNs, seed: u64) -> Self {
        assert!(pages > 0, "pages to address");
        assert!(
            !clients.contains(&ClientKind::WriteThenRead),
            "ClosedLoop runs one request per client at a time"
        );
        ClosedLoop {
            clients: clients.to_vec(),
            pages,
            rng: SmallRng::seed_from_u64(seed),
            ready: (0..clients.len())
                .map(|client| Reverse((start, client, None)))
                .collect(),
            now: start,
        }
    }

    /// The device time the next window starts at.
    #[must_use]
    pub fn now(&self) -> DeviceNs {
        self.now
    }

    /// Runs until device time `end`; returns the window from the previous end to `end`.
    /// Bounded: each turn completes one request before `end`, and requests take positive time
    /// on every model, so a window holds finitely many.
    pub fn run_until(&mut self, model: &mut Model, end: DeviceNs) -> Window {
        let mut window = Window {
            start_ns: self.now,
            end_ns: end.max(self.now),
            ..Window::default()
        };
        while let Some(&Reverse((at, client, submitted))) = self.ready.peek() {
            if at >= window.end_ns {
                break;
            }
            self.ready.pop();
            if let Some(submitted) = submitted {
                self.count(&mut window, client, at - submitted);
            }
            let op = self.next_op(client);
            // A model without the command (fused on an HDD) answers at once; count it then.
            let done = model.submit(at, op).unwrap_or(at).max(at + 1);
            self.ready.push(Reverse((done, client, Some(at))));
        }
        self.now = window.end_ns;
        window
    }

    /// Submits exactly `requests` more requests, each at its client's ready time, and counts
    /// nothing: a load that only changes the model's state (preconditioning). Bounded by
    /// `requests`.
    pub fn run_requests(&mut self, model: &mut Model, requests: u64) {
        for _ in 0..requests {
            let Some(Reverse((at, client, _))) = self.ready.pop() else {
                break;
            };
            let op = self.next_op(client);
            let done = model.submit(at, op).unwrap_or(at).max(at + 1);
            self.ready.push(Reverse((done, client, Some(at))));
            self.now = self.now.max(at);
        }
    }

    /// The next request of `client`: a uniformly random page.
    fn next_op(&mut self, client: usize) -> ModelOp {
        let page = self.rng.gen_range(0..self.pages);
        match self.clients[client] {
            ClientKind::Reader => ModelOp::Read(page),
            ClientKind::Writer | ClientKind::WriteThenRead => ModelOp::Write(page),
            ClientKind::Fused => ModelOp::Fused {
                write: self.rng.gen_range(0..self.pages),
                read: page,
            },
        }
    }

    fn count(&self, window: &mut Window, client: usize, latency: u64) {
        match self.clients[client] {
            ClientKind::Reader => window.reads += 1,
            ClientKind::Writer | ClientKind::WriteThenRead => window.writes += 1,
            ClientKind::Fused => window.fused += 1,
        }
        window.latencies_ns.push(latency);
        window.kinds.push(self.clients[client]);
    }

    /// When every client's outstanding request completes (the loop's drain point).
    #[must_use]
    pub fn drained_at(&self) -> DeviceNs {
        self.ready
            .iter()
            .map(|&Reverse((at, _, _))| at)
            .max()
            .unwrap_or(self.now)
    }
}
