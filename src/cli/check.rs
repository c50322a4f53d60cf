//! `flashbuf check PATH`: verifies a database image (the data file `PATH`, its log `PATH.log`):
//! every page's checksum and the structure of every B+-tree (see [`crate::btree::check`]). It
//! prints a summary per tree and, for each problem, a line naming the page; the exit code is
//! non-zero when there is any problem.
//!
//! Without `--recover` the data file is read as it is (read-only): right for a cleanly closed
//! database. A database bound to a log whose log holds changes past its last checkpoint (it
//! was not closed cleanly) is refused, naming `--recover`: its data file alone is not the
//! database. `--recover` opens the database with its log (redo, rollback of unfinished
//! transactions), closes it cleanly, then checks; the log is opened with the page size and log
//! size its own header records ([`crate::wal::probe`]), whatever settings wrote it. An image
//! never bound to a log (from `flashbuf load`) has nothing to recover and is checked as it is.
//!
//! On a TPC-C database (it has the `tpcc.meta` tree) the check also verifies consistency
//! conditions 1-4 (clause 3.3.2), and on a LinkBench database its counts and index, on an
//! in-memory copy of the file (and of its log): the file is not written. This also works on
//! the unbound images `flashbuf load` writes.
//!
//! The file has the data-file layout (`docs/datafile-format.md`: header slots, doublewrite
//! area, data pages); the page size is read from its header unless `--page-size` says
//! otherwise, and the check reads the data pages through the file's data region.

use std::path::PathBuf;
use std::sync::Arc;

use crate::btree::check::{CheckReport, DeviceSource, check};
use crate::btree::meta::{MAGIC_AT, META_MAGIC, META_PAGE};
use crate::btree::node::{KIND_AT, KIND_META};
use crate::datafile::{DataFile, read_header_of_file, verify_data_page};
use crate::device::{DeviceSpec, IO_ALIGN, OpenOptions, SharedDevice};
use crate::error::{Error, Result};
use crate::txn::{KvConfig, KvStore, log_path_for};
use crate::wal::WalConfig;

/// Arguments of `check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The data file of the database (its log is PATH.log).
    pub path: PathBuf,
    /// Recover first: open the database with its log (redo and rollback), close it cleanly.
    /// The log's page size and size are read from its header. Needed after a crash: without
    /// it, a database whose log holds unreplayed changes is refused.
    #[arg(long)]
    pub recover: bool,
    /// Page size in bytes (default: read from the meta page).
    #[arg(long)]
    pub page_size: Option<usize>,
    /// Pool frames used by `--recover`.
    #[arg(long, default_value_t = 4096)]
    pub frames: usize,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// The page size to check with: the one the file's header records (in either slot), or
/// `--page-size` when the header cannot be read; a `--page-size` that contradicts the header
/// is an error.
fn page_size_of(args: &CheckArgs) -> Result<usize> {
    let header = read_header_of_file(&args.path);
    match (args.page_size, header) {
        (Some(size), Ok(header)) if size != header.page_size as usize => {
            Err(Error::Config(format!(
                "bad --page-size {size}: the header of {} says {}-byte pages; drop --page-size",
                args.path.display(),
                header.page_size
            )))
        }
        (Some(size), _) => {
            if !crate::datafile::PAGE_SIZES.contains(&size) {
                return Err(Error::Config(format!(
                    "bad --page-size {size}: a data file's page size is one of {:?}",
                    crate::datafile::PAGE_SIZES
                )));
            }
            Ok(size)
        }
        (None, Ok(header)) => Ok(header.page_size as usize),
        (None, Err(err)) => Err(err),
    }
}

fn file_pages(path: &std::path::Path, page_size: usize) -> Result<u64> {
    let len = std::fs::metadata(path)
        .map_err(|err| Error::io(format!("reading the size of {}", path.display()), err))?
        .len();
    if len == 0 || !len.is_multiple_of(page_size as u64) {
        return Err(Error::Config(format!(
            "{} has {len} bytes, not a whole number of {page_size}-byte pages",
            path.display()
        )));
    }
    Ok(len / page_size as u64)
}

