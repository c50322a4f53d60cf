//! The sizes `bench`, `sweep` and `load` check against each other before anything is loaded
//! or run (issue 18): the page size (the data-file format takes powers of two from 4096 to
//! 65536, the B+-tree of record workloads up to 32768), the buffer's frames (a pool takes at
//! least [`MIN_FRAMES`]), the record workload's largest row against the page, and a `--db`
//! image's load parameters, page size and loaded pages, read from its header and one tree
//! ([`Image::peek_file`]) rather than from the whole file. Each error names the flag and what
//! to give instead.

use super::bench::{BenchArgs, flag_error, parse_buffer};
use crate::bench::BenchConfig;
use crate::bench::driver::RecordSpec;
use crate::bench::image::Image;
use crate::engine::config::MIN_FRAMES;
use crate::error::{Error, Result};

/// Checks a page size: a power of two from 4096 to 65536 (the data-file format), to 32768 for
/// record workloads (the B+-tree's node offsets are 16-bit).
///
/// # Errors
/// A message naming the accepted sizes.
pub fn check_page_size(page_size: usize, record: bool) -> Result<(), String> {
    let max = if record {
        crate::btree::node::MAX_PAGE_SIZE
    } else {
        *crate::datafile::PAGE_SIZES.last().unwrap_or(&65_536)
    };
    if page_size.is_power_of_two() && (4096..=max).contains(&page_size) {
        return Ok(());
    }
    let sizes: Vec<String> = crate::datafile::PAGE_SIZES
        .iter()
        .filter(|&&size| size <= max)
        .map(ToString::to_string)
        .collect();
    Err(format!(
        "a page size is one of {}{}",
        sizes.join(", "),
        if record {
            " for a record workload (its B+-tree takes at most 32768)"
        } else {
            ""
        }
    ))
}

/// Whether a `--buffer` value is a percentage of the database.
/// Most room `--room` takes, in percent (an image of 100 times its loaded pages).
const MAX_ROOM_PCT: u64 = 10_000;

/// `--room` (`flashbuf load`, `flashbuf bench`): a whole percentage, one `%` optional, `0%` to
/// 10,000%.
pub(crate) fn parse_room(text: &str) -> std::result::Result<u64, String> {
    let trimmed = text.trim();
    let digits = trimmed.strip_suffix('%').unwrap_or(trimmed).trim();
    let pct: u64 = digits
        .parse()
        .map_err(|_| "expected a whole percentage such as `100%` or `400%`".to_string())?;
    if pct > MAX_ROOM_PCT {
        return Err(format!("at most {MAX_ROOM_PCT}%"));
    }
    Ok(pct)
}

pub(crate) fn is_percentage(buffer: &str) -> bool {
    buffer.trim().ends_with('%')
}

/// Refuses a `--buffer` that gives fewer frames than a pool takes; `db_pages` (with whether it
/// is exact or an upper bound before loading) says what a percentage was taken of.
pub(crate) fn check_frames(
    buffer: &str,
    frames: usize,
    db_pages: Option<(u64, bool)>,
) -> Result<()> {
    let min = MIN_FRAMES;
    if frames >= min {
        return Ok(());
    }
    let (of, use_instead) = match db_pages {
        Some((pages, exact)) => {
            let percent = (min as f64 * 100.0 / pages as f64 * 10.0).ceil() / 10.0;
            (
                format!(
                    " of the {}{pages}-page database",
                    if exact { "" } else { "(at most) " }
                ),
                format!("use at least {percent}% or {min} pages"),
            )
        }
        None => (String::new(), format!("use at least {min} pages")),
    };
    Err(flag_error(
        "--buffer",
        buffer,
        &format!("gives {frames} frames{of}, and a pool needs at least {min}: {use_instead}"),
    ))
}

