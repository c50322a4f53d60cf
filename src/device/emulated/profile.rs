//! Device profiles of the emulated flash SSD, HDD and cloud volume (docs/algorithms.md section 7)
//! and the `key=value` overrides of the `emu:NAME[,key=value...]` device string.
//!
//! Every profile is physics, not a benchmark figure: geometry (channels x ways = dies), flash
//! latencies (tR, tPROG, erase, program-suspend), channel and host-link bandwidth, firmware
//! overhead per command, the device command queue, write-buffer size, power-loss protection
//! (`plp`) and the spare area; for the cloud volume, network latency, server latencies and the
//! provisioned rate. The numbers were chosen from the parts the papers name (LRU-C Table 1,
//! ACE Table I, the RW paper's Cosmos+ OpenSSD) and their datasheets, then checked with
//! `device probe`'s default method ([`paper_figures`] holds each profile's target; the results
//! are in the module docs of `mod.rs` and in `docs/devices.md`).
//!
//! Power-loss protection: off for the papers' client and consumer drives (ssd-a..d, openssd),
//! on for the enterprise drives (pcie, sata, optane) and the cloud volume; [`plp_record`] says
//! for each whether the real drive has it and on what source (or assumption). See `mod.rs` for
//! what `sync` costs either way; the client TLC profiles have an SLC cache (`slc`), defer
//! garbage collection to idle time (`gc_defer_blocks`) and pay a fitted flush commit
//! (`flush_commit_us`): `docs/devices.md`, "The sync price".
//!
//! "Half-full" devices: the papers measure drives that are half full, so the FTL of a real
//! drive has the unwritten half plus its hardware spare (about 7%) as room for garbage
//! collection. The opened device (`OpenOptions::pages`) plays the written half, so the default
//! over-provisioning of the SSD profiles is `HALF_FULL_OP` = 2 x 1.07 - 1 = 1.14.
//!
//! Page size: profiles are given for 16 KiB pages. Transfers scale with the page size; tR does
//! not (a flash read senses a whole flash page); tPROG scales with the page size (the write
//! buffer packs small logical pages into one flash page, so program bandwidth stays the same).
//! LRU-C Table 1 was measured with 16 KiB I/O, ACE Table I and the RW paper with 4 KiB.

use crate::device::WriteCache;
use crate::error::{Error, Result};

/// Spare area of a half-full drive with 7% hardware over-provisioning, relative to the written
/// half.
pub const HALF_FULL_OP: f64 = 2.0 * 1.07 - 1.0;

/// How an emulated SSD's filled pages (`fill`) were written before the first request.
///
/// The LRU-C and RW papers "initialize the database storage device using the dd command" (LRU-C
/// §5.1; RW §5.1: "to deliver steady-state performance results, we always precondition the SSD
/// using the dd command") and then run for 35 minutes: their drives start with every block
/// written once, in order, and no page yet overwritten. `docs/devices.md`, "Which state the
/// papers' drives were in", compares the three states a run can start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    /// Written in order, then overwritten at random twice over (seeded): the steady state of
    /// uniform random writes, where the FTL already collects garbage. The default.
    Random,
    /// Written once, in order (a `dd` over the drive): every block full of valid pages, so
    /// garbage collection starts only once the host's overwrites have used the spare blocks.
    Sequential,
}

impl Precondition {
    /// The option value naming it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Precondition::Random => "random",
            Precondition::Sequential => "sequential",
        }
    }

    /// Parses the `precondition` option's value.
    ///
    /// # Errors
    /// [`Error::Config`] naming the option and the accepted values.
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "random" => Ok(Precondition::Random),
            "sequential" | "dd" => Ok(Precondition::Sequential),
            _ => Err(Error::Config(format!(
                "emulated device option `precondition` must be random or sequential (got `{value}`)"
            ))),
        }
    }
}

/// What the drive's firmware does with a FLUSH command when its write buffer is volatile
/// (`plp=off`).
///
/// Drives that honour the command make a sync wait for the buffered writes (`Drain`, the
/// default). The Cosmos+ OpenSSD's reference firmware completes a FLUSH at once and leaves the
/// buffer as it is (`nvme_io_cmd.c` of every GreedyFTL release, 2.5.0 to 3.0.0: the flush case
/// posts the completion and does nothing else; so does the firmware the RW paper's authors
/// published): `Noop` models that, a sync costing the file system's journal commit and no
/// drain. `emu:openssd`'s default since 2026-11-30, with [`Writeback::Lazy`] (`docs/devices.md`,
/// "Lazy write-back").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// A sync waits until the dirty data is programmed, then pays the flush commit
    /// (`flush_commit_us`), or the fixed `flush_us`.
    Drain,
    /// The firmware completes a FLUSH at once: a sync costs the file system's journal commit,
    /// modelled as the journal's writes through the write buffer, and acknowledged writes are
    /// no more durable after it than before.
    Noop,
}

impl Flush {
    /// The option value naming it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Flush::Drain => "drain",
            Flush::Noop => "noop",
        }
    }

    /// Parses the `flush` option's value.
    ///
    /// # Errors
    /// [`Error::Config`] naming the option and the accepted values.
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "drain" => Ok(Flush::Drain),
            "noop" => Ok(Flush::Noop),
            _ => Err(Error::Config(format!(
                "emulated device option `flush` must be drain or noop (got `{value}`)"
            ))),
        }
    }
}

/// When the write buffer programs a page it holds.
///
/// Most drives program buffered writes in the background as fast as their dies allow
/// (`Eager`, the default): a slot frees when its program completes. The Cosmos+ OpenSSD's
/// GreedyFTL programs a dirty buffer entry only when a request needs the entry for another page
/// (`Lazy`; `request_transform.c`, `EvictDataBufEntry`): the buffer stays full of dirty pages
/// under sustained writes, a request that misses it waits for its victim's program, a rewrite
/// of a buffered page costs no program, and reads share the buffer unless R-Buf separates
/// them (`docs/devices.md`, "Lazy write-back").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writeback {
    /// Each write's program is scheduled when it is acknowledged.
    Eager,
    /// A dirty page is programmed when its slot is taken for another page, or by a draining
    /// flush.
    Lazy,
}

impl Writeback {
    /// The option value naming it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Writeback::Eager => "eager",
            Writeback::Lazy => "lazy",
        }
    }

    /// Parses the `writeback` option's value.
    ///
    /// # Errors
    /// [`Error::Config`] naming the option and the accepted values.
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "eager" => Ok(Writeback::Eager),
            "lazy" => Ok(Writeback::Lazy),
            _ => Err(Error::Config(format!(
                "emulated device option `writeback` must be eager or lazy (got `{value}`)"
            ))),
        }
    }
}

/// Bytes of the page size the profiles' latencies are quoted for.
pub const PROFILE_PAGE_BYTES: usize = 16 * 1024;

/// Which model a profile drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Flash SSD: dies, channels, write buffer, FTL with GC.
    Ssd,
    /// Hard disk: one actuator, seek + rotation.
    Hdd,
    /// Provisioned-IOPS cloud volume: rate limiter, network, replicated storage servers whose
    /// drives are flash SSDs with this profile's geometry (`cloud.rs`).
    Cloud,
    /// Ideal asymmetric device: a write costs exactly `alpha` reads, `k_w` writes (`k_r`
    /// reads) run at once at the cost of one, no FTL or garbage collection (`ideal.rs`).
    Ideal,
}

impl Kind {
    /// What `flashbuf devices` prints for the model: `SSD`, `HDD`, `cloud`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Kind::Ssd => "SSD",
            Kind::Hdd => "HDD",
            Kind::Cloud => "cloud",
            Kind::Ideal => "ideal",
        }
    }
}

