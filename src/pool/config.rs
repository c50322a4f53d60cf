//! Buffer-pool configuration: the scheme (a point in architecture.md's design space) and the
//! knobs, from code or a TOML file.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A buffer-management scheme: a named configuration of the one pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheme {
    /// InnoDB-style RAW pool tuned for SSD (io_capacity matched to the device, no neighbour
    /// flushing): what the papers call Vanilla.
    Vanilla,
    /// InnoDB-style RAW pool with InnoDB's own defaults (io_capacity 200, neighbour flushing).
    VanillaDefault,
    /// Vanilla with the LRU scan depth set to the CF-LRU window (algorithms.md section 1).
    Cflru,
    /// Write-after-read with a temporary write buffer (section 3).
    War,
    /// The fused read-write command on a read stall (section 4).
    Rw,
    /// LRU-C pointer, fixed-size background batches (section 2).
    LruCBasic,
    /// LRU-C with dynamic batch write of the whole dirty region.
    LruCDbw,
    /// LRU-C with dynamic batch write and the LRU-M / LRU-D mutex split.
    LruC,
}

impl Scheme {
    /// Every scheme, in the order of the papers' comparisons.
    pub const ALL: &'static [Scheme] = &[
        Scheme::Vanilla,
        Scheme::VanillaDefault,
        Scheme::Cflru,
        Scheme::War,
        Scheme::Rw,
        Scheme::LruCBasic,
        Scheme::LruCDbw,
        Scheme::LruC,
    ];

    /// The scheme's name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Vanilla => "vanilla",
            Scheme::VanillaDefault => "vanilla-default",
            Scheme::Cflru => "cflru",
            Scheme::War => "war",
            Scheme::Rw => "rw",
            Scheme::LruCBasic => "lru-c-basic",
            Scheme::LruCDbw => "lru-c-dbw",
            Scheme::LruC => "lru-c",
        }
    }

    /// Parses a scheme name.
    ///
    /// # Errors
    /// [`Error::Config`] listing the valid names.
    pub fn from_name(name: &str) -> Result<Scheme> {
        let name = name.trim();
        Scheme::ALL
            .iter()
            .copied()
            .find(|scheme| scheme.name() == name)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown scheme `{name}`; valid schemes: {}",
                    Scheme::names().join(", ")
                ))
            })
    }

    /// Parses a comma-separated list of scheme names.
    ///
    /// # Errors
    /// [`Error::Config`] for an unknown name or an empty list.
    pub fn parse_list(list: &str) -> Result<Vec<Scheme>> {
        let schemes = list
            .split(',')
            .filter(|part| !part.trim().is_empty())
            .map(Scheme::from_name)
            .collect::<Result<Vec<_>>>()?;
        if schemes.is_empty() {
            return Err(Error::Config(format!(
                "no scheme given; valid schemes: {}",
                Scheme::names().join(", ")
            )));
        }
        Ok(schemes)
    }

    /// All valid names.
    #[must_use]
    pub fn names() -> Vec<&'static str> {
        Scheme::ALL.iter().map(|scheme| scheme.name()).collect()
    }
}

impl std::fmt::Display for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Scheme {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Scheme::from_name(s)
    }
}

/// Every knob of the pool. Defaults are InnoDB's (MySQL 5.7) unless the scheme's preset says
/// otherwise; see [`PoolConfig::for_scheme`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PoolConfig {
    /// Number of frames (pages the pool holds).
    pub frames: usize,
    /// The scheme.
    pub scheme: Scheme,
    /// `innodb_lru_scan_depth`: pages scanned from the LRU tail per miss (step 2) and per
    /// cleaner round; the fixed batch of basic LRU-C; the TWB size of WAR.
    pub lru_scan_depth: usize,
    /// `innodb_old_blocks_pct` (5..=95).
    pub old_blocks_pct: usize,
    /// `innodb_old_blocks_time` in device-time milliseconds.
    pub old_blocks_time_ms: u64,
    /// `innodb_io_capacity`: pages per second the cleaner aims at.
    pub io_capacity: u64,
    /// `innodb_io_capacity_max`.
    pub io_capacity_max: u64,
    /// `innodb_max_dirty_pages_pct`.
    pub max_dirty_pages_pct: f64,
    /// `innodb_max_dirty_pages_pct_lwm` (0 disables the low-water mark).
    pub max_dirty_pages_pct_lwm: f64,
    /// `innodb_adaptive_flushing_lwm` in % of log capacity.
    pub adaptive_flushing_lwm: f64,
    /// `innodb_flush_neighbors`: also write dirty pages of the same 64-page extent.
    pub flush_neighbors: bool,
    /// CF-LRU window in pages (0 = frames / 3).
    pub cflru_window: usize,
    /// Pages WAR copies into its TWB per read stall (bounded by free TWB slots).
    pub war_copy_batch: usize,
    /// Cleaner period in device-time milliseconds (InnoDB: 1000).
    pub cleaner_period_ms: u64,
    /// Verify page checksums on read.
    pub verify_checksums: bool,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig::for_scheme(Scheme::Vanilla, 1024)
    }
}

