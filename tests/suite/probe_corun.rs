//! The co-run probe (`device probe --corun`, RW paper section 5.2.1): on timing models where
//! reads and writes share the storage buffer and the flash dies (emu:openssd with S-Buf,
//! emu:ssd-a), co-running writes cut the read stream's IOPS and raise its p95 latency against
//! the read stream alone; with R-Buf (emu:openssd,rbuf=on) reads keep most of their rate and
//! writes pay instead. Virtual time only: no timed assertions. Also: a live co-run on a memory
//! device counts both streams, and bad flags are refused before anything runs, naming the flag.

use std::process::Command;
use std::time::Duration;

use flashbuf::device::emulated::profile::resolve;
use flashbuf::device::probe::{CorunConfig, CorunReport, Precondition, corun, corun_model};
use flashbuf::error::Error;

fn model_corun(name: &str, options: &[(&str, &str)], page: usize) -> CorunReport {
    let overrides: Vec<(String, String)> = options
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    let profile = resolve(name, &overrides).unwrap();
    let config = CorunConfig {
        warmup: Duration::from_millis(200),
        duration: Duration::from_millis(500),
        ..CorunConfig::default()
    };
    corun_model(&profile, page, 64 * 1024 * 1024 / page as u64, &config).unwrap()
}

#[test]
fn co_running_writes_slow_reads_where_they_share_buffer_and_dies() {
    for (name, options, page) in [
        ("openssd", &[("rbuf", "off")][..], 4096),
        ("ssd-a", &[][..], 16384),
    ] {
        let report = model_corun(name, options, page);
        let alone = report.read_alone.as_ref().unwrap();
        assert!(report.read.ios > 0 && report.write.ios > 0, "{report:?}");
        assert!(
            report.read.iops < 0.5 * alone.iops,
            "{name}: reads with writes {} vs alone {}",
            report.read.iops,
            alone.iops
        );
        assert!(
            report.read.latency_p95_us > 2.0 * alone.latency_p95_us,
            "{name}: read p95 with writes {} vs alone {}",
            report.read.latency_p95_us,
            alone.latency_p95_us
        );
        // Each stream reports its own concurrency and bandwidth.
        assert_eq!(
            (report.read.concurrency, report.write.concurrency),
            (32, 32)
        );
        let mb_s = report.read.iops * page as f64 / 1.0e6;
        assert!((report.read.mb_s - mb_s).abs() < 1e-6 * mb_s.max(1.0));
    }
}

#[test]
fn r_buf_keeps_reads_apart_from_co_running_writes() {
    let shared = model_corun("openssd", &[("rbuf", "off")], 4096);
    let split = model_corun("openssd", &[("rbuf", "on")], 4096);
    let alone = split.read_alone.as_ref().unwrap();
    // RW Table 3's direction: more read IOPS and a lower read p95 than S-Buf, fewer write IOPS.
    assert!(
        split.read.iops > 2.0 * shared.read.iops,
        "{split:?} {shared:?}"
    );
    assert!(split.read.latency_p95_us < shared.read.latency_p95_us);
    assert!(split.write.iops < shared.write.iops);
    // And reads keep most of their solo rate.
    assert!(split.read.iops > 0.8 * alone.iops, "{split:?}");
}

#[test]
fn a_live_co_run_counts_both_streams() {
    let device: flashbuf::device::SharedDevice =
        std::sync::Arc::new(flashbuf::device::memory::MemoryDevice::new(4096, 256).unwrap());
    let config = CorunConfig {
        readers: 2,
        writers: 1,
        region_pages: 128,
        precondition: Precondition::None,
        warmup: Duration::from_millis(5),
        duration: Duration::from_millis(30),
        solo: false,
        ..CorunConfig::default()
    };
    let report = corun(&device, &config).unwrap();
    assert!(report.read.ios > 0 && report.write.ios > 0, "{report:?}");
    assert_eq!((report.read.concurrency, report.write.concurrency), (2, 1));
    assert!(report.read_alone.is_none() && report.write_alone.is_none());
    assert_eq!(report.region_pages, 128);
}

#[test]
fn bad_configurations_name_the_field() {
    for (config, field) in [
        (
            CorunConfig {
                readers: 0,
                ..CorunConfig::default()
            },
            "readers",
        ),
        (
            CorunConfig {
                writers: 100_000,
                ..CorunConfig::default()
            },
            "writers",
        ),
        (
            CorunConfig {
                duration: Duration::ZERO,
                ..CorunConfig::default()
            },
            "duration",
        ),
    ] {
        match config.validate() {
            Err(Error::Config(message)) => assert!(message.contains(field), "{message}"),
            other => panic!("{field}: {other:?}"),
        }
    }
}

fn probe_fails(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .args(["device", "probe"])
        .args(args)
        .output()
        .unwrap();
    assert!(!output.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn bad_flags_are_refused_naming_the_flag() {
    for (args, flag) in [
        (&["--corun", "--readers", "0"][..], "--readers"),
        (&["--corun", "--writers", "5000"][..], "--writers"),
        (&["--corun", "--corun-ms", "0"][..], "--corun-ms"),
        (&["--readers", "4"][..], "--readers"),
        (&["--writers", "4"][..], "--writers"),
        (&["--corun-ms", "100"][..], "--corun-ms"),
        (&["--no-solo"][..], "--no-solo"),
        (&["--corun", "--concurrency", "1,2"][..], "--concurrency"),
        (&["--corun", "--quick"][..], "--quick"),
        (&["--corun", "--duration-ms", "10"][..], "--duration-ms"),
        (&["--corun", "--fsync-burst", "4"][..], "--fsync-burst"),
        (&["--corun", "--model", "--device", "mem"][..], "--model"),
    ] {
        let stderr = probe_fails(args);
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
    }
}
