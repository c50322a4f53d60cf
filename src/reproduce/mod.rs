//! `flashbuf reproduce` (issue 13 item 5), the library half: the papers' tables and figures as
//! data ([`experiment`]: the embedded `experiments/*.toml` registry), the verdict of each claim
//! against what we measured ([`verdict`]), the side-by-side report ([`report`]), and judging a
//! saved run again with the current claims and rules ([`rescore`]). The
//! command (listing, running an experiment through the bench and sweep code) is
//! `src/cli/reproduce.rs`.

pub mod experiment;
pub mod report;
pub mod rescore;
pub mod verdict;

pub use experiment::{Experiment, registry};
pub use verdict::{Measured, Outcome, Verdict};
