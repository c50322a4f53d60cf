//! The timing model of the emulated flash SSD (docs/algorithms.md section 7; NVMeVirt/FEMU style):
//! every resource has a busy-until time in device nanoseconds, and a request's completion time
//! is computed when it is submitted. Pure and single-threaded: the device wraps it in a mutex,
//! and tests drive it with scripted times, without sleeping.
//!
//! Resources: dies (channels x ways; die `d` hangs on channel `d % channels`), channels, a host
//! link (two directions for PCIe, one shared for SATA), the controller's DRAM buffer as a pool of
//! page slots, and the FTL (`ftl.rs`). Host writes are counted per logical page for the bench
//! warm-up's aging of the layout (`aging.rs`, [`SsdModel::age`]).
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
//!   and erase charged on the die), channel transfer, then the program: in SLC mode
//!   (`t_slc_prog_us`) while the die's share of the SLC cache has room, else in TLC (tPROG);
//!   the slot frees when it completes.
//! - SLC cache (`slc` > 0, client TLC drives): each page written in SLC mode owes a fold (an
//!   array read and a TLC program) that its die performs in idle time only: a host program
//!   waits for the fold program in flight, a read suspends it (`t_suspend`) or, with
//!   `suspend=off`, waits it out. Pages count against the cache until folded, so under
//!   sustained writes that leave a die no idle time the cache fills and writes go to TLC at
//!   tPROG: the sustained rate (LRU-C Table 1's 30-minute figure) is the TLC rate.
//! - Without a write buffer (`buffer=0`: 3D XPoint, which writes in place) a write is
//!   acknowledged when its program completes; reads then use the read buffer's slots.
//! - Command queue: with `queue_depth=N` (SATA NCQ: 32) at most N commands are in the device;
//!   later ones wait in the host until one completes. 0: no limit (NVMe's queues are deep).
//! - Fused RW: the write half as above; the read half starts in parallel and its data goes to
//!   the host once the write data has left the host buffer, so it costs about one read.
//! - Sync: flush cache. With `plp=off` (client drives: a volatile DRAM buffer) it completes when
//!   every write acknowledged before the flush and not yet programmed (the dirty data) has been
//!   programmed to flash, SLC or TLC as placed, then the flush commit (`flush_commit_us`: the
//!   mapping and file-system journal commits), plus firmware time; with nothing dirty, firmware
//!   time only. Writes still in flight (not yet acknowledged) are not waited for, as NVMe FLUSH
//!   covers only completed writes. `flush_us` replaces all of that by a fixed latency. With
//!   `plp=on` (enterprise drives: capacitors flush the buffer on power loss, so it counts as
//!   durable) a sync costs only firmware time. Concurrent flushes overlap: each waits for its
//!   own dirty data.
//! - Lazy write-back (`writeback=lazy`, the Cosmos+ OpenSSD's firmware; `lazy_buffer.rs`):
//!   the buffer's slots keep their pages in LRU order and nothing is programmed in the
//!   background. A write to a buffered page rewrites its slot (no program); any other write,
//!   and with S-Buf any read of a page not buffered, takes the least recently used slot, and
//!   when that slot's page is dirty, programs it first and waits for the program. A draining
//!   flush programs every dirty page.
//! - Sync with `flush=noop` (the Cosmos+ OpenSSD's firmware completes a FLUSH without touching
//!   its buffer): nothing drains; the sync costs the file system's journal commit, modelled as
//!   the journal's writes through the buffer like any host write (a descriptor and an inode
//!   block at once, then the commit block), to a circular journal region of the FTL's logical
//!   pages past the device's own (`Journal`). Syncs share commits as jbd2 does: one commit at
//!   a time, and none needed within the jiffy (4 ms) the last one began in.
//!
//! Approximations (documented, deliberate): completion times handed out are never revised, so
//! a read that suspends a program pushes back later programs but not ones already promised;
//! program data crosses the channel when its die is ready (no cache-program pipelining); the
//! buffer is a pool of slots without an LRU order (a read takes the earliest-free slot); SLC
//! pages are read at TLC's tR; the flush commit adds latency but no die time; the SLC cache is
//! split evenly over the dies.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use super::aging::{self, AgingReport, WriteHistory};
use super::ftl::{Ftl, GcWork};
use super::lazy_buffer::{Evicted, LazyBuffer};
use super::profile::{Flush, PROFILE_PAGE_BYTES, Precondition, Profile, Writeback};
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
    /// SLC-mode program of one page (scaled like `prog`).
    pub slc_prog: u64,
    /// Folding one page from SLC into TLC: an array read and a TLC program, in idle die time.
    pub fold: u64,
    /// What a `plp=off` flush that found dirty data adds once that data is on flash.
    pub flush_commit: u64,
    /// A fixed `plp=off` flush price replacing the model (`flush_us`), if set.
    pub flush_fixed: Option<u64>,
    /// Host I/O-stack time added to each read's completion (`host_read_us`).
    pub host_read: u64,
    /// Host I/O-stack time added to each write's and fused command's completion
    /// (`host_write_us`).
    pub host_write: u64,
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
        let prog = us_to_ns(profile.t_prog_us * prog_ratio);
        SsdTimes {
            read: us_to_ns(profile.t_read_us),
            prog,
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
            slc_prog: us_to_ns(profile.t_slc_prog_us * prog_ratio),
            fold: us_to_ns(profile.t_read_us) + prog,
            flush_commit: us_to_ns(profile.flush_commit_us),
            flush_fixed: profile.flush_us.map(us_to_ns),
            host_read: us_to_ns(profile.host_read_us),
            host_write: us_to_ns(profile.host_write_us),
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
    /// Host pages programmed in SLC mode (the SLC cache had room).
    pub slc_writes: u64,
    /// File-system journal pages written by syncs (`flush=noop`), included in
    /// `flash_programs`.
    pub journal_writes: u64,
    /// Host writes to a page still in the write buffer, which cost no program of their own
    /// (`writeback=lazy` only: an eager buffer programs every write).
    pub buffer_write_hits: u64,
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

/// The file system's journal on a drive whose firmware ignores FLUSH (`flush=noop`): logical
/// pages past the device's own, written in a circle, as ext4's jbd2 writes its journal, and the
/// last commit, which later syncs may share.
#[derive(Debug, Clone, Copy)]
struct Journal {
    first: u64,
    pages: u64,
    next: u64,
    /// The last commit scheduled: (start, end), device ns.
    last: Option<(DeviceNs, DeviceNs)>,
}

impl Journal {
    fn new(device_pages: u64) -> Self {
        Journal {
            first: device_pages,
            pages: Self::pages_for(device_pages),
            next: 0,
            last: None,
        }
    }

    /// Pages in the journal of a device of `pages` pages: ext4's default journal is 1/256 of a
    /// file system of 16-32 GB (128 MiB on the OpenSSD's 32 GB), at least 64 pages.
    fn pages_for(pages: u64) -> u64 {
        (pages / 256).max(64)
    }

    /// The next `N` journal pages to write.
    fn advance<const N: usize>(&mut self) -> [u64; N] {
        std::array::from_fn(|_| {
            let lpn = self.first + self.next;
            self.next = (self.next + 1) % self.pages;
            lpn
        })
    }

    /// What a sync issued at `now` does with the journal: share a commit, or make a new one
    /// (jbd2 commits one transaction at a time; an fsync whose inode changed since the last commit began
    /// waits for that commit and then commits the next one). The inode's modification time has
    /// a jiffy's granularity, so writes in the jiffy a commit started in leave the inode as
    /// that commit logged it: a sync issued then only waits for that commit.
    fn plan(&self, now: DeviceNs) -> Commit {
        match self.last {
            Some((start, end)) if now < start || now / JIFFY_NS == start / JIFFY_NS => {
                Commit::Share { end: end.max(now) }
            }
            Some((_, end)) if now < end => Commit::New { start: end },
            _ => Commit::New { start: now },
        }
    }
}

/// What a sync on a drive that ignores FLUSH does with the journal ([`Journal::plan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Commit {
    /// Waits for the commit that ends at `end`.
    Share { end: DeviceNs },
    /// Writes a new commit from `start`.
    New { start: DeviceNs },
}

