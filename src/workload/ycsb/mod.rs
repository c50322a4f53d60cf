//! YCSB's core workloads A-F (site.ycsb.workloads.CoreWorkload) on the key-value interface.
//!
//! One table (`ycsb.usertable` by default) of `record_count` rows. A key is `user` followed
//! by the decimal key number, FNV-hashed unless inserts are ordered (YCSB's `buildKeyName`,
//! zero-padded to `zero_padding` digits); keys are stored as those bytes, so a scan follows
//! their string order as in YCSB's SQL bindings. With [`KeyFormat::Binary`] the same number is
//! stored as 8 big-endian bytes instead (fixed-size integer keys, as vmcache's). A row is `field_count` fields of
//! `field_length` random printable bytes (defaults 10 x 100), stored as a 2-byte length and
//! the bytes per field (the field names `field0..` are implied by position).
//!
//! | workload | operations | request distribution |
//! |----------|------------|----------------------|
//! | A | 50% read, 50% update | zipfian |
//! | B | 95% read, 5% update | zipfian |
//! | C | 100% read | zipfian |
//! | D | 95% read, 5% insert | latest |
//! | E | 95% scan (uniform length 1-100), 5% insert | zipfian |
//! | F | 50% read, 50% read-modify-write | zipfian |
//!
//! "zipfian" is YCSB's CoreWorkload meaning: a [`ScrambledZipfian`] with constant 0.99 over
//! the loaded records plus twice the expected inserts (`operation_count` x insert share x 2);
//! a key number past the last acknowledged insert is drawn again. The plain (unscrambled)
//! [`Zipfian`], `latest` ([`SkewedLatest`]) and `uniform` are selectable too. Operations:
//! read (the whole row), update (YCSB updates one random field: a read-modify-write of the
//! row value), insert (the next number of the [`AcknowledgedCounter`], hashed), scan (from a
//! chosen key forward, length uniform in [1, max_scan_length]), read-modify-write (read the
//! row, then update one field, in one transaction). A read is an auto-commit read
//! ([`KvEngine::get_committed_into`]: the latest committed row, no lock left behind, as YCSB's
//! JDBC binding reads with autocommit on); every other operation is one transaction. Both are
//! retried on conflict up to `max_attempts`.
//!
//! Where it differs from YCSB: rows are binary, not JDBC columns; key numbers are `u64`
//! (YCSB truncates chosen key numbers to `int`); the load sorts the record keys to feed
//! `bulk_load` (16 bytes of memory per record while loading).
//!
//! Shared between clients: the insert counter and the statistics counters (atomics, one
//! mutex inside the counter). No other locks.

pub mod generators;

use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng;
use rand::rngs::SmallRng;

pub use generators::{AcknowledgedCounter, ScrambledZipfian, SkewedLatest, Zipfian};

use crate::error::{Error, Result};
use crate::kv::{Direction, KvEngine, KvTxn, TreeId};
use crate::workload::record::{
    CheckReport, LoadProgress, LoadReport, RecordWorker, RecordWorkload, RowReader, RowWriter,
    TableLoader, TxnEnd, TxnOutcome, Weights, run_txn, scan_prefix_batches, seeded_rng,
};

/// The five operation kinds, indexed as [`YcsbOp`].
pub const OP_NAMES: [&str; 5] = ["read", "update", "insert", "scan", "read_modify_write"];

/// Draws of a key number before giving up on the distribution and drawing uniformly among
/// the acknowledged records (YCSB loops without bound; it draws again while the number is
/// past the last acknowledged insert).
const KEY_DRAWS_MAX: usize = 1000;
/// Rows per transaction when `check` scans the table.
const CHECK_BATCH: usize = 4096;

/// A YCSB operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YcsbOp {
    /// Read a whole row.
    Read = 0,
    /// Update one field (or all, with `write_all_fields`).
    Update = 1,
    /// Insert the next record.
    Insert = 2,
    /// Scan forward from a key.
    Scan = 3,
    /// Read a row, then update it, in one transaction.
    ReadModifyWrite = 4,
}

impl YcsbOp {
    const ALL: [YcsbOp; 5] = [
        YcsbOp::Read,
        YcsbOp::Update,
        YcsbOp::Insert,
        YcsbOp::Scan,
        YcsbOp::ReadModifyWrite,
    ];
}

/// How key numbers are chosen for reads, updates, scans and read-modify-writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestDistribution {
    /// Uniform over the loaded records.
    Uniform,
    /// YCSB's `ZipfianGenerator` over the key space: low key numbers are hot.
    Zipfian,
    /// YCSB's `ScrambledZipfianGenerator` (what `requestdistribution=zipfian` means in YCSB).
    ScrambledZipfian,
    /// YCSB's `SkewedLatestGenerator`: the newest inserts are hot.
    Latest,
}

