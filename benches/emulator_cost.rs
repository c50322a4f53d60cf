//! CPU cost per I/O of the emulated devices (target: at most 3 us). Times only `submit()` (and,
//! separately, the timing model alone), with a huge time scale so nothing sleeps; the tickets
//! are dropped without waiting (the data moved at submission). Plain `std::time` timing.
//! `submit()` includes copying the page to or from the RAM store (a 16 KiB memcpy).
//!
//! `cargo bench --bench emulator_cost`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Instant;

use flashbuf::device::emulated::profile::resolve;
use flashbuf::device::emulated::{self, Model, ModelOp};
use flashbuf::device::{AlignedBuf, IoRequest, OpenOptions};
use rand::{Rng, SeedableRng};

/// 8192 pages (128 MiB at 16 KiB), all written once before timing so that first-touch page
/// faults of the RAM store are not measured.
const PAGES: u64 = 8192;
const IOS: u64 = 200_000;

fn device_cost(profile: &str, page_size: usize, write_every: u64) -> f64 {
    let options = OpenOptions {
        page_size,
        pages: PAGES,
        create: true,
    };
    let scale = vec![("time_scale".to_string(), "1e9".to_string())];
    let device = emulated::open(profile, &scale, &options).unwrap();
    let mut buf = AlignedBuf::new(page_size);
    device
        .bulk_load(0, &vec![1u8; page_size * PAGES as usize])
        .unwrap();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
    let pages: Vec<u64> = (0..IOS).map(|_| rng.gen_range(0..PAGES)).collect();
    let started = Instant::now();
    for (i, &page) in pages.iter().enumerate() {
        let request = if write_every > 0 && (i as u64).is_multiple_of(write_every) {
            IoRequest::write(page, buf.io_buffer_shared())
        } else {
            IoRequest::read(page, buf.io_buffer())
        };
        // SAFETY: `buf` outlives the device; the emulator moves the data during submit.
        let tickets = unsafe { device.submit(vec![request]) };
        black_box(tickets);
    }
    started.elapsed().as_nanos() as f64 / IOS as f64 / 1000.0
}

fn model_cost(profile: &str, page_size: usize, write_every: u64) -> f64 {
    let p = resolve(profile, &[]).unwrap();
    let mut model = Model::new(&p, page_size, PAGES).unwrap();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
    let ops: Vec<ModelOp> = (0..IOS)
        .map(|i| {
            let page = rng.gen_range(0..PAGES);
            if write_every > 0 && i % write_every == 0 {
                ModelOp::Write(page)
            } else {
                ModelOp::Read(page)
            }
        })
        .collect();
    // Device time advances 1 us per request, a device doing 10^6 IOPS: deep queues everywhere.
    let started = Instant::now();
    for (i, op) in ops.into_iter().enumerate() {
        black_box(model.submit(i as u64 * 1000, op));
    }
    started.elapsed().as_nanos() as f64 / IOS as f64 / 1000.0
}

fn main() {
    println!("emulator CPU cost per I/O (us), {IOS} random I/Os over {PAGES} pages");
    println!("profile  page   mix          submit()  model only");
    for (profile, page_size) in [
        ("ssd-a", 16 * 1024),
        ("ssd-a", 4096),
        ("openssd", 4096),
        ("hdd", 16 * 1024),
    ] {
        for (mix, write_every) in [("reads", 0), ("writes", 1), ("50/50", 2)] {
            let submit = device_cost(profile, page_size, write_every);
            let model = model_cost(profile, page_size, write_every);
            println!(
                "{profile:8} {:4}K  {mix:10} {submit:9.2} {model:11.2}",
                page_size / 1024
            );
        }
    }
}