/// All parameters of one emulated device. Times are in device microseconds.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::struct_excessive_bools)] // independent on/off device features
pub struct Profile {
    /// Profile name (`ssd-a`, ...).
    pub name: &'static str,
    /// SSD or HDD model.
    pub kind: Kind,
    /// Flash channels.
    pub channels: u32,
    /// Dies per channel.
    pub ways: u32,
    /// Array read time of one flash page (tR).
    pub t_read_us: f64,
    /// Program time of one 16 KiB page (tPROG, multi-plane programs folded in).
    pub t_prog_us: f64,
    /// Block erase time.
    pub t_erase_us: f64,
    /// Program/erase suspend latency: what a read waits when its die is programming.
    pub t_suspend_us: f64,
    /// Whether reads may suspend programs and GC on their die (off: reads queue behind them).
    pub suspend: bool,
    /// Firmware time per command (on one controller core).
    pub fw_us: f64,
    /// Extra firmware time per write (buffer management, mapping update).
    pub fw_write_us: f64,
    /// Controller cores running firmware in parallel.
    pub fw_cores: u32,
    /// Channel bandwidth, MB/s (10^6 bytes per second).
    pub channel_mb_s: f64,
    /// Host link bandwidth, MB/s.
    pub link_mb_s: f64,
    /// Whether the host link carries both directions at once (PCIe) or not (SATA).
    pub link_full_duplex: bool,
    /// Write buffer (S-Buf: shared buffer) in pages; 0: none, writes are acknowledged when
    /// programmed (media that write in place).
    pub buffer_pages: u32,
    /// Separate read buffer (R-Buf) in pages; `rbuf=off` means reads share `buffer_pages`.
    pub rbuf: bool,
    /// R-Buf read buffer size in pages.
    pub rbuf_pages: u32,
    /// Whether the write buffer packs pages smaller than a 16 KiB flash page into one program
    /// (off: each small write programs a whole flash page after reading the rest of it).
    pub pack: bool,
    /// Whether the write buffer is power-loss protected (`sync` does not wait for programs).
    pub plp: bool,
    /// SLC cache: the share of the device's logical pages that can sit in SLC-mode flash
    /// before being folded into TLC in idle die time (0: no SLC cache, every write is
    /// programmed at `t_prog_us`).
    pub slc: f64,
    /// SLC-mode program time of one 16 KiB page (scaled with the page size like `t_prog_us`).
    pub t_slc_prog_us: f64,
    /// What a `plp=off` flush that found unprogrammed data adds once that data is on flash:
    /// the drive's mapping-journal commit and the file system's journal commit of an fsync.
    pub flush_commit_us: f64,
    /// A fixed price for a `plp=off` flush, microseconds, replacing the model (`None`: the
    /// model: dirty data drains at SLC or TLC program time, then the commit).
    pub flush_us: Option<f64>,
    /// What the firmware does with a FLUSH (`plp=off`): drain the buffer, or nothing.
    pub flush: Flush,
    /// When a buffered write is programmed: at once, or when its slot is needed.
    pub writeback: Writeback,
    /// Over-provisioning: physical pages = logical pages x (1 + op).
    pub op: f64,
    /// Fraction of logical pages mapped (written) before the first request.
    pub fill: f64,
    /// How the filled pages were written before the first request: see [`Precondition`].
    pub precondition: Precondition,
    /// SSD: a bench run's warm-up ages the flash layout with the workload's own writes
    /// (`aging.rs`; off, the default: the run starts from the preconditioning, `precondition`;
    /// `docs/devices.md` says why it is not yet the default).
    pub age: bool,
    /// Pages per erase block (lowered automatically on small devices, see `ftl.rs`).
    pub pages_per_block: u32,
    /// Garbage collection a die may defer to its idle time, in blocks' worth of copies (0: GC
    /// runs in the foreground, before the write that triggered it).
    pub gc_defer_blocks: u32,
    /// Device time runs this many times slower than real time.
    pub time_scale: f64,
    /// RNG seed (HDD rotation, preconditioning).
    pub seed: u64,
    /// HDD: track-to-track seek.
    pub seek_min_ms: f64,
    /// HDD: full-stroke seek.
    pub seek_max_ms: f64,
    /// HDD: one revolution.
    pub rotation_ms: f64,
    /// HDD: extra settle time of a write seek.
    pub write_settle_ms: f64,
    /// HDD: media transfer rate, MB/s.
    pub media_mb_s: f64,
    /// HDD: fraction of the full stroke the opened device spans (0.5: the papers' half-full
    /// disk, whose data occupies half the platter's LBA range).
    pub stroke: f64,
    /// HDD: how many queued commands the drive reorders among (NCQ window).
    pub ncq: u32,
    /// SSD: commands the device queues at once (SATA NCQ: 32); 0: no limit.
    pub queue_depth: u32,
    /// Cloud: one-way network latency between host and storage server, device microseconds.
    pub net_us: f64,
    /// Cloud: provisioned backend operations per second (0: no limit).
    pub iops_limit: f64,
    /// Cloud: copies of each write (1 or 2); each copy is one backend operation.
    pub replicas: u32,
    /// SSD: host I/O-stack time per read (system call, file system, block layer, interrupt and
    /// wake-up), added to each read's latency without occupying the device; 0 for the
    /// datasheet profiles; the `-fs` variants carry the host stack ACE measured through (`docs/devices.md`).
    pub host_read_us: f64,
    /// SSD: host I/O-stack time per write (and per fused RW command), as `host_read_us`.
    pub host_write_us: f64,
    /// Cloud: provisioned throughput, MB/s (10^6 bytes per second; 0: no limit).
    pub mb_s_limit: f64,
    /// Cloud: the volume's size in GiB, from which a provider's rule ([`Sizing`]) derives
    /// `iops_limit` and `mb_s_limit` (0: not a sized volume).
    pub size_gib: f64,
    /// Cloud: how the provider derives the caps from the size.
    pub sizing: Sizing,
    /// Ideal: write cost / read cost.
    pub alpha: f64,
    /// Ideal: writes served at once at the cost of one (write concurrency).
    pub k_w: u32,
    /// Ideal: reads served at once at the cost of one (read concurrency).
    pub k_r: u32,
}

/// How a cloud provider caps a volume by its size (docs/devices.md, "Cloud volumes of LRU-C
/// Figure 12").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizing {
    /// Caps given directly (`iops_limit`, `mb_s_limit`).
    Fixed,
    /// GCP zonal SSD persistent disk (pd-ssd): 30 IOPS and 0.48 MiB/s per GiB, up to the
    /// machine's per-VM caps.
    GcpPdSsd,
    /// Azure premium SSD (v1): the caps of the smallest tier (P1..P80) that holds the size, up
    /// to the VM's uncached caps.
    AzurePremium,
}

/// GCP pd-ssd: IOPS per GiB (read and write each).
pub const GCP_PD_SSD_IOPS_PER_GIB: f64 = 30.0;
/// GCP pd-ssd: throughput per GiB, MiB/s.
pub const GCP_PD_SSD_MIB_S_PER_GIB: f64 = 0.48;
/// GCP pd-ssd on an N2 machine with 8-15 vCPUs (the paper's n2-standard-8): per-VM IOPS cap.
pub const GCP_N2_8_IOPS: f64 = 15_000.0;
/// GCP: per-VM pd-ssd throughput cap, MiB/s (zonal SSD PD, per instance).
pub const GCP_N2_8_MIB_S: f64 = 1_200.0;
/// Azure premium SSD tiers: (name, size GiB, base provisioned IOPS, base throughput MB/s).
pub const AZURE_PREMIUM_TIERS: &[(&str, f64, f64, f64)] = &[
    ("P1", 4.0, 120.0, 25.0),
    ("P2", 8.0, 120.0, 25.0),
    ("P3", 16.0, 120.0, 25.0),
    ("P4", 32.0, 120.0, 25.0),
    ("P6", 64.0, 240.0, 50.0),
    ("P10", 128.0, 500.0, 100.0),
    ("P15", 256.0, 1_100.0, 125.0),
    ("P20", 512.0, 2_300.0, 150.0),
    ("P30", 1_024.0, 5_000.0, 200.0),
    ("P40", 2_048.0, 7_500.0, 250.0),
    ("P50", 4_096.0, 7_500.0, 250.0),
    ("P60", 8_192.0, 16_000.0, 500.0),
    ("P70", 16_384.0, 18_000.0, 750.0),
    ("P80", 32_767.0, 20_000.0, 900.0),
];
/// Azure Standard_F8s_v2 (8 vCPUs, the paper's "F8s v3"): uncached disk IOPS cap.
pub const AZURE_F8S_V2_IOPS: f64 = 12_800.0;
/// Azure Standard_F8s_v2: uncached disk throughput cap, MB/s.
pub const AZURE_F8S_V2_MB_S: f64 = 190.0;

/// The (IOPS, MB/s) caps of a volume of `size_gib` under `sizing`, and the tier or rule that
/// gave them; `None` for [`Sizing::Fixed`] or a size no tier holds.
#[must_use]
pub fn volume_caps(sizing: Sizing, size_gib: f64) -> Option<(f64, f64, String)> {
    const MIB: f64 = 1.048_576;
    match sizing {
        Sizing::Fixed => None,
        Sizing::GcpPdSsd => {
            let iops = (GCP_PD_SSD_IOPS_PER_GIB * size_gib).min(GCP_N2_8_IOPS);
            let mb_s = (GCP_PD_SSD_MIB_S_PER_GIB * size_gib).min(GCP_N2_8_MIB_S) * MIB;
            Some((iops, mb_s, format!("pd-ssd {size_gib} GiB")))
        }
        Sizing::AzurePremium => {
            let (tier, _, iops, mb_s) = AZURE_PREMIUM_TIERS
                .iter()
                .find(|(_, size, _, _)| *size >= size_gib)?;
            Some((
                iops.min(AZURE_F8S_V2_IOPS),
                mb_s.min(AZURE_F8S_V2_MB_S),
                format!("premium SSD {tier} ({size_gib} GiB)"),
            ))
        }
    }
}

