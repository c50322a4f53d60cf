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
