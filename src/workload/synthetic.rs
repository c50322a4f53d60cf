//! The ACE synthetic page-level mixes (ACE paper, section VI, Table II) and their database image.
//!
//! | mix | reads/writes | locality |
//! |-----|--------------|----------|
//! | `ms`  (mixed skewed)           | 50/50 | 90/10   |
//! | `wis` (write-intensive skewed) | 10/90 | 90/10   |
//! | `ris` (read-intensive skewed)  | 90/10 | 90/10   |
//! | `mu`  (mixed uniform)          | 50/50 | uniform |
//!
//! "90/10" = 90% of the operations on 10% of the pages; the hot set is scattered over the
//! database by [`crate::workload::keys::Scatter`]. Every knob (read ratio, skew, size) can be
//! overridden.
//!
//! Page payload (after the [`PAGE_HEADER_SIZE`]-byte header the pool stamps):
//!
//! ```text
//! offset size field
//!      0    8 version   number of updates applied to this page (little endian)
//!      8    8 page_id   the page's own id
//!     16    4 crc       CRC32C of bytes [0, 16) and [20, RECORD_SIZE)
//!     20  108 filler    bytes derived from (page_id, version)
//! ```
//!
//! A read verifies the record (id and crc); an update verifies it, increments `version` and
//! rewrites the filler and crc, so every write-back really changes the page image. Invariant: a
//! page's record always verifies; a failure is [`Error::CorruptPage`].
//!
//! Workers are seeded per thread (`seed`, thread index) so a run is reproducible per thread.
//! No locks here; concurrency control is the [`PageAccess`] implementation's page latches.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::PageAccess;
use super::keys::{KeyDistribution, Skew};
use crate::device::SharedDevice;
use crate::error::{Error, PageId, Result};
use crate::page::{PAGE_HEADER_SIZE, stamp};

/// Bytes of the self-checking record at the start of the payload.
pub const RECORD_SIZE: usize = 128;
/// Bytes of the database image written per `bulk_load` call (bounds the loader's memory).
pub const LOAD_CHUNK_BYTES: usize = 8 << 20;

/// A named mix of Table II.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mix {
    /// Mixed skewed: 50/50, 90/10.
    Ms,
    /// Write-intensive skewed: 10/90, 90/10.
    Wis,
    /// Read-intensive skewed: 90/10, 90/10.
    Ris,
    /// Mixed uniform: 50/50, uniform.
    Mu,
}

impl Mix {
    /// Every mix.
    pub const ALL: &'static [Mix] = &[Mix::Ms, Mix::Wis, Mix::Ris, Mix::Mu];

    /// The name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Mix::Ms => "ms",
            Mix::Wis => "wis",
            Mix::Ris => "ris",
            Mix::Mu => "mu",
        }
    }

    /// Parses a mix name.
    ///
    /// # Errors
    /// [`Error::Config`] listing the valid names.
    pub fn parse(name: &str) -> Result<Mix> {
        let name = name.trim();
        Mix::ALL
            .iter()
            .copied()
            .find(|mix| mix.name() == name)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown workload `{name}`; valid workloads: ms, wis, ris, mu (synthetic page mixes), tpcc, ycsb-a .. ycsb-f, linkbench (record workloads)"
                ))
            })
    }

    /// Fraction of operations that are reads.
    #[must_use]
    pub fn read_ratio(self) -> f64 {
        match self {
            Mix::Ms | Mix::Mu => 0.5,
            Mix::Wis => 0.1,
            Mix::Ris => 0.9,
        }
    }

    /// The locality.
    #[must_use]
    pub fn skew(self) -> Skew {
        match self {
            Mix::Ms | Mix::Wis | Mix::Ris => Skew::HotSet {
                hot_fraction: 0.1,
                hot_ops_fraction: 0.9,
            },
            Mix::Mu => Skew::Uniform,
        }
    }
}

/// A synthetic workload's parameters.
#[derive(Debug, Clone, Serialize)]
pub struct SyntheticConfig {
    /// The mix the defaults came from.
    pub mix: Mix,
    /// Fraction of reads in [0, 1].
    pub read_ratio: f64,
    /// Page choice.
    pub skew: Skew,
    /// Database size in pages.
    pub db_pages: u64,
    /// Page size in bytes.
    pub page_size: usize,
    /// Base seed; worker `t` uses a seed derived from (seed, t).
    pub seed: u64,
}

