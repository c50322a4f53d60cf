//! The timing model of the emulated flash SSD (docs/algorithms.md section 7; NVMeVirt/FEMU style):
//! every resource has a busy-until time in device nanoseconds, and a request's completion time
//! is computed when it is submitted. Pure and single-threaded: the device wraps it in a mutex,
//! and tests drive it with scripted times, without sleeping.
//!
//! Resources: dies (channels x ways; die `d` hangs on channel `d % channels`), channels, a host
//! link (two directions for PCIe, one shared for SATA), the controller's DRAM buffer as a pool of
//! page slots, and the FTL (`ftl.rs`).
//!
//! - Read: firmware; a buffer slot (S-Buf: a slot of the shared write buffer, so under write
//!   load the read waits until a dirty slot's program completes, the RW paper's read stall;
//!   R-Buf: a slot of the separate read buffer, never held by writes); die (reads have priority
//!   over queued programs; an in-flight program or GC is suspended at a cost of `t_suspend`, or
//!   with `suspend=off` finishes first); tR; channel transfer; host transfer. Pages still in the
//!   write buffer are served from it (firmware + host transfer).
//! - Write: firmware; a write-buffer slot (the earliest to free when the buffer is full); host
//!   transfer; acknowledged. The program is scheduled at once: the FTL places the page on the
//!   next die round-robin (garbage-collecting there first when short of free blocks, the copies
//!   and erase charged on the die), channel transfer, tPROG; the slot frees when it completes.
//! - Without a write buffer (`buffer=0`: 3D XPoint, which writes in place) a write is
//!   acknowledged when its program completes; reads then use the read buffer's slots.
//! - Command queue: with `queue_depth=N` (SATA NCQ: 32) at most N commands are in the device;
//!   later ones wait in the host until one completes. 0: no limit (NVMe's queues are deep).
//! - Fused RW: the write half as above; the read half starts in parallel and its data goes to
//!   the host once the write data has left the host buffer, so it costs about one read.
//! - Sync: flush cache. With `plp=off` (client drives: a volatile DRAM buffer) it completes when
//!   every write acknowledged before the flush has been programmed to flash, plus firmware time;
//!   writes still in flight (not yet acknowledged) are not waited for, as NVMe FLUSH covers only
//!   completed writes. With `plp=on` (enterprise drives: capacitors flush the buffer on power
//!   loss, so it counts as durable) a sync costs only firmware time.
//!
//! Approximations (documented, deliberate): completion times handed out are never revised, so
//! a read that suspends a program pushes back later programs but not ones already promised;
//! program data crosses the channel when its die is ready (no cache-program pipelining); the
//! buffer is a pool of slots without an LRU order (a read takes the earliest-free slot).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use super::ftl::{Ftl, GcWork};
use super::profile::{PROFILE_PAGE_BYTES, Profile};
use crate::error::Result;

/// Device time in nanoseconds since the device was opened.
pub type DeviceNs = u64;

/// Fixed costs in device nanoseconds, derived from a profile and the page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SsdTimes {
    /// Array read (tR).
    pub read: u64,
    /// Program of one page (tPROG, scaled to the page size when the buffer packs pages).
    pub prog: u64,
    /// Read-modify-write array read before each program (small pages, `pack=off`), else 0.
    pub rmw_read: u64,
    /// Block erase.
    pub erase: u64,
    /// Program/erase suspend latency.
    pub suspend: u64,
    /// Firmware per command.
    pub firmware: u64,
    /// Extra firmware per write.
    pub firmware_write: u64,
    /// One page over a channel.
    pub channel: u64,
    /// One page over the host link.
    pub host: u64,
}

fn us_to_ns(us: f64) -> u64 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let ns = (us * 1000.0).round().max(0.0) as u64;
    ns
}

/// Nanoseconds to move `bytes` at `mb_s` (10^6 bytes per second).
#[must_use]
pub fn transfer_ns(bytes: usize, mb_s: f64) -> u64 {
    #[allow(clippy::cast_precision_loss)]
    let us = bytes as f64 / mb_s;
    us_to_ns(us)
}

