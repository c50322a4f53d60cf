//! Bytes read and written per operation (per transaction for record workloads), by kind: what
//! a run costs the devices, independent of how fast they are (docs/performance.md explains
//! each kind).
//!
//! - `data_reads`: bytes read from the data device (page misses and read-ahead).
//! - `page_writes`: bytes written to the data device in place: every data-device write but
//!   the doublewrite copies (pages, and the data file's header when a checkpoint raises it).
//! - `doublewrite`: the copies the doublewrite buffer writes before the pages go in place
//!   (torn-page protection; 0 with `torn_page_protection = none` or page images).
//! - `redo_written`: bytes the redo log wrote to its device (a partly filled log page is
//!   rewritten at each sync, so this can exceed `redo_appended`); `redo_appended`: the log's
//!   own volume (records and the page headers they cross).

use serde::Serialize;

use super::table::Table;

use crate::device::DeviceStats;
use crate::wal::WalStats;

/// Bytes per operation by kind (see the module docs).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct BytesPerOp {
    /// Data-device bytes read.
    pub data_reads: f64,
    /// Data-device bytes written in place (all data-device writes but the doublewrite copies).
    pub page_writes: f64,
    /// Doublewrite copies.
    pub doublewrite: f64,
    /// Redo log bytes written to the log device (0 without a log).
    pub redo_written: f64,
    /// Redo log bytes appended (0 without a log).
    pub redo_appended: f64,
    /// Everything written: `page_writes + doublewrite + redo_written`.
    pub total_written: f64,
}

impl BytesPerOp {
    /// The bytes of the measured phase divided by its `ops`: `device` is the data device's
    /// counters over the phase, `doublewrite_pages` the pages the doublewrite copied, `log`
    /// the log's counters at the start and end of the phase. `None` when no operation
    /// completed.
    #[must_use]
    pub fn measure(
        ops: u64,
        device: &DeviceStats,
        doublewrite_pages: u64,
        page_size: usize,
        log: Option<(&WalStats, &WalStats)>,
    ) -> Option<BytesPerOp> {
        if ops == 0 {
            return None;
        }
        let per_op = |bytes: u64| bytes as f64 / ops as f64;
        let doublewrite = doublewrite_pages.saturating_mul(page_size as u64);
        let (redo_written, redo_appended) = log.map_or((0, 0), |(start, end)| {
            (
                end.bytes_written.saturating_sub(start.bytes_written),
                end.appended_bytes.saturating_sub(start.appended_bytes),
            )
        });
        let page_writes = device.write_bytes.saturating_sub(doublewrite);
        Some(BytesPerOp {
            data_reads: per_op(device.read_bytes),
            page_writes: per_op(page_writes),
            doublewrite: per_op(doublewrite),
            redo_written: per_op(redo_written),
            redo_appended: per_op(redo_appended),
            total_written: per_op(page_writes + doublewrite + redo_written),
        })
    }
}

/// The bytes-per-operation table: one row per `(scheme, bytes)` with figures, in KB (1000
/// bytes); `None` when no row has figures. `unit` is the runs' throughput unit.
pub fn table<'a>(
    unit: &str,
    rows: impl Iterator<Item = (&'a str, Option<&'a BytesPerOp>)>,
) -> Option<Table> {
    let op = if unit == "tx/s" {
        "transaction"
    } else {
        "operation"
    };
    let mut table = Table::new(&[
        "scheme",
        "read KB",
        "in place KB",
        "dblwr KB",
        "redo KB",
        "written KB",
    ])
    .with_caption(format!(
        "bytes per {op} (KB): data reads, page writes in place, doublewrite copies, redo log \
         written, total written"
    ));
    for (scheme, bytes) in rows {
        let Some(bytes) = bytes else { continue };
        let kb = |value: f64| format!("{:.1}", value / 1e3);
        table.rows.push(vec![
            scheme.to_string(),
            kb(bytes.data_reads),
            kb(bytes.page_writes),
            kb(bytes.doublewrite),
            kb(bytes.redo_written),
            kb(bytes.total_written),
        ]);
    }
    (!table.rows.is_empty()).then_some(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wal(bytes_written: u64, appended_bytes: u64) -> WalStats {
        WalStats {
            appended_bytes,
            bytes_written,
            ..WalStats::default()
        }
    }

    fn assert_close(actual: f64, expected: f64) {
        assert!((actual - expected).abs() < 1e-9, "{actual} != {expected}");
    }

    #[test]
    fn splits_device_writes_into_in_place_and_doublewrite() {
        let device = DeviceStats {
            read_bytes: 4 * 16384,
            write_bytes: 10 * 16384 + 4096,
            ..DeviceStats::default()
        };
        let (start, end) = (wal(1000, 900), wal(21_000, 12_900));
        let bytes = BytesPerOp::measure(2, &device, 4, 16384, Some((&start, &end))).unwrap();
        assert_close(bytes.data_reads, 2.0 * 16384.0);
        // 6 pages and a 4 KiB header in place, 4 doublewrite copies, over 2 operations.
        assert_close(bytes.page_writes, 3.0 * 16384.0 + 2048.0);
        assert_close(bytes.doublewrite, 2.0 * 16384.0);
        assert_close(bytes.redo_written, 10_000.0);
        assert_close(bytes.redo_appended, 6_000.0);
        assert_close(
            bytes.total_written,
            bytes.page_writes + bytes.doublewrite + bytes.redo_written,
        );
    }

    #[test]
    fn no_operation_no_figures_and_no_log_no_redo() {
        let device = DeviceStats::default();
        assert_eq!(BytesPerOp::measure(0, &device, 0, 4096, None), None);
        let bytes = BytesPerOp::measure(5, &device, 0, 4096, None).unwrap();
        assert_eq!(bytes, BytesPerOp::default());
    }

    #[test]
    fn the_table_names_the_unit_and_skips_runs_without_figures() {
        let bytes = BytesPerOp {
            data_reads: 46_000.0,
            page_writes: 58_000.0,
            doublewrite: 58_000.0,
            redo_written: 7_000.0,
            redo_appended: 6_500.0,
            total_written: 123_000.0,
        };
        let out = table(
            "tx/s",
            [("vanilla", Some(&bytes)), ("failed", None)].into_iter(),
        )
        .expect("a row with figures")
        .to_text();
        assert!(out.contains("bytes per transaction (KB)"), "{out}");
        let row = out
            .lines()
            .find(|line| line.starts_with("vanilla"))
            .map(|line| line.split_whitespace().collect::<Vec<_>>());
        assert_eq!(
            row,
            Some(vec!["vanilla", "46.0", "58.0", "58.0", "7.0", "123.0"]),
            "{out}"
        );
        assert!(!out.contains("failed"), "{out}");
        assert_eq!(table("ops/s", [("x", None)].into_iter()), None);
    }
}
