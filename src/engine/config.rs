//! Buffer-pool configuration: the scheme (a composition of the design space, `compose.rs`) and
//! every knob, from code or a TOML file, with each key's meaning, default and range listed in
//! [`PoolConfig::KEYS`] (what `flashbuf config --default` prints; a test checks that the
//! table and the TOML parser accept the same keys).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::engine::compose::{Composition, HostEngine};
use crate::error::{Error, Result};

pub use crate::engine::compose::Scheme;
pub use crate::policy::miss::FreeBlockLoop;
pub use crate::policy::miss::raw::EmptyFreeList;

/// Torn-page protection (docs/architecture.md: a host-engine choice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TornPageProtection {
    /// InnoDB's doublewrite buffer: every page is written to the doublewrite area and synced
    /// before it is written in place; recovery restores a torn page from its copy.
    Doublewrite,
    /// MySQL 8.0's doublewrite (WL#5655): the same guarantee, with the area cut into segments
    /// of `doublewrite_pages` pages that batches take one each, so batches of different
    /// threads write and sync their copies in parallel (`engine::innodb::doublewrite8`).
    Doublewrite8,
    /// PostgreSQL's `full_page_writes`: the first change to a page after it was last clean logs
    /// the page's image; recovery restores a torn page from it.
    PageImages,
    /// None (a torn page is unrecoverable).
    None,
}

impl TornPageProtection {
    /// The name in configs.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TornPageProtection::Doublewrite => "doublewrite",
            TornPageProtection::Doublewrite8 => "doublewrite8",
            TornPageProtection::PageImages => "page-images",
            TornPageProtection::None => "none",
        }
    }
}

/// InnoDB's `innodb_flush_method` as it concerns data-file syncs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlushMethod {
    /// `O_DIRECT`: fsync the data file after each batch and each single-page flush.
    ODirect,
    /// `O_DIRECT_NO_FSYNC`: no fsync after writes (only checkpoints sync).
    ODirectNoFsync,
}