impl SsdTimes {
    /// The costs of `profile` for pages of `page_size` bytes.
    #[must_use]
    pub fn new(profile: &Profile, page_size: usize) -> Self {
        #[allow(clippy::cast_precision_loss)]
        let page_ratio = page_size as f64 / PROFILE_PAGE_BYTES as f64;
        // Without packing, a page smaller than the flash page costs a whole flash page program
        // plus the read of the rest of that flash page (read-modify-write).
        let unpacked_small = !profile.pack && page_size < PROFILE_PAGE_BYTES;
        let prog_ratio = if profile.pack {
            page_ratio
        } else {
            page_ratio.max(1.0)
        };
        SsdTimes {
            read: us_to_ns(profile.t_read_us),
            prog: us_to_ns(profile.t_prog_us * prog_ratio),
            rmw_read: if unpacked_small {
                us_to_ns(profile.t_read_us)
            } else {
                0
            },
            erase: us_to_ns(profile.t_erase_us),
            suspend: us_to_ns(profile.t_suspend_us),
            firmware: us_to_ns(profile.fw_us),
            firmware_write: us_to_ns(profile.fw_write_us),
            channel: transfer_ns(page_size, profile.channel_mb_s),
            host: transfer_ns(page_size, profile.link_mb_s),
        }
    }

    /// Die time of one GC round's work: copies x (tR + tPROG + two transfers) + erases.
    /// `erase_fraction` scales the erase time when the FTL uses smaller blocks than the
    /// profile's (small devices), so the erase cost per page stays that of the real block.
    #[must_use]
    pub fn gc_cost(&self, work: GcWork, erase_fraction: f64) -> u64 {
        #[allow(clippy::cast_precision_loss)]
        let erase = (self.erase as f64 * erase_fraction) as u64;
        work.copies * (self.read + self.prog + 2 * self.channel) + work.erases * erase
    }
}

/// Counters of flash-internal work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlashStats {
    /// Pages programmed for host writes and GC.
    pub flash_programs: u64,
    /// Pages programmed by GC.
    pub gc_writes: u64,
    /// Blocks erased.
    pub erases: u64,
    /// Reads served from the write buffer.
    pub buffer_hits: u64,
}

/// A pool of buffer slots, each with the device time it becomes free.
#[derive(Debug)]
struct SlotPool {
    free_at: BinaryHeap<Reverse<DeviceNs>>,
}

impl SlotPool {
    fn new(slots: u32) -> Self {
        assert!(slots > 0, "a buffer needs slots");
        SlotPool {
            free_at: (0..slots).map(|_| Reverse(0)).collect(),
        }
    }
    /// Takes the slot that frees first; returns when it is free.
    fn take(&mut self) -> DeviceNs {
        self.free_at.pop().map_or(0, |Reverse(t)| t)
    }
    fn give(&mut self, at: DeviceNs) {
        self.free_at.push(Reverse(at));
    }
}

/// The flash SSD model.
#[derive(Debug)]
#[allow(clippy::struct_excessive_bools)] // independent device features
pub struct SsdModel {
    times: SsdTimes,
    channels: u32,
    dies: u32,
    erase_fraction: f64,
    suspend: bool,
    plp: bool,
    full_duplex: bool,
    /// Controller cores running firmware: busy-until of each (at most 4096).
    cores_free: Vec<DeviceNs>,
    die_read_free: Vec<DeviceNs>,
    die_prog_free: Vec<DeviceNs>,
    channel_free: Vec<DeviceNs>,
    /// Host link busy-until: [host-to-device, device-to-host] (the same slot when half duplex).
    link_free: [DeviceNs; 2],
    write_slots: SlotPool,
    read_slots: Option<SlotPool>,
    /// No write buffer: writes are acknowledged when programmed.
    write_through: bool,
    /// Command slots of the device queue (`None`: unlimited).
    queue: Option<SlotPool>,
    /// Pages in the write buffer -> when their program completes. Pruned when it grows past
    /// `buffered_bound` (4 x buffer slots), so its size is bounded.
    buffered: HashMap<u64, DeviceNs>,
    buffered_bound: usize,
    ftl: Ftl,
    next_die: u32,
    unflushed: Unflushed,
    stats: FlashStats,
}

/// Writes whose program may not have completed: (acknowledged at, programmed at) pairs, what a
/// cache flush waits for. Completed programs are pruned; past `bound` entries the older half is
/// merged into one conservative entry (earliest ack, latest program), so a flush may wait a
/// little longer than needed, never less. Size at most `bound` + 1.
#[derive(Debug)]
struct Unflushed {
    entries: VecDeque<(DeviceNs, DeviceNs)>,
    bound: usize,
}

impl Unflushed {
    fn new(bound: usize) -> Self {
        assert!(bound >= 2, "room to merge");
        Unflushed {
            entries: VecDeque::new(),
            bound,
        }
    }

