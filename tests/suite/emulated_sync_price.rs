//! The sync price of the emulated flash SSD (`docs/devices.md`, "The sync price"), checked on
//! the timing model in device time: a `plp=off` flush waits for the dirty data to be programmed
//! (into the SLC cache while it has room, else TLC) and then the flush commit, so it grows with
//! the dirty data; it stays within the published measurements the model is fitted to; with
//! `plp=on` it is firmware time; `flush_us` replaces the model by a fixed price; without an SLC
//! cache the dirty data drains at TLC program time; sustained writes fill the SLC cache and keep
//! the sustained (TLC) write rate LRU-C Table 1 measured, and idle time empties it again. On a
//! board whose firmware ignores FLUSH (`flush=noop`, the Cosmos+ OpenSSD) a sync drains nothing
//! and costs the file system's journal commit.

use flashbuf::device::OpenOptions;
use flashbuf::device::emulated::flash::{DeviceNs, SsdModel};
use flashbuf::device::emulated::profile::resolve;
use flashbuf::device::emulated::sim::{ClientKind, closed_loop};
use flashbuf::device::emulated::{self, Model};

const PAGE: usize = 16 * 1024;
const PAGES: u64 = 16_384;

fn overrides(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn ssd(profile: &str, list: &[(&str, &str)]) -> SsdModel {
    SsdModel::new(&resolve(profile, &overrides(list)).unwrap(), PAGE, PAGES).unwrap()
}

/// Writes `pages` distinct pages at `now` (a burst, as a doublewrite batch), then syncs once the
/// last is acknowledged; returns the sync's latency, device ns.
fn burst_then_sync(model: &mut SsdModel, now: DeviceNs, pages: u64) -> u64 {
    let acked = (0..pages)
        .map(|index| model.write(now, (index * 7919) % PAGES))
        .max()
        .unwrap_or(now);
    model.sync(acked) - acked
}

#[test]
fn a_sync_grows_with_the_dirty_data() {
    for profile in ["ssd-a", "ssd-b", "ssd-c", "ssd-d"] {
        let latencies: Vec<u64> = [1, 32, 128, 512, 2048]
            .iter()
            .map(|&pages| burst_then_sync(&mut ssd(profile, &[]), 0, pages))
            .collect();
        eprintln!("{profile}: sync after 1/32/128/512/2048 pages, ns: {latencies:?}");
        assert!(
            latencies.windows(2).all(|pair| pair[0] <= pair[1]),
            "{profile}: {latencies:?}"
        );
        assert!(latencies[4] > 2 * latencies[0], "{profile}: {latencies:?}");
        // Nothing dirty: firmware time only.
        let mut model = ssd(profile, &[]);
        let acked = model.write(0, 1);
        assert!(
            model.sync(acked) - acked > model.times().flush_commit,
            "{profile}"
        );
        let clean = model.quiescent_at() + 1;
        assert_eq!(
            model.sync(clean) - clean,
            model.times().firmware,
            "{profile}"
        );
    }
}

#[test]
fn the_sync_price_stays_within_the_published_measurements() {
    // A 16 KiB write + fsync on an idle client NVMe drive without power-loss protection:
    // 0.25-2 ms (docs/devices.md cites them); an fsync after 2 MiB of writes: 0.45-10 ms.
    for profile in ["ssd-a", "ssd-b", "ssd-d"] {
        let mut model = ssd(profile, &[]);
        // Submitted at device time 0: the write's own latency counts, as in the measurements.
        let written = model.write(0, 5);
        let idle_us = model.sync(written) as f64 / 1000.0;
        assert!(
            (250.0..=2000.0).contains(&idle_us),
            "{profile}: {idle_us} us"
        );
        let after_2mib_us = burst_then_sync(&mut ssd(profile, &[]), 0, 128) as f64 / 1000.0;
        assert!(
            (450.0..=10_000.0).contains(&after_2mib_us),
            "{profile}: {after_2mib_us} us"
        );
    }
}

#[test]
fn a_protected_buffer_makes_a_sync_cheap() {
    let mut model = ssd("ssd-a", &[("plp", "on")]);
    let firmware = model.times().firmware;
    assert_eq!(burst_then_sync(&mut model, 0, 2048), firmware);
    for profile in ["pcie", "sata"] {
        let mut model = SsdModel::new(&resolve(profile, &[]).unwrap(), 4096, PAGES).unwrap();
        assert_eq!(
            burst_then_sync(&mut model, 0, 512),
            model.times().firmware,
            "{profile}"
        );
    }
}

#[test]
fn a_fixed_flush_price_replaces_the_model() {
    for (fixed_us, pages) in [(50, 1), (3000, 1), (3000, 2048)] {
        let fixed = fixed_us.to_string();
        let mut model = ssd("ssd-a", &[("flush_us", fixed.as_str())]);
        let firmware = model.times().firmware;
        assert_eq!(
            burst_then_sync(&mut model, 0, pages),
            fixed_us * 1000 + firmware,
            "flush_us={fixed_us} after {pages} pages"
        );
    }
    // Only a volatile flash write cache has a flush to price.
    for (profile, list) in [("ssd-a", &[("plp", "on")][..]), ("hdd", &[][..])] {
        let mut options = overrides(list);
        options.push(("flush_us".into(), "500".into()));
        let err = resolve(profile, &options).unwrap_err().to_string();
        assert!(err.contains("flush_us"), "{err}");
    }
    let err = resolve("ssd-a", &overrides(&[("flush_us", "soon")]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("model"), "{err}");
    assert!(resolve("ssd-a", &overrides(&[("slc", "1.5")])).is_err());
}

#[test]
fn without_an_slc_cache_the_dirty_data_drains_at_tlc_program_time() {
    let slc = ssd("ssd-a", &[]);
    let times = slc.times();
    assert!(times.slc_prog * 3 < times.prog, "{times:?}");
    let with_slc = burst_then_sync(&mut ssd("ssd-a", &[]), 0, 1);
    let without = burst_then_sync(&mut ssd("ssd-a", &[("slc", "0")]), 0, 1);
    assert!(with_slc < times.prog + times.flush_commit, "{with_slc}");
    assert!(without >= times.prog + times.flush_commit, "{without}");
    // The model before issue 19: no SLC cache, foreground GC, no commit. An idle sync then waits
    // for one TLC program (and for the GC that write triggered, in the foreground).
    let legacy = [
        ("slc", "0"),
        ("gc_defer_blocks", "0"),
        ("flush_commit_us", "0"),
    ];
    let mut old = ssd("ssd-a", &legacy);
    let old_idle = burst_then_sync(&mut old, 0, 1);
    assert!(old_idle >= times.prog, "{old_idle}");
}

fn sustained_write_iops(list: &[(&str, &str)]) -> (f64, u64, u64) {
    let profile = resolve("ssd-a", &overrides(list)).unwrap();
    let mut model = Model::new(&profile, PAGE, PAGES).unwrap();
    let writers = vec![ClientKind::Writer; 32];
    // Long enough to fill the SLC cache many times over.
    let result = closed_loop(&mut model, &writers, PAGES, 200_000, 0, 7);
    let stats = model.flash_stats();
    (result.write_iops(), stats.slc_writes, stats.flash_programs)
}

#[test]
fn sustained_writes_fill_the_slc_cache_and_keep_the_tlc_rate() {
    let (with_slc, slc_writes, programs) = sustained_write_iops(&[]);
    let (legacy, legacy_slc, _) = sustained_write_iops(&[("slc", "0"), ("gc_defer_blocks", "0")]);
    eprintln!("sustained writes at 32: {with_slc:.0}/s with the SLC cache, {legacy:.0}/s without");
    assert_eq!(legacy_slc, 0);
    assert!(
        (with_slc / legacy - 1.0).abs() < 0.05,
        "{with_slc} vs {legacy}"
    );
    // The cache took a small share of the writes: it filled and stayed full.
    assert!(
        slc_writes > 0 && slc_writes * 10 < programs,
        "{slc_writes} of {programs}"
    );
}

#[test]
fn idle_time_empties_the_slc_cache() {
    let mut model = ssd("ssd-a", &[]);
    // A backlog far larger than the cache, submitted at once: the dies never idle, so nothing
    // is folded and the cache fills.
    for index in 0..16 * 1024 {
        model.write(0, index % PAGES);
    }
    let filled = model.stats().slc_writes;
    // 5% of the pages, split over the 32 dies.
    assert_eq!(filled, (PAGES / 20 / 32) * 32, "{:?}", model.stats());
    model.write(0, 3);
    assert_eq!(model.stats().slc_writes, filled, "the cache was full");
    // Left alone, the dies fold it; a write lands in SLC again.
    let idle = model.quiescent_at();
    let acked = model.write(idle, 3);
    assert_eq!(
        model.stats().slc_writes,
        filled + 1,
        "idle time folded the cache"
    );
    assert!(model.sync(acked) - acked < model.times().prog + model.times().flush_commit);
}

#[test]
fn the_live_device_charges_the_same_price() {
    let options = OpenOptions {
        page_size: PAGE,
        pages: 2048,
        create: true,
    };
    for value in ["model", "2000"] {
        let device = emulated::open(
            "ssd-a",
            &overrides(&[("flush_us", value), ("time_scale", "1")]),
            &options,
        )
        .unwrap();
        assert_eq!(device.write_cache(), flashbuf::device::WriteCache::Volatile);
        let started = std::time::Instant::now();
        device.sync().unwrap();
        let took = started.elapsed();
        if value == "2000" {
            // A fixed price is paid even with nothing dirty (at time scale 1, real time).
            assert!(took >= std::time::Duration::from_micros(2000), "{took:?}");
        }
    }
}

/// The Cosmos+ OpenSSD's reference firmware completes a FLUSH at once (`flush=noop`): a
/// sync after a burst that fills the buffer does not wait for the burst's programs, only for
/// the file system's journal commit, three journal pages written through the buffer; the same
/// board with `flush=drain` waits for the burst. The journal's pages are counted, programmed
/// and collected like any other, and the option is refused where it means nothing. (Eager
/// write-back throughout, so that every page is programmed as it comes; the board's own lazy
/// write-back is `emulated_lazy_writeback.rs`'s.)
#[test]
fn a_flush_the_firmware_ignores_costs_the_journal_commit_only() {
    let burst = 1024;
    let mut noop = ssd("openssd", &[("flush", "noop"), ("writeback", "eager")]);
    let mut drain = ssd("openssd", &[("flush", "drain"), ("writeback", "eager")]);
    let noop_ns = burst_then_sync(&mut noop, 0, burst);
    let drain_ns = burst_then_sync(&mut drain, 0, burst);
    let programs_behind = noop.quiescent_at();
    eprintln!(
        "openssd: sync after {burst} pages: noop {noop_ns} ns, drain {drain_ns} ns; \
         the burst's programs end at {programs_behind} ns"
    );
    assert!(drain_ns > 20 * noop_ns, "noop {noop_ns}, drain {drain_ns}");
    assert_eq!(noop.stats().journal_writes, 3);
    assert_eq!(drain.stats().journal_writes, 0);
    // Syncs in the jiffy (4 ms) a commit started in share it: the inode's modification time
    // has not changed since it was logged. A sync in a later jiffy commits again; one issued
    // while that commit runs waits for it and commits next (jbd2 commits one at a time).
    let mut board = ssd("openssd", &[("flush", "noop"), ("writeback", "eager")]);
    let first = board.sync(0);
    assert_eq!(board.stats().journal_writes, 3);
    assert_eq!(board.sync(1_000_000), 1_000_000 + board.times().firmware);
    assert!(board.sync(first / 2) <= first + board.times().firmware);
    assert_eq!(board.stats().journal_writes, 3);
    board.sync(5_000_000);
    assert_eq!(board.stats().journal_writes, 6);
    // A commit begun 10 us before a jiffy ends is still running when the next jiffy's sync
    // comes: that sync commits after it.
    let running = board.sync(11_990_000);
    assert_eq!(board.stats().journal_writes, 9);
    assert!(running > 12_010_000, "{running}");
    let queued = board.sync(12_010_000);
    assert_eq!(board.stats().journal_writes, 12);
    assert!(queued > running, "{queued} after {running}");
    // Two dependent steps of buffered writes and the no-op flush command between them: at
    // least two writes' firmware time, far below one page program.
    let times = noop.times();
    assert!(noop_ns >= 2 * times.firmware, "{noop_ns}");
    assert!(
        noop_ns < times.prog,
        "{noop_ns} against tPROG {}",
        times.prog
    );
    // The journal pages are programmed: three more programs than the burst alone.
    assert_eq!(
        noop.stats().flash_programs - noop.stats().gc_writes,
        drain.stats().flash_programs - drain.stats().gc_writes + 3
    );
    // With a full buffer the journal's writes wait for slots like the host's: a sync issued
    // while a burst twice the buffer is still arriving costs more than on an idle board.
    let mut busy = ssd("openssd", &[("flush", "noop"), ("writeback", "eager")]);
    let acked = (0..2 * 1920u64)
        .map(|index| busy.write(0, (index * 7919) % PAGES))
        .max()
        .unwrap();
    let mut idle = ssd("openssd", &[("flush", "noop"), ("writeback", "eager")]);
    let idle_ns = idle.sync(0);
    let busy_ns = busy.sync(acked) - acked;
    assert!(busy_ns > idle_ns, "busy {busy_ns}, idle {idle_ns}");
    // The write cache says what a sync means there.
    let profile = resolve(
        "openssd",
        &overrides(&[("flush", "noop"), ("writeback", "eager")]),
    )
    .unwrap();
    assert_eq!(
        profile.write_cache(),
        flashbuf::device::WriteCache::FlushIgnored
    );
    // Refused where it means nothing, naming the option.
    for bad in [
        ("ssd-a", vec![("flush", "noop"), ("plp", "on")]),
        ("pcie", vec![("flush", "noop")]),
        ("hdd", vec![("flush", "noop")]),
        ("openssd", vec![("flush", "noop"), ("flush_us", "100")]),
        ("openssd", vec![("flush", "sometimes")]),
    ] {
        let err = resolve(bad.0, &overrides(&bad.1)).unwrap_err().to_string();
        assert!(err.contains("flush"), "{bad:?}: {err}");
    }
    assert!(resolve("ssd-a", &overrides(&[("flush", "noop")])).is_ok());
}
