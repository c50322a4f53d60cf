//! The host engines (docs/architecture.md): schemes as compositions of the policies (`compose.rs`),
//! the pool configuration (`config.rs`), and building a pool from them. InnoDB's write path
//! (the doublewrite buffer) is in [`innodb`].
//!
//! [`open_pool`] is the one place that turns a [`PoolConfig`] into the core's [`Parts`]; the
//! core itself knows no policy.

pub mod compose;
pub mod config;
pub mod innodb;

use std::sync::Arc;

pub use compose::{
    Composition, HostEngine, MissKind, OrderKind, PrefetchKind, RateKind, Scheme, WritebackKind,
};
pub use config::{EmptyFreeList, FlushMethod, PoolConfig, TornPageProtection};

use crate::core::order::ReplacementOrder;
use crate::core::parts::{MissPath, Prefetcher, Writeback};
use crate::core::redo::{NullLog, RedoLog};
use crate::core::write_path::{DirectWrites, SyncGate, WritePath};
use crate::core::{BufferPool, CoreConfig, Parts};
use crate::device::SharedDevice;
use crate::error::{Error, Result};
use crate::policy::flushrate::adaptive::AdaptiveConfig;
use crate::policy::flushrate::fixed::MysqlFixed;
use crate::policy::flushrate::percona::Percona;
use crate::policy::flushrate::self_tuning::SelfTuning;
use crate::policy::miss::FreeBlockLoop;
use crate::policy::miss::ace::Ace;
use crate::policy::miss::fused_rw::FusedRw;
use crate::policy::miss::lru_c::LruCPointer;
use crate::policy::miss::pg::BackendWrite;
use crate::policy::miss::raw::Raw;
use crate::policy::miss::war::War;
use crate::policy::order::{Cflru, ClockSweep, Lru, LruWsr, MidpointLru};
use crate::policy::prefetch::{History, Sequential};
use crate::policy::writeback::innodb::{LruFlush, MYSQL56_LRU_CHUNK, PageCleaner};
use crate::policy::writeback::pg::{PgBackground, PgSettings};

/// ACE's `n_w` when neither the configuration nor the device says (`k_w` of ACE's PCIe SSD).
pub const DEFAULT_ACE_N_W: usize = 8;

/// The device's write concurrency `k_w` as ACE uses it: the device's own figure
/// ([`crate::device::DeviceInfo::write_concurrency`], from the emulated profile's ACE Table I
/// row), else [`DEFAULT_ACE_N_W`] (real devices: `flashbuf device probe` measures `k_w`; set
/// `ace_n_w` and `prefetch_pages` to it).
#[must_use]
pub fn device_k_w(info: &crate::device::DeviceInfo) -> usize {
    info.write_concurrency
        .filter(|&k_w| k_w > 0)
        .unwrap_or(DEFAULT_ACE_N_W)
}

/// `value`, or the device's `k_w` when `value` is 0 (ACE's `n_w` and `n_e` default to `k_w`).
fn or_device_k_w(value: usize, info: &crate::device::DeviceInfo) -> usize {
    if value == 0 { device_k_w(info) } else { value }
}

/// What the engine knows about where the pool writes.
#[derive(Debug, Clone)]
pub struct WriteTarget {
    /// The data pages the pool reads and writes (a region of the database's device, or a raw
    /// device for a bare pool).
    pub data: SharedDevice,
    /// The doublewrite area, when the database reserved one.
    pub doublewrite: Option<innodb::doublewrite::DoublewriteArea>,
}

/// Builds the write path for `config` over `target`.
///
/// # Errors
/// The doublewrite was asked for without an area to put it in.
pub fn build_write_path(config: &PoolConfig, target: &WriteTarget) -> Result<Arc<dyn WritePath>> {
    let fsync = config.flush_method == FlushMethod::ODirect;
    // One sync gate per file, as InnoDB's `fil_flush`: this one is the data file's; the
    // doublewrite area, a file of its own (the system tablespace), gets its own gate.
    let gate = Arc::new(SyncGate::new(Arc::clone(&target.data)));
    let protection = config
        .torn_page_protection
        .unwrap_or(TornPageProtection::None);
    Ok(match (protection, &target.doublewrite) {
        (TornPageProtection::Doublewrite, Some(area)) => Arc::new(
            innodb::doublewrite::Doublewrite::new(area.clone(), gate, fsync)
                .with_batches(config.doublewrite_batches, config.effective_write_batch()),
        ),
        (TornPageProtection::Doublewrite8, Some(area)) => Arc::new(
            innodb::doublewrite8::Doublewrite8::new(
                area.clone(),
                gate,
                fsync,
                config.effective_doublewrite_pages(),
            )
            .with_batches(config.doublewrite_batches, config.effective_write_batch()),
        ),
        (TornPageProtection::Doublewrite | TornPageProtection::Doublewrite8, None) => {
            return Err(Error::Config(format!(
                "torn_page_protection = \"{}\" needs a doublewrite area: open the pool \
                 through `Database` (a bare `BufferPool` over a device has none)",
                protection.name()
            )));
        }
        (TornPageProtection::PageImages | TornPageProtection::None, _) => Arc::new(
            DirectWrites::new(gate, fsync, config.effective_write_batch()),
        ),
    })
}