fn open_file(path: &std::path::Path, page_size: usize, pages: u64) -> Result<SharedDevice> {
    crate::device::open(
        &DeviceSpec::File(path.to_path_buf()),
        &OpenOptions {
            page_size,
            pages,
            create: false,
        },
    )
}

/// Opens `PATH.log` with the settings its own header records (page size, log size), so a
/// database run with any log settings (`bench --log-size 1MiB`) can be recovered; the log
/// buffer is the built-in one fitted to the ring. A log without a valid header is opened with
/// the built-in page size (opening it then says what is wrong).
fn open_log(args: &CheckArgs) -> Result<(SharedDevice, WalConfig)> {
    let log_path = log_path_for(&args.path);
    let base = KvConfig::new(args.frames).database.wal;
    let probe = open_file(&log_path, IO_ALIGN, file_pages(&log_path, IO_ALIGN)?)?;
    let settings = crate::wal::probe::read_settings(probe.as_ref())?;
    drop(probe);
    let config = match settings {
        Some(settings) => settings.config(&base),
        None => WalConfig {
            log_size: file_pages(&log_path, base.page_size)? * base.page_size as u64,
            ..base
        },
    };
    let device = open_file(
        &log_path,
        config.page_size,
        config.log_size / config.page_size as u64,
    )?;
    Ok((device, config))
}

/// Opens the database with its log and closes it cleanly (recovery).
fn recover(args: &CheckArgs, page_size: usize, pages: u64) -> Result<()> {
    let mut config = KvConfig::new(args.frames);
    let (log, wal) = open_log(args)?;
    config.database.wal = wal;
    let data = open_file(&args.path, page_size, pages)?;
    let (kv, recovery) = KvStore::open(data, log, &config)?;
    outln!(
        "recovered: {} log records from LSN {}, {} batches redone, {} transactions rolled back, \
         {} torn pages repaired",
        recovery.database.records,
        recovery.database.redo_lsn,
        recovery.database.mtr_batches,
        recovery.losers_rolled_back,
        recovery.database.torn_pages_repaired
    );
    kv.close()
}

/// Without `--recover`: refuses a database whose log holds changes past its last checkpoint
/// (it was not closed cleanly: its data file alone is not the database), naming `--recover`.
/// Reads the log without writing; a missing or unreadable log is only warned about.
fn refuse_unrecovered(args: &CheckArgs) -> Result<()> {
    let pending =
        open_log(args).and_then(|(log, config)| crate::wal::probe::pending(log.as_ref(), &config));
    let pending = match pending {
        Ok(Some(pending)) => pending,
        Ok(None) => return Ok(()),
        Err(err) => {
            eprintln!(
                "warning: cannot tell whether {} was closed cleanly: {err}",
                args.path.display()
            );
            return Ok(());
        }
    };
    if !pending.needs_recovery() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{} was not closed cleanly (a crash?): its log {} holds {} change record(s) past its \
         last checkpoint (LSN {} to {}) that the data file may lack: the data file alone is not \
         the database; run `flashbuf check --recover {}` (it replays the log into the files, \
         then checks)",
        args.path.display(),
        log_path_for(&args.path).display(),
        pending.changes,
        pending.checkpoint.redo_lsn,
        pending.end_lsn,
        args.path.display()
    )))
}

/// The id of the log the data file is bound to (0: never bound, an image from `load`).
fn bound_log_id(args: &CheckArgs, page_size: usize, pages: u64) -> Result<u64> {
    let datafile = DataFile::open(open_file(&args.path, page_size, pages)?)?;
    Ok(datafile.header().log_id)
}

