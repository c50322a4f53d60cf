//! `flashbuf sweep` (issue 13 item 4), the library half: which parameters can vary
//! ([`params`]), the grid of a two-parameter sweep ([`grid`]), the metrics read from every run ([`metrics`]), the sweep's results and
//! sweep.json ([`results`]), and its line plots, heat maps ([`heatmap`]) and report.html
//! ([`plot`]). The command itself
//! (applying a value to the bench flags, the run loop) is `src/cli/sweep.rs`, which reuses the
//! bench's parsers, preflight and runner so that a sweep point is exactly a bench run.

pub mod grid;
pub mod heatmap;
pub mod metrics;
pub mod params;
pub mod plot;
pub mod points;
pub mod results;
pub mod reuse;

pub use results::{PointStatus, SweepPoint, SweepResults};