impl Profile {
    /// Number of dies.
    #[must_use]
    pub fn dies(&self) -> u32 {
        self.channels * self.ways
    }

    /// What `sync` has to do on a device of this profile.
    #[must_use]
    pub fn write_cache(&self) -> WriteCache {
        match self.kind {
            Kind::Hdd => WriteCache::WriteThrough,
            Kind::Cloud | Kind::Ideal => WriteCache::Protected,
            Kind::Ssd if self.plp => WriteCache::Protected,
            Kind::Ssd if self.flush == Flush::Noop => WriteCache::FlushIgnored,
            Kind::Ssd => WriteCache::Volatile,
        }
    }
}

/// What a profile's source paper measured on the real device it models (the calibration
/// target). Absent figures were not reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperFigures {
    /// Where the figures come from.
    pub source: &'static str,
    /// I/O size of the measurement, bytes (the probe's default page size for the profile).
    pub page_bytes: usize,
    /// Concurrency (queue depth) of the IOPS figures.
    pub queue_depth: usize,
    /// Random read IOPS.
    pub read_iops: Option<f64>,
    /// Random write IOPS.
    pub write_iops: Option<f64>,
    /// Read/write asymmetry (ACE Table I).
    pub alpha: Option<f64>,
    /// Read concurrency (ACE Table I).
    pub k_r: Option<f64>,
    /// Write concurrency (ACE Table I).
    pub k_w: Option<f64>,
}

const TABLE_1: &str = "LRU-C Table 1 (16 KiB random, QD32, half-full, 30 min)";
const ACE_TABLE_I: &str = "ACE Table I (PIO method, 4 KiB I/O)";
const RW_TABLE_1: &str =
    "RW paper Table 1 (4 KiB random, QD32 from four fio threads, half-filled, 6 hours)";

/// I/Os in flight behind RW Table 1's figures: "a queue depth of 32" from each of four fio
/// threads, as the RW paper's own fio runs (section 4.1: "four FIO threads each of which issues
/// random reads of 4KB pages with the queue depth of 32") and Samsung's "QD32 T4" ratings. At 32
/// in flight, Little's law caps the P4510 at 32 / 77 us = 416K reads per second (Intel's QD1
/// read latency), under Table 1's 723,241.
pub const RW_TABLE_1_CONCURRENCY: usize = 128;

/// The figures profile `name` is calibrated against, if its paper reported any.
#[must_use]
pub fn paper_figures(name: &str) -> Option<PaperFigures> {
    let table1 = |read: f64, write: f64| PaperFigures {
        source: TABLE_1,
        page_bytes: 16 * 1024,
        queue_depth: 32,
        read_iops: Some(read),
        write_iops: Some(write),
        alpha: None,
        k_r: None,
        k_w: None,
    };
    let rw_table1 = |read: f64, write: f64| PaperFigures {
        source: RW_TABLE_1,
        page_bytes: 4096,
        queue_depth: RW_TABLE_1_CONCURRENCY,
        ..table1(read, write)
    };
    let ace = |alpha: f64, k_r: f64, k_w: f64| PaperFigures {
        source: ACE_TABLE_I,
        page_bytes: 4096,
        queue_depth: 0,
        read_iops: None,
        write_iops: None,
        alpha: Some(alpha),
        k_r: Some(k_r),
        k_w: Some(k_w),
    };
    Some(match name {
        "ssd-a" => table1(190_622.0, 33_866.0),
        "ssd-b" => table1(169_681.0, 33_811.0),
        "ssd-c" => table1(39_860.0, 3_830.0),
        "ssd-d" => table1(80_433.0, 12_536.0),
        "hdd" => table1(280.0, 216.0),
        "pcie" | "pcie-fs" => ace(2.8, 80.0, 8.0),
        "sata" | "sata-fs" => ace(1.5, 25.0, 9.0),
        "optane" => ace(1.1, 6.0, 5.0),
        "cloud" => ace(2.0, 11.0, 19.0),
        "openssd" => rw_table1(142_032.0, 16_355.0),
        "rw-ssd-a" => rw_table1(529_977.0, 51_077.0),
        "rw-ssd-b" => rw_table1(264_846.0, 19_705.0),
        "rw-ssd-c" => rw_table1(723_241.0, 70_983.0),
        "rw-ssd-d" => rw_table1(99_123.0, 8_739.0),
        _ => return None,
    })
}

/// Profile names accepted after `emu:`.
pub const PROFILE_NAMES: &[&str] = &[
    "ssd-a",
    "ssd-b",
    "ssd-c",
    "ssd-d",
    "hdd",
    "pcie",
    "sata",
    "optane",
    "cloud",
    "openssd",
    "pcie-fs",
    "sata-fs",
    "rw-ssd-a",
    "rw-ssd-b",
    "rw-ssd-c",
    "rw-ssd-d",
    "ideal",
    "gcp-pd-ssd",
    "azure-premium",
];

/// Option keys accepted after the profile name.
pub const OPTION_NAMES: &[&str] = &[
    "channels",
    "ways",
    "t_read_us",
    "t_prog_us",
    "t_erase_us",
    "t_suspend_us",
    "suspend",
    "fw_us",
    "fw_write_us",
    "fw_cores",
    "channel_mb_s",
    "link_mb_s",
    "buffer",
    "rbuf",
    "rbuf_pages",
    "plp",
    "slc",
    "t_slc_prog_us",
    "flush_commit_us",
    "flush_us",
    "flush",
    "writeback",
    "pack",
    "op",
    "fill",
    "precondition",
    "age",
    "pages_per_block",
    "gc_defer_blocks",
    "time_scale",
    "seed",
    "ncq",
    "queue_depth",
    "stroke",
    "net_us",
    "iops_limit",
    "replicas",
    "host_read_us",
    "host_write_us",
    "mb_s_limit",
    "size_gib",
    "alpha",
    "k_w",
    "k_r",
];

/// One `emu:` option as `flashbuf devices` lists it. The default is the profile's
/// ([`option_value`]); `tests/suite/listings_match_parsers.rs` checks that this table, [`OPTION_NAMES`]
/// and [`apply_override`] accept the same keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionInfo {
    /// The key after `emu:NAME,`.
    pub key: &'static str,
    /// What it sets, in one line.
    pub meaning: &'static str,
    /// Valid values, as [`apply_override`] checks them.
    pub range: &'static str,
}

const fn opt(key: &'static str, meaning: &'static str, range: &'static str) -> OptionInfo {
    OptionInfo {
        key,
        meaning,
        range,
    }
}