fn print_report(report: &CheckReport) {
    outln!(
        "{} pages of {} bytes; high-water mark {}; {} free pages; {} bad checksums",
        report.pages,
        report.page_size,
        report.high_water,
        report.free_pages,
        report.bad_checksums
    );
    outln!(
        "{:<24} {:>8} {:>6} {:>9} {:>7} {:>11} {:>13} {:>6}",
        "tree",
        "root",
        "height",
        "leaves",
        "inner",
        "keys",
        "bytes",
        "fill%"
    );
    for tree in &report.trees {
        outln!(
            "{:<24} {:>8} {:>6} {:>9} {:>7} {:>11} {:>13} {:>6.1}",
            tree.name,
            tree.root,
            tree.height,
            tree.leaves,
            tree.inner,
            tree.keys,
            tree.payload_bytes,
            tree.leaf_fill_pct
        );
    }
    for problem in &report.problems {
        eprintln!("problem: {problem}");
    }
}

/// Runs the check.
///
/// # Errors
/// An unreadable file, or any problem found (the first one named in the message).
pub fn run(args: &CheckArgs) -> Result<()> {
    check_flags(args)?;
    let page_size = page_size_of(args)?;
    let pages = file_pages(&args.path, page_size)?;
    match (bound_log_id(args, page_size, pages)?, args.recover) {
        (0, true) => outln!(
            "nothing to recover: {} was never bound to a log (an image from `flashbuf load`); \
             checking it as it is",
            args.path.display()
        ),
        (0, false) => {}
        (_, true) => recover(args, page_size, pages)?,
        (_, false) => refuse_unrecovered(args)?,
    }
    let device = open_file(&args.path, page_size, pages)?;
    let datafile = DataFile::open(device)?;
    if is_page_level(&datafile)? {
        return check_page_level(&datafile, args);
    }
    let report = check(&DeviceSource(Arc::clone(&datafile.data_device()?)))?;
    print_report(&report);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|err| Error::Config(format!("report as JSON: {err}")))?;
        std::fs::write(path, text)
            .map_err(|err| Error::io(format!("writing {}", path.display()), err))?;
    }
    match report.problems.first() {
        None => {
            outln!("ok: {} trees verified", report.trees.len());
            check_workload(&datafile, &report, args)
        }
        Some(first) => Err(Error::CorruptPage {
            page: first_page_named(first),
            reason: format!(
                "{} problem(s) found; the first: {first}",
                report.problems.len()
            ),
        }),
    }
}

/// Flags checked before the file is read: the JSON report's directory (written at the end),
/// and the pool `--frames` opens the database with.
fn check_flags(args: &CheckArgs) -> Result<()> {
    let min = crate::engine::config::MIN_FRAMES;
    if args.frames < min {
        return Err(Error::Config(format!(
            "bad --frames {}: the pool needs at least {min}",
            args.frames
        )));
    }
    super::preflight::check_outputs(args.json.as_deref(), None)
}

/// Whether the data file holds pages that are not B+-tree nodes (the page mixes' databases,
/// the page-level `Database` API): data page 0 is written but is no meta page. An unbound file
/// with nothing written counts too. A blank page 0 in a file bound to a log is left to the
/// tree check (a database that crashed before its first write-back).
fn is_page_level(datafile: &DataFile) -> Result<bool> {
    let data = datafile.data_device()?;
    let info = data.info();
    let header = datafile.header();
    if info.pages == 0 {
        return Ok(header.log_id == 0);
    }
    let mut buf = crate::device::AlignedBuf::new(info.page_size);
    data.read_page(META_PAGE, &mut buf)?;
    let page = buf.as_slice();
    if page.iter().all(|&b| b == 0) {
        return Ok(header.log_id == 0 && header.high_water_mark == 0);
    }
    // A meta page that fails its checksum is still a tree database: the tree check reports it.
    Ok(!(page[KIND_AT] == KIND_META && page[MAGIC_AT..MAGIC_AT + 4] == META_MAGIC))
}