/// Journal blocks written before the commit block of one jbd2 commit: a descriptor and the
/// inode's block (the file's modification time changed, so a commit has an inode to log).
const JOURNAL_BLOCKS_BEFORE_COMMIT: usize = 2;

/// The kernel's timer tick, the granularity of a file's modification time (ext4 takes the
/// coarse clock): 4 ms at `HZ=250`, the default of the distribution kernels of the papers'
/// time (the RW paper ran Linux 5.4).
const JIFFY_NS: DeviceNs = 4_000_000;

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
    /// SLC cache pages per die (0: no SLC cache).
    slc_per_die: u64,
    /// Garbage-collection work a die may defer to its idle time, ns (0: GC runs in the
    /// foreground, before the host program that triggered it).
    gc_defer_max: u64,
    /// Per die: the background work it does in idle time.
    background: Vec<Background>,
    unflushed: Unflushed,
    /// `flush=noop`: the journal a sync writes (`None`: the flush drains).
    journal: Option<Journal>,
    /// `writeback=lazy`: the buffer's pages and LRU order (`None`: eager write-back through
    /// `write_slots`).
    lazy: Option<LazyBuffer>,
    /// A page smaller than the flash page, not packed, under `writeback=lazy`: a write that
    /// misses the buffer is acknowledged only after the rest of its flash page has been read
    /// (the reference firmware's read-modify-write, `docs/devices.md`, "Lazy write-back").
    /// The read's die time is charged to the program either way (`SsdTimes::rmw_read`).
    rmw_in_path: bool,
    stats: FlashStats,
    /// Host writes per logical page since the last restart, for [`SsdModel::age`]; kept only
    /// with `age=on` (else nothing is counted or allocated).
    history: Option<WriteHistory>,
    seed: u64,
}

