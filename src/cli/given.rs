//! Which flags the command line gave, as opposed to their defaults (issue 18): a flag that
//! another flag or a sweep parameter overrides, or that the chosen workload or device ignores,
//! is an error only when it was typed. Clap knows this (`ArgMatches::value_source`); the
//! parsed argument structs carry it as a [`Given`] set of argument ids (the field names, e.g.
//! `db_size`), filled by [`Given::from_matches`] after parsing.

use std::collections::BTreeSet;

use clap::ArgMatches;
use clap::parser::ValueSource;

/// The ids of the arguments given on the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Given(BTreeSet<String>);

impl Given {
    /// The arguments of `matches` (one command's, not its subcommands') that came from the
    /// command line.
    #[must_use]
    pub fn from_matches(matches: &ArgMatches) -> Given {
        Given(
            matches
                .ids()
                .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
                .map(|id| id.as_str().to_string())
                .collect(),
        )
    }

    /// Whether argument `id` (a field name such as `db_size`) was given.
    #[must_use]
    pub fn has(&self, id: &str) -> bool {
        self.0.contains(id)
    }

    /// A set holding `ids` (tests and callers that build arguments by hand).
    #[must_use]
    pub fn of(ids: &[&str]) -> Given {
        Given(ids.iter().map(|id| (*id).to_string()).collect())
    }
}

/// The matches of the innermost subcommand (`flashbuf device probe ...` -> probe's).
#[must_use]
pub fn leaf(matches: &ArgMatches) -> &ArgMatches {
    let mut current = matches;
    // Bound: the command tree is two levels deep.
    for _ in 0..8 {
        match current.subcommand() {
            Some((_, sub)) => current = sub,
            None => break,
        }
    }
    current
}
