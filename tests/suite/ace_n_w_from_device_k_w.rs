//! ACE's `n_w` (writes per batch) and `n_e` (the sequential prefetcher's pages) default to the
//! device's write concurrency `k_w` (ACE section IV: "we set n_w = n_e = k_w"): an emulated
//! profile with an ACE Table I row uses its figure (`pcie` 8, `sata` 9, `optane` 5, `cloud`
//! 19), a device that does not know its `k_w` (`mem`, the LRU-C profiles) uses 8, and an
//! explicit `ace_n_w` / `prefetch_pages` in the pool config wins.

use flashbuf::device::{DeviceSpec, OpenOptions, SharedDevice, open};
use flashbuf::engine::Composition;
use flashbuf::pool::{BufferPool, PoolConfig};

const PAGE: usize = 4096;

fn device(spec: &str) -> SharedDevice {
    open(
        &DeviceSpec::parse(spec).unwrap(),
        &OpenOptions {
            page_size: PAGE,
            pages: 256,
            create: true,
        },
    )
    .unwrap()
}

/// (`ace_n_w`, `seq_prefetch_pages`) as the pool reports them for `spec` and the given knobs.
fn chosen(spec: &str, ace_n_w: usize, prefetch_pages: usize) -> (f64, f64) {
    let mut config = PoolConfig::for_scheme(Composition::parse("ace-lru+seq").unwrap(), 32);
    config.background = false;
    config.instances = 1;
    config.ace_n_w = ace_n_w;
    config.prefetch_pages = prefetch_pages;
    let pool = BufferPool::open(device(spec), config).unwrap();
    let extra = pool.stats().extra;
    let pair = (extra["ace_n_w"], extra["seq_prefetch_pages"]);
    pool.close().unwrap();
    pair
}

#[test]
fn profiles_with_an_ace_table_row_use_their_k_w() {
    assert_eq!(chosen("emu:pcie", 0, 0), (8.0, 8.0));
    assert_eq!(chosen("emu:sata", 0, 0), (9.0, 9.0));
    assert_eq!(chosen("emu:optane", 0, 0), (5.0, 5.0));
    assert_eq!(chosen("emu:cloud", 0, 0), (19.0, 19.0));
}

#[test]
fn devices_without_a_known_k_w_use_the_papers_eight() {
    assert_eq!(chosen("mem", 0, 0), (8.0, 8.0));
    assert_eq!(chosen("emu:ssd-a", 0, 0), (8.0, 8.0));
}

#[test]
fn explicit_settings_win() {
    assert_eq!(chosen("emu:sata", 3, 0), (3.0, 9.0));
    assert_eq!(chosen("emu:sata", 0, 5), (9.0, 5.0));
    assert_eq!(chosen("mem", 16, 2), (16.0, 2.0));
}