/// The background work of one die, done whenever it has no host program or read to run: SLC
/// pages to fold into TLC, and deferred garbage collection.
#[derive(Debug, Clone, Copy, Default)]
struct Background {
    /// Folding still to do, device-time nanoseconds.
    fold_ns: u64,
    /// Deferred garbage collection still to do, device-time nanoseconds.
    gc_ns: u64,
    /// The device time up to which the die's idle time has been spent on this work.
    clock: DeviceNs,
}

impl Background {
    fn total(&self) -> u64 {
        self.fold_ns + self.gc_ns
    }

    /// Does `ns` of the work: folding first (it frees the SLC cache), then GC.
    fn work(&mut self, ns: u64) {
        let fold = ns.min(self.fold_ns);
        self.fold_ns -= fold;
        self.gc_ns -= (ns - fold).min(self.gc_ns);
    }
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

    /// What a flush issued at `now` waits for: the latest program among writes acknowledged
    /// by `now` and not yet programmed (the dirty data), or `None` when nothing is dirty.
    fn dirty_until(&mut self, now: DeviceNs) -> Option<DeviceNs> {
        self.entries.retain(|&(_, done)| done > now);
        self.entries
            .iter()
            .filter(|&&(ack, _)| ack <= now)
            .map(|&(_, done)| done)
            .max()
    }
}

