//! `flashbuf schemes`: the presets with their compositions and one-line meaning, the
//! composition grammar, and every `+PART` with the presets it combines with.
//!
//! Everything printed comes from the tables the parser uses ([`Scheme::presets`],
//! [`Scheme::description`], [`Composition::decisions`], [`PARTS`]); which presets a part
//! combines with is found by parsing `PRESET+PART` ([`part_combines_with`]), so the listing and
//! `--schemes` cannot disagree.

use std::fmt::Write as _;

use crate::engine::compose::{PARTS, part_combines_with};
use crate::engine::{Composition, Scheme};
use crate::error::Result;

/// Arguments of `schemes` (none).
#[derive(Debug, Clone, clap::Args)]
pub struct SchemesArgs {}

/// Prints the listing.
///
/// # Errors
/// None today; the signature matches the other commands.
pub fn run(_args: &SchemesArgs) -> Result<()> {
    super::out(&render());
    Ok(())
}

/// The listing `flashbuf schemes` prints.
#[must_use]
pub fn render() -> String {
    let mut out = String::new();
    let presets = Scheme::presets();
    let width = presets.iter().map(|s| s.name().len()).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "Presets (--schemes NAME[,NAME...]; `all` = the InnoDB family, `postgres` = the PostgreSQL family and ACE):\n"
    );
    for scheme in &presets {
        let _ = writeln!(out, "  {:width$}  {}", scheme.name(), scheme.description());
        let _ = writeln!(
            out,
            "  {:width$}    {}",
            "",
            Composition::from(*scheme).decisions()
        );
    }
    let _ = writeln!(
        out,
        "\nCompositions: PRESET(+PART)*, each PART replaces one decision of the preset\n\
         (e.g. `pg-clock+ace` = ace-clock, `vanilla+ace` = ACE's writer on InnoDB's LRU).\n\
         Invalid combinations are errors that say why.\n"
    );
    let part_width = PARTS.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    for (name, meaning) in PARTS {
        let _ = writeln!(out, "  +{name:part_width$}  {meaning}");
        let with = part_combines_with(name);
        let list = if with.len() == presets.len() {
            "every preset".to_string()
        } else if with.is_empty() {
            "no preset".to_string()
        } else {
            with.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
        };
        let _ = writeln!(out, "   {:part_width$}  combines with: {list}", "");
    }
    out
}

/// The README's listings block (between `<!-- listings:begin -->` and `<!-- listings:end -->`):
/// the presets with their meaning, the parts, and the device strings, from the same tables as
/// the listings (`tests/suite/listings_match_parsers.rs` checks the README against it).
#[must_use]
pub fn readme_block() -> String {
    use crate::device::emulated::profile::PROFILE_NAMES;
    let mut out = String::from("| scheme (`--schemes`) | what it is |\n|---|---|\n");
    for scheme in Scheme::presets() {
        let _ = writeln!(out, "| `{}` | {} |", scheme.name(), scheme.description());
    }
    let parts = PARTS
        .iter()
        .map(|(name, _)| format!("`+{name}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "\nCompositions `PRESET+PART` replace one decision of a preset; parts: {parts}\n\
         (`flashbuf schemes` says what each does and what it combines with).\n\n\
         Device strings (`--device`): `mem`, `file:PATH`, `emu:{}[,key=value...]`\n\
         (`flashbuf devices` lists every profile and option with its defaults and range;\n\
         `flashbuf config --default` prints every pool-config key).",
        PROFILE_NAMES.join("|")
    );
    out
}