fn build_order(config: &PoolConfig, instance_frames: usize) -> Arc<dyn ReplacementOrder> {
    match config.scheme.order {
        OrderKind::LruMidpoint => Arc::new(MidpointLru {
            old_blocks_pct: config.old_blocks_pct,
            old_blocks_time_ms: config.effective_old_blocks_time_ms(instance_frames),
        }),
        OrderKind::Lru => Arc::new(Lru),
        OrderKind::Clock => Arc::new(ClockSweep),
        OrderKind::Cflru => Arc::new(Cflru {
            window_pct: config.cflru_window_pct,
        }),
        OrderKind::LruWsr => Arc::new(LruWsr),
    }
}

fn build_miss(
    config: &PoolConfig,
    instances: usize,
    instance_frames: usize,
    info: &crate::device::DeviceInfo,
) -> Arc<dyn MissPath> {
    let page_size = info.page_size;
    let scan_depth = config.scan_depth(instance_frames);
    match config.scheme.miss {
        MissKind::Raw => Arc::new(Raw {
            scan_depth,
            empty_free_list: if config.scheme.backoff {
                EmptyFreeList::Backoff
            } else {
                config.empty_free_list
            },
            host: config.free_block_loop,
        }),
        MissKind::LruC => Arc::new(LruCPointer::new(config.scheme.split_mutex)),
        MissKind::War => {
            // The prototype's sizes: a TWB of 4 x lru_scan_depth per instance, a stall copies
            // up to lru_scan_depth pages.
            let depth = config.scan_depth(instance_frames);
            let slots = if config.twb_slots == 0 {
                4 * depth
            } else {
                config.twb_slots
            };
            let copy = if config.war_copy_batch == 0 {
                depth
            } else {
                config.war_copy_batch
            };
            Arc::new(
                War::new(instances, slots, page_size, copy, scan_depth)
                    .with_host(config.free_block_loop),
            )
        }
        MissKind::Rw => Arc::new(FusedRw {
            scan_depth,
            unsynced_victim: config.scheme.rw_unsynced_victim,
            host: config.free_block_loop,
        }),
        MissKind::Pg => Arc::new(BackendWrite),
        MissKind::Ace => Arc::new(Ace::new(or_device_k_w(config.ace_n_w, info))),
    }
}

fn build_writeback(config: &PoolConfig, instance_frames: usize) -> Arc<dyn Writeback> {
    let scan_depth = config.scan_depth(instance_frames);
    let rate = || -> Box<dyn crate::policy::flushrate::FlushRate> {
        // Adaptive flushing budgets pages per round; InnoDB's round is a second.
        let adaptive = AdaptiveConfig {
            io_capacity: config.per_round(config.io_capacity, instance_frames),
            io_capacity_max: config.per_round(config.io_capacity_max, instance_frames),
            max_dirty_pages_pct: config.max_dirty_pages_pct,
            max_dirty_pages_pct_lwm: config.max_dirty_pages_pct_lwm,
            adaptive_flushing_lwm: config.adaptive_flushing_lwm,
        };
        let period = config.effective_cleaner_period_ms(instance_frames);
        match config.scheme.rate {
            RateKind::Fixed => Box::new(MysqlFixed::new(scan_depth, adaptive, period)),
            RateKind::Percona => Box::new(
                Percona::new(scan_depth, adaptive, period)
                    .with_time_scale(config.effective_time_constant_scale(instance_frames)),
            ),
            RateKind::SelfTuning => Box::new(SelfTuning::new(scan_depth, adaptive, period)),
        }
    };
    // MySQL 5.6.26 writes the LRU tail in chunks so that the misses its loop makes wait for a
    // running batch wait less; 5.7 neither waits nor chunks.
    let lru_chunk = match config.free_block_loop {
        FreeBlockLoop::Mysql56 => MYSQL56_LRU_CHUNK,
        FreeBlockLoop::Mysql57 => usize::MAX,
    };
    let cleaner = |lru| -> Arc<dyn Writeback> {
        Arc::new(
            PageCleaner::new(
                lru,
                rate(),
                config.page_cleaners,
                config.cleaner_plans_first,
                config.flush_neighbors,
            )
            .with_lru_chunk(lru_chunk),
        )
    };
    match config.scheme.writeback {
        WritebackKind::InnodbTail => cleaner(LruFlush::Tail),
        WritebackKind::LruCFixed => cleaner(LruFlush::DirtyRegion(Some(scan_depth))),
        WritebackKind::LruCDynamic => cleaner(LruFlush::DirtyRegion(None)),
        WritebackKind::Postgres => Arc::new(PgBackground::new(PgSettings {
            bgwriter_delay_ms: config.bgwriter_delay_ms,
            bgwriter_lru_maxpages: config.bgwriter_lru_maxpages,
            bgwriter_lru_multiplier: config.bgwriter_lru_multiplier,
            checkpoint_timeout_ms: config.checkpoint_timeout_ms,
            checkpoint_completion_target: config.checkpoint_completion_target,
        })),
    }
}

