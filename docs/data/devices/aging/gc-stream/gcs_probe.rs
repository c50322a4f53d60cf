use flashbuf::device::emulated::flash::SsdModel;
use flashbuf::device::emulated::profile::resolve;
use rand::{Rng, SeedableRng};
fn main() {
    let pages = 65536u64;
    for mode in ["shared", "separate"] {
        let ov = vec![("channels".to_string(), "8".to_string()), ("gc_stream".to_string(), mode.to_string())];
        let p = resolve("openssd", &ov).unwrap();
        let mut m = SsdModel::new(&p, 16384, pages).unwrap();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let hot = pages / 10;
        let mut pick = |rng: &mut rand::rngs::SmallRng| if rng.gen_bool(0.9) { rng.gen_range(0..hot) } else { rng.gen_range(hot..pages) };
        // closed loop: 32 writers back to back, one sync per 16 writes
        let mut t: u64 = 1_000_000_000;
        let n = 400_000;
        let start_gc = m.stats().gc_writes;
        let mut lat_sum = 0u64;
        let mut sync_sum = 0u64; let mut syncs = 0;
        let mut clients = vec![t; 32];
        let (mut events, mut last_gc, mut sizes) = (0u64, m.stats().gc_writes, Vec::new());
        for i in 0..n {
            let c = i % 32;
            let now = clients[c];
            let lpn = pick(&mut rng);
            let ack = m.write(now, lpn);
            let g = m.stats().gc_writes; if g > last_gc { events += 1; sizes.push(g - last_gc); last_gc = g; }
            let mut done = ack;
            if i % 16 == 0 { let s = m.sync(ack); sync_sum += s - ack; syncs += 1; done = s; }
            lat_sum += done - now;
            clients[c] = done;
            t = t.max(done);
        }
        let elapsed = clients.iter().max().unwrap() - 1_000_000_000;
        sizes.sort();
        println!("{mode}: GC events {events}, copies per event mean {:.1} p50 {} p90 {}", sizes.iter().sum::<u64>() as f64 / events as f64, sizes[sizes.len()/2], sizes[sizes.len()*9/10]);
        println!("{mode}: {:.0} writes/s, mean latency {:.0} us, mean sync {:.0} us, gc/write {:.3}",
            n as f64 / (elapsed as f64 / 1e9), lat_sum as f64 / n as f64 / 1000.0, sync_sum as f64 / syncs as f64 / 1000.0,
            (m.stats().gc_writes - start_gc) as f64 / n as f64);
    }
}
