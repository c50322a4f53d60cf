//! The LRU-C paper's TPC-C setup shrunk to the image at hand (docs/regime.md, "The scaling
//! argument"): the pool-config defaults a TPC-C run gets unless its `--pool-config` sets them.
//!
//! The paper ran 1,000 warehouses, about 100 GB or [`PAPER_DB_PAGES`] pages of 16 KiB, with
//! InnoDB's constants: `innodb_lru_scan_depth` 1,024 and a page cleaner once a second, the same
//! at every buffer size it tried (LRU-C §5.1, Tables 2 and 4). A database k times smaller
//! (k = loaded pages / [`PAPER_DB_PAGES`]) keeps the paper's dynamics if
//!
//! - `lru_scan_depth` is 1,024 k at every buffer size (the paper's depth was fixed while its
//!   pool varied, so depth over instance varies with the buffer as the paper's did);
//! - the background time constants (cleaner and LRU-C flusher period, `io_capacity` per round,
//!   `old_blocks_time`) are scaled by k times [`MISS_RATE_CALIBRATION`], so that the pool's
//!   turnover over the cleaner's period and the cleaner's capacity over the miss rate are the
//!   paper's. The calibration is the one quantity the shrinking does not fix: how fast the
//!   device and the engine miss per frame. It is fitted on vanilla alone (see
//!   [`MISS_RATE_CALIBRATION`]) and applies to every scheme alike.
//!
//! - each page a list scan inspects under its mutex costs the device time the paper's host
//!   spent on the pages it stands for (`list_scan_ns`, [`PAPER_LIST_SCAN_NS`] x 1,024 / our
//!   depth; background scans scaled with the background clock), so that a miss holds the LRU
//!   mutex as long as the paper's did and the queue behind it (RR-serialization) forms again.
//!   The per-page price is fitted on vanilla's LRU-mutex wait alone;
//! - the InnoDB miss loop is MySQL 5.6.26's (`free_block_loop = "5.6"`), the host the LRU-C
//!   prototype patched (its README): a host-engine semantic, not a fitted value
//!   (docs/algorithms.md, "The host's miss loop: 5.6 or 5.7").
//!
//! Invariant: an explicit key in the user's pool config always wins; only absent keys are
//! added, so sweeps over `lru_scan_depth` or `time_constant_scale` see their own values.

use crate::engine::config::MIN_SCALED_PERIOD_MS;
use crate::error::{Error, Result};

/// Pages of the paper's database: its 10 GB pool of 655,360 frames of 16 KiB was 10% of it
/// (LRU-C §5.1: 1,000 warehouses, about 100 GB).
pub const PAPER_DB_PAGES: u64 = 6_553_600;

/// InnoDB's `innodb_lru_scan_depth` in the paper's runs (its default, LRU-C §5.1).
pub const PAPER_SCAN_DEPTH: f64 = 1024.0;

/// The paper's misses per frame and second over ours, measured on vanilla at the calibration
/// point (50 warehouses, buffer 10%, 64 clients, `emu:ssd-a`, flush cost fitted as in
/// `experiments/calibration/lruc-vanilla.toml`). The paper read 6,860 pages a second into
/// 655,360 frames (Table 5 and Table 2 at 10%); five vanilla runs with the instance-only scale
/// had turnover over period 40.0-45.3 (mean 43.5) against the paper's 95.5, and cleaner capacity
/// over miss rate 0.48-0.56 (mean 0.53) against 1.19: our device and engine turn the pool over
/// 1/0.45 times faster per frame than the paper's MySQL. Both ratios give 0.45.
pub const MISS_RATE_CALIBRATION: f64 = 0.45;

/// The space ratio k of a TPC-C image of `loaded_pages` pages to the paper's database.
#[must_use]
pub fn space_ratio(loaded_pages: u64) -> f64 {
    loaded_pages as f64 / PAPER_DB_PAGES as f64
}

/// `lru_scan_depth` for a database of `loaded_pages` pages: 1,024 k, at least 16.
#[must_use]
pub fn scan_depth(loaded_pages: u64) -> usize {
    ((PAPER_SCAN_DEPTH * space_ratio(loaded_pages)).round() as usize).max(16)
}

/// `time_constant_scale` for a database of `loaded_pages` pages: k x
/// [`MISS_RATE_CALIBRATION`], at most 1, and at least the scale that keeps InnoDB's 1 s period
/// at [`MIN_SCALED_PERIOD_MS`].
#[must_use]
pub fn time_constant_scale(loaded_pages: u64) -> f64 {
    let floor = MIN_SCALED_PERIOD_MS as f64 / 1000.0;
    (space_ratio(loaded_pages) * MISS_RATE_CALIBRATION).clamp(floor, 1.0)
}

/// The miss loop of the papers' host, MySQL 5.6.26.
pub const PAPER_FREE_BLOCK_LOOP: &str = "5.6";

/// The paper's host CPU per LRU page a scan inspects under the LRU mutex, in ns: fitted on
/// vanilla alone, on the one figure the paper gives for the mutex (§2.3: a thread waits about
/// 1.3% of the run for the LRU mutex), and frozen (`experiments/calibration/lruc-vanilla.toml`,
/// `[scan_fit]`; docs/regime.md, "The LRU mutex's hold time").
pub const PAPER_LIST_SCAN_NS: f64 = 145.0;