impl RequestDistribution {
    /// YCSB's `requestdistribution` names: `uniform`, `zipfian` (YCSB's scrambled zipfian),
    /// `latest`, and `unscrambled-zipfian` (low key numbers hot).
    ///
    /// # Errors
    /// [`Error::Config`] naming the accepted values.
    pub fn parse(text: &str) -> Result<RequestDistribution> {
        match text {
            "uniform" => Ok(RequestDistribution::Uniform),
            "zipfian" => Ok(RequestDistribution::ScrambledZipfian),
            "unscrambled-zipfian" => Ok(RequestDistribution::Zipfian),
            "latest" => Ok(RequestDistribution::Latest),
            _ => Err(Error::Config(format!(
                "unknown request distribution `{text}`: uniform, zipfian, unscrambled-zipfian or latest"
            ))),
        }
    }
}

/// How a record's (hashed or ordered) key number becomes the bytes of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyFormat {
    /// YCSB's `buildKeyName`: the key prefix, then the number in decimal, zero-padded (a hashed
    /// key such as `user6284781860667377211` is 23 bytes).
    #[default]
    Text,
    /// The number as 8 big-endian bytes, with no prefix and no padding: the integer keys of
    /// engines measured with fixed-size keys, such as vmcache's lookup benchmark
    /// (`scripts/vs_vmcache.py`'s `lookup-mem`). Big-endian bytes sort as the numbers do, so
    /// scans follow the numbers' order.
    Binary,
}

impl KeyFormat {
    /// `text` or `binary`.
    ///
    /// # Errors
    /// [`Error::Config`] naming the accepted values.
    pub fn parse(text: &str) -> Result<KeyFormat> {
        match text {
            "text" => Ok(KeyFormat::Text),
            "binary" => Ok(KeyFormat::Binary),
            _ => Err(Error::Config(format!(
                "unknown key format `{text}`: text or binary"
            ))),
        }
    }

    /// The name [`KeyFormat::parse`] reads.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            KeyFormat::Text => "text",
            KeyFormat::Binary => "binary",
        }
    }
}

/// One of the six standard workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum YcsbWorkload {
    /// Update heavy: 50/50 read/update.
    A,
    /// Read mostly: 95/5 read/update.
    B,
    /// Read only.
    C,
    /// Read latest: 95/5 read/insert.
    D,
    /// Short ranges: 95/5 scan/insert.
    E,
    /// Read-modify-write: 50/50 read/RMW.
    F,
}

impl YcsbWorkload {
    /// Every standard workload.
    pub const ALL: [YcsbWorkload; 6] = [
        YcsbWorkload::A,
        YcsbWorkload::B,
        YcsbWorkload::C,
        YcsbWorkload::D,
        YcsbWorkload::E,
        YcsbWorkload::F,
    ];

    /// `ycsb-a` .. `ycsb-f`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            YcsbWorkload::A => "ycsb-a",
            YcsbWorkload::B => "ycsb-b",
            YcsbWorkload::C => "ycsb-c",
            YcsbWorkload::D => "ycsb-d",
            YcsbWorkload::E => "ycsb-e",
            YcsbWorkload::F => "ycsb-f",
        }
    }

    /// Parses `ycsb-a` (or `a`, any case).
    ///
    /// # Errors
    /// [`Error::Config`] listing the names.
    pub fn parse(text: &str) -> Result<YcsbWorkload> {
        let lower = text.trim().to_ascii_lowercase();
        let letter = lower.strip_prefix("ycsb-").unwrap_or(&lower);
        YcsbWorkload::ALL
            .into_iter()
            .find(|w| w.name().ends_with(letter) && letter.len() == 1)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown YCSB workload `{text}`; known: ycsb-a, ycsb-b, ycsb-c, ycsb-d, \
                     ycsb-e, ycsb-f"
                ))
            })
    }

    /// Operation shares in percent, in [`OP_NAMES`] order.
    #[must_use]
    pub fn shares(self) -> [f64; 5] {
        match self {
            YcsbWorkload::A => [50.0, 50.0, 0.0, 0.0, 0.0],
            YcsbWorkload::B => [95.0, 5.0, 0.0, 0.0, 0.0],
            YcsbWorkload::C => [100.0, 0.0, 0.0, 0.0, 0.0],
            YcsbWorkload::D => [95.0, 0.0, 5.0, 0.0, 0.0],
            YcsbWorkload::E => [0.0, 0.0, 5.0, 95.0, 0.0],
            YcsbWorkload::F => [50.0, 0.0, 0.0, 0.0, 50.0],
        }
    }
}

