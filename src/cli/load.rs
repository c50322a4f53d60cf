//! `flashbuf load`: builds a record workload's database image file once (issue 11 item 2), for
//! `flashbuf bench --db PATH` to reuse: the tables bulk-loaded into a store, checked, closed
//! cleanly, then unbound (`docs/datafile-format.md`, "Unbound images") and written to PATH
//! (which must not exist) with what was loaded recorded in its `bench.image` tree. Prints rows
//! and key+value MB per table, the load time, pages and MB.
//!
//! The image is built straight into the file (`bench::image::Image::build_file`): the store
//! loads into a shared mapping of it, so the page cache holds the pages and an image larger
//! than RAM can be built; it needs the image's size in free disk space.

use std::path::{Path, PathBuf};

use super::bench::{RecordFlags, load_summary, print_progress};
use crate::bench::image::Image;
use crate::error::{Error, Result};

/// Arguments of `load`.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadArgs {
    /// The record workload: tpcc, ycsb-a .. ycsb-f (one image serves them all), linkbench.
    #[arg(long)]
    pub workload: String,
    /// The image file to write (must not exist).
    #[arg(long)]
    pub db: PathBuf,
    /// Record-workload parameters (only those that shape the load matter).
    #[command(flatten)]
    pub record: RecordFlags,
    /// Page size in bytes: 4096, 8192, 16384 or 32768.
    #[arg(long, default_value_t = crate::device::DEFAULT_PAGE_SIZE)]
    pub page_size: usize,
    /// The workload's seed (the bench's `--seed` must match to reuse the image).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Room the image keeps for the runs' inserts, in percent of its loaded pages (at least
    /// 4,096 pages): `100%` (the default) keeps as many pages again. TPC-C grows by about
    /// 0.17 pages of 4 KiB a transaction, so 15 s at 40,000 transactions a second need about
    /// 100,000 pages, all of 5 warehouses' 100%; a run that outgrows its image stops with "the
    /// database is full". The file is sparse: room costs disk only when a run writes it.
    #[arg(long, default_value = "100%")]
    pub room: String,
    /// Which flags the command line gave (see [`super::given`]).
    #[arg(skip)]
    pub given: super::given::Given,
}

/// Builds the image and writes it.
///
/// # Errors
/// Bad flags, an existing file, load or write errors.
pub fn run(args: &LoadArgs) -> Result<()> {
    let spec = args
        .record
        .spec(&args.workload, args.seed)?
        .ok_or_else(|| {
            Error::Config(format!(
                "`{}` is not a record workload (tpcc, ycsb-a .. ycsb-f, linkbench)",
                args.workload
            ))
        })?;
    super::limits::check_page_size(args.page_size, true)
        .map_err(|why| Error::Config(format!("bad --page-size `{}`: {why}", args.page_size)))?;
    super::limits::check_rows_fit(&spec, args.page_size)?;
    let room_pct = super::limits::parse_room(&args.room)
        .map_err(|why| Error::Config(format!("bad --room `{}`: {why}", args.room)))?;
    check_output(&args.db)?;
    eprintln!("loading {} into {}...", spec.describe(), args.db.display());
    let image = Image::build_file(
        &spec,
        args.page_size,
        room_pct,
        &args.db,
        &mut print_progress,
    )?;
    super::out(&load_summary(&image));
    super::out(&format!(
        "wrote {} ({})\n",
        args.db.display(),
        image.load_key
    ));
    Ok(())
}

/// The image file must be new and its directory writable: found before the load, which can
/// take minutes.
fn check_output(path: &Path) -> Result<()> {
    if path.exists() || path.is_symlink() {
        return Err(Error::Config(format!(
            "--db {}: the file exists; `flashbuf load` writes a new file only",
            path.display()
        )));
    }
    let parent = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(Error::Config(format!(
            "--db {}: the directory {} does not exist",
            path.display(),
            parent.display()
        )));
    }
    super::preflight::probe_writable(parent, "--db")
}

#[cfg(test)]
mod tests {
    use super::super::limits::parse_room;

    #[test]
    fn room_is_a_whole_percentage() {
        assert_eq!(parse_room("100%"), Ok(100));
        assert_eq!(parse_room("400"), Ok(400));
        assert_eq!(parse_room(" 0% "), Ok(0));
        assert!(parse_room("1.5%").is_err());
        assert!(parse_room("-5%").is_err());
        assert!(parse_room("lots").is_err());
        assert!(parse_room("100%%").is_err(), "one percent sign");
        assert!(parse_room("20000%").unwrap_err().contains("at most"));
    }
}