/// Every knob of the pool. Defaults are InnoDB's (MySQL 5.7) unless the scheme's preset says
/// otherwise; see [`PoolConfig::for_scheme`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[allow(clippy::struct_excessive_bools)] // independent on/off knobs, as InnoDB's
pub struct PoolConfig {
    /// Number of frames (pages the pool holds).
    pub frames: usize,
    /// The scheme: a preset name or a composition (`flashbuf schemes`).
    pub scheme: Composition,
    /// `innodb_buffer_pool_instances`: 0 = the LRU-C paper's 8 ([`PAPER_INSTANCES`]), fewer
    /// when an instance would hold under [`MIN_AUTO_INSTANCE_FRAMES`] frames.
    pub instances: usize,
    /// Page-cleaner threads that serve the instances (capped at `instances`). MySQL 5.6.26, the
    /// host of the papers' prototypes, has one page-cleaner thread for every instance (5.7's
    /// `innodb_page_cleaners` made it configurable): 1.
    pub page_cleaners: usize,
    /// The page cleaner's order within a round. `false` (MySQL 5.6.26, the papers' host): the
    /// LRU part of every instance, then the flush-rate plan, then the flush-list part. `true`
    /// (MySQL 5.7's coordinator, `pc_request` / `pc_flush_slot`): the plan first, then each
    /// instance's LRU part followed at once by its own flush-list part, so a long LRU part of
    /// one instance (LRU-C's whole dirty region) does not hold back the flush list.
    pub cleaner_plans_first: bool,
    /// `innodb_lru_scan_depth` per instance: pages scanned from the LRU tail per miss (step 2)
    /// and per cleaner round; the fixed batch of basic LRU-C; 0 = scaled to the instance.
    pub lru_scan_depth: usize,
    /// `innodb_old_blocks_pct` (5..=95).
    pub old_blocks_pct: usize,
    /// `innodb_old_blocks_time` in device-time milliseconds.
    pub old_blocks_time_ms: u64,
    /// `innodb_io_capacity`: pages per second the cleaner aims at.
    pub io_capacity: u64,
    /// `innodb_io_capacity_max`.
    pub io_capacity_max: u64,
    /// `innodb_max_dirty_pages_pct`.
    pub max_dirty_pages_pct: f64,
    /// `innodb_max_dirty_pages_pct_lwm` (0 disables the low-water mark).
    pub max_dirty_pages_pct_lwm: f64,
    /// `innodb_adaptive_flushing_lwm` in % of log capacity.
    pub adaptive_flushing_lwm: f64,
    /// `innodb_flush_neighbors`: also write dirty pages of the same 64-page extent.
    pub flush_neighbors: bool,
    /// The InnoDB-emulated CF-LRU's scan depth in pages (0 = a third of the instance).
    pub cflru_window: usize,
    /// The CFLRU replacement order's clean-first window in % of the instance (1..=100).
    pub cflru_window_pct: usize,
    /// WAR: TWB slots per instance (0 = 4 x `lru_scan_depth`, the prototype's).
    pub twb_slots: usize,
    /// WAR: pages copied into the TWB per read stall (0 = `lru_scan_depth`, the prototype's).
    pub war_copy_batch: usize,
    /// With the doublewrite: whether background batches go through it too (InnoDB: yes). Off
    /// keeps it for single-page flushes only (the drill-down of issue 9 separates the two).
    pub doublewrite_batches: bool,
    /// With `doublewrite8`: pages per doublewrite segment (`innodb_doublewrite_pages`); 0 = 16.
    /// A power of two up to 32.
    pub doublewrite_pages: usize,
    /// ACE: dirty pages written concurrently (`n_w`; 0 = the device's write concurrency `k_w`).
    pub ace_n_w: usize,
    /// Cleaner period in device-time milliseconds (InnoDB: 1000), before
    /// `time_constant_scale`.
    pub cleaner_period_ms: u64,
    /// Factor on the InnoDB family's background time constants (the page cleaner's and LRU-C
    /// flusher's period, with the per-round page budgets of `io_capacity`, and
    /// `old_blocks_time_ms`): 0 = automatic, the instance's frames over the LRU-C paper's
    /// 81,920 (at most 1; [`auto_time_constant_scale`]); 1 = InnoDB's own constants.
    pub time_constant_scale: f64,
    /// PostgreSQL: `bgwriter_delay` in device-time milliseconds.
    pub bgwriter_delay_ms: u64,
    /// PostgreSQL: `bgwriter_lru_maxpages`.
    pub bgwriter_lru_maxpages: usize,
    /// PostgreSQL: `bgwriter_lru_multiplier`.
    pub bgwriter_lru_multiplier: f64,
    /// PostgreSQL: `checkpoint_timeout` in device-time milliseconds.
    pub checkpoint_timeout_ms: u64,
    /// PostgreSQL: `checkpoint_completion_target` (0..=1).
    pub checkpoint_completion_target: f64,
    /// Torn-page protection (`doublewrite`, `doublewrite8`, `page-images`, `none`; default by
    /// host engine).
    pub torn_page_protection: Option<TornPageProtection>,
    /// `innodb_flush_method`: `o_direct` or `o_direct_no_fsync`.
    pub flush_method: FlushMethod,
    /// Largest write submitted at once (the bounded burst): 0 = the doublewrite batch (120)
    /// with either doublewrite, else 1000 (the LRU-C prototype's chunk).
    pub write_batch_pages: usize,
    /// Sequential prefetcher: misses in a row that start prefetching.
    pub prefetch_trigger: usize,
    /// Sequential read-ahead: pages read ahead per prefetch (ACE's `n_e`; 0 = the device's
    /// write concurrency `k_w`, as the ACE paper chose).
    pub prefetch_pages: usize,
    /// RAW miss path on an empty free list: `legacy` (single-page flush) or `backoff`
    /// (Percona's: wait for the cleaner, never flush).
    pub empty_free_list: EmptyFreeList,
    /// The InnoDB miss loop (`buf_LRU_get_free_block`) of MySQL `5.6` (5.6.26, the papers'
    /// host: a thread that finds the free list empty waits for the page cleaner's running LRU
    /// batch, skips its tail scan while `try_LRU_scan` is clear, sleeps 100 ms from its third
    /// iteration, and puts the frame of its single-page flush on the free list for any thread to
    /// take; the page cleaner writes the LRU tail in batches of 100) or `5.7` (flashbuf's
    /// earlier loop: no batch wait, 10 ms sleeps, the flushed frame to the flushing thread).
    /// RAW, WAR and RW miss paths.
    pub free_block_loop: FreeBlockLoop,
    /// The emulated host's CPU under the list mutexes: device-time nanoseconds a scan of a
    /// replacement list holds that list's mutex for each page it inspects (the misses' and the
    /// cleaners' LRU-tail scans, LRU-C's pointer and dirty region, WAR's copy, RW's and
    /// PostgreSQL's victim searches). 0 = only this host's own cost, which on a shrunk pool and
    /// a scaled clock is far below the paper's (docs/regime.md, "The LRU mutex's hold time").
    pub list_scan_ns: f64,
    /// Verify page checksums on read.
    pub verify_checksums: bool,
    /// Ask the OS for transparent huge pages for the frames' memory (`madvise(MADV_HUGEPAGE)`,
    /// Linux): fewer TLB misses on a large pool (`docs/performance.md`, "Huge pages for the
    /// frames"); false leaves the kernel's default. InnoDB's `large_pages` plays this part.
    #[serde(default = "default_huge_pages")]
    pub huge_pages: bool,
    /// Run the background cleaner (off only in model tests).
    pub background: bool,
}

fn default_huge_pages() -> bool {
    true
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig::for_scheme(Scheme::Vanilla, 1024)
    }
}

/// Frames of one buffer-pool instance in the LRU-C paper's TPC-C setup: a 10 GB pool (10% of
/// 100 GB, 16 KiB pages: 655,360 frames) in 8 instances (LRU-C §5.1 and §5.2.5). The reference
/// of every scaled default below (`docs/regime.md`).
pub const PAPER_INSTANCE_FRAMES: usize = 81_920;