/// The read-ahead part, sized for a database of `db_pages` pages of `page_size` bytes.
fn build_prefetch(
    config: &PoolConfig,
    info: &crate::device::DeviceInfo,
) -> Option<Arc<dyn Prefetcher>> {
    let (db_pages, page_size) = (info.pages, info.page_size);
    match config.scheme.prefetch {
        PrefetchKind::None => None,
        PrefetchKind::Sequential => Some(Arc::new(Sequential::new(
            config.prefetch_trigger,
            or_device_k_w(config.prefetch_pages, info),
            crate::policy::prefetch::sequential::DEFAULT_ENTRIES,
        ))),
        PrefetchKind::History => Some(Arc::new(History::new(
            History::entries_for(db_pages, page_size),
            crate::policy::prefetch::history::DEFAULT_THRESHOLD,
        ))),
    }
}

/// Opens a pool for `config` writing to `target`, with `log` for the WAL rule.
///
/// # Errors
/// A bad configuration, a scheme the device cannot run (`rw` needs the fused command), or a
/// pool the device or memory cannot hold.
#[allow(clippy::needless_pass_by_value)] // the pool keeps the log; callers hand it over
pub fn open_pool(
    target: &WriteTarget,
    config: &PoolConfig,
    log: Arc<dyn RedoLog>,
) -> Result<BufferPool> {
    config.validate()?;
    config.scheme.validate()?;
    let info = target.data.info().clone();
    if config.scheme.miss == MissKind::Rw && !info.supports_fused_rw {
        return Err(Error::Config(format!(
            "scheme `{}` needs the fused read-write command, which device {} does not support \
             (use an emulated SSD, e.g. emu:ssd-a)",
            config.scheme, info.name
        )));
    }
    let instances = config.effective_instances(info.page_size);
    let instance_frames = config.frames / instances;
    let parts = Parts {
        order: build_order(config, instance_frames),
        miss: build_miss(config, instances, instance_frames, &info),
        writeback: build_writeback(config, instance_frames),
        prefetch: build_prefetch(config, &info),
        write_path: build_write_path(config, target)?,
    };
    let core_config = CoreConfig {
        frames: config.frames,
        instances,
        verify_checksums: config.verify_checksums,
        background: config.background,
        scheme: config.scheme.name.clone(),
        list_scan_ns: config.list_scan_ns,
        background_time_scale: config.effective_time_constant_scale(instance_frames),
        huge_pages: config.huge_pages,
    };
    BufferPool::with_parts(Arc::clone(&target.data), log, core_config, parts)
}

impl BufferPool {
    /// Opens a pool over `device` with no redo log (LSNs are counted, never logged) and no
    /// doublewrite area (a bare pool writes in place).
    ///
    /// # Errors
    /// As [`open_pool`].
    pub fn open(device: SharedDevice, config: PoolConfig) -> Result<Self> {
        Self::open_with_log(device, config, Arc::new(NullLog::default()))
    }

    /// Opens a bare pool whose page writes obey the WAL rule of `log`.
    ///
    /// # Errors
    /// As [`open_pool`].
    #[allow(clippy::needless_pass_by_value)] // the public API takes the config by value
    pub fn open_with_log(
        device: SharedDevice,
        config: PoolConfig,
        log: Arc<dyn RedoLog>,
    ) -> Result<Self> {
        let target = WriteTarget {
            data: device,
            doublewrite: None,
        };
        open_pool(&target, &config, log)
    }
}