impl SyntheticConfig {
    /// The mix's defaults for a database of `db_pages` pages of `page_size` bytes.
    #[must_use]
    pub fn new(mix: Mix, db_pages: u64, page_size: usize) -> SyntheticConfig {
        SyntheticConfig {
            mix,
            read_ratio: mix.read_ratio(),
            skew: mix.skew(),
            db_pages,
            page_size,
            seed: 42,
        }
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.read_ratio) {
            return Err(Error::Config(format!(
                "read ratio {} is not between 0 and 1",
                self.read_ratio
            )));
        }
        if self.page_size < PAGE_HEADER_SIZE + RECORD_SIZE {
            return Err(Error::Config(format!(
                "page size {} is too small for the workload's record ({} bytes)",
                self.page_size,
                PAGE_HEADER_SIZE + RECORD_SIZE
            )));
        }
        if self.db_pages == 0 {
            return Err(Error::Config("the database needs at least one page".into()));
        }
        self.skew.validate()
    }
}

/// What one operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// Read and verify the page.
    Read,
    /// Update the page's record.
    Write,
}

/// One operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// Read or write.
    pub kind: OpKind,
    /// The page.
    pub page: PageId,
}

/// A workload shared by the workers (read-only).
#[derive(Debug, Clone)]
pub struct SyntheticWorkload {
    config: SyntheticConfig,
    keys: KeyDistribution,
}

impl SyntheticWorkload {
    /// Builds the workload.
    ///
    /// # Errors
    /// [`Error::Config`] for bad parameters.
    pub fn new(config: SyntheticConfig) -> Result<SyntheticWorkload> {
        config.validate()?;
        let keys = KeyDistribution::new(config.db_pages, config.skew)?;
        Ok(SyntheticWorkload { config, keys })
    }

    /// The parameters.
    #[must_use]
    pub fn config(&self) -> &SyntheticConfig {
        &self.config
    }

    /// The page distribution (e.g. to ask whether a page is hot).
    #[must_use]
    pub fn keys(&self) -> &KeyDistribution {
        &self.keys
    }

    /// The generator of worker `thread`.
    #[must_use]
    pub fn worker(&self, thread: usize) -> Worker<'_> {
        let seed = splitmix64(self.config.seed ^ splitmix64(thread as u64 + 1));
        Worker {
            workload: self,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// Writes the initial database image (every page formatted and stamped with LSN 0) to
    /// `device`, in chunks of at most [`LOAD_CHUNK_BYTES`].
    ///
    /// # Errors
    /// [`Error::Config`] when the device is too small or has another page size; device errors.
    pub fn load(&self, device: &SharedDevice) -> Result<()> {
        let info = device.info();
        if info.page_size != self.config.page_size || info.pages < self.config.db_pages {
            return Err(Error::Config(format!(
                "device {} ({} pages of {} bytes) cannot hold the database ({} pages of {} bytes)",
                info.name, info.pages, info.page_size, self.config.db_pages, self.config.page_size
            )));
        }
        let page_size = self.config.page_size;
        let pages_per_chunk = (LOAD_CHUNK_BYTES / page_size).max(1) as u64;
        let mut image = vec![0u8; pages_per_chunk as usize * page_size];
        let mut first = 0u64;
        // Bound: db_pages / pages_per_chunk iterations.
        while first < self.config.db_pages {
            let count = pages_per_chunk.min(self.config.db_pages - first);
            let chunk = &mut image[..count as usize * page_size];
            for (index, page) in chunk.chunks_mut(page_size).enumerate() {
                format_page(page, first + index as u64);
            }
            device.bulk_load(first, chunk)?;
            first += count;
        }
        Ok(())
    }
}

/// Formats `page` as the initial image of page `page_id`: record version 0, header stamped.
pub fn format_page(page: &mut [u8], page_id: PageId) {
    assert!(page.len() >= PAGE_HEADER_SIZE + RECORD_SIZE);
    page.fill(0);
    write_record(&mut page[PAGE_HEADER_SIZE..], page_id, 0);
    stamp(page, page_id, 0);
}

/// The record's version in a whole page image, after verifying it.
///
/// # Errors
/// [`Error::CorruptPage`] when the record does not verify.
pub fn record_version(page: &[u8], page_id: PageId) -> Result<u64> {
    if page.len() < PAGE_HEADER_SIZE + RECORD_SIZE {
        return Err(corrupt(page_id, "page too small for a record"));
    }
    verify_record(&page[PAGE_HEADER_SIZE..], page_id)
}

fn write_record(payload: &mut [u8], page_id: PageId, version: u64) {
    let record = &mut payload[..RECORD_SIZE];
    record[0..8].copy_from_slice(&version.to_le_bytes());
    record[8..16].copy_from_slice(&page_id.to_le_bytes());
    let mut state = splitmix64(page_id ^ version.rotate_left(32));
    for chunk in record[20..].chunks_mut(8) {
        state = splitmix64(state);
        let bytes = state.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    let crc = record_crc(record);
    record[16..20].copy_from_slice(&crc.to_le_bytes());
}

fn record_crc(record: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&record[..16]), &record[20..RECORD_SIZE])
}