    fn push(&mut self, ack: DeviceNs, programmed: DeviceNs, now: DeviceNs) {
        assert!(
            programmed >= ack,
            "a page is programmed after its acknowledgement"
        );
        self.entries.push_back((ack, programmed));
        if self.entries.len() > self.bound {
            self.entries.retain(|&(_, done)| done > now);
        }
        if self.entries.len() > self.bound {
            let half = self.entries.len() / 2;
            let merged = self
                .entries
                .drain(..half)
                .fold((DeviceNs::MAX, 0), |(ack_min, done_max), (ack, done)| {
                    (ack_min.min(ack), done_max.max(done))
                });
            self.entries.push_front(merged);
        }
        assert!(
            self.entries.len() <= self.bound + 1,
            "unflushed set bounded"
        );
    }

    /// When a flush issued at `now` completes its wait: the latest program among writes
    /// acknowledged by `now` (or `now` when there is none).
    fn flushed_at(&mut self, now: DeviceNs) -> DeviceNs {
        self.entries.retain(|&(_, done)| done > now);
        self.entries
            .iter()
            .filter(|&&(ack, _)| ack <= now)
            .map(|&(_, done)| done)
            .fold(now, DeviceNs::max)
    }
}

impl SsdModel {
    /// A model of `profile` with `pages` logical pages of `page_size` bytes, preconditioned:
    /// a fraction `fill` of the pages is written sequentially, then overwritten at random
    /// twice over (seeded), so the FTL starts in its random-write steady state.
    ///
    /// # Errors
    /// [`crate::error::Error::Config`] when the device is too large for the FTL.
    pub fn new(profile: &Profile, page_size: usize, pages: u64) -> Result<Self> {
        let dies = profile.dies();
        let ftl = Ftl::new(pages, dies, profile.pages_per_block, profile.op)?;
        let buffer = profile.buffer_pages.max(1);
        let erase_fraction =
            f64::from(ftl.pages_per_block()) / f64::from(profile.pages_per_block.max(1));
        let mut model = SsdModel {
            times: SsdTimes::new(profile, page_size),
            channels: profile.channels,
            dies,
            erase_fraction,
            suspend: profile.suspend,
            plp: profile.plp,
            full_duplex: profile.link_full_duplex,
            cores_free: vec![0; profile.fw_cores.max(1) as usize],
            die_read_free: vec![0; dies as usize],
            die_prog_free: vec![0; dies as usize],
            channel_free: vec![0; profile.channels as usize],
            link_free: [0; 2],
            write_slots: SlotPool::new(buffer),
            read_slots: (profile.rbuf || profile.buffer_pages == 0)
                .then(|| SlotPool::new(profile.rbuf_pages.max(1))),
            write_through: profile.buffer_pages == 0,
            queue: (profile.queue_depth > 0).then(|| SlotPool::new(profile.queue_depth)),
            buffered: HashMap::new(),
            buffered_bound: 4 * buffer as usize,
            ftl,
            next_die: 0,
            unflushed: Unflushed::new(4 * buffer as usize),
            stats: FlashStats::default(),
        };
        model.precondition(profile.fill, profile.seed);
        Ok(model)
    }

    fn precondition(&mut self, fill: f64, seed: u64) {
        use rand::{Rng, SeedableRng};
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let filled = ((self.ftl.logical_pages() as f64) * fill).round() as u64;
        for lpn in 0..filled {
            self.place(lpn);
        }
        if filled == 0 {
            return;
        }
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        // Bounded: two passes over the filled pages.
        for _ in 0..2 * filled {
            self.place(rng.gen_range(0..filled));
        }
    }

    /// FTL placement of one page on the next die, without timing.
    fn place(&mut self, lpn: u64) -> (u32, GcWork) {
        let die = self.next_die;
        self.next_die = (self.next_die + 1) % self.dies;
        (die, self.ftl.write(die, lpn))
    }

    /// Maps `lpn` without timing (bulk loads on a device that was not preconditioned).
    pub fn map_untimed(&mut self, lpn: u64) {
        if self.ftl.die_of(lpn).is_none() {
            self.place(lpn);
        }
    }

    /// The fixed costs in use.
    #[must_use]
    pub fn times(&self) -> SsdTimes {
        self.times
    }

    /// The FTL (for inspection).
    #[must_use]
    pub fn ftl(&self) -> &Ftl {
        &self.ftl
    }

    /// Flash-internal counters.
    #[must_use]
    pub fn stats(&self) -> FlashStats {
        self.stats
    }

    /// The die that serves `lpn` (mapped pages: where they live; unmapped: `lpn % dies`).
    #[must_use]
    pub fn die_of(&self, lpn: u64) -> u32 {
        self.ftl
            .die_of(lpn)
            .unwrap_or_else(|| u32::try_from(lpn % u64::from(self.dies)).unwrap_or(0))
    }

    fn channel_of(&self, die: u32) -> usize {
        (die % self.channels) as usize
    }