/// A data file without B+-trees: every page below the high-water mark must verify (checksum,
/// page id, not zeroed); there is no structure to check.
fn check_page_level(datafile: &DataFile, args: &CheckArgs) -> Result<()> {
    let data = datafile.data_device()?;
    let high_water = datafile.header().high_water_mark;
    let mut buf = crate::device::AlignedBuf::new(data.info().page_size);
    let mut bad = Vec::new();
    // Bound: the pages below the high-water mark.
    for page in 0..high_water {
        data.read_page(page, &mut buf)?;
        if let Err(err) = verify_data_page(buf.as_slice(), page, high_water) {
            bad.push(err.to_string());
        }
    }
    outln!(
        "{}: a page-level database (its pages are not B+-tree nodes: made by the page mixes or \
         the page-level Database API), {high_water} pages written of {}; {} bad; no tree \
         structure to check",
        args.path.display(),
        datafile.header().data_pages,
        bad.len()
    );
    for problem in bad.iter().take(crate::btree::check::MAX_PROBLEMS) {
        eprintln!("problem: {problem}");
    }
    if let Some(path) = &args.json {
        let text = serde_json::json!({
            "page_level": true,
            "pages": high_water,
            "bad_pages": bad.len(),
            "problems": bad.iter().take(crate::btree::check::MAX_PROBLEMS).collect::<Vec<_>>(),
        })
        .to_string();
        std::fs::write(path, text)
            .map_err(|err| Error::io(format!("writing {}", path.display()), err))?;
    }
    match bad.first() {
        None => {
            outln!("ok: {high_water} pages verified");
            Ok(())
        }
        Some(first) => Err(Error::CorruptPage {
            page: first_page_named(first),
            reason: format!("{} page(s) do not verify; the first: {first}", bad.len()),
        }),
    }
}

/// The record workloads whose invariants `check` verifies, by a tree their load creates.
const WORKLOAD_TREES: [(&str, &str); 2] = [("tpcc.meta", "tpcc"), ("linkbench.count", "linkbench")];

/// When the trees are a TPC-C or LinkBench database, verifies the workload's invariants (TPC-C
/// conditions 1-4; LinkBench counts and index) on an in-memory copy of the data file (and of
/// its log, when it is bound to one), so the file is never written.
fn check_workload(datafile: &DataFile, trees: &CheckReport, args: &CheckArgs) -> Result<()> {
    let Some(&(_, workload)) = WORKLOAD_TREES
        .iter()
        .find(|(tree, _)| trees.trees.iter().any(|t| t.name == *tree))
    else {
        return Ok(());
    };
    let data = memory_copy(datafile.device())?;
    let mut config = KvConfig::new(args.frames);
    config.database.flush_log_at_trx_commit = 0;
    let log: SharedDevice = if datafile.header().log_id == 0 {
        let log_page = config.database.wal.page_size;
        Arc::new(crate::device::memory::MemoryDevice::new(
            log_page,
            config.database.wal.log_size / log_page as u64,
        )?)
    } else {
        let (log, wal) = open_log(args)?;
        config.database.wal = wal;
        memory_copy(&log)?
    };
    let (kv, _) = KvStore::open(data, log, &config)?;
    let report = match workload {
        "tpcc" => crate::workload::tpcc::check_consistency(&kv)?,
        _ => crate::workload::linkbench::check(&kv)?,
    };
    kv.abandon();
    if report.is_consistent() {
        outln!("ok: {workload} {report}");
        return Ok(());
    }
    Err(Error::Config(format!(
        "{workload} invariants violated: {report}"
    )))
}

/// A copy of `device` in memory (all-zero pages are not copied).
fn memory_copy(device: &SharedDevice) -> Result<SharedDevice> {
    let info = device.info();
    let copy = crate::device::memory::MemoryDevice::new(info.page_size, info.pages)?;
    let mut buf = crate::device::AlignedBuf::new(info.page_size);
    // Bound: the device's pages.
    for page in 0..info.pages {
        device.read_page(page, &mut buf)?;
        if buf.as_slice().iter().any(|&b| b != 0) {
            crate::device::Device::write_page(&copy, page, &buf)?;
        }
    }
    Ok(Arc::new(copy))
}

/// The page number a problem line starts with ("page N...").
fn first_page_named(problem: &str) -> u64 {
    problem
        .strip_prefix("page ")
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse().ok())
        .unwrap_or(0)
}