/// Instances of the LRU-C paper's pool (LRU-C §5.2.5: "the number of concurrent threads is
/// identical to that of buffer pool instances", eight).
pub const PAPER_INSTANCES: usize = 8;

/// Fewest frames an automatically sized instance holds.
pub const MIN_AUTO_INSTANCE_FRAMES: usize = 1024;

/// Shortest background period the automatic time-constant scale gives, device-time ms.
pub const MIN_SCALED_PERIOD_MS: u64 = 5;

/// InnoDB's `innodb_lru_scan_depth` default (1024) scaled to the instance: it is both the
/// free-list target of the LRU flush and the per-miss scan, and the paper's instances hold
/// 81,920 frames ([`PAPER_INSTANCE_FRAMES`]), where 1024 is 1.25%. A smaller instance keeps that
/// share: `frames * 1024 / 81,920` (frames / 80), between 16 and 1024.
pub fn default_scan_depth(frames: usize) -> usize {
    (frames * 1024 / PAPER_INSTANCE_FRAMES).clamp(16, 1024)
}

/// The automatic background time-constant scale of an instance of `instance_frames` frames:
/// its size over the paper's instance, at most 1. A pool k times smaller than the paper's, on
/// the same device, turns over k times faster (the miss rate is set by the device, not the pool),
/// so its cleaner must run k times as often with a k-times-smaller scan for the cleaner's period
/// to keep its ratio to the pool's turnover time (`docs/regime.md`).
#[must_use]
pub fn auto_time_constant_scale(instance_frames: usize) -> f64 {
    (instance_frames as f64 / PAPER_INSTANCE_FRAMES as f64).min(1.0)
}

/// The largest `list_scan_ns`: a millisecond per page inspected.
pub const MAX_LIST_SCAN_NS: f64 = 1_000_000.0;

/// The fewest frames a pool takes (and each of its instances).
pub const MIN_FRAMES: usize = 16;

/// One pool-config key as `flashbuf config --default` lists it: its TOML name, meaning and valid
/// range (the default comes from the scheme's preset, [`PoolConfig::for_scheme`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigKey {
    /// The TOML key (the field name).
    pub name: &'static str,
    /// What it sets, in one line.
    pub meaning: &'static str,
    /// Valid values, as [`PoolConfig::validate`] checks them.
    pub range: &'static str,
}

const fn key(name: &'static str, meaning: &'static str, range: &'static str) -> ConfigKey {
    ConfigKey {
        name,
        meaning,
        range,
    }
}