    fn link_index(&self, to_host: bool) -> usize {
        usize::from(to_host && self.full_duplex)
    }

    /// A page over the host link for a command parsed at `cmd` whose data is ready at
    /// `ready`. The link's bandwidth is booked in command order (from `cmd`), not at `ready`:
    /// a write waiting for a buffer slot must not book the link in the far future and so
    /// block transfers that are ready earlier (one busy-until time cannot hold gaps).
    fn host_transfer(&mut self, cmd: DeviceNs, ready: DeviceNs, to_host: bool) -> DeviceNs {
        let link = self.link_index(to_host);
        let booked = cmd.max(self.link_free[link]) + self.times.host;
        self.link_free[link] = booked;
        booked.max(ready + self.times.host)
    }

    /// The array read on `die` starting no earlier than `at`; returns when tR ends.
    fn die_read(&mut self, die: u32, at: DeviceNs) -> DeviceNs {
        let d = die as usize;
        let start = at.max(self.die_read_free[d]);
        let prog_free = self.die_prog_free[d];
        let array_start = if prog_free <= start {
            start
        } else if self.suspend {
            start + self.times.suspend
        } else {
            // Reads jump the queue but the program in flight finishes first.
            let unit = (self.times.prog + self.times.channel).max(1);
            start + (prog_free - start) % unit
        };
        let end = array_start + self.times.read;
        self.die_read_free[d] = end;
        self.die_prog_free[d] = if prog_free > start {
            // The suspended (or queued) program work resumes after the read.
            let pushed = self.times.read + if self.suspend { self.times.suspend } else { 0 };
            prog_free + pushed
        } else {
            prog_free.max(end)
        };
        end
    }

    fn channel_read(&mut self, die: u32, at: DeviceNs) -> DeviceNs {
        let c = self.channel_of(die);
        let start = at.max(self.channel_free[c]);
        let end = start + self.times.channel;
        self.channel_free[c] = end;
        end
    }