/// Every option accepted after the profile name, in [`OPTION_NAMES`]' order.
pub const OPTIONS: &[OptionInfo] = &[
    opt("channels", "flash channels", "1..=4096"),
    opt("ways", "dies per channel", "1..=4096"),
    opt(
        "t_read_us",
        "array read time of one flash page (tR), us",
        ">= 0",
    ),
    opt(
        "t_prog_us",
        "program time of one 16 KiB page (tPROG), us",
        ">= 0",
    ),
    opt("t_erase_us", "block erase time, us", ">= 0"),
    opt(
        "t_suspend_us",
        "program/erase suspend latency a read waits, us",
        ">= 0",
    ),
    opt(
        "suspend",
        "reads may suspend programs and GC on their die",
        "on | off",
    ),
    opt("fw_us", "firmware time per command, us", ">= 0"),
    opt("fw_write_us", "extra firmware time per write, us", ">= 0"),
    opt("fw_cores", "controller cores running firmware", "1..=4096"),
    opt("channel_mb_s", "channel bandwidth, MB/s", "> 0"),
    opt("link_mb_s", "host link bandwidth, MB/s", "> 0"),
    opt(
        "buffer",
        "write buffer (S-Buf) in pages; 0 = none (write-through)",
        "0..=1048576",
    ),
    opt("rbuf", "separate read buffer (R-Buf)", "on | off"),
    opt("rbuf_pages", "R-Buf size in pages", "1..=1048576"),
    opt(
        "plp",
        "power-loss-protected write buffer (sync does not wait for programs)",
        "on | off",
    ),
    opt(
        "slc",
        "SLC cache as a share of the device's pages; writes land in SLC while it has room, \
         folded to TLC in idle die time; 0 = none",
        "0..=1",
    ),
    opt(
        "t_slc_prog_us",
        "SLC-mode program time of one 16 KiB page, us",
        ">= 0",
    ),
    opt(
        "flush_commit_us",
        "plp=off: what a flush adds once the dirty data is on flash (mapping and file-system \
         journal commits), us",
        ">= 0",
    ),
    opt(
        "flush_us",
        "plp=off: a fixed flush latency in us instead of the model (model = drain the dirty \
         data at SLC or TLC program time, then the commit)",
        "model | >= 0",
    ),
    opt(
        "flush",
        "plp=off: what the firmware does with a FLUSH: `drain` waits for the buffered writes; \
         `noop` completes at once (what the Cosmos+ OpenSSD's reference firmware does), so a \
         sync costs the file system's journal writes",
        "drain | noop",
    ),
    opt(
        "writeback",
        "SSD with a write buffer: when a buffered write is programmed: `eager` at once (most \
         drives); `lazy` only when its slot is needed for another page (the Cosmos+ OpenSSD's \
         firmware), so requests that miss a full buffer wait for a program",
        "eager | lazy",
    ),
    opt(
        "pack",
        "pack small pages into one flash page (off: read-modify-write)",
        "on | off",
    ),
    opt(
        "op",
        "SSD over-provisioning: physical = logical x (1 + op); hdd and cloud have no FTL (0)",
        "0.02..=16",
    ),
    opt(
        "fill",
        "fraction of logical pages written before the first request",
        "0..=1",
    ),
    opt(
        "precondition",
        "SSD: how the filled pages were written before the first request: `random` (then \
         overwritten at random twice, the random-write steady state) or `sequential` (once, in \
         order: what a `dd` over the drive leaves, the papers' protocol)",
        "random | sequential",
    ),
    opt(
        "age",
        "SSD: a bench warm-up ages the flash layout with the workload's own writes until GC \
         per write settles (off: the run starts from the preconditioning, `precondition`)",
        "on | off",
    ),
    opt("pages_per_block", "pages per erase block", "1..=1048576"),
    opt(
        "gc_defer_blocks",
        "SSD: garbage collection a die may defer to its idle time, in blocks' worth of copies; \
         0 = always in the foreground",
        "0..=4096",
    ),
    opt(
        "time_scale",
        "device time runs this many times slower than real time",
        "0.001..=1e9",
    ),
    opt(
        "seed",
        "RNG seed (HDD rotation, preconditioning)",
        "0..=2^64-1",
    ),
    opt(
        "ncq",
        "HDD: queued commands the drive reorders among (capped at 32)",
        "1..=4096",
    ),
    opt(
        "queue_depth",
        "SSD: commands the device queues at once; 0 = no limit",
        "0..=4096",
    ),
    opt(
        "stroke",
        "HDD: fraction of the full stroke the device spans",
        "(0, 1]",
    ),
    opt("net_us", "cloud: one-way network latency, us", ">= 0"),
    opt(
        "iops_limit",
        "cloud: provisioned backend operations per second; 0 = no limit",
        ">= 0",
    ),
    opt("replicas", "cloud: copies of each write", "1..=2"),
    opt(
        "host_read_us",
        "SSD: host I/O-stack time per read (syscall, file system, interrupt), added to its \
         latency without occupying the device, us",
        ">= 0",
    ),
    opt(
        "host_write_us",
        "SSD: host I/O-stack time per write or fused command, as host_read_us, us",
        ">= 0",
    ),
    opt(
        "mb_s_limit",
        "cloud: provisioned throughput, MB/s; 0 = no limit",
        ">= 0",
    ),
    opt(
        "size_gib",
        "gcp-pd-ssd, azure-premium: the volume's size in GiB, which sets iops_limit and \
         mb_s_limit by the provider's rule (unless those are given)",
        "1..=65536",
    ),
    opt(
        "alpha",
        "ideal: a write costs alpha reads (t_read_us x alpha)",
        "1..=64",
    ),
    opt(
        "k_w",
        "ideal: writes served at once at the cost of one (write concurrency)",
        "1..=4096",
    ),
    opt(
        "k_r",
        "ideal: reads served at once at the cost of one (read concurrency)",
        "1..=4096",
    ),
];

/// One line on what profile `name` models (for `flashbuf devices`); `None` for unknown names.
#[must_use]
pub fn profile_description(name: &str) -> Option<&'static str> {
    Some(match name {
        "ssd-a" => "Intel P4101 1 TB, PCIe 3.0 x4, TLC, 32 dies (LRU-C Table 1)",
        "ssd-b" => "Samsung 970 Pro 512 GB, PCIe 3.0 x4, MLC, 16 dies (LRU-C Table 1)",
        "ssd-c" => "Crucial MX500 250 GB, SATA, TLC, 8 dies (LRU-C Table 1)",
        "ssd-d" => "WD Blue SN570 500 GB, DRAM-less PCIe, TLC, 8 dies (LRU-C Table 1)",
        "hdd" => "WD10EZEX 1 TB 7200 rpm hard disk (LRU-C Table 1)",
        "pcie" => "Intel P4510 1 TB enterprise PCIe SSD, PLP (ACE Table I)",
        "sata" => "Intel S4610 240 GB enterprise SATA SSD, PLP (ACE Table I)",
        "optane" => "Intel Optane P4800X 375 GB, in-place writes, PLP (ACE Table I)",
        "cloud" => "provisioned-IOPS volume, 60,000 IOPS, 2 replicas (ACE's Virtual SSD)",
        "openssd" => "Cosmos+ OpenSSD, 8 x 2 MLC dies, 16 KiB mapping (RW paper)",
        "pcie-fs" => {
            "pcie with the host write path ACE measured through (28 us per write): k_w 8 \
             (ACE Table I)"
        }
        "sata-fs" => {
            "sata with the host write path ACE measured through (80 us per write): k_w 9 \
             (ACE Table I)"
        }
        "rw-ssd-a" => "Samsung 970 PRO 1 TB, PCIe 3.0 x4, MLC, 32 dies (RW Table 1 SSD-A)",
        "rw-ssd-b" => "Intel DC P3600 400 GB, PCIe 3.0 x4, MLC, 36 dies, PLP (RW Table 1 SSD-B)",
        "rw-ssd-c" => "Intel DC P4510 1 TB, PCIe 3.1 x4, TLC, PLP (RW Table 1 SSD-C)",
        "rw-ssd-d" => "Crucial MX500 250 GB, SATA, TLC, 8 dies (RW Table 1 SSD-D)",
        "ideal" => {
            "ideal asymmetric device: write = alpha x read, exact k_w and k_r, no FTL (ACE \
             Figure 10h)"
        }
        "gcp-pd-ssd" => {
            "GCP zonal SSD persistent disk on an n2-standard-8, caps from size_gib (LRU-C \
             Figure 12)"
        }
        "azure-premium" => {
            "Azure premium SSD on a Standard_F8s_v2, caps of the size_gib tier (LRU-C Figure 12)"
        }
        _ => return None,
    })
}

/// Whether the real drive behind a profile has power-loss protection, and why the profile's
/// `plp` default is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlpRecord {
    /// The real drive: `Some(true)` protected, `Some(false)` not, `None` no source found.
    pub real_drive: Option<bool>,
    /// The source, or the assumption and its reason (URLs are in `docs/devices.md`).
    pub source: &'static str,
}

