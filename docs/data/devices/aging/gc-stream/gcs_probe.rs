//! Skewed closed-loop writes with syncs on the SSD model, shared vs separate GC stream.
use flashbuf::device::emulated::flash::SsdModel;
use flashbuf::device::emulated::profile::resolve;
use rand::{Rng, SeedableRng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
fn main() {
    let pages = 65536u64;
    let skew: f64 = std::env::var("SKEW").map_or(0.9, |v| v.parse().unwrap());
    // THINK_MS: each client pauses this long between operations (low load); DBLWR: share of
    // the writes that go to a 128-page area (as the doublewrite's slots).
    let think: u64 = std::env::var("THINK_MS").map_or(0, |v| v.parse::<u64>().unwrap() * 1_000_000);
    let dblwr: f64 = std::env::var("DBLWR").map_or(0.0, |v| v.parse().unwrap());
    for mode in ["shared", "separate"] {
        let ov = vec![("channels".to_string(), "8".to_string()), ("gc_stream".to_string(), mode.to_string())];
        let p = resolve("openssd", &ov).unwrap();
        let mut m = SsdModel::new(&p, 16384, pages).unwrap();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let hot = pages / 10;
        let pick = |rng: &mut rand::rngs::SmallRng| if rng.gen_bool(dblwr) { rng.gen_range(0..128) } else if rng.gen_bool(skew) { rng.gen_range(128..hot) } else { rng.gen_range(hot..pages) };
        let start: u64 = 1_000_000_000;
        let mut heap: BinaryHeap<Reverse<(u64, usize)>> = (0..32).map(|c| Reverse((start, c))).collect();
        let mut count = vec![0u64; 32];
        let n = 600_000u64;
        let (mut lat_sum, mut sync_sum, mut syncs) = (0u64, 0u64, 0u64);
        let gc0 = m.stats().gc_writes;
        let (mut events, mut sizes, mut erases) = (0u64, Vec::new(), 0u64);
        let mut end = start;
        for _ in 0..n {
            let Reverse((now, c)) = heap.pop().unwrap();
            let before = m.stats();
            let ack = m.write(now, pick(&mut rng));
            let after = m.stats();
            if after.erases > before.erases { events += 1; sizes.push(after.gc_writes - before.gc_writes); erases += after.erases - before.erases; }
            count[c] += 1;
            let done = if count[c] % 16 == 0 { let s = m.sync(ack.max(now)); sync_sum += s - ack; syncs += 1; s } else { ack };
            lat_sum += done - now;
            end = end.max(done);
            heap.push(Reverse((done + think, c)));
        }
        let secs = (end - start) as f64 / 1e9;
        sizes.sort();
        println!("{mode}: GC events {events} ({:.0}/s), erases {erases}, copies per event p10 {} p50 {} p90 {} max {}",
            events as f64 / secs, sizes[sizes.len() / 10], sizes[sizes.len() / 2], sizes[sizes.len() * 9 / 10], sizes[sizes.len() - 1]);
        println!("{mode}: {:.0} writes/s, mean op latency {:.2} ms, mean sync wait {:.2} ms, gc/write {:.3}",
            n as f64 / secs, lat_sum as f64 / n as f64 / 1e6, sync_sum as f64 / syncs as f64 / 1e6,
            (m.stats().gc_writes - gc0) as f64 / n as f64);
    }
}