    /// Runs `work` ns of firmware on the first free controller core from `now`; returns when done.
    fn firmware(&mut self, now: DeviceNs, work: u64) -> DeviceNs {
        let (core, free) = self
            .cores_free
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, t)| t)
            .unwrap_or((0, 0));
        let done = now.max(free) + work;
        if let Some(slot) = self.cores_free.get_mut(core) {
            *slot = done;
        }
        done
    }

    fn take_read_slot(&mut self) -> DeviceNs {
        match self.read_slots.as_mut() {
            Some(pool) => pool.take(),
            None => self.write_slots.take(),
        }
    }

    fn give_read_slot(&mut self, at: DeviceNs) {
        match self.read_slots.as_mut() {
            Some(pool) => pool.give(at),
            None => self.write_slots.give(at),
        }
    }

    fn in_buffer(&self, lpn: u64, at: DeviceNs) -> bool {
        self.buffered.get(&lpn).is_some_and(|&until| until > at)
    }

    /// A read whose command was parsed at `cmd`; its data may go to the host no earlier than
    /// `host_not_before`. Returns the completion time.
    fn read_at(&mut self, cmd: DeviceNs, lpn: u64, host_not_before: DeviceNs) -> DeviceNs {
        if self.in_buffer(lpn, cmd) {
            self.stats.buffer_hits += 1;
            return self.host_transfer(cmd, cmd.max(host_not_before), true);
        }
        let slot = self.take_read_slot();
        let start = cmd.max(slot);
        let die = self.die_of(lpn);
        let sensed = self.die_read(die, start);
        let moved = self.channel_read(die, sensed);
        let done = self.host_transfer(cmd, moved.max(host_not_before), true);
        self.give_read_slot(done);
        done
    }

    /// A write whose command was parsed at `cmd`; returns its acknowledgement time.
    fn write_at(&mut self, cmd: DeviceNs, lpn: u64) -> DeviceNs {
        if self.write_through {
            let data_in = self.host_transfer(cmd, cmd, false);
            let programmed = self.program(data_in, lpn);
            self.unflushed.push(programmed, programmed, cmd);
            return programmed;
        }
        let slot = self.write_slots.take();
        let ack = self.host_transfer(cmd, cmd.max(slot), false);
        let programmed = self.program(ack, lpn);
        self.write_slots.give(programmed);
        if !self.plp {
            self.unflushed.push(ack, programmed, cmd);
        }
        self.remember_buffered(lpn, programmed, cmd);
        ack
    }

    /// Places `lpn` on the next die and programs it once its data is in the device at
    /// `data_in` (after any garbage collection the placement needed); returns when the program
    /// completes.
    fn program(&mut self, data_in: DeviceNs, lpn: u64) -> DeviceNs {
        let ack = data_in;
        let (die, work) = self.place(lpn);
        let d = die as usize;
        if work != GcWork::default() {
            self.stats.gc_writes += work.copies;
            self.stats.flash_programs += work.copies;
            self.stats.erases += work.erases;
            self.die_prog_free[d] =
                self.die_prog_free[d].max(ack) + self.times.gc_cost(work, self.erase_fraction);
        }
        // The program's channel transfer does not queue behind other dies' programs: their
        // bookings lie at each die's own (possibly far) future, and one scalar per channel
        // would serialise dies that are in fact independent. Program traffic keeps a channel
        // under about 10% busy in every profile, so only reads queue on channels.
        let moved = ack.max(self.die_prog_free[d]) + self.times.rmw_read + self.times.channel;
        let programmed = moved + self.times.prog;
        self.die_prog_free[d] = programmed;
        self.stats.flash_programs += 1;
        programmed
    }

    fn remember_buffered(&mut self, lpn: u64, until: DeviceNs, now: DeviceNs) {
        if self.buffered.len() >= self.buffered_bound {
            self.buffered.retain(|_, &mut t| t > now);
            if self.buffered.len() >= self.buffered_bound {
                // Still full (programs far behind): forget the oldest half; those reads then
                // go to flash, which only makes them slower, never wrong (data is in PageStore).
                let mut times: Vec<DeviceNs> = self.buffered.values().copied().collect();
                times.sort_unstable();
                let cut = times[times.len() / 2];
                self.buffered.retain(|_, &mut t| t > cut);
            }
        }
        self.buffered.insert(lpn, until);
    }

    /// When a command submitted at `now` enters the device (after a queue slot frees).
    fn enter_queue(&mut self, now: DeviceNs) -> DeviceNs {
        self.queue
            .as_mut()
            .map_or(now, |queue| now.max(queue.take()))
    }

    /// The command that entered the device completes at `done`: its queue slot frees.
    fn leave_queue(&mut self, done: DeviceNs) -> DeviceNs {
        if let Some(queue) = self.queue.as_mut() {
            queue.give(done);
        }
        done
    }

    /// A read of `lpn` submitted at `now`; returns its completion time.
    pub fn read(&mut self, now: DeviceNs, lpn: u64) -> DeviceNs {
        let entered = self.enter_queue(now);
        let cmd = self.firmware(entered, self.times.firmware);
        let done = self.read_at(cmd, lpn, cmd);
        self.leave_queue(done)
    }

    /// A write of `lpn` submitted at `now`; returns its acknowledgement time.
    pub fn write(&mut self, now: DeviceNs, lpn: u64) -> DeviceNs {
        let entered = self.enter_queue(now);
        let cmd = self.firmware(entered, self.times.firmware + self.times.firmware_write);
        let acked = self.write_at(cmd, lpn);
        self.leave_queue(acked)
    }

    /// The fused RW command submitted at `now`: write `write_lpn`, read `read_lpn` into the
    /// same host buffer. Returns its completion time.
    pub fn fused(&mut self, now: DeviceNs, write_lpn: u64, read_lpn: u64) -> DeviceNs {
        let entered = self.enter_queue(now);
        let cmd = self.firmware(entered, self.times.firmware + self.times.firmware_write);
        let write_data_in = self.write_at(cmd, write_lpn);
        let done = self.read_at(cmd, read_lpn, write_data_in);
        self.leave_queue(done)
    }

    /// A flush submitted at `now`; returns when every write acknowledged by `now` is durable:
    /// programmed to flash (`plp=off`), or at once since the buffer is protected (`plp=on`);
    /// plus the firmware time of the command.
    pub fn sync(&mut self, now: DeviceNs) -> DeviceNs {
        let durable = if self.plp {
            now
        } else {
            self.unflushed.flushed_at(now)
        };
        durable + self.times.firmware
    }

    /// Whether the write buffer is power-loss protected.
    #[must_use]
    pub fn power_loss_protected(&self) -> bool {
        self.plp
    }

    /// When every piece of work scheduled so far (programs, GC, reads) has finished: the device
    /// is idle from then on unless new requests arrive.
    #[must_use]
    pub fn quiescent_at(&self) -> DeviceNs {
        let busy = |times: &[DeviceNs]| times.iter().copied().max().unwrap_or(0);
        busy(&self.die_prog_free)
            .max(busy(&self.die_read_free))
            .max(busy(&self.channel_free))
            .max(busy(&self.cores_free))
            .max(self.link_free[0])
            .max(self.link_free[1])
    }
}
