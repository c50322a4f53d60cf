//! Lazy write-back in the emulated flash SSD (`writeback=lazy`, `docs/devices.md`, "Lazy
//! write-back"), on the timing model in device time: the Cosmos+ OpenSSD's firmware programs a
//! buffered page only when its slot is taken for another page. So a full buffer of dirty pages
//! makes the next write (and, with S-Buf, the next read that misses it) wait for a program; a
//! rewrite of a buffered page costs none; R-Buf's reads do not wait; a draining flush programs
//! every dirty page. `emu:openssd` writes back lazily by default; eager write-back (every other
//! profile's) programs every write as it comes.

use flashbuf::device::emulated::flash::SsdModel;
use flashbuf::device::emulated::profile::resolve;

const PAGE: usize = 16 * 1024;
const PAGES: u64 = 16_384;
/// The write buffer of every model here, in pages.
const BUFFER: u64 = 64;

fn board(list: &[(&str, &str)]) -> SsdModel {
    let mut options: Vec<(String, String)> = vec![("buffer".into(), BUFFER.to_string())];
    options.extend(list.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    SsdModel::new(&resolve("openssd", &options).unwrap(), PAGE, PAGES).unwrap()
}

fn lazy(list: &[(&str, &str)]) -> SsdModel {
    let mut options = vec![("writeback", "lazy"), ("flush", "noop")];
    options.extend_from_slice(list);
    board(&options)
}

/// Host programs so far (GC copies and the journal excluded).
fn programs(model: &SsdModel) -> u64 {
    let stats = model.stats();
    stats.flash_programs - stats.gc_writes - stats.journal_writes
}

/// Writes pages `0..BUFFER` at time 0; returns the last acknowledgement.
fn fill_dirty(model: &mut SsdModel) -> u64 {
    (0..BUFFER).map(|lpn| model.write(0, lpn)).max().unwrap()
}

#[test]
fn a_lazy_buffer_programs_only_when_a_slot_is_needed() {
    let mut model = lazy(&[]);
    let before = programs(&model);
    let filled = fill_dirty(&mut model);
    assert_eq!(
        programs(&model),
        before,
        "no program while the buffer had room"
    );
    assert!(
        filled < model.times().prog,
        "writes into free slots are acknowledged without a program ({filled} ns)"
    );
    // The next page evicts the least recently used dirty one and waits for its program.
    let now = filled;
    let acked = model.write(now, BUFFER);
    assert_eq!(programs(&model), before + 1);
    assert!(
        acked - now >= model.times().prog,
        "the write waited {} ns, tPROG is {} ns",
        acked - now,
        model.times().prog
    );
    // Eager write-back (every other profile's) programs every write as it comes.
    let mut eager = board(&[("writeback", "eager")]);
    let eager_before = programs(&eager);
    fill_dirty(&mut eager);
    assert_eq!(programs(&eager), eager_before + BUFFER);
}

#[test]
fn a_rewrite_of_a_buffered_page_costs_no_program() {
    let mut model = lazy(&[]);
    let filled = fill_dirty(&mut model);
    let before = programs(&model);
    let hits = model.stats().buffer_write_hits;
    for round in 0..10 {
        let acked = model.write(filled + round * 1_000_000, 7);
        assert!(acked - (filled + round * 1_000_000) < model.times().prog);
    }
    assert_eq!(programs(&model), before);
    assert_eq!(model.stats().buffer_write_hits, hits + 10);
    // A read of a buffered page is served from the buffer.
    let reads = model.stats().buffer_hits;
    let now = filled + 20_000_000;
    assert!(model.read(now, 7) - now < model.times().read);
    assert_eq!(model.stats().buffer_hits, reads + 1);
}

#[test]
fn with_s_buf_a_read_waits_for_a_dirty_victim_and_with_r_buf_it_does_not() {
    let mut shared = lazy(&[]);
    let now = fill_dirty(&mut shared);
    let stalled = shared.read(now, 5_000) - now;
    assert!(
        stalled >= shared.times().prog,
        "S-Buf: the read waited {stalled} ns, tPROG is {} ns",
        shared.times().prog
    );
    let mut separate = lazy(&[("rbuf", "on")]);
    let now = fill_dirty(&mut separate);
    let before = programs(&separate);
    let served = separate.read(now, 5_000) - now;
    assert!(
        served < separate.times().prog,
        "R-Buf: the read took {served} ns"
    );
    assert_eq!(programs(&separate), before, "R-Buf's read evicted nothing");
}

#[test]
fn a_draining_flush_programs_every_dirty_page() {
    let mut model = board(&[("writeback", "lazy"), ("flush", "drain")]);
    let filled = fill_dirty(&mut model);
    let before = programs(&model);
    let drained = model.sync(filled) - filled;
    assert_eq!(programs(&model), before + BUFFER);
    assert!(drained >= model.times().prog, "{drained} ns");
    // Nothing is dirty any more: the next sync costs firmware time only, and a page still in
    // the buffer (now clean) is still served from it.
    let later = filled + drained + 1_000_000;
    assert_eq!(model.sync(later) - later, model.times().firmware);
    assert!(model.read(later, 3) - later < model.times().read);
    assert_eq!(programs(&model), before + BUFFER);
}

#[test]
fn lazy_write_back_needs_a_flash_write_buffer() {
    let none: Vec<(String, String)> = vec![];
    let option = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
    let err = resolve("hdd", &option("writeback", "lazy"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("writeback=lazy") && err.contains("not a flash SSD"),
        "{err}"
    );
    let mut options = option("writeback", "lazy");
    options.extend(option("buffer", "0"));
    let err = resolve("ssd-a", &options).unwrap_err().to_string();
    assert!(err.contains("buffer=0"), "{err}");
    let err = resolve("openssd", &option("writeback", "sometimes"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`writeback`") && err.contains("eager or lazy"),
        "{err}"
    );
    assert!(resolve("openssd", &none).is_ok());
}

/// The live device reports the buffer's write hits in its `DeviceStats` (results.json's
/// `device_stats.buffer_write_hits`), so a run can say why its flash programs fall below its
/// host writes, and its bandwidth share counts only the writes that reach the flash.
#[test]
fn the_live_device_reports_its_buffer_write_hits() {
    use flashbuf::device::{AlignedBuf, OpenOptions, emulated};
    let options = OpenOptions {
        page_size: PAGE,
        pages: 2048,
        create: true,
    };
    let device = emulated::open("openssd", &[("time_scale".into(), "1".into())], &options).unwrap();
    let mut page = AlignedBuf::new(PAGE);
    page.as_mut_slice()[0] = 1;
    let before = device.stats();
    for _ in 0..5 {
        device.write_page(3, &page).unwrap();
    }
    let after = device.stats().since(&before);
    assert_eq!(after.writes, 5);
    assert_eq!(
        after.buffer_write_hits, 4,
        "the first write misses, the rewrites hit"
    );
    assert_eq!(
        after.flash_writes(),
        1,
        "the bandwidth share counts one write"
    );
    assert_eq!(
        after.flash_programs, 0,
        "a lazy buffer with room programs nothing"
    );
    // An eager buffer programs every write and counts no hit.
    let eager = emulated::open(
        "openssd",
        &[
            ("time_scale".into(), "1".into()),
            ("writeback".into(), "eager".into()),
        ],
        &options,
    )
    .unwrap();
    let before = eager.stats();
    for _ in 0..5 {
        eager.write_page(3, &page).unwrap();
    }
    let after = eager.stats().since(&before);
    assert_eq!(after.buffer_write_hits, 0);
    assert_eq!(after.flash_writes(), 5);
    assert!(after.flash_programs >= 5, "{after:?}");
}

/// The reference firmware reads the rest of a 16 KiB flash page before it takes a smaller
/// write that missed its buffer (read-modify-write in the command's path): at 4 KiB pages such
/// a write is acknowledged no sooner than an array read and a channel transfer after it
/// arrived, a rewrite of the buffered page is not, and at the flash page's size neither is.
#[test]
fn a_small_write_that_misses_the_buffer_waits_for_the_rest_of_its_flash_page() {
    let small = |writeback: &str| {
        let options: Vec<(String, String)> = [
            ("buffer", BUFFER.to_string()),
            ("writeback", writeback.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        SsdModel::new(&resolve("openssd", &options).unwrap(), 4096, PAGES).unwrap()
    };
    let mut model = small("lazy");
    let rmw = model.times().rmw_read + model.times().channel;
    assert!(
        model.times().rmw_read > 0,
        "4 KiB pages are read-modify-writes"
    );
    let first = model.write(0, 3);
    assert!(
        first >= rmw,
        "the miss was acknowledged at {first} ns, before {rmw} ns"
    );
    let now = first + 1_000_000;
    let rewrite = model.write(now, 3);
    assert!(
        rewrite - now < rmw,
        "a rewrite of the buffered page read nothing ({} ns)",
        rewrite - now
    );
    // Eager write-back charges the read to the program, off the command's path.
    let mut eager = small("eager");
    assert!(eager.write(0, 3) < rmw);
    // At 16 KiB there is nothing to read.
    let mut whole = lazy(&[]);
    assert_eq!(whole.times().rmw_read, 0);
    assert!(whole.write(0, 3) < rmw.max(1));
}