fn verify_record(payload: &[u8], page_id: PageId) -> Result<u64> {
    let record = &payload[..RECORD_SIZE];
    let word = |range: std::ops::Range<usize>| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&record[range]);
        u64::from_le_bytes(bytes)
    };
    let stored_id = word(8..16);
    if stored_id != page_id {
        return Err(corrupt(
            page_id,
            &format!("workload record belongs to page {stored_id}"),
        ));
    }
    let mut crc = [0u8; 4];
    crc.copy_from_slice(&record[16..20]);
    if u32::from_le_bytes(crc) != record_crc(record) {
        return Err(corrupt(page_id, "workload record checksum mismatch"));
    }
    Ok(word(0..8))
}

fn corrupt(page: PageId, reason: &str) -> Error {
    Error::CorruptPage {
        page,
        reason: reason.to_string(),
    }
}

/// SplitMix64 finaliser: a cheap, well-mixed 64-bit hash.
#[must_use]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One worker's operation generator and executor.
#[derive(Debug)]
pub struct Worker<'a> {
    workload: &'a SyntheticWorkload,
    rng: SmallRng,
}

impl Worker<'_> {
    /// Draws the next operation.
    pub fn next_op(&mut self) -> Op {
        let kind = if self.rng.gen_bool(self.workload.config.read_ratio) {
            OpKind::Read
        } else {
            OpKind::Write
        };
        Op {
            kind,
            page: self.workload.keys.sample(&mut self.rng),
        }
    }

    /// Runs `op` against `target`.
    ///
    /// # Errors
    /// The target's errors; [`Error::CorruptPage`] when the record does not verify.
    pub fn execute(&mut self, target: &dyn PageAccess, op: Op) -> Result<()> {
        let mut outcome = Ok(());
        match op.kind {
            OpKind::Read => target.read_with(op.page, &mut |page| {
                outcome = record_version(page, op.page).map(|_| ());
            })?,
            OpKind::Write => target.update_with(op.page, &mut |page| {
                outcome = record_version(page, op.page).map(|version| {
                    write_record(&mut page[PAGE_HEADER_SIZE..], op.page, version + 1);
                });
            })?,
        }
        outcome
    }

    /// Draws and runs one operation; returns what it was.
    ///
    /// # Errors
    /// As [`Worker::execute`].
    pub fn step(&mut self, target: &dyn PageAccess) -> Result<Op> {
        let op = self.next_op();
        self.execute(target, op)?;
        Ok(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_verify_and_damage_is_caught() {
        let mut page = vec![0u8; 4096];
        format_page(&mut page, 9);
        assert_eq!(record_version(&page, 9).ok(), Some(0));
        assert!(crate::page::verify(&page, 9).is_ok());
        assert!(record_version(&page, 8).is_err());
        write_record(&mut page[PAGE_HEADER_SIZE..], 9, 5);
        assert_eq!(record_version(&page, 9).ok(), Some(5));
        page[PAGE_HEADER_SIZE + 50] ^= 1;
        assert!(record_version(&page, 9).is_err());
    }

    #[test]
    fn mixes_parse_and_bad_names_list_valid_ones() {
        for mix in Mix::ALL {
            assert_eq!(Mix::parse(mix.name()).ok(), Some(*mix));
        }
        let err = Mix::parse("tpcc")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("ms, wis, ris, mu"), "{err}");
    }
}
