//! Helpers shared by the `wal_*` tests: RAM log devices, a sync-latency and failure shim, and
//! record generators.

#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{Device, DeviceInfo, DeviceStats, IoOp, IoRequest, IoTicket, SharedDevice};
use flashbuf::error::DeviceError;
use flashbuf::wal::{LogRecord, WalConfig};

pub const PAGE: usize = 4096;

/// A config for a log of `ring_pages` ring pages and a buffer of `buffer_pages` pages.
pub fn config(ring_pages: u64, buffer_pages: usize) -> WalConfig {
    WalConfig {
        log_size: (ring_pages + 2) * PAGE as u64,
        page_size: PAGE,
        buffer_size: buffer_pages * PAGE,
        full_timeout: Duration::from_millis(200),
    }
}

/// A RAM device big enough for `config`.
pub fn mem_for(config: &WalConfig) -> Arc<MemoryDevice> {
    Arc::new(MemoryDevice::new(PAGE, config.log_size / PAGE as u64).unwrap())
}

pub fn shared(device: &Arc<MemoryDevice>) -> SharedDevice {
    device.clone()
}

/// A deterministic record of roughly `size` payload bytes; `kind` picks the type.
pub fn record(kind: u8, id: u64, size: usize) -> LogRecord {
    let fill = |salt: u64| {
        (0..size)
            .map(|i| (id.wrapping_mul(31).wrapping_add(i as u64 * 7 + salt) % 251) as u8 | 1)
            .collect::<Vec<u8>>()
    };
    match kind % 4 {
        0 => LogRecord::PageRedo {
            txn: id,
            page: id * 3,
            offset: (id % 4000) as u32,
            bytes: fill(1),
        },
        1 => LogRecord::FullPageImage {
            txn: id,
            page: id * 5,
            image: fill(2),
        },
        2 => LogRecord::Commit { txn: id },
        _ => LogRecord::Checkpoint { redo_lsn: id },
    }
}

/// A wrapper that can sleep on sync and fail writes or syncs on demand.
#[derive(Debug)]
pub struct Shim {
    pub inner: Arc<MemoryDevice>,
    pub sync_delay: Duration,
    pub fail_sync: AtomicBool,
    pub fail_writes: AtomicBool,
    pub syncs: AtomicU64,
}

impl Shim {
    pub fn new(inner: Arc<MemoryDevice>, sync_delay: Duration) -> Arc<Self> {
        Arc::new(Shim {
            inner,
            sync_delay,
            fail_sync: AtomicBool::new(false),
            fail_writes: AtomicBool::new(false),
            syncs: AtomicU64::new(0),
        })
    }
}

impl Device for Shim {
    fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }

    unsafe fn submit(&self, batch: Vec<IoRequest>) -> Vec<IoTicket> {
        if self.fail_writes.load(Ordering::SeqCst) && batch.iter().any(|r| r.op == IoOp::Write) {
            return batch
                .iter()
                .map(|_| IoTicket::done(Err(DeviceError::Injected("write failed".into()))))
                .collect();
        }
        // SAFETY: forwarded from our caller.
        unsafe { self.inner.submit(batch) }
    }

    fn sync(&self) -> Result<(), DeviceError> {
        self.syncs.fetch_add(1, Ordering::SeqCst);
        if !self.sync_delay.is_zero() {
            std::thread::sleep(self.sync_delay);
        }
        if self.fail_sync.load(Ordering::SeqCst) {
            return Err(DeviceError::Injected("fsync failed".into()));
        }
        self.inner.sync()
    }

    fn stats(&self) -> DeviceStats {
        self.inner.stats()
    }
}

/// A copy of every page of `device`.
pub fn snapshot(device: &MemoryDevice) -> Vec<Vec<u8>> {
    let pages = device.info().pages;
    let mut buf = vec![0u8; PAGE];
    (0..pages)
        .map(|page| {
            device.store().read(page, &mut buf).unwrap();
            buf.clone()
        })
        .collect()
}

/// A RAM device holding `pages`.
pub fn device_from(pages: &[Vec<u8>]) -> Arc<MemoryDevice> {
    let device = Arc::new(MemoryDevice::new(PAGE, pages.len() as u64).unwrap());
    for (index, page) in pages.iter().enumerate() {
        device.store().write(index as u64, page).unwrap();
    }
    device
}

/// Flips bit `bit` of the byte at device byte offset `offset`.
pub fn flip(device: &MemoryDevice, offset: u64, bit: u8) {
    let page = offset / PAGE as u64;
    let mut buf = vec![0u8; PAGE];
    device.store().read(page, &mut buf).unwrap();
    buf[(offset % PAGE as u64) as usize] ^= 1 << bit;
    device.store().write(page, &buf).unwrap();
}

/// Device byte offset of `lsn` in a log with `ring_pages` ring pages.
pub fn device_offset(lsn: u64, ring_pages: u64) -> u64 {
    let page = lsn / PAGE as u64;
    (2 + page % ring_pages) * PAGE as u64 + lsn % PAGE as u64
}