/// Checks that the record workload's largest value fits in a page of `page_size` bytes (a
/// YCSB row is one value of `--field-count` x `--field-length` bytes and a few more; a
/// LinkBench node carries up to 1023 bytes of payload; TPC-C's rows fit every page size).
///
/// # Errors
/// [`Error::Config`] naming the flags to change.
pub fn check_rows_fit(spec: &RecordSpec, page_size: usize) -> Result<()> {
    let limits = crate::btree::node::Limits::for_page(page_size)?;
    let (row, flags) = match spec {
        RecordSpec::Ycsb(config) => (
            config.row_bytes(),
            format!(
                "--field-count {} x --field-length {} plus its encoding",
                config.field_count, config.field_length
            ),
        ),
        RecordSpec::LinkBench(config) => (
            crate::workload::linkbench::schema::Node::encoded_len(
                config.node_data_max.saturating_sub(1),
            ),
            format!(
                "a node with the largest payload, {} bytes",
                config.node_data_max.saturating_sub(1)
            ),
        ),
        RecordSpec::Tpcc(_) => return Ok(()), // its rows fit every page size the tree takes
    };
    if row <= limits.max_value {
        return Ok(());
    }
    let fitting = crate::datafile::PAGE_SIZES
        .iter()
        .copied()
        .filter(|&size| size <= crate::btree::node::MAX_PAGE_SIZE)
        .find(|&size| crate::btree::node::Limits::for_page(size).is_ok_and(|l| row <= l.max_value));
    let fix = match (fitting, spec) {
        (Some(size), RecordSpec::Ycsb(_)) => {
            format!("use --page-size {size} or more, or fewer or shorter fields")
        }
        (Some(size), _) => format!("use --page-size {size} or more"),
        (None, _) => "use fewer or shorter fields".to_string(),
    };
    Err(Error::Config(format!(
        "a {} row is up to {row} bytes ({flags}), over the largest value a {page_size}-byte \
         page holds ({} bytes): {fix}",
        spec.name(),
        limits.max_value,
    )))
}

/// A record workload's sizes, before anything is loaded. With `--db`: the image's load
/// parameters, its page size (taken; a different `--page-size` is an error) and the buffer
/// against its loaded pages, from its header and one tree (the file is not read whole).
/// Without: the rows against the page size, and a buffer too small even for the largest
/// image the load can make (a buffer just too small for the image actually loaded is refused
/// by [`super::bench::attach_image`], right after the load, before any scheme).
///
/// # Errors
/// [`Error::Config`] naming the flag.
pub(crate) fn check_record_sizes(
    args: &BenchArgs,
    config: &mut BenchConfig,
    spec: &RecordSpec,
) -> Result<()> {
    let (pages, capacity, exact) = if let Some(path) = &args.db {
        let facts = Image::peek_file(path)?;
        let wanted = spec.load_key();
        if facts.load_key != wanted {
            return Err(Error::Config(format!(
                "--db {}: the image was loaded with `{}`, the flags ask for `{wanted}`; give \
                 the flags it was loaded with, or make an image for these with `flashbuf load`",
                path.display(),
                facts.load_key
            )));
        }
        if args.given.has("page_size") && args.page_size != facts.page_size {
            return Err(flag_error(
                "--page-size",
                &args.page_size.to_string(),
                &format!(
                    "--db {} has {}-byte pages (an image keeps the page size it was loaded \
                     with); drop --page-size",
                    path.display(),
                    facts.page_size
                ),
            ));
        }
        config.workload.page_size = facts.page_size;
        (facts.loaded_pages, facts.capacity_pages, true)
    } else {
        check_rows_fit(spec, config.workload.page_size)?;
        let pages = Image::pages_at_most(spec, config.workload.page_size);
        (
            pages,
            Image::capacity_with_room(pages, args.room_pct()?),
            false,
        )
    };
    let frames = parse_buffer(&args.buffer, pages, capacity, config.workload.page_size)
        .map_err(|why| flag_error("--buffer", &args.buffer, &why))?;
    check_frames(&args.buffer, frames, Some((pages, exact)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_sizes_are_powers_of_two_the_format_and_the_tree_take() {
        for size in [4096, 8192, 16_384, 32_768] {
            assert!(check_page_size(size, true).is_ok(), "{size}");
        }
        assert!(check_page_size(65_536, false).is_ok());
        let err = check_page_size(65_536, true).unwrap_err();
        assert!(err.contains("at most 32768"), "{err}");
        for bad in [0, 512, 12_288, 1 << 20] {
            assert!(check_page_size(bad, false).is_err(), "{bad}");
        }
    }

    #[test]
    fn too_few_frames_say_what_to_give() {
        assert!(check_frames("10%", 16, Some((160, true))).is_ok());
        let err = check_frames("5%", 11, Some((218, true)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--buffer `5%`") && err.contains("7.4%"),
            "{err}"
        );
        let err = check_frames("1%", 6, Some((595, false)))
            .unwrap_err()
            .to_string();
        assert!(err.contains("(at most) 595-page"), "{err}");
        let err = check_frames("10", 10, None).unwrap_err().to_string();
        assert!(err.contains("at least 16 pages"), "{err}");
    }
}
