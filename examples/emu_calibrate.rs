//! Calibration of the emulated devices against LRU-C Table 1 (random 16 KiB IOPS at QD32).
//!
//! `cargo run --release --example emu_calibrate -- model [PROFILE...]`: the pure timing model in
//! a closed loop of 32 virtual clients (no sleeping, deterministic).
//! `cargo run --release --example emu_calibrate -- live [SECONDS] [PROFILE...]`: 32 real
//! threads doing submit + wait of one random page each against the live device at its default
//! time scale; IOPS are in device time (real IOPS x time_scale).
//! `... -- interference [PROFILE]`: S-Buf vs R-Buf read latency with 16 readers and 16 writers,
//! and fused RW vs write-then-read latency (model).
//! `... -- probe [PROFILE...]`: `device probe`'s default method on each profile's timing model
//! (virtual time, at the I/O size of the profile's paper), against the paper's figures: IOPS
//! at concurrency 32 for LRU-C Table 1, alpha / k_r / k_w for ACE Table I.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use flashbuf::device::emulated::profile::resolve;
use flashbuf::device::emulated::sim::{ClientKind, closed_loop};
use flashbuf::device::emulated::{self, Model};
use flashbuf::device::{AlignedBuf, OpenOptions};
use rand::{Rng, SeedableRng};

const TABLE1: &[(&str, f64, f64)] = &[
    ("ssd-a", 190_622.0, 33_866.0),
    ("ssd-b", 169_681.0, 33_811.0),
    ("ssd-c", 39_860.0, 3_830.0),
    ("ssd-d", 80_433.0, 12_536.0),
    ("hdd", 280.0, 216.0),
    ("openssd", 142_032.0, 16_355.0),
];

const PAGES: u64 = 65_536;

fn page_size_of(name: &str) -> usize {
    // The RW paper measured its OpenSSD with 4 KiB pages.
    if name == "openssd" { 4096 } else { 16 * 1024 }
}

fn pct(got: f64, want: f64) -> f64 {
    (got - want) / want * 100.0
}