impl PoolConfig {
    /// Every key a pool config file may set (all fields but `frames` and `scheme`, which the
    /// command line sets), in the struct's order. `tests/suite/listings_match_parsers.rs` checks that
    /// this table and the parser ([`PoolConfig::from_toml`]) accept the same keys.
    pub const KEYS: &'static [ConfigKey] = &[
        key(
            "instances",
            "innodb_buffer_pool_instances; 0 = the LRU-C paper's 8, fewer so each holds 1,024 frames or more",
            "0..=64",
        ),
        key(
            "page_cleaners",
            "page-cleaner threads serving the instances (MySQL 5.6, the papers' host: 1; 5.7: innodb_page_cleaners)",
            "1..=64",
        ),
        key(
            "cleaner_plans_first",
            "the page cleaner's round order: false = MySQL 5.6 (every instance's LRU part, then the flush-rate plan and the flush list); true = MySQL 5.7 (plan first, then each instance's LRU part and its flush-list part together)",
            "true | false",
        ),
        key(
            "lru_scan_depth",
            "innodb_lru_scan_depth per instance: pages scanned per miss and cleaner round; 0 = instance frames/80 in 16..=1024 (1,024 on the paper's 81,920-frame instance)",
            ">= 0",
        ),
        key(
            "old_blocks_pct",
            "innodb_old_blocks_pct: share of the LRU list that is the old sublist",
            "5..=95",
        ),
        key(
            "old_blocks_time_ms",
            "innodb_old_blocks_time: ms (device time) a page stays old before a hit makes it young",
            ">= 0",
        ),
        key(
            "io_capacity",
            "innodb_io_capacity: pages per second the cleaner aims at",
            ">= 1",
        ),
        key(
            "io_capacity_max",
            "innodb_io_capacity_max: the cleaner's ceiling, pages per second",
            ">= io_capacity",
        ),
        key(
            "max_dirty_pages_pct",
            "innodb_max_dirty_pages_pct: dirty share above which the cleaner flushes at full rate",
            "0..=100",
        ),
        key(
            "max_dirty_pages_pct_lwm",
            "innodb_max_dirty_pages_pct_lwm: dirty share where pre-flushing starts; 0 disables",
            "0..=100",
        ),
        key(
            "adaptive_flushing_lwm",
            "innodb_adaptive_flushing_lwm: % of log capacity where adaptive flushing starts",
            "0..=100",
        ),
        key(
            "flush_neighbors",
            "innodb_flush_neighbors: also write dirty pages of the same 64-page extent",
            "true | false",
        ),
        key(
            "cflru_window",
            "InnoDB-emulated CF-LRU (scheme cflru): scan depth in pages; 0 = a third of the instance",
            ">= 0",
        ),
        key(
            "cflru_window_pct",
            "CFLRU replacement order (part cflru): clean-first window in % of the instance",
            "1..=100",
        ),
        key(
            "twb_slots",
            "WAR: temporary-write-buffer slots per instance; 0 = 4 x lru_scan_depth",
            ">= 0",
        ),
        key(
            "war_copy_batch",
            "WAR: pages copied into the TWB per read stall; 0 = lru_scan_depth",
            ">= 0",
        ),
        key(
            "doublewrite_batches",
            "with the doublewrite: background batches go through it too (InnoDB: yes)",
            "true | false",
        ),
        key(
            "doublewrite_pages",
            "with doublewrite8: pages per doublewrite segment (innodb_doublewrite_pages); 0 = 16",
            "0 | 1 | 2 | 4 | 8 | 16 | 32",
        ),
        key(
            "ace_n_w",
            "ACE: dirty pages written concurrently (n_w); 0 = the device's write concurrency k_w",
            ">= 0",
        ),
        key(
            "cleaner_period_ms",
            "InnoDB page cleaner period, ms of device time (before time_constant_scale)",
            ">= 1",
        ),
        key(
            "time_constant_scale",
            "factor on cleaner_period_ms, io_capacity per round and old_blocks_time_ms; 0 = instance frames / 81,920 (the LRU-C paper's instance), at most 1",
            "0..=1",
        ),
        key(
            "bgwriter_delay_ms",
            "PostgreSQL bgwriter_delay, ms of device time",
            ">= 1",
        ),
        key(
            "bgwriter_lru_maxpages",
            "PostgreSQL bgwriter_lru_maxpages: pages per bgwriter round at most",
            ">= 0",
        ),
        key(
            "bgwriter_lru_multiplier",
            "PostgreSQL bgwriter_lru_multiplier: pages cleaned per round vs recent allocations",
            ">= 0.0",
        ),
        key(
            "checkpoint_timeout_ms",
            "PostgreSQL checkpoint_timeout, ms of device time",
            ">= 0",
        ),
        key(
            "checkpoint_completion_target",
            "PostgreSQL checkpoint_completion_target: share of the interval a checkpoint spreads over",
            "0.0..=1.0",
        ),
        key(
            "torn_page_protection",
            "torn-page protection; unset = by host engine (InnoDB doublewrite, PostgreSQL page-images)",
            "\"doublewrite\" | \"doublewrite8\" | \"page-images\" | \"none\"",
        ),
        key(
            "flush_method",
            "innodb_flush_method for data-file syncs",
            "\"o_direct\" | \"o_direct_no_fsync\"",
        ),
        key(
            "write_batch_pages",
            "largest write submitted at once; 0 = 120 with either doublewrite, else 1000",
            ">= 0",
        ),
        key(
            "prefetch_trigger",
            "sequential prefetcher: misses in a row that start prefetching",
            ">= 1",
        ),
        key(
            "prefetch_pages",
            "sequential read-ahead: pages read per prefetch (ACE's n_e); 0 = the device's k_w",
            "0..=64",
        ),
        key(
            "empty_free_list",
            "RAW miss path on an empty free list: legacy (single-page flush) or backoff \
             (Percona: wait for the cleaner, never flush)",
            "\"legacy\" | \"backoff\" (backoff: RAW miss path only)",
        ),
        key(
            "free_block_loop",
            "the InnoDB miss loop (buf_LRU_get_free_block): 5.6 (the papers' host 5.6.26: wait for the cleaner's running LRU batch, try_LRU_scan, 100 ms sleeps, a single-page flush's frame to the free list, LRU batches of 100) or 5.7 (no batch wait, 10 ms sleeps, the flushed frame to its flusher); RAW, WAR and RW miss paths",
            "\"5.6\" | \"5.7\"",
        ),
        key(
            "list_scan_ns",
            "emulated host CPU: device-time ns a replacement-list scan holds the list's mutex per page it inspects (miss and cleaner tail scans, LRU-C's pointer and dirty region); 0 = none beyond this host's own",
            "0.0..=1000000.0",
        ),
        key(
            "verify_checksums",
            "verify page checksums on read",
            "true | false",
        ),
        key(
            "huge_pages",
            "ask the OS for transparent huge pages for the frames' memory (madvise MADV_HUGEPAGE, Linux): fewer TLB misses on a large pool; false leaves the kernel's default",
            "true | false",
        ),
        key(
            "background",
            "run the background cleaner (off only in model tests)",
            "true | false",
        ),
    ];

    /// The key named `name`, if a config file may set it.
    #[must_use]
    pub fn key(name: &str) -> Option<&'static ConfigKey> {
        PoolConfig::KEYS.iter().find(|key| key.name == name)
    }

    /// A pool config file setting every key of [`PoolConfig::KEYS`] to the preset's default for
    /// `scheme` with `frames` frames, each key preceded by comments with its meaning and range
    /// (what `flashbuf config --default` prints). [`PoolConfig::from_toml`] accepts it and
    /// returns the preset unchanged; a key without a value (`torn_page_protection` unset) is
    /// printed commented out.
    ///
    /// # Errors
    /// [`Error::Config`] if the preset cannot be serialized (not expected).
    pub fn default_toml(scheme: impl Into<Composition>, frames: usize) -> Result<String> {
        let scheme: Composition = scheme.into();
        let preset = PoolConfig::for_scheme(scheme.clone(), frames);
        let values = toml::Table::try_from(&preset)
            .map_err(|err| Error::Config(format!("pool config: {err}")))?;
        let mut out = format!(
            "# flashbuf pool configuration (`flashbuf bench --pool-config FILE`): the defaults of\n\
             # scheme `{scheme}` with {frames} frames. `scheme` and `frames` are set on the command\n\
             # line (--schemes, --buffer). Delete the keys you do not change: the preset of each\n\
             # scheme supplies them (io_capacity and flush_neighbors differ for vanilla-default).\n"
        );
        for key in PoolConfig::KEYS {
            let _ = write!(out, "\n# {}\n# range: {}\n", key.meaning, key.range);
            let _ = match values.get(key.name) {
                Some(value) => writeln!(out, "{} = {value}", key.name),
                None => writeln!(
                    out,
                    "# {} = \"{}\"",
                    key.name,
                    preset.effective_torn_page_protection().name()
                ),
            };
        }
        Ok(out)
    }

    /// The preset for `scheme` with `frames` frames.
    ///
    /// Vanilla (tuned): io_capacity raised to an SSD's ability (the LRU-C paper tunes
    /// `innodb_io_capacity`, `_max` and `flush_neighbors`), no neighbour flushing.
    /// Vanilla-default keeps InnoDB's defaults (200 / 2000, neighbours on).
    pub fn for_scheme(scheme: impl Into<Composition>, frames: usize) -> Self {
        let scheme: Composition = scheme.into();
        let tuned = !scheme.innodb_defaults;
        PoolConfig {
            frames,
            scheme,
            instances: 0,
            page_cleaners: 1,
            cleaner_plans_first: false,
            lru_scan_depth: 0,
            old_blocks_pct: 37,
            old_blocks_time_ms: 1000,
            io_capacity: if tuned { 10_000 } else { 200 },
            io_capacity_max: if tuned { 20_000 } else { 2000 },
            max_dirty_pages_pct: 75.0,
            max_dirty_pages_pct_lwm: 0.0,
            adaptive_flushing_lwm: 10.0,
            flush_neighbors: !tuned,
            cflru_window: 0,
            cflru_window_pct: 33,
            twb_slots: 0,
            war_copy_batch: 0,
            doublewrite_batches: true,
            doublewrite_pages: 0,
            ace_n_w: 0,
            cleaner_period_ms: 1000,
            time_constant_scale: 0.0,
            bgwriter_delay_ms: 200,
            bgwriter_lru_maxpages: 100,
            bgwriter_lru_multiplier: 2.0,
            checkpoint_timeout_ms: 300_000,
            checkpoint_completion_target: 0.9,
            torn_page_protection: None,
            flush_method: FlushMethod::ODirect,
            write_batch_pages: 0,
            prefetch_trigger: 4,
            prefetch_pages: 0,
            empty_free_list: EmptyFreeList::Legacy,
            free_block_loop: FreeBlockLoop::Mysql57,
            list_scan_ns: 0.0,
            verify_checksums: true,
            huge_pages: true,
            background: true,
        }
    }

    /// Reads overrides from TOML text on top of the scheme's preset.
    ///
    /// # Errors
    /// [`Error::Config`] for malformed TOML, unknown keys or bad values; a `scheme` or `frames`
    /// key (the command line sets those, so a config file cannot silently relabel a run).
    pub fn from_toml(scheme: impl Into<Composition>, frames: usize, text: &str) -> Result<Self> {
        let table: toml::Table = text
            .parse()
            .map_err(|err| Error::Config(format!("pool config: {err}")))?;
        for key in table.keys() {
            check_key(key)?;
        }
        let mut base = toml::Table::try_from(PoolConfig::for_scheme(scheme, frames))
            .map_err(|err| Error::Config(format!("pool config: {err}")))?;
        for (key, value) in table {
            base.insert(key, value);
        }
        let config: PoolConfig = base
            .try_into()
            .map_err(|err| Error::Config(format!("pool config: {err}")))?;
        config.validate()?;
        Ok(config)
    }

    /// The keys a config file may set, comma-separated (what an unknown key's error lists).
    #[must_use]
    pub fn key_names() -> String {
        PoolConfig::KEYS
            .iter()
            .map(|key| key.name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Instances as configured ([`PoolConfig::validate`] refuses more than the frames allow),
    /// or the LRU-C paper's 8 with at least [`MIN_AUTO_INSTANCE_FRAMES`] frames each; capped so
    /// each has at least 16 frames.
    pub fn effective_instances(&self, _page_size: usize) -> usize {
        let wanted = if self.instances == 0 {
            (self.frames / MIN_AUTO_INSTANCE_FRAMES).clamp(1, PAPER_INSTANCES)
        } else {
            self.instances
        };
        wanted.min(self.frames / 16).max(1)
    }

    /// The factor on background time constants for instances of `instance_frames` frames: as
    /// configured, or [`auto_time_constant_scale`].
    #[must_use]
    pub fn effective_time_constant_scale(&self, instance_frames: usize) -> f64 {
        if self.time_constant_scale > 0.0 {
            self.time_constant_scale
        } else {
            auto_time_constant_scale(instance_frames)
        }
    }

    /// The page cleaner's (and LRU-C flusher's) period in device-time ms for instances of
    /// `instance_frames` frames: `cleaner_period_ms` times the time-constant scale, at least
    /// [`MIN_SCALED_PERIOD_MS`] when scaled automatically (and at least 1).
    #[must_use]
    pub fn effective_cleaner_period_ms(&self, instance_frames: usize) -> u64 {
        let scale = self.effective_time_constant_scale(instance_frames);
        let scaled = (self.cleaner_period_ms as f64 * scale).round() as u64;
        if self.time_constant_scale > 0.0 {
            scaled.max(1)
        } else {
            scaled.max(MIN_SCALED_PERIOD_MS.min(self.cleaner_period_ms))
        }
    }

    /// `old_blocks_time_ms` times the time-constant scale.
    #[must_use]
    pub fn effective_old_blocks_time_ms(&self, instance_frames: usize) -> u64 {
        let scale = self.effective_time_constant_scale(instance_frames);
        (self.old_blocks_time_ms as f64 * scale).round() as u64
    }

    /// A per-second page rate (`io_capacity`, `io_capacity_max`) as pages per cleaner round:
    /// InnoDB's round is a second, so the budget scales with the period.
    #[must_use]
    pub fn per_round(&self, pages_per_second: u64, instance_frames: usize) -> u64 {
        let period = self.effective_cleaner_period_ms(instance_frames);
        (pages_per_second * period).div_ceil(1000).max(1)
    }

    /// `lru_scan_depth` per instance of `instance_frames` frames: as configured, or scaled to
    /// the instance; for the InnoDB-emulated CF-LRU, its window (the LRU-C paper sets
    /// `innodb_lru_scan_depth` to the window, which is both the miss's scan and the cleaner's
    /// free-list target).
    pub fn scan_depth(&self, instance_frames: usize) -> usize {
        if self.scheme.deep_scan {
            if self.cflru_window == 0 {
                (instance_frames / 3).max(1)
            } else {
                self.cflru_window
            }
        } else if self.lru_scan_depth == 0 {
            default_scan_depth(instance_frames)
        } else {
            self.lru_scan_depth
        }
    }

    /// Torn-page protection as configured or by host engine (InnoDB: doublewrite;
    /// PostgreSQL: page images).
    pub fn effective_torn_page_protection(&self) -> TornPageProtection {
        self.torn_page_protection
            .unwrap_or(match self.scheme.engine {
                HostEngine::Innodb => TornPageProtection::Doublewrite,
                HostEngine::Postgres => TornPageProtection::PageImages,
            })
    }

    /// Pages per `doublewrite8` segment (`doublewrite_pages`, 0 = the default).
    pub fn effective_doublewrite_pages(&self) -> usize {
        match self.doublewrite_pages {
            0 => crate::engine::innodb::doublewrite8::DEFAULT_SEGMENT_PAGES,
            n => n,
        }
    }

    /// The largest write submitted at once.
    pub fn effective_write_batch(&self) -> usize {
        match self.write_batch_pages {
            0 if matches!(
                self.effective_torn_page_protection(),
                TornPageProtection::Doublewrite | TornPageProtection::Doublewrite8
            ) =>
            {
                crate::engine::innodb::doublewrite::BATCH_SLOTS
            }
            0 => 1000,
            n => n,
        }
    }

    /// Checks `doublewrite_pages` (the `doublewrite8` segment size).
    fn validate_doublewrite_pages(&self) -> Result<()> {
        use crate::engine::innodb::doublewrite8::{Layout, MAX_SEGMENT_PAGES};
        if self.doublewrite_pages == 0 || Layout::valid_segment_pages(self.doublewrite_pages) {
            return Ok(());
        }
        Err(Error::Config(format!(
            "doublewrite_pages = {} is not 0 or a power of two up to {MAX_SEGMENT_PAGES} (the \
             doublewrite area's 96 batch pages are cut into segments of this size)",
            self.doublewrite_pages
        )))
    }

    /// Checks ranges and the composition's needs.
    ///
    /// # Errors
    /// [`Error::Config`] naming the bad knob.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(Error::Config(what));
        if self.frames < MIN_FRAMES {
            return bad(format!(
                "frames = {}: the pool needs at least {MIN_FRAMES} frames",
                self.frames
            ));
        }
        if self.frames >= u32::MAX as usize {
            return bad(format!("frames = {} is too many", self.frames));
        }
        if self.instances > 64 {
            return bad(format!("instances = {} is outside 0..=64", self.instances));
        }
        if self.instances > 1 && self.frames / self.instances < MIN_FRAMES {
            return bad(format!(
                "instances = {}: each instance needs at least {MIN_FRAMES} frames, and the pool \
                 has {} (at most {} instances); lower instances or give a larger buffer",
                self.instances,
                self.frames,
                (self.frames / MIN_FRAMES).max(1)
            ));
        }
        if self.page_cleaners == 0 || self.page_cleaners > 64 {
            return bad(format!(
                "page_cleaners = {} is outside 1..=64",
                self.page_cleaners
            ));
        }
        if !(5..=95).contains(&self.old_blocks_pct) {
            return bad(format!(
                "old_blocks_pct = {} is outside 5..=95",
                self.old_blocks_pct
            ));
        }
        if !(1..=100).contains(&self.cflru_window_pct) {
            return bad(format!(
                "cflru_window_pct = {} is outside 1..=100",
                self.cflru_window_pct
            ));
        }
        self.validate_doublewrite_pages()?;
        if self.io_capacity == 0 {
            return bad("io_capacity must be positive".into());
        }
        if self.io_capacity_max < self.io_capacity {
            return bad(format!(
                "io_capacity_max = {} is below io_capacity = {}",
                self.io_capacity_max, self.io_capacity
            ));
        }
        if !(0.0..=100.0).contains(&self.max_dirty_pages_pct)
            || !(0.0..=100.0).contains(&self.max_dirty_pages_pct_lwm)
            || !(0.0..=100.0).contains(&self.adaptive_flushing_lwm)
        {
            return bad("percentages must lie in 0..=100".into());
        }
        if self.cleaner_period_ms == 0 || self.bgwriter_delay_ms == 0 {
            return bad("cleaner_period_ms and bgwriter_delay_ms must be positive".into());
        }
        if !(0.0..=1.0).contains(&self.time_constant_scale) {
            return bad(format!(
                "time_constant_scale = {} is outside 0..=1 (0 = automatic)",
                self.time_constant_scale
            ));
        }
        let multiplier_ok =
            self.bgwriter_lru_multiplier.is_finite() && self.bgwriter_lru_multiplier >= 0.0;
        if !((0.0..=1.0).contains(&self.checkpoint_completion_target) && multiplier_ok) {
            return bad(
                "checkpoint_completion_target must be in 0..=1 and bgwriter_lru_multiplier \
                 non-negative"
                    .into(),
            );
        }
        if self.empty_free_list == EmptyFreeList::Backoff
            && self.scheme.miss != crate::engine::compose::MissKind::Raw
        {
            return bad(format!(
                "empty_free_list = \"backoff\" is a setting of the RAW miss path; scheme `{}` \
                 has another",
                self.scheme
            ));
        }
        if !(0.0..=MAX_LIST_SCAN_NS).contains(&self.list_scan_ns) {
            return bad(format!(
                "list_scan_ns = {} is outside 0..={MAX_LIST_SCAN_NS} (device-time ns per page a \
                 list scan inspects)",
                self.list_scan_ns
            ));
        }
        if self.prefetch_pages > 64 || self.prefetch_trigger == 0 {
            return bad(format!(
                "prefetch_pages = {} must be at most 64 and prefetch_trigger positive",
                self.prefetch_pages
            ));
        }
        Ok(())
    }
}

