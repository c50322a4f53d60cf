//! The timing models behind one interface ([`Model`]) and a closed-loop driver for them
//! ([`closed_loop`]): `clients` virtual submitters, each with one request in flight, submitting
//! the next when the previous completes, exactly what `clients` threads doing submit + wait do
//! against the live device, minus the host's CPU and timer noise. Used by the calibration
//! example and by tests that need many I/Os without sleeping. Deterministic for a seed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::flash::{DeviceNs, FlashStats, SsdModel};
use super::hdd::HddModel;
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
            (Model::Hdd(_), ModelOp::Fused { .. }) => None,
            (Model::Hdd(m), ModelOp::Sync) => Some(m.sync(now)),
        }
    }

    /// Flash counters (zero for the HDD).
    #[must_use]
    pub fn flash_stats(&self) -> FlashStats {
        match self {
            Model::Ssd(m) => m.stats(),
            Model::Hdd(_) => FlashStats::default(),
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