impl SsdModel {
    /// A model of `profile` with `pages` logical pages of `page_size` bytes, preconditioned:
    /// a fraction `fill` of the pages is written sequentially, then (with
    /// `precondition=random`, the default) overwritten at random twice over (seeded), so the
    /// FTL starts in its random-write steady state.
    ///
    /// # Errors
    /// [`crate::error::Error::Config`] when the device is too large for the FTL.
    pub fn new(profile: &Profile, page_size: usize, pages: u64) -> Result<Self> {
        let dies = profile.dies();
        let journal = (profile.flush == Flush::Noop && !profile.plp).then(|| Journal::new(pages));
        let logical = pages + journal.map_or(0, |j| j.pages);
        let ftl = Ftl::new(logical, dies, profile.pages_per_block, profile.op)?;
        let buffer = profile.buffer_pages.max(1);
        let erase_fraction =
            f64::from(ftl.pages_per_block()) / f64::from(profile.pages_per_block.max(1));
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let slc_pages = (profile.slc * pages as f64).round() as u64;
        let slc_per_die = if profile.slc > 0.0 {
            (slc_pages / u64::from(dies)).max(1)
        } else {
            0
        };
        let times = SsdTimes::new(profile, page_size);
        let ftl_pages_per_block = ftl.pages_per_block();
        let mut model = SsdModel {
            times,
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
            slc_per_die,
            gc_defer_max: u64::from(profile.gc_defer_blocks)
                * u64::from(ftl_pages_per_block)
                * (times.read + times.prog + 2 * times.channel),
            background: vec![Background::default(); dies as usize],
            unflushed: Unflushed::new(4 * buffer as usize),
            journal,
            lazy: (profile.writeback == Writeback::Lazy && profile.buffer_pages > 0)
                .then(|| LazyBuffer::new(buffer)),
            rmw_in_path: profile.writeback == Writeback::Lazy
                && profile.buffer_pages > 0
                && times.rmw_read > 0,
            stats: FlashStats::default(),
            history: profile.age.then(|| WriteHistory::new(logical)),
            seed: profile.seed,
        };
        model.precondition(profile.fill, profile.precondition, profile.seed);
        Ok(model)
    }