/// The power-loss-protection record of profile `name`; `None` for unknown names.
#[must_use]
pub fn plp_record(name: &str) -> Option<PlpRecord> {
    let record = |real_drive, source| PlpRecord { real_drive, source };
    Some(match name {
        "ssd-a" => record(
            None,
            "no specification of the P4101 found; assumed off: with free syncs a \
             read stall costs under 1 ms, far from the 4.86 ms the LRU-C paper measured on it",
        ),
        "ssd-b" => record(
            Some(false),
            "client drive: only enterprise drives carry power-loss capacitors (AnandTech forums)",
        ),
        "ssd-c" => record(
            Some(false),
            "the MX500's 'power loss immunity' protects data at rest, not data in flight \
             (AnandTech forums; TechPowerUp's review: no large capacitors)",
        ),
        "ssd-d" => record(
            Some(false),
            "DRAM-less client drive: only enterprise drives carry power-loss capacitors \
             (AnandTech forums)",
        ),
        "hdd" => record(
            Some(false),
            "desktop disk with a volatile cache; modelled write-through (writes charged their \
             positioning), so a sync costs command time",
        ),
        "pcie" => record(
            None,
            "no specification of the P4510 itself found; assumed on: Intel's data-center NVMe specifications \
             (DC P3500, P3600, P3608) list enhanced power-loss data protection",
        ),
        "sata" => record(
            Some(true),
            "the S4500/S4600 specification, the S4610's predecessor, lists enhanced \
             power-loss data protection",
        ),
        "optane" => record(
            None,
            "no specification found; moot in the model: 3D XPoint writes in place, \
             no write buffer to drain",
        ),
        "cloud" => record(
            Some(true),
            "a replicated volume acknowledges durable writes (ACE's Virtual SSD)",
        ),
        "openssd" => record(
            Some(false),
            "research board with a DRAM buffer and no capacitors (Cosmos+ OpenSSD)",
        ),
        // The same drive as `pcie`.
        "pcie-fs" | "rw-ssd-c" => plp_record("pcie")?,
        "sata-fs" => plp_record("sata")?,
        "rw-ssd-a" => record(
            Some(false),
            "client drive (Samsung 970 PRO, as ssd-b): only enterprise drives carry \
             power-loss capacitors (AnandTech forums)",
        ),
        "rw-ssd-b" => record(
            Some(true),
            "Intel's DC P3600 product specification lists enhanced power-loss data \
             protection (manualzilla)",
        ),
        "rw-ssd-d" => plp_record("ssd-c")?,
        "ideal" => record(
            None,
            "no real drive: writes are durable when acknowledged (no write cache), so a \
             sync costs nothing",
        ),
        "gcp-pd-ssd" | "azure-premium" => record(
            Some(true),
            "a replicated cloud volume acknowledges durable writes (provider documentation)",
        ),
        _ => return None,
    })
}

/// The value of option `key` in `p`, as `emu:` accepts it (`on`/`off` for flags); `None` for an
/// unknown key.
#[must_use]
pub fn option_value(p: &Profile, key: &str) -> Option<String> {
    let flag = |on: bool| if on { "on" } else { "off" }.to_string();
    Some(match key {
        "channels" => p.channels.to_string(),
        "ways" => p.ways.to_string(),
        "t_read_us" => p.t_read_us.to_string(),
        "t_prog_us" => p.t_prog_us.to_string(),
        "t_erase_us" => p.t_erase_us.to_string(),
        "t_suspend_us" => p.t_suspend_us.to_string(),
        "suspend" => flag(p.suspend),
        "fw_us" => p.fw_us.to_string(),
        "fw_write_us" => p.fw_write_us.to_string(),
        "fw_cores" => p.fw_cores.to_string(),
        "channel_mb_s" => p.channel_mb_s.to_string(),
        "link_mb_s" => p.link_mb_s.to_string(),
        "buffer" => p.buffer_pages.to_string(),
        "rbuf" => flag(p.rbuf),
        "rbuf_pages" => p.rbuf_pages.to_string(),
        "plp" => flag(p.plp),
        "slc" => p.slc.to_string(),
        "t_slc_prog_us" => p.t_slc_prog_us.to_string(),
        "flush_commit_us" => p.flush_commit_us.to_string(),
        "flush_us" => p
            .flush_us
            .map_or_else(|| FLUSH_MODEL.to_string(), |us| us.to_string()),
        "flush" => p.flush.name().to_string(),
        "writeback" => p.writeback.name().to_string(),
        "pack" => flag(p.pack),
        "op" => format!("{:.2}", p.op),
        "fill" => p.fill.to_string(),
        "precondition" => p.precondition.name().to_string(),
        "age" => flag(p.age),
        "pages_per_block" => p.pages_per_block.to_string(),
        "gc_defer_blocks" => p.gc_defer_blocks.to_string(),
        "time_scale" => p.time_scale.to_string(),
        "seed" => p.seed.to_string(),
        "ncq" => p.ncq.to_string(),
        "queue_depth" => p.queue_depth.to_string(),
        "stroke" => p.stroke.to_string(),
        "net_us" => p.net_us.to_string(),
        "iops_limit" => p.iops_limit.to_string(),
        "replicas" => p.replicas.to_string(),
        "host_read_us" => p.host_read_us.to_string(),
        "host_write_us" => p.host_write_us.to_string(),
        "mb_s_limit" => p.mb_s_limit.to_string(),
        "size_gib" => p.size_gib.max(1.0).to_string(),
        "alpha" => p.alpha.to_string(),
        "k_w" => p.k_w.to_string(),
        "k_r" => p.k_r.to_string(),
        _ => return None,
    })
}

/// The `flush_us` value that selects the modelled flush price.
pub const FLUSH_MODEL: &str = "model";

/// SLC cache of the client TLC profiles, as a share of the opened device (the written half of
/// a half-full drive): the WD SN570 500 GB has a 12 GB SLC cache (TechPowerUp's SN580 review),
/// 12 / 250 = 0.048; Intel's 600p 1 TB, the closest Intel client TLC NVMe drive with a published
/// size, 32 GB (AnandTech), 32 / 500 = 0.064. See `docs/devices.md`.
pub const CLIENT_SLC_SHARE: f64 = 0.05;

/// SLC-mode over TLC program time: 1/4. Published program times are 200-300 us for SLC and
/// 900-1350 us for TLC (AnandTech, Samsung SSD 840 review), and client TLC drives write 3.5-4x
/// faster into their SLC cache than past it (TechPowerUp, Samsung 970 EVO 500 GB).
const SLC_OVER_TLC: f64 = 0.25;

/// The flush commit of the `plp=off` profiles, us: fitted on vanilla alone
/// (`experiments/calibration/lruc-vanilla.toml`, `docs/regime.md`, "Calibration") so that a
/// single-page flush holds its doublewrite slot as long as the LRU-C paper's stall rate allows
/// (8 slots / 2,264 stalls a second = 3.53 ms); a 16 KiB write + fsync on an idle drive then
/// costs about 1.1 ms, inside published measurements of client NVMe drives without power-loss
/// protection (0.25-2 ms; `docs/devices.md`, "The sync price").
pub const FLUSH_COMMIT_US: f64 = 930.0;

/// Garbage collection the commercial SSD profiles defer to idle die time, in blocks' worth of
/// copies: their firmware collects in the background while free blocks last and in the
/// foreground once they run short (sustained writes), so the sustained rate keeps paying for
/// GC while a moderate load does not wait for it. One block's worth is several GC rounds; more
/// lengthens the transient before sustained writes settle at their rate.
pub const GC_DEFER_BLOCKS: u32 = 1;

/// `pcie-fs`: host time per write, us, fitted so that the probe's `k_w` is ACE Table I's 8
/// (`docs/devices.md`, "k_w through the host stack").
pub const PCIE_FS_HOST_WRITE_US: f64 = 28.0;
/// `sata-fs`: host time per write, us, fitted so that the probe's `k_w` is ACE Table I's 9.
pub const SATA_FS_HOST_WRITE_US: f64 = 80.0;

/// The ideal device's read time, us (a flash read with its controller and host overheads).
pub const IDEAL_READ_US: f64 = 100.0;

/// The size assumed for LRU-C Figure 12's GCP volume, GiB: GCP's default size of a new blank
/// persistent disk (the paper gives none; its 10 GB database fits).
pub const GCP_ASSUMED_GIB: f64 = 100.0;
/// The size assumed for LRU-C Figure 12's Azure volume, GiB: the Azure portal's default size
/// of a new premium SSD data disk, a P30 (the paper gives none).
pub const AZURE_ASSUMED_GIB: f64 = 1024.0;

/// A PCIe 3.0 x4 link: 3.94 GB/s raw, about 3.2 GB/s after TLP/DLLP overhead.
const PCIE3_X4_MB_S: f64 = 3200.0;
/// A SATA 6 Gb/s link: 600 MB/s after 8b/10b, about 560 MB/s after FIS overhead.
const SATA3_MB_S: f64 = 560.0;

