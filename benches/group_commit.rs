//! Group-commit throughput of the redo log: each commit appends a ~100-byte record and calls
//! `flush_to` on its end; 1, 8 and 64 committing threads.
//!
//! ```text
//! cargo bench --bench group_commit
//! FLASHBUF_WAL_DEVICE=emu:ssd-a FLASHBUF_WAL_SYNC_US=0 cargo bench --bench group_commit
//! FLASHBUF_WAL_SYNC_US=0 cargo bench --bench group_commit -- file:/path/to/log
//! ```
//!
//! The device is the first non-flag argument, else `FLASHBUF_WAL_DEVICE` (a device string,
//! default `mem`). Other settings: `FLASHBUF_WAL_SYNC_US`
//! (extra sleep per device sync, default 80 us: a `mem` device has no sync cost of its own;
//! set 0 on real or emulated devices), `FLASHBUF_WAL_SECS` (seconds per thread count, default
//! 2), `FLASHBUF_WAL_THREADS` (comma-separated, default `1,8,64`). A background thread writes
//! a checkpoint at the current LSN every 50 ms so the ring never fills (as if the pool kept up).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use flashbuf::device::{
    Device, DeviceInfo, DeviceSpec, DeviceStats, IoRequest, IoTicket, OpenOptions, SharedDevice,
};
use flashbuf::error::DeviceError;
use flashbuf::wal::{LogRecord, Wal, WalConfig};

const PAGE: usize = 4096;
const LOG_SIZE: u64 = 64 << 20;

/// Adds a fixed sleep to every sync (simulated flush latency).
#[derive(Debug)]
struct SyncDelay {
    inner: SharedDevice,
    delay: Duration,
}

impl Device for SyncDelay {
    fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }
    unsafe fn submit(&self, batch: Vec<IoRequest>) -> Vec<IoTicket> {
        // SAFETY: forwarded from our caller.
        unsafe { self.inner.submit(batch) }
    }
    fn sync(&self) -> Result<(), DeviceError> {
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        self.inner.sync()
    }
    fn stats(&self) -> DeviceStats {
        self.inner.stats()
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn open_device(spec: &str, sync_us: u64) -> SharedDevice {
    let spec = DeviceSpec::parse(spec).unwrap_or_else(|e| panic!("{e}"));
    let options = OpenOptions {
        page_size: PAGE,
        pages: LOG_SIZE / PAGE as u64,
        create: true,
    };
    let device = flashbuf::device::open(&spec, &options).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(SyncDelay {
        inner: device,
        delay: Duration::from_micros(sync_us),
    })
}

struct Outcome {
    commits: u64,
    seconds: f64,
    mean_group: f64,
    syncs: u64,
    mean_latency_us: f64,
}

fn run(device: SharedDevice, threads: usize, seconds: f64) -> Outcome {
    let config = WalConfig {
        log_size: LOG_SIZE,
        page_size: PAGE,
        buffer_size: 1 << 20,
        full_timeout: Duration::from_secs(5),
    };
    let wal = Wal::create(device, config).unwrap_or_else(|e| panic!("{e}"));
    let stop = AtomicBool::new(false);
    let latency_ns = AtomicU64::new(0);
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                wal.write_checkpoint(wal.current_lsn())
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        });
        for thread in 0..threads as u64 {
            let (wal, stop, latency_ns) = (&wal, &stop, &latency_ns);
            scope.spawn(move || {
                let mut txn = thread << 40;
                while !stop.load(Ordering::Relaxed) {
                    let began = Instant::now();
                    // 24-byte frame + 24 bytes of PageRedo fields + 52 bytes = 100 bytes.
                    let record = LogRecord::PageRedo {
                        txn,
                        page: txn % 1000,
                        offset: 64,
                        bytes: vec![7; 52],
                    };
                    let end = wal.append(&[record]).unwrap_or_else(|e| panic!("{e}"));
                    wal.flush_to(end).unwrap_or_else(|e| panic!("{e}"));
                    latency_ns.fetch_add(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    txn += 1;
                }
            });
        }
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
    });
    let elapsed = start.elapsed().as_secs_f64();
    let stats = wal.stats();
    Outcome {
        commits: stats.commits,
        seconds: elapsed,
        mean_group: stats.mean_group_size,
        syncs: stats.flushes,
        mean_latency_us: latency_ns.load(Ordering::Relaxed) as f64
            / 1000.0
            / stats.commits.max(1) as f64,
    }
}

fn main() {
    // The first argument that is not a flag (cargo passes `--bench`) names the device too.
    let spec = std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with('-'))
        .unwrap_or_else(|| env_or("FLASHBUF_WAL_DEVICE", "mem"));
    let sync_us: u64 = env_or("FLASHBUF_WAL_SYNC_US", "80").parse().unwrap_or(80);
    let seconds: f64 = env_or("FLASHBUF_WAL_SECS", "2").parse().unwrap_or(2.0);
    let threads: Vec<usize> = env_or("FLASHBUF_WAL_THREADS", "1,8,64")
        .split(',')
        .filter_map(|t| t.trim().parse().ok())
        .collect();
    let scale = open_device(&spec, 0).info().time_scale;
    println!(
        "group commit: device {spec}, extra sync latency {sync_us} us, {seconds} s per point; \
         commits/s and latency in device time (time scale {scale})"
    );
    println!(
        "{:>8} {:>12} {:>10} {:>12} {:>16}",
        "threads", "commits/s", "syncs", "group size", "mean latency us"
    );
    for &n in &threads {
        let outcome = run(open_device(&spec, sync_us), n, seconds);
        println!(
            "{:>8} {:>12.0} {:>10} {:>12.2} {:>16.1}",
            n,
            outcome.commits as f64 / outcome.seconds * scale,
            outcome.syncs,
            outcome.mean_group,
            outcome.mean_latency_us / scale
        );
    }
}