    fn precondition(&mut self, fill: f64, how: Precondition, seed: u64) {
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
        if filled == 0 || how == Precondition::Sequential {
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

    /// Forgets the host writes counted so far ([`SsdModel::age`] estimates its distribution
    /// from the writes counted after this).
    pub fn restart_write_history(&mut self) {
        if let Some(history) = self.history.as_mut() {
            history.clear();
        }
    }

    /// Ages the flash layout with the host writes counted since the last
    /// [`SsdModel::restart_write_history`] (`aging.rs`): writes drawn from their estimated
    /// distribution are placed, untimed, until the GC cost per write settles. No device time
    /// passes and no counter moves. `None` with `age=off` or no writes counted.
    pub fn age(&mut self) -> Option<AgingReport> {
        // Taken out for the replay, which places pages through `self`; put back after.
        let history = self.history.take()?;
        let logical = self.ftl.logical_pages();
        let physical = self.ftl.physical_pages();
        let seed = self.seed ^ history.total();
        let report = aging::age(&history, logical, physical, seed, |lpn| {
            self.place(lpn).1.copies
        });
        self.history = Some(history);
        report
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

    /// Spends the idle time of die `d` before `until` on its background work. Returns the rest
    /// of the background operation in flight at `until` (0: none in flight; the work is
    /// counted in units of one fold, about one GC copy).
    fn background_until(&mut self, d: usize, until: DeviceNs) -> u64 {
        let work = &mut self.background[d];
        let idle_from = work
            .clock
            .max(self.die_prog_free[d])
            .max(self.die_read_free[d]);
        if until > idle_from {
            work.work(until - idle_from);
        }
        work.clock = work.clock.max(until);
        work.total() % self.times.fold.max(1)
    }

    /// Whether die `d`'s share of the SLC cache has room for one more page.
    fn slc_has_room(&self, d: usize) -> bool {
        let in_slc = self.background[d].fold_ns.div_ceil(self.times.fold.max(1));
        in_slc < self.slc_per_die
    }

    /// The array read on `die` starting no earlier than `at`; returns when tR ends.
    fn die_read(&mut self, die: u32, at: DeviceNs) -> DeviceNs {
        let d = die as usize;
        let start = at.max(self.die_read_free[d]);
        let prog_free = self.die_prog_free[d];
        let array_start = if prog_free <= start {
            // No host program in flight; the die may be doing background work, which a read
            // suspends (or, with `suspend=off`, waits out the operation in flight).
            let rest = self.background_until(d, start);
            if self.background[d].total() == 0 {
                start
            } else if self.suspend {
                start + self.times.suspend
            } else {
                self.background[d].work(rest);
                start + rest
            }
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
        if self.lazy.is_some() {
            let served = self
                .with_lazy(|model, buffer| model.lazy_read_at(buffer, cmd, lpn, host_not_before));
            if let Some(done) = served.flatten() {
                return done;
            }
        } else if self.in_buffer(lpn, cmd) {
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
        if let Some(history) = self.history.as_mut() {
            history.record(lpn);
        }
        if self.write_through {
            let data_in = self.host_transfer(cmd, cmd, false);
            let programmed = self.program(data_in, lpn);
            self.unflushed.push(programmed, programmed, cmd);
            return programmed;
        }
        if let Some(ack) = self.with_lazy(|model, buffer| model.lazy_write_at(buffer, cmd, lpn)) {
            return ack;
        }
        let slot = self.write_slots.take();
        let ack = self.host_transfer(cmd, cmd.max(slot), false);
        let programmed = self.program(ack, lpn);
        self.write_slots.give(programmed);
        if !self.plp && self.journal.is_none() {
            self.unflushed.push(ack, programmed, cmd);
        }
        self.remember_buffered(lpn, programmed, cmd);
        ack
    }

    /// Runs `work` with the lazy buffer taken out of the model (so that `work` may use the
    /// rest of it), then puts the buffer back; `None` with eager write-back.
    fn with_lazy<R>(&mut self, work: impl FnOnce(&mut Self, &mut LazyBuffer) -> R) -> Option<R> {
        let mut buffer = self.lazy.take()?;
        let result = work(self, &mut buffer);
        self.lazy = Some(buffer);
        Some(result)
    }

    /// `writeback=lazy`, `lpn` not buffered: takes the least recently used slot for it and,
    /// if that slot's page is dirty, programs it now. Returns the slot and when it can take the
    /// request's data (when the victim's program completes, as the firmware makes the new
    /// request wait for the evicting NAND request).
    fn lazy_evict_for(
        &mut self,
        buffer: &mut LazyBuffer,
        cmd: DeviceNs,
        lpn: u64,
    ) -> (u32, DeviceNs) {
        let (slot, evicted) = buffer.take_lru(lpn);
        let free_at = match evicted {
            Some(Evicted {
                lpn: victim,
                dirty: true,
                ready,
            }) => self.program(cmd.max(ready), victim),
            Some(Evicted { ready, .. }) => ready,
            None => 0,
        };
        (slot, free_at)
    }

    /// A write with lazy write-back: into its page's slot (a rewrite costs no program) or an
    /// evicted one; acknowledged when its data is in. Returns the acknowledgement time.
    fn lazy_write_at(&mut self, buffer: &mut LazyBuffer, cmd: DeviceNs, lpn: u64) -> DeviceNs {
        let (slot, free_at, rmw) = if let Some((slot, ready)) = buffer.find(lpn) {
            self.stats.buffer_write_hits += 1;
            (slot, ready, false)
        } else {
            let (slot, free_at) = self.lazy_evict_for(buffer, cmd, lpn);
            (slot, free_at, self.rmw_in_path)
        };
        let data_in = self.host_transfer(cmd, cmd.max(free_at), false);
        // The firmware reads the rest of the flash page into the slot before it completes
        // the command (a rewrite of a buffered page has it already). Its die and channel time
        // stays charged to the page's program (`SsdTimes::rmw_read`): booking it here, after
        // the victim's program, would book the die's and channel's single busy-until at that
        // (often far) future time and hold back every earlier request behind it.
        let ack = if rmw {
            data_in.max(cmd.max(free_at) + self.times.rmw_read + self.times.channel)
        } else {
            data_in
        };
        buffer.fill(slot, true, ack);
        ack
    }

    /// A read with lazy write-back: a buffered page is served from the buffer; otherwise, with
    /// S-Buf (no separate read buffer), the read takes a slot of the shared buffer as a write
    /// does, waiting for its dirty victim's program (the RW paper's read stall in the storage
    /// buffer) and leaving the page there clean. `None`: not buffered and R-Buf serves it.
    fn lazy_read_at(
        &mut self,
        buffer: &mut LazyBuffer,
        cmd: DeviceNs,
        lpn: u64,
        host_not_before: DeviceNs,
    ) -> Option<DeviceNs> {
        if let Some((slot, ready)) = buffer.find(lpn) {
            buffer.hit(slot);
            self.stats.buffer_hits += 1;
            return Some(self.host_transfer(cmd, cmd.max(ready).max(host_not_before), true));
        }
        if self.read_slots.is_some() {
            return None;
        }
        let (slot, free_at) = self.lazy_evict_for(buffer, cmd, lpn);
        let die = self.die_of(lpn);
        let sensed = self.die_read(die, cmd.max(free_at));
        let moved = self.channel_read(die, sensed);
        buffer.fill(slot, false, moved);
        Some(self.host_transfer(cmd, moved.max(host_not_before), true))
    }

    /// A draining flush with lazy write-back: programs every dirty page now; returns when the
    /// last program completes (`None`: nothing was dirty).
    fn lazy_drain(&mut self, buffer: &mut LazyBuffer, now: DeviceNs) -> Option<DeviceNs> {
        buffer
            .dirty()
            .into_iter()
            .map(|(slot, lpn, ready)| {
                let programmed = self.program(now.max(ready), lpn);
                buffer.mark_clean(slot, programmed);
                programmed
            })
            .max()
    }

    /// Places `lpn` on the next die and programs it once its data is in the device at
    /// `data_in` (after any garbage collection the placement needed); returns when the program
    /// completes.
    fn program(&mut self, data_in: DeviceNs, lpn: u64) -> DeviceNs {
        let ack = data_in;
        let (die, work) = self.place(lpn);
        let d = die as usize;
        let rest = self.background_until(d, ack);
        if self.die_prog_free[d] <= ack && rest > 0 {
            // Host programs go before background work, but the operation in flight finishes.
            self.background[d].work(rest);
            self.die_prog_free[d] = ack + rest;
        }
        if work != GcWork::default() {
            self.stats.gc_writes += work.copies;
            self.stats.flash_programs += work.copies;
            self.stats.erases += work.erases;
            self.collect_garbage(d, ack, self.times.gc_cost(work, self.erase_fraction));
        }
        // The program's channel transfer does not queue behind other dies' programs: their
        // bookings lie at each die's own (possibly far) future, and one scalar per channel
        // would serialise dies that are in fact independent. Program traffic keeps a channel
        // under about 10% busy in every profile, so only reads queue on channels.
        let moved = ack.max(self.die_prog_free[d]) + self.times.rmw_read + self.times.channel;
        // Into the SLC cache while it has room (folded into TLC later, in idle die time);
        // straight into TLC once it is full.
        let program_time = if self.slc_has_room(d) {
            self.background[d].fold_ns += self.times.fold;
            self.stats.slc_writes += 1;
            self.times.slc_prog
        } else {
            self.times.prog
        };
        let programmed = moved + program_time;
        self.die_prog_free[d] = programmed;
        self.stats.flash_programs += 1;
        programmed
    }

    /// Garbage collection of `cost` ns on die `d` for a write whose data is in at `ack`: deferred
    /// to the die's idle time up to `gc_defer_max`; the excess runs now, before the write's
    /// program (free blocks have run short).
    fn collect_garbage(&mut self, d: usize, ack: DeviceNs, cost: u64) {
        let work = &mut self.background[d];
        work.gc_ns += cost;
        let excess = work.gc_ns.saturating_sub(self.gc_defer_max);
        if excess > 0 {
            work.gc_ns -= excess;
            self.die_prog_free[d] = self.die_prog_free[d].max(ack) + excess;
        }
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
        self.leave_queue(done) + self.times.host_read
    }

    /// A write of `lpn` submitted at `now`; returns its acknowledgement time.
    pub fn write(&mut self, now: DeviceNs, lpn: u64) -> DeviceNs {
        let entered = self.enter_queue(now);
        let cmd = self.firmware(entered, self.times.firmware + self.times.firmware_write);
        let acked = self.write_at(cmd, lpn);
        self.leave_queue(acked) + self.times.host_write
    }

    /// The fused RW command submitted at `now`: write `write_lpn`, read `read_lpn` into the
    /// same host buffer. Returns its completion time.
    pub fn fused(&mut self, now: DeviceNs, write_lpn: u64, read_lpn: u64) -> DeviceNs {
        let entered = self.enter_queue(now);
        let cmd = self.firmware(entered, self.times.firmware + self.times.firmware_write);
        let write_data_in = self.write_at(cmd, write_lpn);
        let done = self.read_at(cmd, read_lpn, write_data_in);
        self.leave_queue(done) + self.times.host_write
    }

    /// A flush submitted at `now`; returns when every write acknowledged by `now` is durable,
    /// plus the firmware time of the command:
    /// - `plp=on`: at once, the buffer is protected;
    /// - `plp=off` with `flush_us` set: that fixed latency, whatever is dirty;
    /// - `plp=off`, the model: when the dirty data (acknowledged, not yet programmed) is
    ///   programmed (into SLC while the cache had room, else TLC), plus the flush commit; at
    ///   once when nothing is dirty.
    /// - `flush=noop`: no drain; the file system's journal commit (its blocks, then the
    ///   commit block, each a host write through the buffer).
    pub fn sync(&mut self, now: DeviceNs) -> DeviceNs {
        let durable = if self.plp {
            now
        } else if let Some(journal) = self.journal {
            self.journal_sync(journal, now)
        } else if let Some(fixed) = self.times.flush_fixed {
            now + fixed
        } else if let Some(drained) = self.with_lazy(|model, buffer| model.lazy_drain(buffer, now))
        {
            drained.map_or(now, |programmed| programmed + self.times.flush_commit)
        } else {
            self.unflushed
                .dirty_until(now)
                .map_or(now, |programmed| programmed + self.times.flush_commit)
        };
        durable + self.times.firmware
    }

    /// A sync on a drive that ignores FLUSH: it shares the last journal commit or makes the
    /// next one ([`Journal::plan`]); returns when that commit is acknowledged.
    fn journal_sync(&mut self, mut journal: Journal, now: DeviceNs) -> DeviceNs {
        let start = match journal.plan(now) {
            Commit::Share { end } => return end,
            Commit::New { start } => start,
        };
        let pages: [u64; JOURNAL_BLOCKS_BEFORE_COMMIT + 1] = journal.advance();
        let end = self.journal_commit(start, pages);
        journal.last = Some((start, end));
        self.journal = Some(journal);
        end
    }

    /// One jbd2 commit from `start`: the journal blocks at once, and when all are acknowledged
    /// the commit block (its cache flush and FUA are no-ops in such firmware, so only their
    /// command time is paid). Returns when the commit block is acknowledged.
    fn journal_commit(
        &mut self,
        start: DeviceNs,
        pages: [u64; JOURNAL_BLOCKS_BEFORE_COMMIT + 1],
    ) -> DeviceNs {
        let [blocks @ .., commit] = pages;
        let blocks_in = blocks
            .iter()
            .map(|&lpn| self.write(start, lpn))
            .fold(start, DeviceNs::max);
        let preflush = self.firmware(blocks_in, self.times.firmware);
        self.stats.journal_writes += pages.len() as u64;
        self.write(preflush, commit)
    }

    /// Whether the write buffer is power-loss protected.
    #[must_use]
    pub fn power_loss_protected(&self) -> bool {
        self.plp
    }

    /// When every piece of work scheduled so far (programs, GC, reads, folding of the SLC cache)
    /// has finished: the device is idle from then on unless new requests arrive.
    #[must_use]
    pub fn quiescent_at(&self) -> DeviceNs {
        let busy = |times: &[DeviceNs]| times.iter().copied().max().unwrap_or(0);
        let background = (0..self.background.len())
            .map(|d| {
                let work = &self.background[d];
                work.clock
                    .max(self.die_prog_free[d])
                    .max(self.die_read_free[d])
                    + work.total()
            })
            .max()
            .unwrap_or(0);
        busy(&self.die_prog_free)
            .max(background)
            .max(busy(&self.die_read_free))
            .max(busy(&self.channel_free))
            .max(busy(&self.cores_free))
            .max(self.link_free[0])
            .max(self.link_free[1])
    }
}