fn ssd_base(name: &'static str) -> Profile {
    Profile {
        name,
        kind: Kind::Ssd,
        channels: 8,
        ways: 4,
        t_read_us: 60.0,
        t_prog_us: 800.0,
        t_erase_us: 3500.0,
        t_suspend_us: 20.0,
        suspend: true,
        fw_us: 8.0,
        fw_write_us: 0.0,
        fw_cores: 4,
        channel_mb_s: 800.0,
        link_mb_s: PCIE3_X4_MB_S,
        link_full_duplex: true,
        buffer_pages: 2048,
        rbuf: false,
        rbuf_pages: 128,
        pack: true,
        plp: false,
        slc: 0.0,
        t_slc_prog_us: 800.0 * SLC_OVER_TLC,
        flush_commit_us: FLUSH_COMMIT_US,
        flush_us: None,
        flush: Flush::Drain,
        writeback: Writeback::Eager,
        op: HALF_FULL_OP,
        fill: 1.0,
        precondition: Precondition::Random,
        age: false,
        pages_per_block: 256,
        gc_defer_blocks: GC_DEFER_BLOCKS,
        time_scale: 10.0,
        seed: 42,
        seek_min_ms: 0.0,
        seek_max_ms: 0.0,
        rotation_ms: 0.0,
        write_settle_ms: 0.0,
        media_mb_s: 0.0,
        stroke: 1.0,
        ncq: 1,
        queue_depth: 0,
        net_us: 0.0,
        iops_limit: 0.0,
        replicas: 1,
        host_read_us: 0.0,
        host_write_us: 0.0,
        mb_s_limit: 0.0,
        size_gib: 0.0,
        sizing: Sizing::Fixed,
        alpha: 1.0,
        k_w: 1,
        k_r: 1,
    }
}

/// The named profile with its defaults.
///
/// # Errors
/// [`Error::Config`] listing the valid names.
#[allow(clippy::too_many_lines)]
pub fn profile(name: &str) -> Result<Profile> {
    let base = |n| ssd_base(n);
    let p = match name {
        // Intel P4101 1 TB: 8-channel controller, 64-layer TLC, 32 dies; PCIe 3.0 x4.
        "ssd-a" => Profile {
            t_read_us: 66.0,
            t_prog_us: 740.0,
            slc: CLIENT_SLC_SHARE,
            t_slc_prog_us: 740.0 * SLC_OVER_TLC,
            channel_mb_s: 1200.0,
            ..base("ssd-a")
        },
        // Samsung 970 Pro 512 GB: 8 channels, 2-bit MLC, 16 dies; fast MLC tR/tPROG. No SLC
        // cache (MLC needs none; ssdwiki.com's 970 Pro page), so `slc` stays 0.
        "ssd-b" => Profile {
            ways: 2,
            t_read_us: 66.0,
            t_prog_us: 345.0,
            t_slc_prog_us: 345.0 * SLC_OVER_TLC,
            t_erase_us: 3000.0,
            fw_us: 6.0,
            ..base("ssd-b")
        },
        // Crucial MX500 250 GB: 4 channels, 64-layer TLC, 8 dies, SATA 6 Gb/s (half duplex).
        "ssd-c" => Profile {
            channels: 4,
            ways: 2,
            t_read_us: 75.0,
            t_prog_us: 1650.0,
            slc: CLIENT_SLC_SHARE,
            t_slc_prog_us: 1650.0 * SLC_OVER_TLC,
            fw_us: 10.0,
            channel_mb_s: 533.0,
            link_mb_s: SATA3_MB_S,
            link_full_duplex: false,
            buffer_pages: 512,
            queue_depth: 32,
            time_scale: 2.0,
            ..base("ssd-c")
        },
        // WD Blue SN570 500 GB: DRAM-less, 4 channels, BiCS5 TLC, 8 dies; the L2P lookups that
        // miss the host memory buffer are folded into tR.
        "ssd-d" => Profile {
            channels: 4,
            ways: 2,
            t_read_us: 84.0,
            t_prog_us: 480.0,
            slc: CLIENT_SLC_SHARE,
            t_slc_prog_us: 480.0 * SLC_OVER_TLC,
            fw_us: 12.0,
            channel_mb_s: 1200.0,
            buffer_pages: 256,
            time_scale: 5.0,
            ..base("ssd-d")
        },
        // WD10EZEX 1 TB, 7200 rpm.
        "hdd" => Profile {
            kind: Kind::Hdd,
            channels: 1,
            ways: 1,
            fw_us: 100.0,
            link_mb_s: SATA3_MB_S,
            link_full_duplex: false,
            buffer_pages: 0,
            op: 0.0,
            fill: 0.0,
            time_scale: 1.0,
            seek_min_ms: 0.8,
            seek_max_ms: 16.0,
            rotation_ms: 60_000.0 / 7200.0,
            write_settle_ms: 1.0,
            media_mb_s: 150.0,
            stroke: 0.5,
            ncq: 32,
            ..base("hdd")
        },
        // ACE's PCIe SSD (Intel P4510 1 TB), enterprise, power-loss protected. 12-channel
        // controller; 72 flash units (36 TLC dies of 256 Gb, each reading two plane groups
        // independently; programs folded into the same units): program bandwidth 72 x 16 KiB /
        // 1.1 ms = 1.07 GB/s, the datasheet's sequential write. Four controller cores at 8 us
        // per command cap random reads near 500K (datasheet: 465K at 4 KiB); 8 us more per
        // write (mapping and PLP journal) make a 4 KiB write at queue depth 1 take 17 us
        // (datasheet: 18 us). Calibrated at 4 KiB, ACE's I/O size.
        "pcie" => Profile {
            channels: 12,
            ways: 6,
            t_read_us: 80.0,
            t_prog_us: 1100.0,
            fw_write_us: 8.0,
            buffer_pages: 512,
            plp: true,
            // Enterprise firmware paces garbage collection to the write rate (consistent
            // steady-state performance, as ACE measured it), so none is deferred.
            gc_defer_blocks: 0,
            ..base("pcie")
        },
        // ACE's SATA SSD (Intel S4610 240 GB), enterprise, power-loss protected. SATA 6 Gb/s,
        // half duplex, NCQ of 32 commands; 16 TLC dies on 8 channels; tR 95 us with ECC
        // decode; program bandwidth 16 x 16 KiB / 520 us = 500 MB/s; 30 us of firmware per
        // write so that a 4 KiB write at queue depth 1 takes 37 us (datasheet: 37 us).
        "sata" => Profile {
            channels: 8,
            ways: 2,
            t_read_us: 95.0,
            t_prog_us: 520.0,
            fw_us: 10.0,
            fw_write_us: 20.0,
            link_mb_s: SATA3_MB_S,
            link_full_duplex: false,
            buffer_pages: 512,
            queue_depth: 32,
            plp: true,
            // Enterprise firmware paces garbage collection to the write rate (consistent
            // steady-state performance, as ACE measured it), so none is deferred.
            gc_defer_blocks: 0,
            time_scale: 2.0,
            ..base("sata")
        },
        // ACE's Optane P4800X 375 GB: 3D XPoint writes in place, so there is no write buffer
        // (a write is acknowledged once on the media) and no garbage collection to speak of;
        // power-loss protected. 7 channels x 4 media partitions with fast access (2 us read,
        // 1 us to write 4 KiB). The controller is the bottleneck: 3 cores at 5.5 us per command
        // (+0.5 us per write) give 545K reads and 500K writes per second (datasheet: 550K and
        // 500K at 4 KiB) and 10 us at queue depth 1 (datasheet: under 10 us).
        "optane" => Profile {
            channels: 7,
            ways: 4,
            t_read_us: 2.0,
            t_prog_us: 4.0,
            t_erase_us: 0.0,
            t_suspend_us: 0.0,
            fw_us: 5.5,
            fw_write_us: 0.5,
            fw_cores: 3,
            channel_mb_s: 2400.0,
            buffer_pages: 0,
            plp: true,
            // In-place writes: a large spare keeps the page-mapped FTL's GC negligible.
            op: 3.0,
            time_scale: 20.0,
            ..base("optane")
        },
        // ACE's Virtual SSD: an AWS volume with 60,000 provisioned IOPS (see `cloud.rs`).
        // 50 us one way to the storage servers (100 us round trip in one zone), 10 Gb/s;
        // a server reads in 100 us and makes a write durable (write + drive flush) in 500 us;
        // two copies per write. Acknowledged writes are durable: plp=on.
        "cloud" => Profile {
            kind: Kind::Cloud,
            channels: 1,
            ways: 1,
            t_read_us: 100.0,
            t_prog_us: 500.0,
            net_us: 50.0,
            link_mb_s: 1250.0,
            iops_limit: 60_000.0,
            replicas: 2,
            buffer_pages: 0,
            plp: true,
            op: 0.0,
            fill: 0.0,
            time_scale: 5.0,
            ..base("cloud")
        },
        // The RW paper's Cosmos+ OpenSSD: 32 GB of MLC on 8 channels x 2 ways, PCIe, 32 MB
        // DRAM buffer (2 MB of it becomes the read buffer under R-Buf). Its FTL maps 16 KiB
        // flash pages, so a 4 KiB write is a read-modify-write of a whole flash page
        // (`pack=off`); the paper measured it with 4 KiB pages.
        "openssd" => Profile {
            ways: 2,
            t_read_us: 50.0,
            t_prog_us: 720.0,
            t_slc_prog_us: 720.0 * SLC_OVER_TLC,
            // The reference FTL collects garbage on demand, in the foreground.
            gc_defer_blocks: 0,
            // The firmware the RW paper's authors published (and GreedyFTL 2.5.0-3.0.0)
            // completes a FLUSH without touching its buffer, and programs a buffered page only
            // when its entry is taken for another page: `docs/devices.md`, "The RW paper's own
            // firmware" and "Lazy write-back".
            flush: Flush::Noop,
            writeback: Writeback::Lazy,
            fw_us: 13.5,
            fw_cores: 2,
            pack: false,
            channel_mb_s: 400.0,
            link_mb_s: 2000.0,
            buffer_pages: 1920,
            rbuf_pages: 128,
            ..base("openssd")
        },
        // ACE's PCIe SSD as ACE measured it: through a file system with fio (`pcie` is the
        // datasheet-only drive). The host write path is fitted (docs/devices.md, "k_w through
        // the host stack").
        "pcie-fs" => Profile {
            name: "pcie-fs",
            host_write_us: PCIE_FS_HOST_WRITE_US,
            ..profile("pcie")?
        },
        // ACE's SATA SSD as ACE measured it (see `pcie-fs`).
        "sata-fs" => Profile {
            name: "sata-fs",
            host_write_us: SATA_FS_HOST_WRITE_US,
            ..profile("sata")?
        },
        // RW Table 1's SSD-A, Samsung 970 PRO 1 TB: Phoenix controller (5 cores), 8 channels,
        // 64-layer 2-bit MLC V-NAND, 32 dies of 256 Gb; PCIe 3.0 x4; no SLC cache (MLC), no
        // power-loss protection. Calibrated at 4 KiB and 128 I/Os in flight (see
        // `RW_TABLE_1_CONCURRENCY`): tR 48 us gives Table 1's 529,977 reads (Samsung's data
        // sheet: 500K at QD32 x 4 threads). `t_prog_us` is *effective*: Table 1's 51,077
        // sustained 4 KiB writes after 6 hours on a half-filled drive (209 MB/s, against
        // 2.7 GB/s of sequential writes in the data sheet) need 1.9 ms per 16 KiB program; it
        // folds in the garbage collection and mapping work of small random writes that the
        // model does not charge.
        "rw-ssd-a" => Profile {
            t_read_us: 48.0,
            t_prog_us: 1900.0,
            t_slc_prog_us: 1900.0 * SLC_OVER_TLC,
            fw_cores: 5,
            ..base("rw-ssd-a")
        },
        // RW Table 1's SSD-B, Intel DC P3600 400 GB: 18-channel controller, 20 nm MLC, 36 dies
        // of 128 Gb (an assumption: 576 GB raw behind 400 GB, a data-center spare area), PCIe
        // 3.0 x4, power-loss protected (writes acknowledged from the protected buffer, GC paced
        // to the write rate). tR 113 us (ECC decode included) gives Table 1's 264,846 reads;
        // the effective `t_prog_us` of 5.7 ms per 16 KiB gives its 19,705 sustained writes
        // (Intel's data sheet: 30K steady-state 4 KiB writes at full span), as for `rw-ssd-a`.
        "rw-ssd-b" => Profile {
            channels: 18,
            ways: 2,
            t_read_us: 113.0,
            t_prog_us: 5700.0,
            t_slc_prog_us: 5700.0 * SLC_OVER_TLC,
            channel_mb_s: 400.0,
            plp: true,
            gc_defer_blocks: 0,
            ..base("rw-ssd-b")
        },
        // RW Table 1's SSD-C, Intel DC P4510 1 TB: ACE's `pcie` drive, here as the RW authors
        // measured it (random writes on a half-filled drive, 128 I/Os in flight). Table 1's
        // 723,241 reads are above Intel's 465K: eight controller cores and tR 60 us (Intel's
        // QD1 read latency: 77 us) reach them; the effective `t_prog_us` of 3.2 ms per 16 KiB
        // gives Table 1's 70,983 writes (Intel's data sheet: 70K steady-state 4 KiB writes).
        "rw-ssd-c" => Profile {
            name: "rw-ssd-c",
            t_read_us: 60.0,
            t_prog_us: 3200.0,
            fw_cores: 8,
            ..profile("pcie")?
        },
        // RW Table 1's SSD-D, Crucial MX500 250 GB: the `ssd-c` drive (LRU-C's SSD-C) measured
        // with 4 KiB I/O. tR 68 us gives Table 1's 99,123 reads; the effective TLC program of
        // 2.9 ms per 16 KiB (SLC a quarter of it) its 8,739 sustained writes (`ssd-c` at 16 KiB:
        // 1.65 ms; small random writes cost this drive more per byte).
        "rw-ssd-d" => Profile {
            name: "rw-ssd-d",
            t_read_us: 68.0,
            t_prog_us: 2900.0,
            t_slc_prog_us: 2900.0 * SLC_OVER_TLC,
            ..profile("ssd-c")?
        },
        // The ideal asymmetric device of ACE Figure 10h (`ideal.rs`): a read takes t_read_us, a
        // write alpha times that; k_w writes (k_r reads) at once take no longer than one. No
        // FTL, no write cache: a write is durable when acknowledged.
        "ideal" => Profile {
            kind: Kind::Ideal,
            channels: 1,
            ways: 1,
            t_read_us: IDEAL_READ_US,
            t_prog_us: 0.0,
            buffer_pages: 0,
            plp: true,
            op: 0.0,
            fill: 0.0,
            alpha: 3.0,
            k_w: 8,
            k_r: 8,
            ..base("ideal")
        },
        // LRU-C Figure 12's GCP volume: a zonal SSD persistent disk (pd-ssd) of `size_gib`
        // (assumed: the paper gives no size; docs/devices.md) on an n2-standard-8. The caps
        // follow from the size by GCP's rule; the network and server times are `cloud`'s.
        "gcp-pd-ssd" => sized(Profile {
            sizing: Sizing::GcpPdSsd,
            size_gib: GCP_ASSUMED_GIB,
            replicas: 1,
            ..profile("cloud")?
        }),
        // LRU-C Figure 12's Azure volume: a premium SSD of `size_gib` (assumed; the tier that
        // holds it sets the caps) on a Standard_F8s_v2.
        "azure-premium" => sized(Profile {
            sizing: Sizing::AzurePremium,
            size_gib: AZURE_ASSUMED_GIB,
            replicas: 1,
            ..profile("cloud")?
        }),
        other => {
            return Err(Error::Config(format!(
                "unknown emulated device profile `{other}`; valid profiles: {}",
                PROFILE_NAMES.join(", ")
            )));
        }
    };
    Ok(p)
}

