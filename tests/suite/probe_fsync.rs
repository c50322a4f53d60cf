//! The probe measures what `sync` costs, and the emulated devices charge it by their
//! power-loss protection: with `plp=off` a sync waits until the dirty data (acknowledged, not
//! yet programmed) is programmed, then the flush commit, so it grows from an idle sync to one
//! after a burst to one under sustained writes; with `plp=on` it costs only firmware time; the
//! HDD (no write cache) and the cloud volume (writes durable when acknowledged) pay command
//! time or a network round trip. The price itself is the model's (`tests/suite/emulated_sync_price.rs`
//! checks its properties); here only its order and the probe's reporting of it.

use std::time::Duration;

use flashbuf::device::emulated::profile::resolve;
use flashbuf::device::emulated::{self};
use flashbuf::device::probe::{
    FsyncConfig, FsyncReport, Precondition, ProbeConfig, SteadyConfig, probe, probe_model,
};
use flashbuf::device::{OpenOptions, SharedDevice, WriteCache};

fn small_fsync() -> FsyncConfig {
    FsyncConfig {
        samples: 8,
        burst: 16,
        writers: 8,
        under_load_syncs: 4,
        under_load_max: Duration::from_millis(300),
    }
}

fn config(fsync: FsyncConfig) -> ProbeConfig {
    ProbeConfig {
        concurrency: vec![1, 4],
        stop_at_plateau: false,
        precondition: Precondition::Random {
            passes: 1,
            concurrency: 8,
        },
        steady: SteadyConfig::fixed(Duration::from_millis(10)),
        fsync: Some(fsync),
        ..ProbeConfig::default()
    }
}

fn model_fsync(name: &str, overrides: &[(&str, &str)], page: usize) -> FsyncReport {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let profile = resolve(name, &overrides).unwrap();
    let report = probe_model(
        &profile,
        page,
        4096,
        &config(FsyncConfig::default()),
        &mut |_| {},
    )
    .unwrap();
    report.fsync.unwrap()
}

#[test]
fn plp_decides_what_a_sync_costs_on_the_model() {
    let off = model_fsync("ssd-b", &[], 16 * 1024);
    let on = model_fsync("ssd-b", &[("plp", "on")], 16 * 1024);
    eprintln!("plp=off {off:?}\nplp=on {on:?}");
    assert_eq!(
        (off.write_cache, on.write_cache),
        (WriteCache::Volatile, WriteCache::Protected)
    );
    assert_eq!((off.plp.as_str(), on.plp.as_str()), ("plp=off", "plp=on"));
    // ssd-b (no SLC cache): one page's tPROG (345 us) and the commit; firmware 6 us.
    let profile = resolve("ssd-b", &[]).unwrap();
    assert!(
        off.idle.mean_us >= profile.t_prog_us + profile.flush_commit_us,
        "{:?}",
        off.idle
    );
    assert!(
        on.idle.mean_us < 10.0 && on.under_load.mean_us < 10.0,
        "{on:?}"
    );
    // More dirty data, a longer sync: a burst, then sustained writes.
    assert!(off.after_burst.mean_us > off.idle.mean_us, "{off:?}");
    assert!(off.under_load.mean_us > off.after_burst.mean_us, "{off:?}");
    assert!(off.under_load.count >= 4);
    let hdd = model_fsync("hdd", &[], 16 * 1024);
    assert_eq!(hdd.write_cache, WriteCache::WriteThrough);
    assert!(hdd.under_load.mean_us < 200.0, "{hdd:?}");
    let cloud = model_fsync("cloud", &[], 4096);
    assert_eq!(cloud.write_cache, WriteCache::Protected);
    // One round trip: 2 x 50 us.
    assert!((cloud.idle.mean_us - 100.0).abs() < 1.0, "{cloud:?}");
}

fn live(plp: &str) -> FsyncReport {
    let options = OpenOptions {
        page_size: 16 * 1024,
        pages: 2048,
        create: true,
    };
    // Time scale 20: host scheduling noise (up to milliseconds on a busy host) shrinks 20x in
    // device time; a small write buffer keeps the under-load syncs short.
    let overrides: Vec<(String, String)> = [("time_scale", "20"), ("buffer", "64"), ("plp", plp)]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let device: SharedDevice = emulated::open("ssd-b", &overrides, &options).unwrap();
    let report = probe(&device, &config(small_fsync()), &mut |_| {}).unwrap();
    assert_eq!(report.writes.len(), 2);
    assert_eq!(report.reads.len(), 2);
    report.fsync.unwrap()
}

#[test]
fn the_live_probe_measures_sync_latency() {
    let off = live("off");
    let on = live("on");
    eprintln!("live plp=off {off:?}\nlive plp=on {on:?}");
    assert_eq!(off.plp, "plp=off");
    assert_eq!(on.plp, "plp=on");
    for report in [&off, &on] {
        assert_eq!(report.idle.count, 8);
        assert_eq!(report.after_burst.count, 8);
        assert!(report.under_load.count >= 1 && report.under_load.count <= 4);
        assert_eq!((report.burst_pages, report.writers), (16, 8));
    }
    // Host noise adds a few microseconds of device time to every sync, and a sync issued late
    // (the thread woke up late after its write) finds part or all of the program done; the
    // commit (1.3 ms), paid whenever something is dirty, dwarfs both.
    let profile = resolve("ssd-b", &[]).unwrap();
    assert!(
        off.idle.mean_us >= profile.flush_commit_us / 2.0,
        "{:?}",
        off.idle
    );
    assert!(
        off.idle.mean_us > 2.0 * on.idle.mean_us,
        "{off:?} vs {on:?}"
    );
    assert!(
        off.under_load.mean_us > 2.0 * on.under_load.mean_us,
        "{off:?} vs {on:?}"
    );
}