/// A YCSB run's parameters (CoreWorkload's properties).
#[derive(Debug, Clone, serde::Serialize)]
pub struct YcsbConfig {
    /// Name reported (`ycsb-a`.. for the standard workloads).
    pub name: String,
    /// `recordcount`: rows loaded (at least 3).
    pub record_count: u64,
    /// `operationcount`: expected operations of the run (sizes the zipfian key space for
    /// inserts, as YCSB does).
    pub operation_count: u64,
    /// `table`: the tree is `ycsb.<table>`.
    pub table: String,
    /// `fieldcount`.
    pub field_count: usize,
    /// `fieldlength` (constant).
    pub field_length: usize,
    /// The key prefix (`user`).
    pub key_prefix: String,
    /// `insertorder=ordered` (false: hashed).
    pub ordered_inserts: bool,
    /// `zeropadding` (1..=32).
    pub zero_padding: usize,
    /// How key numbers become key bytes ([`KeyFormat::Text`], YCSB's, by default; the prefix
    /// and the padding apply to it only).
    pub key_format: KeyFormat,
    /// Operation shares in percent, in [`OP_NAMES`] order.
    pub shares: [f64; 5],
    /// `requestdistribution`.
    pub request_distribution: RequestDistribution,
    /// `zipfianconstant`, in (0, 1).
    pub zipfian_constant: f64,
    /// `minscanlength`.
    pub min_scan_length: usize,
    /// `maxscanlength`.
    pub max_scan_length: usize,
    /// `writeallfields`: updates rewrite every field instead of one.
    pub write_all_fields: bool,
    /// Seed of the load and of the clients.
    pub seed: u64,
    /// Attempts per operation before a conflict is returned as an error.
    pub max_attempts: usize,
}