/// A sized cloud volume with the caps its size gives.
fn sized(mut p: Profile) -> Profile {
    if let Some((iops, mb_s, _)) = volume_caps(p.sizing, p.size_gib) {
        p.iops_limit = iops;
        p.mb_s_limit = mb_s;
    }
    p
}

fn parse_num<T: std::str::FromStr>(key: &str, value: &str) -> Result<T> {
    value.parse::<T>().map_err(|_| {
        Error::Config(format!(
            "emulated device option `{key}={value}`: `{value}` is not a valid number"
        ))
    })
}

fn parse_flag(key: &str, value: &str) -> Result<bool> {
    match value {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err(Error::Config(format!(
            "emulated device option `{key}={value}`: expected on or off"
        ))),
    }
}

fn positive(key: &str, value: f64, allow_zero: bool) -> Result<f64> {
    if value.is_finite() && (value > 0.0 || (allow_zero && value == 0.0)) {
        Ok(value)
    } else {
        Err(Error::Config(format!(
            "emulated device option `{key}` must be {} (got {value})",
            if allow_zero {
                "zero or positive"
            } else {
                "positive"
            }
        )))
    }
}

/// A number in `min..=max`.
fn in_range(key: &str, value: &str, min: f64, max: f64) -> Result<f64> {
    let number: f64 = parse_num(key, value)?;
    if (min..=max).contains(&number) {
        Ok(number)
    } else {
        Err(Error::Config(format!(
            "emulated device option `{key}` must be in {min}..={max} (got {number})"
        )))
    }
}

/// A share in 0..=1.
fn parse_share(key: &str, value: &str) -> Result<f64> {
    let share: f64 = parse_num(key, value)?;
    if (0.0..=1.0).contains(&share) {
        Ok(share)
    } else {
        Err(Error::Config(format!(
            "emulated device option `{key}` must be in 0..=1 (got {share})"
        )))
    }
}