/// InnoDB's `innodb_lru_scan_depth` default (1024) scaled to the pool: it is both the free-list
/// target of the LRU flush and the per-miss scan, and the papers' pools are 10 GB (655,360
/// frames), where 1024 is 0.16% of the pool. Small pools (as in benchmarks on a laptop-sized
/// database) keep the same order of share instead of letting the cleaner hold a third of the
/// pool free: `frames / 64`, between 16 and 1024 (so 1024 for any pool of 64 Ki frames or more).
pub fn default_scan_depth(frames: usize) -> usize {
    (frames / 64).clamp(16, 1024)
}

impl PoolConfig {
    /// The preset for `scheme` with `frames` frames.
    ///
    /// Vanilla (tuned): io_capacity raised to an SSD's ability (the LRU-C paper tunes
    /// `innodb_io_capacity`, `_max` and `flush_neighbors`), no neighbour flushing.
    /// Vanilla-default keeps InnoDB's defaults (200 / 2000, neighbours on).
    pub fn for_scheme(scheme: Scheme, frames: usize) -> Self {
        let tuned = scheme != Scheme::VanillaDefault;
        PoolConfig {
            frames,
            scheme,
            lru_scan_depth: default_scan_depth(frames),
            old_blocks_pct: 37,
            old_blocks_time_ms: 1000,
            io_capacity: if tuned { 10_000 } else { 200 },
            io_capacity_max: if tuned { 20_000 } else { 2000 },
            max_dirty_pages_pct: 75.0,
            max_dirty_pages_pct_lwm: 0.0,
            adaptive_flushing_lwm: 10.0,
            flush_neighbors: !tuned,
            cflru_window: 0,
            war_copy_batch: 32,
            cleaner_period_ms: 1000,
            verify_checksums: true,
        }
    }

    /// Reads overrides from TOML text on top of the scheme's preset.
    ///
    /// # Errors
    /// [`Error::Config`] for malformed TOML, unknown keys or bad values.
    pub fn from_toml(scheme: Scheme, frames: usize, text: &str) -> Result<Self> {
        let table: toml::Table = text
            .parse()
            .map_err(|err| Error::Config(format!("pool config: {err}")))?;
        let mut base = toml::Table::try_from(PoolConfig::for_scheme(scheme, frames))
            .map_err(|err| Error::Config(format!("pool config: {err}")))?;
        for (key, value) in table {
            base.insert(key, value);
        }
        let config: PoolConfig = base
            .try_into()
            .map_err(|err| Error::Config(format!("pool config: {err}")))?;
        config.validate()?;
        Ok(config)
    }

    /// The CF-LRU window in pages.
    pub fn cflru_window_pages(&self) -> usize {
        if self.cflru_window == 0 {
            (self.frames / 3).max(1)
        } else {
            self.cflru_window
        }
    }

    /// The scan depth a miss uses in step 2 (CF-LRU uses its window).
    pub fn effective_scan_depth(&self) -> usize {
        if self.scheme == Scheme::Cflru {
            self.cflru_window_pages()
        } else {
            self.lru_scan_depth
        }
    }

    /// Checks ranges.
    ///
    /// # Errors
    /// [`Error::Config`] naming the bad knob.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(Error::Config(what));
        if self.frames < 16 {
            return bad(format!(
                "frames = {}: the pool needs at least 16 frames",
                self.frames
            ));
        }
        if self.frames >= u32::MAX as usize {
            return bad(format!("frames = {} is too many", self.frames));
        }
        if !(5..=95).contains(&self.old_blocks_pct) {
            return bad(format!(
                "old_blocks_pct = {} is outside 5..=95",
                self.old_blocks_pct
            ));
        }
        if self.lru_scan_depth == 0 || self.io_capacity == 0 || self.war_copy_batch == 0 {
            return bad("lru_scan_depth, io_capacity and war_copy_batch must be positive".into());
        }
        if self.io_capacity_max < self.io_capacity {
            return bad(format!(
                "io_capacity_max = {} is below io_capacity = {}",
                self.io_capacity_max, self.io_capacity
            ));
        }
        if !(0.0..=100.0).contains(&self.max_dirty_pages_pct)
            || !(0.0..=100.0).contains(&self.max_dirty_pages_pct_lwm)
            || !(0.0..=100.0).contains(&self.adaptive_flushing_lwm)
        {
            return bad("percentages must lie in 0..=100".into());
        }
        if self.cleaner_period_ms == 0 {
            return bad("cleaner_period_ms must be positive".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_valid_ones() {
        for scheme in Scheme::ALL {
            assert_eq!(Scheme::from_name(scheme.name()).ok(), Some(*scheme));
        }
        let err = Scheme::from_name("lru-x")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("lru-c-basic"), "{err}");
        assert!(Scheme::parse_list(" , ").is_err());
    }

    #[test]
    fn toml_overrides_and_rejects_bad_input() {
        let config = PoolConfig::from_toml(Scheme::LruC, 4096, "lru_scan_depth = 256\n").unwrap();
        assert_eq!(config.lru_scan_depth, 256);
        assert_eq!(config.frames, 4096);
        assert!(PoolConfig::from_toml(Scheme::LruC, 4096, "no_such_knob = 1").is_err());
        assert!(PoolConfig::from_toml(Scheme::LruC, 4096, "old_blocks_pct = 99").is_err());
        assert!(PoolConfig::from_toml(Scheme::LruC, 4096, "lru_scan_depth = [").is_err());
    }
}