impl YcsbConfig {
    /// The standard workload `workload` over `record_count` records, with YCSB's defaults
    /// (10 fields of 100 bytes, hashed `user` keys, zipfian 0.99, scans of 1-100 records,
    /// operation count = record count as in YCSB's workload files).
    #[must_use]
    pub fn standard(workload: YcsbWorkload, record_count: u64) -> YcsbConfig {
        YcsbConfig {
            name: workload.name().to_string(),
            record_count,
            operation_count: record_count,
            table: "usertable".into(),
            field_count: 10,
            field_length: 100,
            key_prefix: "user".into(),
            ordered_inserts: false,
            zero_padding: 1,
            key_format: KeyFormat::Text,
            shares: workload.shares(),
            request_distribution: if workload == YcsbWorkload::D {
                RequestDistribution::Latest
            } else {
                RequestDistribution::ScrambledZipfian
            },
            zipfian_constant: generators::ZIPFIAN_CONSTANT,
            min_scan_length: 1,
            max_scan_length: 100,
            write_all_fields: false,
            seed: 0x0c5b,
            max_attempts: 100,
        }
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Config`] naming the bad one.
    pub fn validate(&self) -> Result<()> {
        let bad = |why: String| Err(Error::Config(format!("YCSB: {why}")));
        if self.record_count < 3 {
            return bad(format!("record_count {} < 3", self.record_count));
        }
        if self.field_count == 0 || self.field_count > 1000 {
            return bad(format!("field_count {} outside 1..=1000", self.field_count));
        }
        if self.field_length > usize::from(u16::MAX) {
            return bad(format!("field_length {} > 65535", self.field_length));
        }
        if !(1..=32).contains(&self.zero_padding) {
            return bad(format!("zero_padding {} outside 1..=32", self.zero_padding));
        }
        if !(self.zipfian_constant > 0.0 && self.zipfian_constant < 1.0) {
            return bad(format!(
                "zipfian_constant {} outside (0, 1)",
                self.zipfian_constant
            ));
        }
        if self.min_scan_length == 0 || self.min_scan_length > self.max_scan_length {
            return bad(format!(
                "scan lengths {}..={} (want 1 <= min <= max)",
                self.min_scan_length, self.max_scan_length
            ));
        }
        if self.max_attempts == 0 {
            return bad("max_attempts must be at least 1".into());
        }
        Weights::from_percent(self.shares, &OP_NAMES).map(|_| ())
    }

    /// The row value size in bytes.
    #[must_use]
    pub fn row_bytes(&self) -> usize {
        self.field_count * (2 + self.field_length)
    }
}

/// Characters of the longest `i64` in decimal (`-9223372036854775808`).
const DECIMAL_I64_MAX: usize = 20;

/// `value` in decimal as `i64::to_string` writes it, in the tail of `buffer`: two digits per
/// division (a hashed key has 18-19 of them, and a lookup builds one key per operation).
fn decimal(value: i64, buffer: &mut [u8; DECIMAL_I64_MAX]) -> &[u8] {
    let mut rest = value.unsigned_abs();
    let mut start = DECIMAL_I64_MAX;
    while rest >= 100 {
        let pair = (rest % 100) as u8;
        rest /= 100;
        start -= 2;
        buffer[start] = b'0' + pair / 10;
        buffer[start + 1] = b'0' + pair % 10;
    }
    if rest >= 10 {
        start -= 2;
        buffer[start] = b'0' + rest as u8 / 10;
        buffer[start + 1] = b'0' + rest as u8 % 10;
    } else {
        start -= 1;
        buffer[start] = b'0' + rest as u8;
    }
    if value < 0 {
        start -= 1;
        buffer[start] = b'-';
    }
    &buffer[start..]
}

/// Key names: YCSB's `buildKeyName` (or the number's 8 bytes, [`KeyFormat::Binary`]), with a
/// packed form for sorting the load.
#[derive(Debug, Clone)]
struct KeyNames {
    prefix: Vec<u8>,
    zero_padding: usize,
    ordered: bool,
    format: KeyFormat,
}

impl KeyNames {
    /// The key number as the key encodes it: itself when inserts are ordered, else YCSB's
    /// FNV hash of it.
    fn value(&self, keynum: u64) -> i64 {
        if self.ordered {
            keynum.cast_signed()
        } else {
            generators::fnv_hash64(keynum)
        }
    }

    /// The characters after the prefix: the (hashed) number in decimal, zeros put before it
    /// (and before its sign) up to `zero_padding` characters, as YCSB's `buildKeyName`.
    fn suffix(&self, keynum: u64) -> Vec<u8> {
        let mut suffix = Vec::new();
        self.push_suffix(keynum, &mut suffix);
        suffix
    }

    /// Appends [`KeyNames::suffix`] to `out` without allocating (a client builds a key per
    /// operation: `key_into`).
    fn push_suffix(&self, keynum: u64, out: &mut Vec<u8>) {
        let value = self.value(keynum);
        let mut digits = [0u8; DECIMAL_I64_MAX];
        let digits = decimal(value, &mut digits);
        let fill = self.zero_padding.saturating_sub(digits.len());
        out.extend(std::iter::repeat_n(b'0', fill));
        out.extend_from_slice(digits);
    }

    fn key(&self, keynum: u64) -> Vec<u8> {
        let mut key = Vec::new();
        self.key_into(keynum, &mut key);
        key
    }

    /// The key of `keynum` in `out` (cleared first; its capacity is reused).
    fn key_into(&self, keynum: u64, out: &mut Vec<u8>) {
        out.clear();
        match self.format {
            KeyFormat::Text => {
                out.extend_from_slice(&self.prefix);
                self.push_suffix(keynum, out);
            }
            KeyFormat::Binary => out.extend_from_slice(&self.binary(keynum)),
        }
    }

    /// A [`KeyFormat::Binary`] key: the value's two's-complement bits, big-endian.
    fn binary(&self, keynum: u64) -> [u8; 8] {
        self.value(keynum).cast_unsigned().to_be_bytes()
    }

    /// A form of the key that sorts as its bytes do: a binary key's number, or a text key's
    /// suffix as 4-bit codes, left-aligned ('-' = 1, '0'..'9' = 2..11, end = 0), at most 32
    /// characters (20 digits and sign, or the padding).
    fn packed(&self, keynum: u64) -> u128 {
        if self.format == KeyFormat::Binary {
            return u128::from(u64::from_be_bytes(self.binary(keynum)));
        }
        let suffix = self.suffix(keynum);
        assert!(
            suffix.len() <= 32,
            "key suffix `{}` too long to pack",
            String::from_utf8_lossy(&suffix)
        );
        suffix
            .iter()
            .copied()
            .enumerate()
            .fold(0u128, |packed, (i, c)| {
                let code = if c == b'-' {
                    1
                } else {
                    u128::from(c - b'0') + 2
                };
                packed | code << (124 - 4 * i)
            })
    }

    fn unpack(&self, packed: u128) -> Vec<u8> {
        if self.format == KeyFormat::Binary {
            // `packed` holds a binary key's 64 bits (`packed` above): the truncation is exact.
            return (packed as u64).to_be_bytes().to_vec();
        }
        let mut key = self.prefix.clone();
        for i in 0..32 {
            let code = (packed >> (124 - 4 * i)) & 0xf;
            match code {
                0 => break,
                1 => key.push(b'-'),
                digit => key.push(b'0' + (digit - 2) as u8),
            }
        }
        key
    }
}

/// State every client shares.
#[derive(Debug)]
struct Shared {
    config: YcsbConfig,
    keys: KeyNames,
    weights: Weights<5>,
    inserts: AcknowledgedCounter,
    /// zeta over the initial key space, computed once for every client.
    zetan: Option<f64>,
    loaded_rows: AtomicU64,
    inserted_rows: AtomicU64,
    not_found: AtomicU64,
}

/// A YCSB workload.
#[derive(Debug, Clone)]
pub struct Ycsb {
    shared: Arc<Shared>,
}

impl Ycsb {
    /// A workload with `config`.
    ///
    /// # Errors
    /// An invalid configuration.
    pub fn new(config: YcsbConfig) -> Result<Ycsb> {
        config.validate()?;
        let weights = Weights::from_percent(config.shares, &OP_NAMES)?;
        let theta = config.zipfian_constant;
        let zetan = match config.request_distribution {
            RequestDistribution::Zipfian => Some(generators::zeta(
                0,
                zipfian_key_space(&config) + 1,
                theta,
                0.0,
            )),
            RequestDistribution::Latest => {
                Some(generators::zeta(0, config.record_count - 1, theta, 0.0))
            }
            RequestDistribution::Uniform | RequestDistribution::ScrambledZipfian => None,
        };
        Ok(Ycsb {
            shared: Arc::new(Shared {
                keys: KeyNames {
                    prefix: config.key_prefix.as_bytes().to_vec(),
                    zero_padding: config.zero_padding,
                    ordered: config.ordered_inserts,
                    format: config.key_format,
                },
                weights,
                inserts: AcknowledgedCounter::new(config.record_count),
                zetan,
                loaded_rows: AtomicU64::new(0),
                inserted_rows: AtomicU64::new(0),
                not_found: AtomicU64::new(0),
                config,
            }),
        })
    }

    /// The standard workload `workload` over `record_count` records.
    ///
    /// # Errors
    /// An invalid record count.
    pub fn standard(workload: YcsbWorkload, record_count: u64) -> Result<Ycsb> {
        Ycsb::new(YcsbConfig::standard(workload, record_count))
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &YcsbConfig {
        &self.shared.config
    }

    /// The key of record number `keynum`.
    #[must_use]
    pub fn key(&self, keynum: u64) -> Vec<u8> {
        self.shared.keys.key(keynum)
    }

    /// Records inserted by this workload's clients so far.
    #[must_use]
    pub fn inserted(&self) -> u64 {
        self.shared.inserted_rows.load(Ordering::Relaxed)
    }

    /// Reads, updates and read-modify-writes that found no row.
    #[must_use]
    pub fn not_found(&self) -> u64 {
        self.shared.not_found.load(Ordering::Relaxed)
    }

    fn tree_name(&self) -> String {
        format!("ycsb.{}", self.shared.config.table)
    }
}

/// The largest key number the zipfian distributions cover: the records plus twice the
/// expected inserts (CoreWorkload's `expectednewkeys`).
fn zipfian_key_space(config: &YcsbConfig) -> u64 {
    let insert_share = config.shares[YcsbOp::Insert as usize] / 100.0;
    let expected_new = (config.operation_count as f64 * insert_share * 2.0) as u64;
    config.record_count + expected_new
}

/// A row of `field_count` random printable fields.
fn random_row(rng: &mut SmallRng, config: &YcsbConfig) -> Vec<u8> {
    let mut row = RowWriter::with_capacity(config.row_bytes());
    let mut field = vec![0u8; config.field_length];
    for _ in 0..config.field_count {
        fill_printable(rng, &mut field);
        row.var16(&field);
    }
    row.finish()
}

/// Printable ASCII (' ' to '~'), like YCSB's `RandomByteIterator`.
fn fill_printable(rng: &mut SmallRng, bytes: &mut [u8]) {
    rng.fill(bytes);
    for b in bytes {
        *b = b' ' + *b % 95;
    }
}

/// Splits a stored row into its fields, checking their count and lengths.
/// Checks a stored row's shape (`field_count` fields of `field_length` bytes, nothing after)
/// and passes each field, borrowed, to `field` with its index: nothing is copied.
fn read_fields<'a>(
    config: &YcsbConfig,
    bytes: &'a [u8],
    mut field: impl FnMut(usize, &'a [u8]),
) -> Result<()> {
    let mut row = RowReader::new("YCSB", bytes);
    for index in 0..config.field_count {
        let value = row.var16()?;
        if value.len() != config.field_length {
            return Err(Error::InvalidArgument(format!(
                "malformed YCSB row: a field of {} bytes, want {}",
                value.len(),
                config.field_length
            )));
        }
        field(index, value);
    }
    row.end()
}

/// Checks a stored row's shape (see [`read_fields`]).
fn check_row(config: &YcsbConfig, bytes: &[u8]) -> Result<()> {
    read_fields(config, bytes, |_, _| {})
}

impl RecordWorkload for Ycsb {
    fn name(&self) -> &str {
        &self.shared.config.name
    }

    fn txn_types(&self) -> &[&'static str] {
        &OP_NAMES
    }

    fn load(
        &self,
        engine: &dyn KvEngine,
        progress: &mut dyn FnMut(LoadProgress),
    ) -> Result<LoadReport> {
        let config = &self.shared.config;
        let keys = &self.shared.keys;
        let mut packed: Vec<u128> = (0..config.record_count).map(|n| keys.packed(n)).collect();
        packed.sort_unstable();
        // Two hashed numbers may print alike (FNV is not injective after `abs`); keep one.
        packed.dedup();
        let mut rng = seeded_rng(config.seed, &[0x10ad]);
        let rows = packed
            .into_iter()
            .map(|p| (keys.unpack(p), random_row(&mut rng, config)));
        let mut loader = TableLoader::new(engine, 1, progress);
        loader.load(&self.tree_name(), rows)?;
        let report = loader.finish();
        self.shared
            .loaded_rows
            .store(report.rows(), Ordering::Relaxed);
        Ok(report)
    }

    fn worker(&self, thread: usize) -> Box<dyn RecordWorker> {
        Box::new(YcsbWorker::new(self.clone(), thread))
    }

    fn check(&self, engine: &dyn KvEngine) -> Result<CheckReport> {
        let config = &self.shared.config;
        let tree = engine.open_tree(&self.tree_name())?;
        let mut report = CheckReport {
            conditions: vec![
                format!(
                    "every row has {} fields of {} bytes",
                    config.field_count, config.field_length
                ),
                match config.key_format {
                    KeyFormat::Text => format!("every key starts with `{}`", config.key_prefix),
                    KeyFormat::Binary => "every key is 8 bytes".into(),
                },
                "rows = loaded + inserted".into(),
            ],
            ..CheckReport::default()
        };
        let (mut bad_rows, mut bad_keys) = (0u64, 0u64);
        let prefix = config.key_prefix.as_bytes();
        let key_ok = |key: &[u8]| match config.key_format {
            KeyFormat::Text => key.starts_with(prefix),
            KeyFormat::Binary => key.len() == 8,
        };
        let rows = scan_prefix_batches(engine, tree, &[], CHECK_BATCH, &mut |batch| {
            for (key, value) in batch {
                bad_keys += u64::from(!key_ok(key));
                bad_rows += u64::from(check_row(config, value).is_err());
            }
            Ok(())
        })?;
        report.rows_scanned = rows;
        for (count, condition) in [(bad_rows, 0), (bad_keys, 1)] {
            if count > 0 {
                let name = report.conditions[condition].clone();
                report.violate(name, self.tree_name(), format!("{count} rows violate it"));
            }
        }
        let loaded = match self.shared.loaded_rows.load(Ordering::Relaxed) {
            0 => config.record_count,
            n => n,
        };
        let expected = loaded + self.inserted();
        if rows != expected {
            report.violate(
                "rows = loaded + inserted",
                self.tree_name(),
                format!("{rows} rows, want {loaded} + {}", self.inserted()),
            );
        }
        Ok(report)
    }
}

/// How one client draws key numbers.
#[derive(Debug, Clone)]
enum KeyChooser {
    Uniform { records: u64 },
    Zipfian(Zipfian),
    Scrambled(ScrambledZipfian),
    Latest(SkewedLatest),
}

impl KeyChooser {
    fn new(shared: &Shared) -> KeyChooser {
        let config = &shared.config;
        let theta = config.zipfian_constant;
        match config.request_distribution {
            RequestDistribution::Uniform => KeyChooser::Uniform {
                records: config.record_count,
            },
            RequestDistribution::Zipfian => {
                let max = zipfian_key_space(config);
                let zetan = shared
                    .zetan
                    .unwrap_or_else(|| generators::zeta(0, max + 1, theta, 0.0));
                KeyChooser::Zipfian(Zipfian::with_zetan(0, max, theta, zetan))
            }
            RequestDistribution::ScrambledZipfian => {
                KeyChooser::Scrambled(ScrambledZipfian::new(0, zipfian_key_space(config), theta))
            }
            RequestDistribution::Latest => KeyChooser::Latest(SkewedLatest::new(
                config.record_count - 1,
                theta,
                shared.zetan,
            )),
        }
    }

    fn draw(&mut self, rng: &mut SmallRng, last: u64) -> u64 {
        match self {
            KeyChooser::Uniform { records } => rng.gen_range(0..*records),
            KeyChooser::Zipfian(zipfian) => zipfian.next(rng),
            KeyChooser::Scrambled(scrambled) => scrambled.next(rng),
            KeyChooser::Latest(latest) => latest.next(rng, last),
        }
    }
}

/// One YCSB client.
struct YcsbWorker {
    ycsb: Ycsb,
    rng: SmallRng,
    chooser: KeyChooser,
    tree: Option<TreeId>,
    /// The operation the last `run_one` drew (for abort attribution).
    last_type: Option<usize>,
    /// The stored value of the row read (`KvTxn::get_into`), reused.
    value: Vec<u8>,
    /// The row an update writes back, reused.
    row: Vec<u8>,
    /// The key of the operation, reused (`KeyNames::key_into`): a lookup allocates nothing.
    key: Vec<u8>,
}

impl YcsbWorker {
    fn new(ycsb: Ycsb, thread: usize) -> YcsbWorker {
        let rng = seeded_rng(ycsb.shared.config.seed, &[0xc11e, thread as u64]);
        let chooser = KeyChooser::new(&ycsb.shared);
        YcsbWorker {
            ycsb,
            rng,
            chooser,
            tree: None,
            last_type: None,
            value: Vec::new(),
            row: Vec::new(),
            key: Vec::new(),
        }
    }

    /// CoreWorkload's `nextKeynum`: a key number no later than the last acknowledged insert.
    fn next_keynum(&mut self) -> u64 {
        let last = self.ycsb.shared.inserts.last_value();
        for _ in 0..KEY_DRAWS_MAX {
            let keynum = self.chooser.draw(&mut self.rng, last);
            if keynum <= last {
                return keynum;
            }
        }
        self.rng.gen_range(0..=last)
    }

    /// The new field values of an update: one random field, or all of them, in ascending
    /// field order.
    fn changed_fields(&mut self) -> Vec<(usize, Vec<u8>)> {
        let config = &self.ycsb.shared.config;
        let indexes: Vec<usize> = if config.write_all_fields {
            (0..config.field_count).collect()
        } else {
            vec![self.rng.gen_range(0..config.field_count)]
        };
        indexes
            .into_iter()
            .map(|i| {
                let mut value = vec![0u8; config.field_length];
                fill_printable(&mut self.rng, &mut value);
                (i, value)
            })
            .collect()
    }

    fn attempts(&self) -> usize {
        self.ycsb.shared.config.max_attempts
    }

    fn read(&mut self, engine: &dyn KvEngine, tree: TreeId) -> Result<usize> {
        let keynum = self.next_keynum();
        self.ycsb.shared.keys.key_into(keynum, &mut self.key);
        let key = &self.key;
        let config = &self.ycsb.shared.config;
        let attempts = self.attempts();
        let value = &mut self.value;
        // YCSB's reads are single auto-commit operations (its JDBC binding with autocommit
        // on): no transaction, no lock left behind (`KvEngine::get_committed_into`).
        let mut retries = 0;
        let found = loop {
            match engine.get_committed_into(tree, key, value) {
                Err(err) if err.is_retryable() && retries + 1 < attempts.max(1) => retries += 1,
                outcome => break outcome?,
            }
        };
        if found {
            check_row(config, value)?;
        }
        self.count_not_found(found);
        Ok(retries)
    }

    /// Update and read-modify-write: both read the row and write it back changed.
    fn update(&mut self, engine: &dyn KvEngine, tree: TreeId) -> Result<usize> {
        let keynum = self.next_keynum();
        let changes = self.changed_fields();
        self.ycsb.shared.keys.key_into(keynum, &mut self.key);
        let key = &self.key;
        let config = &self.ycsb.shared.config;
        let attempts = self.attempts();
        let (value, row) = (&mut self.value, &mut self.row);
        let (found, _, retries) = run_txn(engine, attempts, |txn| {
            let buffers = (&mut *value, &mut *row);
            let found = update_row(txn, (config, tree, key), &changes, buffers)?;
            Ok((found, TxnEnd::Commit))
        })?;
        self.count_not_found(found);
        Ok(retries)
    }

    fn insert(&mut self, engine: &dyn KvEngine, tree: TreeId) -> Result<usize> {
        let shared = Arc::clone(&self.ycsb.shared);
        let keynum = shared.inserts.next_value();
        let key = self.ycsb.key(keynum);
        let row = random_row(&mut self.rng, &shared.config);
        let outcome = run_txn(engine, self.attempts(), |txn| {
            txn.put(tree, &key, &row).map(|()| ((), TxnEnd::Commit))
        });
        // Acknowledged whether or not the insert succeeded, as YCSB does (in `finally`).
        shared.inserts.acknowledge(keynum)?;
        let ((), _, retries) = outcome?;
        shared.inserted_rows.fetch_add(1, Ordering::Relaxed);
        Ok(retries)
    }

    fn scan(&mut self, engine: &dyn KvEngine, tree: TreeId) -> Result<usize> {
        let keynum = self.next_keynum();
        self.ycsb.shared.keys.key_into(keynum, &mut self.key);
        let key = &self.key;
        let config = &self.ycsb.shared.config;
        let length = self
            .rng
            .gen_range(config.min_scan_length..=config.max_scan_length);
        let ((), _, retries) = run_txn(engine, self.attempts(), |txn| {
            let mut malformed = None;
            txn.scan(
                tree,
                (Bound::Included(key.as_slice()), Bound::Unbounded),
                Direction::Forward,
                length,
                &mut |_, value| match check_row(config, value) {
                    Ok(()) => true,
                    Err(err) => {
                        malformed = Some(err);
                        false
                    }
                },
            )?;
            malformed.map_or(Ok(((), TxnEnd::Commit)), Err)
        })?;
        Ok(retries)
    }

    fn count_not_found(&self, found: bool) {
        if !found {
            self.ycsb.shared.not_found.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Reads the row at `key` into `value`, writes it back into `row` with the changed fields
/// replaced (both the worker's reused buffers); `changes` come in ascending field order.
/// Returns whether the row existed.
fn update_row(
    txn: &mut dyn KvTxn,
    (config, tree, key): (&YcsbConfig, TreeId, &[u8]),
    changes: &[(usize, Vec<u8>)],
    (value, row): (&mut Vec<u8>, &mut Vec<u8>),
) -> Result<bool> {
    if !txn.get_into(tree, key, value)? {
        return Ok(false);
    }
    let mut writer = RowWriter::reusing(std::mem::take(row));
    let mut pending = changes.iter().peekable();
    read_fields(config, value, |index, stored| {
        let changed = pending.next_if(|(at, _)| *at == index);
        writer.var16(changed.map_or(stored, |(_, new)| new.as_slice()));
    })?;
    *row = writer.finish();
    txn.put(tree, key, row)?;
    Ok(true)
}

impl RecordWorker for YcsbWorker {
    fn run_one(&mut self, engine: &dyn KvEngine) -> Result<TxnOutcome> {
        self.last_type = None;
        let tree = if let Some(tree) = self.tree {
            tree
        } else {
            let tree = engine.open_tree(&self.ycsb.tree_name())?;
            self.tree = Some(tree);
            tree
        };
        let op = YcsbOp::ALL[self.ycsb.shared.weights.draw(&mut self.rng)];
        self.last_type = Some(op as usize);
        let retries = match op {
            YcsbOp::Read => self.read(engine, tree)?,
            YcsbOp::Update | YcsbOp::ReadModifyWrite => self.update(engine, tree)?,
            YcsbOp::Insert => self.insert(engine, tree)?,
            YcsbOp::Scan => self.scan(engine, tree)?,
        };
        Ok(TxnOutcome {
            txn_type: op as usize,
            retries,
            rolled_back: false,
        })
    }

    fn last_txn_type(&self) -> Option<usize> {
        self.last_type
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_keys_sort_like_their_bytes() {
        for (ordered, format) in [false, true]
            .into_iter()
            .flat_map(|ordered| [(ordered, KeyFormat::Text), (ordered, KeyFormat::Binary)])
        {
            let keys = KeyNames {
                prefix: b"user".to_vec(),
                zero_padding: if ordered { 1 } else { 20 },
                ordered,
                format,
            };
            let mut by_bytes: Vec<Vec<u8>> = (0..2000).map(|n| keys.key(n)).collect();
            let mut by_packed: Vec<u128> = (0..2000).map(|n| keys.packed(n)).collect();
            by_bytes.sort();
            by_packed.sort_unstable();
            let unpacked: Vec<Vec<u8>> = by_packed.iter().map(|&p| keys.unpack(p)).collect();
            assert_eq!(unpacked, by_bytes);
        }
    }

    /// The allocation-free key names are YCSB's `buildKeyName` as `format!` writes it: the
    /// number (signed, for hashed keys) with zeros before it, sign included, up to the padding.
    #[test]
    fn key_names_are_written_as_format_writes_them() {
        let reference = |value: i64, padding: usize| {
            let digits = value.to_string();
            let fill = padding.saturating_sub(digits.len());
            format!("user{}{digits}", "0".repeat(fill)).into_bytes()
        };
        for value in [
            0,
            7,
            -7,
            9,
            10,
            99,
            100,
            -100,
            1234,
            -12345,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            for padding in [0usize, 1, 2, 3, 20, 25] {
                let mut buffer = [0u8; DECIMAL_I64_MAX];
                let mut written = b"user".to_vec();
                let digits = decimal(value, &mut buffer);
                written.extend(std::iter::repeat_n(
                    b'0',
                    padding.saturating_sub(digits.len()),
                ));
                written.extend_from_slice(digits);
                assert_eq!(
                    written,
                    reference(value, padding),
                    "{value} padded to {padding}"
                );
            }
        }
        let mut out = b"left over from the last key".to_vec();
        for ordered in [false, true] {
            let keys = padded_names(ordered, KeyFormat::Text);
            for keynum in SAMPLE_KEYNUMS {
                keys.key_into(keynum, &mut out);
                assert_eq!(out, reference(keys.value(keynum), 20));
                assert_eq!(keys.key(keynum), out);
            }
        }
    }

    /// Key numbers the key-name tests try.
    const SAMPLE_KEYNUMS: [u64; 5] = [0, 1, 12_345, 999_999, u64::MAX / 3];

    /// `user` keys zero-padded to 20 digits, in `format`.
    fn padded_names(ordered: bool, format: KeyFormat) -> KeyNames {
        KeyNames {
            prefix: b"user".to_vec(),
            zero_padding: 20,
            ordered,
            format,
        }
    }

    /// A binary key is the (hashed or ordered) number's 8 big-endian bytes, without the
    /// prefix or padding, and its packed form unpacks to it.
    #[test]
    fn binary_keys_are_the_numbers_big_endian_bytes() {
        let mut out = b"left over".to_vec();
        for ordered in [false, true] {
            let keys = padded_names(ordered, KeyFormat::Binary);
            for keynum in SAMPLE_KEYNUMS {
                let value = if ordered {
                    keynum
                } else {
                    generators::fnv_hash64(keynum).cast_unsigned()
                };
                keys.key_into(keynum, &mut out);
                assert_eq!(out, value.to_be_bytes(), "ordered {ordered}, {keynum}");
                assert_eq!(keys.unpack(keys.packed(keynum)), out);
            }
        }
        assert_eq!(KeyFormat::parse("binary").unwrap(), KeyFormat::Binary);
        assert_eq!(
            KeyFormat::parse(KeyFormat::Text.name()).unwrap(),
            KeyFormat::Text
        );
        let refused = KeyFormat::parse("hex").unwrap_err().to_string();
        assert!(refused.contains("text or binary"), "{refused}");
    }

    #[test]
    fn standard_workloads_parse_and_validate() {
        for w in YcsbWorkload::ALL {
            assert_eq!(YcsbWorkload::parse(w.name()).unwrap(), w);
            YcsbConfig::standard(w, 1000).validate().unwrap();
        }
        assert_eq!(YcsbWorkload::parse("B").unwrap(), YcsbWorkload::B);
        assert!(YcsbWorkload::parse("ycsb-g").is_err());
        assert!(YcsbWorkload::parse("ycsb-").is_err());
        let mut bad = YcsbConfig::standard(YcsbWorkload::A, 1000);
        bad.shares = [50.0, 40.0, 0.0, 0.0, 0.0];
        assert!(bad.validate().is_err());
    }
}