/// Extra overrides from `EMU_OVERRIDES=key=value,key=value` (for tuning).
fn env_overrides() -> Vec<(String, String)> {
    std::env::var("EMU_OVERRIDES")
        .unwrap_or_default()
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn model_run(
    name: &str,
    overrides: &[(String, String)],
    clients: &[ClientKind],
    requests: u64,
) -> emulated::sim::SimResult {
    let mut all = env_overrides();
    all.extend_from_slice(overrides);
    let profile = resolve(name, &all).unwrap();
    let mut model = Model::new(&profile, page_size_of(name), PAGES).unwrap();
    closed_loop(&mut model, clients, PAGES, requests, 0, 7)
}

fn model_table(names: &[String]) {
    println!("device   read_iops  vs_table  write_iops  vs_table  read_lat_us write_lat_us  WA");
    for &(name, want_r, want_w) in TABLE1 {
        if !names.is_empty() && !names.iter().any(|n| n == name) {
            continue;
        }
        let requests = if name == "hdd" { 20_000 } else { 200_000 };
        let r = model_run(name, &[], &[ClientKind::Reader; 32], requests);
        let profile = resolve(name, &env_overrides()).unwrap();
        let mut model = Model::new(&profile, page_size_of(name), PAGES).unwrap();
        let before = model.flash_stats();
        let w = closed_loop(&mut model, &[ClientKind::Writer; 32], PAGES, requests, 0, 7);
        let after = model.flash_stats();
        let wa = (after.flash_programs - before.flash_programs) as f64 / requests as f64;
        println!(
            "{name:8} {:9.0} {:+8.1}% {:11.0} {:+8.1}% {:11.1} {:12.1} {wa:5.2}",
            r.read_iops(),
            pct(r.read_iops(), want_r),
            w.write_iops(),
            pct(w.write_iops(), want_w),
            r.read_latency_us(),
            w.write_latency_us()
        );
    }
}

fn interference(name: &str) {
    let mixed: Vec<ClientKind> = (0..32)
        .map(|i| {
            if i < 16 {
                ClientKind::Reader
            } else {
                ClientKind::Writer
            }
        })
        .collect();
    for rbuf in ["off", "on"] {
        let o = vec![("rbuf".to_string(), rbuf.to_string())];
        let alone = model_run(name, &o, &[ClientKind::Reader; 16], 100_000);
        let both = model_run(name, &o, &mixed, 200_000);
        println!(
            "{name} rbuf={rbuf}: read-only mean read {:.1} us ({:.0} IOPS); with 16 writers {:.1} us ({:.0} read IOPS, {:.0} write IOPS): x{:.2}",
            alone.read_latency_us(),
            alone.read_iops(),
            both.read_latency_us(),
            both.read_iops(),
            both.write_iops(),
            both.read_latency_us() / alone.read_latency_us()
        );
    }
    // Fused RW vs write-then-read (one client) on an idle device and under background writers.
    for writers in [0usize, 8, 16] {
        let run = |kind| {
            let mut clients = vec![ClientKind::Writer; writers];
            clients.push(kind);
            let profile = resolve(name, &env_overrides()).unwrap();
            let mut model = Model::new(&profile, page_size_of(name), PAGES).unwrap();
            let r = closed_loop(&mut model, &clients, PAGES, 50_000, 0, 3);
            (r.fused_latency_us(), r.read_latency_us())
        };
        let (fused, _) = run(ClientKind::Fused);
        let (raw, _) = run(ClientKind::WriteThenRead);
        let mut clients = vec![ClientKind::Writer; writers];
        clients.push(ClientKind::Reader);
        let profile = resolve(name, &env_overrides()).unwrap();
        let mut model = Model::new(&profile, page_size_of(name), PAGES).unwrap();
        let read = closed_loop(&mut model, &clients, PAGES, 50_000, 0, 3).read_latency_us();
        println!(
            "{name} with {writers} background writers: fused RW {fused:.1} us; read alone {read:.1} us; write then read {raw:.1} us"
        );
    }
}

fn live(name: &str, seconds: f64, write: bool) -> (f64, f64) {
    let (readers, writers) = if write { (0, 32) } else { (32, 0) };
    let r = live_mix(name, &[], seconds, readers, writers);
    if write { (r.2, r.3) } else { (r.0, r.1) }
}

/// `readers` and `writers` threads (submit + wait of one random page each) against the live
/// device; returns (read IOPS, mean read latency us, write IOPS, mean write latency us) in
/// device time.
fn live_mix(
    name: &str,
    overrides: &[(String, String)],
    seconds: f64,
    readers: u64,
    writers: u64,
) -> (f64, f64, f64, f64) {
    let options = OpenOptions {
        page_size: page_size_of(name),
        pages: PAGES,
        create: true,
    };
    let device = emulated::open(name, overrides, &options).unwrap();
    let scale = device.info().time_scale;
    let stop = Arc::new(AtomicBool::new(false));
    // [reads, read latency ns, writes, write latency ns]
    let counters: Arc<[AtomicU64; 4]> = Arc::new(Default::default());
    let threads: Vec<_> = (0..readers + writers)
        .map(|t| {
            let write = t >= readers;
            let (device, stop, counters) = (device.clone(), stop.clone(), counters.clone());
            std::thread::spawn(move || {
                let mut rng = rand::rngs::SmallRng::seed_from_u64(t);
                let mut buf = AlignedBuf::new(device.info().page_size);
                while !stop.load(Ordering::Relaxed) {
                    let page = rng.gen_range(0..PAGES);
                    let started = Instant::now();
                    if write {
                        device.write_page(page, &buf).unwrap();
                    } else {
                        device.read_page(page, &mut buf).unwrap();
                    }
                    let k = if write { 2 } else { 0 };
                    let ns = started.elapsed().as_nanos() as u64;
                    counters[k + 1].fetch_add(ns, Ordering::Relaxed);
                    counters[k].fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(seconds * 0.2));
    let snap = || -> Vec<u64> { counters.iter().map(|c| c.load(Ordering::Relaxed)).collect() };
    let (before, t0) = (snap(), Instant::now());
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let (after, el) = (snap(), t0.elapsed());
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let d: Vec<f64> = after
        .iter()
        .zip(&before)
        .map(|(a, b)| (a - b) as f64)
        .collect();
    let iops = |n: f64| n / el.as_secs_f64() * scale;
    let lat = |sum: f64, n: f64| {
        if n > 0.0 {
            sum / n / scale / 1000.0
        } else {
            0.0
        }
    };
    (iops(d[0]), lat(d[1], d[0]), iops(d[2]), lat(d[3], d[2]))
}

fn live_interference(name: &str, seconds: f64) {
    for rbuf in ["off", "on"] {
        let o = vec![("rbuf".to_string(), rbuf.to_string())];
        let alone = live_mix(name, &o, seconds, 16, 0);
        let both = live_mix(name, &o, seconds, 16, 16);
        println!(
            "live {name} rbuf={rbuf}: 16 readers alone {:.1} us ({:.0} IOPS); with 16 writers {:.1} us ({:.0} read IOPS, {:.0} write IOPS): x{:.2}",
            alone.1,
            alone.0,
            both.1,
            both.0,
            both.2,
            both.1 / alone.1
        );
    }
}

/// `device probe`'s default method on the timing model, against the paper's figures.
fn probe_table(names: &[String]) {
    use flashbuf::device::emulated::profile::{PROFILE_NAMES, paper_figures};
    use flashbuf::device::probe::{ProbeConfig, ProbeOp, probe_model};
    println!(
        "device    page  read@32  vs_paper write@32  vs_paper  alpha  vs_paper    k_r  vs_paper    k_w  vs_paper  fsync_idle_us fsync_burst_us fsync_load_us"
    );
    let vs = |got: f64, want: Option<f64>| {
        want.map_or("-".to_string(), |w| format!("{:+.1}%", pct(got, w)))
    };
    for &name in PROFILE_NAMES {
        if !names.is_empty() && !names.iter().any(|n| n == name) {
            continue;
        }
        let profile = resolve(name, &env_overrides()).unwrap();
        let paper = paper_figures(name);
        let page = paper.map_or(16 * 1024, |p| p.page_bytes);
        let pages = 256 * 1024 * 1024 / page as u64;
        let r = probe_model(&profile, page, pages, &ProbeConfig::default(), &mut |_| {}).unwrap();
        let at32 = |op| r.point(op, 32).map_or(0.0, |p| p.iops);
        let fsync = r.fsync.as_ref().unwrap();
        println!(
            "{name:8} {page:5} {:8.0} {:>9} {:8.0} {:>9} {:6.2} {:>9} {:6.1} {:>9} {:6.1} {:>9} {:14.1} {:14.1} {:13.1}",
            at32(ProbeOp::Read),
            vs(at32(ProbeOp::Read), paper.and_then(|p| p.read_iops)),
            at32(ProbeOp::Write),
            vs(at32(ProbeOp::Write), paper.and_then(|p| p.write_iops)),
            r.alpha,
            vs(r.alpha, paper.and_then(|p| p.alpha)),
            r.k_r_exact,
            vs(r.k_r_exact, paper.and_then(|p| p.k_r)),
            r.k_w_exact,
            vs(r.k_w_exact, paper.and_then(|p| p.k_w)),
            fsync.idle.mean_us,
            fsync.after_burst.mean_us,
            fsync.under_load.mean_us,
        );
    }
}

fn live_table(seconds: f64, names: &[String]) {
    println!("live, 32 threads, default time scale, device time");
    println!("device   scale read_iops  vs_table read_lat_us write_iops  vs_table write_lat_us");
    for &(name, want_r, want_w) in TABLE1 {
        if !names.is_empty() && !names.iter().any(|n| n == name) {
            continue;
        }
        let scale = resolve(name, &[]).unwrap().time_scale;
        let (r, rl) = live(name, seconds, false);
        let (w, wl) = live(name, seconds, true);
        println!(
            "{name:8} {scale:5} {r:9.0} {:+8.1}% {rl:11.1} {w:10.0} {:+8.1}% {wl:12.1}",
            pct(r, want_r),
            pct(w, want_w)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("live") => {
            let seconds = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
            live_table(seconds, &args[2.min(args.len())..]);
        }
        Some("live-interference") => {
            live_interference(args.get(1).map_or("openssd", String::as_str), 2.0)
        }
        Some("open") => {
            // Time to open (and precondition) a large device.
            let pages: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1 << 21);
            let started = Instant::now();
            let profile = resolve("ssd-a", &[]).unwrap();
            let model = Model::new(&profile, 16 * 1024, pages).unwrap();
            println!(
                "model of {pages} pages preconditioned in {:.2} s",
                started.elapsed().as_secs_f64()
            );
            drop(model);
        }
        Some("probe") => probe_table(&args[1..]),
        Some("ace") => probe_table(&["pcie", "sata", "optane", "cloud"].map(String::from)),
        Some("interference") => interference(args.get(1).map_or("openssd", String::as_str)),
        _ => model_table(&args[1.min(args.len())..]),
    }
}