/// Refuses an option about a volatile write cache's flush (`what`) on a device without one: a
/// `plp=on` drive or a device that is not a flash SSD.
fn needs_volatile_flash(p: &Profile, name: &str, what: &str) -> Result<()> {
    if p.kind == Kind::Ssd && !p.plp {
        return Ok(());
    }
    Err(Error::Config(format!(
        "emulated device {what}: it needs a flash profile with plp=off (emu:{name} is {})",
        if p.kind == Kind::Ssd {
            "plp=on"
        } else {
            "not a flash SSD"
        }
    )))
}

/// `flush_us`: `model` (`None`) or a latency in microseconds.
fn parse_flush_us(value: &str) -> Result<Option<f64>> {
    if value == FLUSH_MODEL {
        return Ok(None);
    }
    let us: f64 = value.parse().map_err(|_| {
        Error::Config(format!(
            "emulated device option `flush_us={value}`: expected `{FLUSH_MODEL}` or a latency \
             in microseconds"
        ))
    })?;
    positive("flush_us", us, true).map(Some)
}

/// Applies one `key=value` override.
///
/// # Errors
/// [`Error::Config`] for an unknown key (listing the valid ones) or a bad value.
pub fn apply_override(p: &mut Profile, key: &str, value: &str) -> Result<()> {
    let bounded = |v: &str, max: u32| -> Result<u32> {
        let n: u32 = parse_num(key, v)?;
        if n == 0 || n > max {
            return Err(Error::Config(format!(
                "emulated device option `{key}` must be in 1..={max} (got {n})"
            )));
        }
        Ok(n)
    };
    let count = |v: &str| bounded(v, 4096);
    // Buffers: up to 2^20 pages (16 GiB of 16 KiB pages).
    let buffer = |v: &str| bounded(v, 1 << 20);
    let time = |v: &str| -> Result<f64> { positive(key, parse_num(key, v)?, true) };
    match key {
        "channels" => p.channels = count(value)?,
        "ways" => p.ways = count(value)?,
        "t_read_us" => p.t_read_us = time(value)?,
        "t_prog_us" => p.t_prog_us = time(value)?,
        "t_erase_us" => p.t_erase_us = time(value)?,
        "t_suspend_us" => p.t_suspend_us = time(value)?,
        "suspend" => p.suspend = parse_flag(key, value)?,
        "fw_us" => p.fw_us = time(value)?,
        "fw_write_us" => p.fw_write_us = time(value)?,
        "fw_cores" => p.fw_cores = count(value)?,
        "channel_mb_s" => p.channel_mb_s = positive(key, parse_num(key, value)?, false)?,
        "link_mb_s" => p.link_mb_s = positive(key, parse_num(key, value)?, false)?,
        "buffer" => {
            p.buffer_pages = if value == "0" { 0 } else { buffer(value)? };
        }
        "rbuf" => p.rbuf = parse_flag(key, value)?,
        "rbuf_pages" => p.rbuf_pages = buffer(value)?,
        "plp" => p.plp = parse_flag(key, value)?,
        "slc" => p.slc = parse_share(key, value)?,
        "t_slc_prog_us" => p.t_slc_prog_us = time(value)?,
        "flush_commit_us" => p.flush_commit_us = time(value)?,
        "flush_us" => p.flush_us = parse_flush_us(value)?,
        "flush" => p.flush = Flush::parse(value)?,
        "writeback" => p.writeback = Writeback::parse(value)?,
        "pack" => p.pack = parse_flag(key, value)?,
        "op" => p.op = in_range(key, value, 0.02, 16.0)?,
        "fill" => p.fill = in_range(key, value, 0.0, 1.0)?,
        "precondition" => p.precondition = Precondition::parse(value)?,
        "age" => p.age = parse_flag(key, value)?,
        "pages_per_block" => p.pages_per_block = buffer(value)?,
        "gc_defer_blocks" => {
            p.gc_defer_blocks = if value == "0" { 0 } else { count(value)? };
        }
        "time_scale" => {
            let scale: f64 = parse_num(key, value)?;
            if !(scale.is_finite() && (0.001..=1.0e9).contains(&scale)) {
                return Err(Error::Config(format!(
                    "emulated device option `time_scale` must be in 0.001..=1e9 (got {scale})"
                )));
            }
            p.time_scale = scale;
        }
        "seed" => p.seed = parse_num(key, value)?,
        "ncq" => p.ncq = count(value)?.min(32),
        "queue_depth" => p.queue_depth = if value == "0" { 0 } else { count(value)? },
        "net_us" => p.net_us = time(value)?,
        "iops_limit" => p.iops_limit = time(value)?,
        "replicas" => p.replicas = bounded(value, 2)?,
        "host_read_us" => p.host_read_us = time(value)?,
        "host_write_us" => p.host_write_us = time(value)?,
        "mb_s_limit" => p.mb_s_limit = time(value)?,
        "size_gib" => p.size_gib = in_range(key, value, 1.0, 65_536.0)?,
        "alpha" => p.alpha = in_range(key, value, 1.0, 64.0)?,
        "k_w" => p.k_w = count(value)?,
        "k_r" => p.k_r = count(value)?,
        "stroke" => {
            let stroke: f64 = parse_num(key, value)?;
            if !(stroke > 0.0 && stroke <= 1.0) {
                return Err(Error::Config(format!(
                    "emulated device option `stroke` must be in (0, 1] (got {stroke})"
                )));
            }
            p.stroke = stroke;
        }
        other => {
            return Err(Error::Config(format!(
                "unknown emulated device option `{other}`; valid options: {}",
                OPTION_NAMES.join(", ")
            )));
        }
    }
    Ok(())
}

/// The named profile with `overrides` applied in order.
///
/// # Errors
/// [`Error::Config`] for an unknown profile or option, or a bad value.
pub fn resolve(name: &str, overrides: &[(String, String)]) -> Result<Profile> {
    let mut p = profile(name)?;
    for (key, value) in overrides {
        apply_override(&mut p, key, value)?;
    }
    let given = |key: &str| overrides.iter().any(|(k, _)| k == key);
    let only_for = |keys: &[&str], applies: bool, what: &str| -> Result<()> {
        match keys.iter().find(|key| given(key)) {
            Some(key) if !applies => Err(Error::Config(format!(
                "emulated device option `{key}` applies to {what}; emu:{name} is not one"
            ))),
            _ => Ok(()),
        }
    };
    only_for(
        &["alpha", "k_w", "k_r"],
        p.kind == Kind::Ideal,
        "the ideal device (emu:ideal)",
    )?;
    only_for(
        &["size_gib"],
        p.sizing != Sizing::Fixed,
        "the sized cloud volumes (emu:gcp-pd-ssd, emu:azure-premium)",
    )?;
    if let Some((iops, mb_s, _)) = volume_caps(p.sizing, p.size_gib) {
        if !given("iops_limit") {
            p.iops_limit = iops;
        }
        if !given("mb_s_limit") {
            p.mb_s_limit = mb_s;
        }
    }
    if p.flush_us.is_some() {
        needs_volatile_flash(
            &p,
            name,
            "option `flush_us` prices the flush of a volatile write cache",
        )?;
    }
    if p.flush == Flush::Noop {
        needs_volatile_flash(
            &p,
            name,
            "option `flush=noop` describes the firmware of a volatile write cache",
        )?;
    }
    if p.flush == Flush::Noop && p.flush_us.is_some() {
        return Err(Error::Config(
            "emulated device options `flush_us` and `flush=noop` contradict each other: \
             `flush_us` prices a flush that drains, `noop` one that does nothing"
                .to_string(),
        ));
    }
    if p.writeback == Writeback::Lazy && (p.kind != Kind::Ssd || p.buffer_pages == 0) {
        return Err(Error::Config(format!(
            "emulated device option `writeback=lazy` describes a flash SSD's write buffer; \
             emu:{name} {}",
            if p.kind == Kind::Ssd {
                "has none (buffer=0)"
            } else {
                "is not a flash SSD"
            }
        )));
    }
    if p.kind != Kind::Ssd && (p.host_read_us > 0.0 || p.host_write_us > 0.0) {
        return Err(Error::Config(format!(
            "emulated device options `host_read_us` / `host_write_us` model the host I/O stack \
             in front of a flash SSD; emu:{name} is not a flash SSD"
        )));
    }
    if p.dies() > 4096 {
        return Err(Error::Config(format!(
            "emulated device `{name}`: {} dies is more than the 4096 supported",
            p.dies()
        )));
    }
    Ok(p)
}