/// Refuses a key a pool config file may not set: `scheme` and `frames` (the command line sets
/// them), and anything not in [`PoolConfig::KEYS`], listing the valid keys (and the nearest one
/// when the key looks like a typo of it).
fn check_key(key: &str) -> Result<()> {
    if key == "scheme" || key == "frames" {
        return Err(Error::Config(format!(
            "pool config: key `{key}` is set by the command line (--schemes, --buffer), not by \
             the config file; remove it"
        )));
    }
    if PoolConfig::key(key).is_some() {
        return Ok(());
    }
    let nearest = PoolConfig::KEYS
        .iter()
        .map(|known| (edit_distance(key, known.name), known.name))
        .filter(|&(distance, _)| distance <= 2)
        .min();
    let hint = nearest.map_or_else(String::new, |(_, name)| {
        format!(" (did you mean `{name}`?)")
    });
    Err(Error::Config(format!(
        "pool config: unknown key `{key}`{hint}; valid keys: {} (`flashbuf config --default` \
         prints each with its meaning and range)",
        PoolConfig::key_names()
    )))
}

/// Levenshtein distance of two short ASCII-ish strings (by chars).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_overrides_and_rejects_bad_input() {
        let config = PoolConfig::from_toml(Scheme::LruC, 4096, "lru_scan_depth = 256\n").unwrap();
        assert_eq!(config.lru_scan_depth, 256);
        assert_eq!(config.frames, 4096);
        assert!(PoolConfig::from_toml(Scheme::LruC, 4096, "no_such_knob = 1").is_err());
        assert!(PoolConfig::from_toml(Scheme::LruC, 4096, "old_blocks_pct = 99").is_err());
        assert!(PoolConfig::from_toml(Scheme::LruC, 4096, "lru_scan_depth = [").is_err());
        let relabel = PoolConfig::from_toml(Scheme::Vanilla, 4096, "scheme = \"war\"");
        assert!(
            matches!(relabel, Err(Error::Config(ref m)) if m.contains("command line")),
            "{relabel:?}"
        );
        assert!(PoolConfig::from_toml(Scheme::Vanilla, 4096, "frames = 16").is_err());
        let err = PoolConfig::from_toml(Scheme::Vanilla, 200, "instances = 64")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("instances = 64") && err.contains("at most 12"),
            "{err}"
        );
        assert!(PoolConfig::from_toml(Scheme::Vanilla, 256, "instances = 16").is_ok());
    }

    #[test]
    fn doublewrite8_is_selectable_by_key_and_its_segment_size_checked() {
        let config = PoolConfig::from_toml(
            Scheme::Vanilla,
            4096,
            "torn_page_protection = \"doublewrite8\"\ndoublewrite_pages = 4\n",
        )
        .unwrap();
        assert_eq!(
            config.effective_torn_page_protection(),
            TornPageProtection::Doublewrite8
        );
        assert_eq!(config.effective_doublewrite_pages(), 4);
        assert_eq!(config.effective_write_batch(), 120);
        let preset = PoolConfig::for_scheme(Scheme::Vanilla, 4096);
        assert_eq!(
            preset.effective_torn_page_protection(),
            TornPageProtection::Doublewrite,
            "the presets keep the 5.7 doublewrite"
        );
        assert_eq!(preset.effective_doublewrite_pages(), 16);
        for bad in [3, 64] {
            let err =
                PoolConfig::from_toml(Scheme::Vanilla, 4096, &format!("doublewrite_pages = {bad}"))
                    .unwrap_err()
                    .to_string();
            assert!(err.contains(&format!("doublewrite_pages = {bad}")), "{err}");
        }
    }

    #[test]
    fn an_unknown_key_lists_only_keys_a_file_may_set() {
        let err = PoolConfig::from_toml(Scheme::Vanilla, 4096, "frams = 10")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown key `frams`"), "{err}");
        let valid = err.split("valid keys: ").nth(1).unwrap_or_default();
        assert!(valid.contains("lru_scan_depth"), "{err}");
        for refused in ["`frames`", "`scheme`", " frames,", " scheme,"] {
            assert!(!valid.contains(refused), "lists {refused}: {err}");
        }
        let typo = PoolConfig::from_toml(Scheme::Vanilla, 4096, "lru_scan_dept = 10")
            .unwrap_err()
            .to_string();
        assert!(typo.contains("did you mean `lru_scan_depth`?"), "{typo}");
        assert_eq!(edit_distance("frams", "frames"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn instances_as_the_papers_pool_has_them() {
        let mut config = PoolConfig::for_scheme(Scheme::Vanilla, 65_536);
        config.instances = 0;
        assert_eq!(config.effective_instances(16 * 1024), 8);
        config.frames = 2_400;
        assert_eq!(
            config.effective_instances(16 * 1024),
            2,
            "1,024 frames or more each"
        );
        config.frames = 1_000;
        assert_eq!(config.effective_instances(16 * 1024), 1);
        config.instances = 8;
        config.frames = 40;
        assert_eq!(config.effective_instances(4096), 2);
    }

    #[test]
    fn time_constants_scale_with_the_instance() {
        let mut config = PoolConfig::for_scheme(Scheme::Vanilla, 8 * 2_925);
        let instance = 2_925;
        // 2,925 / 81,920 of the paper's instance: a 36 ms period, depth 36, 357 pages of
        // io_capacity (10,000 a second) per round.
        assert_eq!(config.effective_cleaner_period_ms(instance), 36);
        assert_eq!(config.scan_depth(instance), 36);
        assert_eq!(config.per_round(config.io_capacity, instance), 360);
        assert_eq!(config.effective_old_blocks_time_ms(instance), 36);
        // The paper's instance and larger: InnoDB's own constants.
        assert_eq!(config.effective_cleaner_period_ms(81_920), 1000);
        assert_eq!(config.effective_cleaner_period_ms(200_000), 1000);
        assert_eq!(config.scan_depth(81_920), 1024);
        // Tiny instances keep a floor of 5 ms.
        assert_eq!(config.effective_cleaner_period_ms(64), MIN_SCALED_PERIOD_MS);
        // An explicit scale of 1 keeps InnoDB's constants at any size.
        config.time_constant_scale = 1.0;
        assert_eq!(config.effective_cleaner_period_ms(instance), 1000);
        assert_eq!(config.per_round(config.io_capacity, instance), 10_000);
        config.time_constant_scale = 1.5;
        assert!(config.validate().is_err());
    }
}