/// `list_scan_ns` for a database of `loaded_pages` pages: [`PAPER_LIST_SCAN_NS`] times the
/// paper's pages each of our scanned pages stands for (1,024 over our default depth, about
/// 1 / k), at most [`crate::engine::config::MAX_LIST_SCAN_NS`]. The default depth, not a
/// swept one: at depth 585 our scan still stands for the paper's 16,384.
#[must_use]
pub fn list_scan_ns(loaded_pages: u64) -> f64 {
    let pages_per_page = PAPER_SCAN_DEPTH / scan_depth(loaded_pages) as f64;
    (PAPER_LIST_SCAN_NS * pages_per_page).min(crate::engine::config::MAX_LIST_SCAN_NS)
}

/// `pool_config` (TOML text, or none) with the paper-scaled `lru_scan_depth`,
/// `time_constant_scale` and `list_scan_ns` and the papers' host's miss loop added where it
/// does not set them.
///
/// # Errors
/// [`Error::Config`] when `pool_config` is not valid TOML.
pub fn with_tpcc_defaults(pool_config: Option<&str>, loaded_pages: u64) -> Result<String> {
    let mut table: toml::Table = pool_config
        .unwrap_or("")
        .parse()
        .map_err(|err| Error::Config(format!("--pool-config: {err}")))?;
    table.entry("lru_scan_depth").or_insert_with(|| {
        toml::Value::Integer(i64::try_from(scan_depth(loaded_pages)).unwrap_or(1024))
    });
    table
        .entry("time_constant_scale")
        .or_insert_with(|| toml::Value::Float(time_constant_scale(loaded_pages)));
    table
        .entry("free_block_loop")
        .or_insert_with(|| toml::Value::String(PAPER_FREE_BLOCK_LOOP.to_string()));
    table
        .entry("list_scan_ns")
        .or_insert_with(|| toml::Value::Float(list_scan_ns(loaded_pages)));
    toml::to_string(&table).map_err(|err| Error::Config(format!("--pool-config: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 50-warehouse image (233,920 pages) at buffer 10%: 8 instances of 2,924 frames.
    const W50_PAGES: u64 = 233_920;

    #[test]
    fn fifty_warehouses_at_ten_percent_keep_the_instance_depth_and_halve_the_period() {
        let k = space_ratio(W50_PAGES);
        assert!((k - 2_924.0 / 81_920.0).abs() < 1e-4, "k = {k}");
        // The instance-only scale gave depth frames/80 = 36 and a 36 ms period.
        assert_eq!(scan_depth(W50_PAGES), 37);
        let scale = time_constant_scale(W50_PAGES);
        let period_ms = (1000.0 * scale).round();
        assert!((period_ms - 16.0).abs() < f64::EPSILON, "{period_ms}");
        assert!(scale < crate::engine::config::auto_time_constant_scale(2_924));
    }

    #[test]
    fn a_tiny_database_keeps_the_floors() {
        assert_eq!(scan_depth(100), 16);
        assert!((list_scan_ns(100) - PAPER_LIST_SCAN_NS * 64.0).abs() < 1e-9);
        assert!((time_constant_scale(100) - 0.005).abs() < 1e-12);
        assert!((time_constant_scale(u64::MAX / 2) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn explicit_keys_win_and_absent_ones_are_added() {
        let text = with_tpcc_defaults(Some("lru_scan_depth = 146\n"), W50_PAGES).unwrap();
        let table: toml::Table = text.parse().unwrap();
        assert_eq!(table["lru_scan_depth"].as_integer(), Some(146));
        let scale = table["time_constant_scale"].as_float().unwrap();
        assert!((scale - time_constant_scale(W50_PAGES)).abs() < 1e-12);

        let text = with_tpcc_defaults(Some("time_constant_scale = 0\n"), W50_PAGES).unwrap();
        let table: toml::Table = text.parse().unwrap();
        assert_eq!(table["time_constant_scale"].as_integer(), Some(0));
        assert_eq!(table["lru_scan_depth"].as_integer(), Some(37));
        assert_eq!(table["free_block_loop"].as_str(), Some("5.6"));
        let text = with_tpcc_defaults(Some("free_block_loop = \"5.7\"\n"), W50_PAGES).unwrap();
        let table: toml::Table = text.parse().unwrap();
        assert_eq!(table["free_block_loop"].as_str(), Some("5.7"));
        let ns = table["list_scan_ns"].as_float().unwrap();
        assert!(
            (ns - PAPER_LIST_SCAN_NS * 1024.0 / 37.0).abs() < 1e-9,
            "{ns}"
        );
        let text = with_tpcc_defaults(Some("list_scan_ns = 0\n"), W50_PAGES).unwrap();
        let table: toml::Table = text.parse().unwrap();
        assert_eq!(table["list_scan_ns"].as_integer(), Some(0));

        assert!(with_tpcc_defaults(Some("lru_scan_depth = ["), W50_PAGES).is_err());
        // The result is a valid pool config for every preset.
        let text = with_tpcc_defaults(None, W50_PAGES).unwrap();
        crate::pool::PoolConfig::from_toml(crate::engine::config::Scheme::Vanilla, 23_392, &text)
            .unwrap();
    }
}
