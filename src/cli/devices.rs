//! `flashbuf devices`: the device strings (`mem`, `file:PATH`, `emu:NAME[,key=value...]`), every
//! emulated profile with what it models, and every `emu:` option with its meaning, range and
//! each profile's default.
//!
//! Everything printed comes from the tables the parsers use ([`PROFILE_NAMES`], [`OPTIONS`],
//! [`option_value`] over [`profile::profile`]); `tests/suite/listings_match_parsers.rs` checks that
//! the option table and [`profile::apply_override`] accept the same keys.

use std::fmt::Write as _;

use crate::device::emulated::profile::{
    self, OPTIONS, PROFILE_NAMES, option_value, paper_figures, plp_record, profile_description,
};
use crate::error::Result;

/// Arguments of `devices`.
#[derive(Debug, Clone, clap::Args)]
pub struct DevicesArgs {
    /// Show one emulated profile's parameters as `key=value` (with meanings) instead of the
    /// table of all profiles.
    pub profile: Option<String>,
}

/// Prints the listing.
///
/// # Errors
/// [`crate::Error::Config`] for an unknown profile name.
pub fn run(args: &DevicesArgs) -> Result<()> {
    let text = match &args.profile {
        Some(name) => render_profile(name)?,
        None => render()?,
    };
    super::out(&text);
    Ok(())
}

/// The listing `flashbuf devices` prints.
///
/// # Errors
/// [`crate::Error::Config`] if a listed profile does not resolve (not expected: a test checks).
pub fn render() -> Result<String> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Device strings (--device, --log-device):\n\n  \
         mem                      RAM, no modelled latency\n  \
         file:PATH                a real file or block device, O_DIRECT (created and written once)\n  \
         emu:NAME[,key=value...]  an emulated device; NAME a profile below, keys the options below\n\n\
         Profiles (emu:NAME): name, model (SSD, HDD or cloud volume), what it models\n"
    );
    for name in PROFILE_NAMES {
        let p = profile::profile(name)?;
        let _ = writeln!(
            out,
            "  {name:8} {:5} {}",
            p.kind.label(),
            profile_description(name).unwrap_or("")
        );
        if let Some(figures) = paper_figures(name) {
            let _ = writeln!(out, "  {:14} calibrated against {}", "", figures.source);
        }
        let _ = writeln!(out, "  {:14} {}", "", plp_line(name, &p));
    }
    let _ = writeln!(
        out,
        "\nOptions (emu:NAME,key=value,...): meaning, valid range\n"
    );
    for option in OPTIONS {
        let _ = writeln!(
            out,
            "  {:16} {} [{}]",
            option.key, option.meaning, option.range
        );
    }
    let _ = writeln!(
        out,
        "\nDefaults by profile (`flashbuf devices NAME` for one):\n"
    );
    let profiles = PROFILE_NAMES
        .iter()
        .map(|name| profile::profile(name))
        .collect::<Result<Vec<_>>>()?;
    let _ = write!(out, "  {:16}", "option");
    for name in PROFILE_NAMES {
        let _ = write!(out, " {name:>8}");
    }
    out.push('\n');
    for option in OPTIONS {
        let _ = write!(out, "  {:16}", option.key);
        for p in &profiles {
            let value = option_value(p, option.key).unwrap_or_default();
            let _ = write!(out, " {value:>8}");
        }
        out.push('\n');
    }
    Ok(out)
}

/// What the profile assumes about power-loss protection, and why.
fn plp_line(name: &str, p: &profile::Profile) -> String {
    let model = if p.plp { "plp=on" } else { "plp=off" };
    match plp_record(name) {
        Some(record) => {
            let real = match record.real_drive {
                Some(true) => "protected",
                Some(false) => "not protected",
                None => "unknown",
            };
            format!("{model} (real drive: {real}; {})", record.source)
        }
        None => model.to_string(),
    }
}

/// One profile's parameters, `key=value` with meanings.
///
/// # Errors
/// [`crate::Error::Config`] for an unknown profile, listing the valid names.
pub fn render_profile(name: &str) -> Result<String> {
    let p = profile::profile(name)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "emu:{name}: {} {}\n",
        p.kind.label(),
        profile_description(name).unwrap_or("")
    );
    let _ = writeln!(out, "{}\n", plp_line(name, &p));
    for option in OPTIONS {
        let value = option_value(&p, option.key).unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:28} {} [{}]",
            format!("{}={value}", option.key),
            option.meaning,
            option.range
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_printed_as_words_once() {
        let text = render().unwrap();
        assert!(text.contains("  ssd-a    SSD   Intel P4101"), "{text}");
        assert!(text.contains("  hdd      HDD   WD10EZEX"), "{text}");
        assert!(
            text.contains("  cloud    cloud provisioned-IOPS volume"),
            "{text}"
        );
        for debug in ["Ssd ", "Hdd ", "Cloud "] {
            assert!(!text.contains(debug), "{debug:?} in {text}");
        }
        let one = render_profile("cloud").unwrap();
        assert!(
            one.starts_with("emu:cloud: cloud provisioned-IOPS volume"),
            "{one}"
        );
        assert!(!one.contains("(Cloud)"), "{one}");
    }
}
