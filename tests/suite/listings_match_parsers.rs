//! The listings (`flashbuf schemes`, `flashbuf devices`, `flashbuf config --default`) and the
//! README's scheme and device lists agree with the parsers: every key, part and option a
//! parser accepts is listed, and every listed one is accepted. The README's library example is
//! `examples/quickstart.rs`, whose body is the crate docs' (tested) example.
//!
//! "Accepted by the parser" is read two ways: by calling the parser with every listed name
//! (listed => accepted), and, for the two hand-written `match` parsers (`apply_override`,
//! `apply_part`), by reading their match arms from the source (accepted => listed). For the
//! pool config the parser is serde over `PoolConfig`'s fields, so its accepted keys are the
//! serialized fields.

use std::collections::BTreeSet;

use flashbuf::cli::{devices, schemes};
use flashbuf::device::emulated::profile::{
    self, OPTION_NAMES, OPTIONS, PROFILE_NAMES, option_value, profile_description,
};
use flashbuf::engine::compose::{PARTS, part_combines_with};
use flashbuf::engine::{Composition, PoolConfig, Scheme, TornPageProtection};

/// The string keys of a `match` inside function `function` of `source` (arms `"key" =>` and
/// `"a" | "b" =>`), up to the catch-all arm `other =>`.
fn match_arms(source: &str, function: &str) -> BTreeSet<String> {
    let start = source.find(function).expect("function present");
    let body = &source[start..];
    let end = body.find("other =>").expect("catch-all arm");
    let mut keys = BTreeSet::new();
    for line in body[..end].lines() {
        let Some((lhs, _)) = line.trim().split_once("=>") else {
            continue;
        };
        let pieces: Vec<&str> = lhs.split('|').map(str::trim).collect();
        let quoted = |p: &&str| p.len() >= 2 && p.starts_with('"') && p.ends_with('"');
        if pieces.iter().all(quoted) {
            keys.extend(pieces.iter().map(|p| p[1..p.len() - 1].to_string()));
        }
    }
    keys
}

#[test]
fn pool_config_keys_are_the_parsers_keys() {
    let mut preset = PoolConfig::for_scheme(Scheme::Vanilla, 4096);
    // Serialize with the optional key set, so that every field appears.
    preset.torn_page_protection = Some(TornPageProtection::Doublewrite);
    let fields: Vec<String> = toml::Table::try_from(&preset)
        .unwrap()
        .keys()
        .filter(|key| *key != "scheme" && *key != "frames")
        .cloned()
        .collect();
    let listed: Vec<String> = PoolConfig::KEYS
        .iter()
        .map(|k| k.name.to_string())
        .collect();
    let fields: BTreeSet<_> = fields.into_iter().collect();
    let listed_set: BTreeSet<_> = listed.iter().cloned().collect();
    assert_eq!(
        listed_set, fields,
        "PoolConfig::KEYS vs PoolConfig's fields"
    );
    assert_eq!(listed.len(), listed_set.len(), "a key is listed twice");
    for key in PoolConfig::KEYS {
        assert!(!key.meaning.is_empty() && !key.range.is_empty(), "{key:?}");
    }
    assert!(PoolConfig::from_toml(Scheme::Vanilla, 4096, "not_a_key = 1").is_err());
}

#[test]
fn default_config_file_parses_back_to_the_preset() {
    for scheme in [
        Scheme::Vanilla,
        Scheme::VanillaDefault,
        Scheme::LruC,
        Scheme::AceClock,
    ] {
        let text = PoolConfig::default_toml(scheme, 4096).unwrap();
        for key in PoolConfig::KEYS {
            assert!(
                text.contains(key.meaning),
                "{scheme}: {} undocumented",
                key.name
            );
            assert!(
                text.contains(&format!("{} = ", key.name)),
                "{scheme}: {}",
                key.name
            );
        }
        let parsed = PoolConfig::from_toml(scheme, 4096, &text).unwrap();
        let preset = PoolConfig::for_scheme(scheme, 4096);
        assert_eq!(
            toml::Table::try_from(&parsed).unwrap(),
            toml::Table::try_from(&preset).unwrap(),
            "{scheme}"
        );
        // The commented-out key is valid too once uncommented.
        let uncommented = text.replace("# torn_page_protection = ", "torn_page_protection = ");
        let parsed = PoolConfig::from_toml(scheme, 4096, &uncommented).unwrap();
        assert_eq!(
            parsed.torn_page_protection,
            Some(preset.effective_torn_page_protection())
        );
    }
}

#[test]
fn emu_options_are_the_parsers_options() {
    let listed: Vec<&str> = OPTIONS.iter().map(|o| o.key).collect();
    assert_eq!(listed, OPTION_NAMES, "OPTIONS vs OPTION_NAMES");
    let source = include_str!("../../src/device/emulated/profile.rs");
    let accepted = match_arms(source, "pub fn apply_override");
    let listed_set: BTreeSet<String> = listed.iter().map(ToString::to_string).collect();
    assert_eq!(listed_set, accepted, "OPTIONS vs apply_override's keys");
    for name in PROFILE_NAMES {
        assert!(profile_description(name).is_some(), "{name}");
        let defaults = profile::profile(name).unwrap();
        for option in OPTIONS {
            let value = option_value(&defaults, option.key).unwrap();
            if option.key == "op" && defaults.kind != profile::Kind::Ssd {
                // No FTL: the default 0 is outside the range an override may set.
                assert_eq!(value, "0.00", "{name}");
                continue;
            }
            let mut p = defaults.clone();
            profile::apply_override(&mut p, option.key, &value)
                .unwrap_or_else(|e| panic!("{name}: {}={value}: {e}", option.key));
        }
    }
    let err = profile::apply_override(&mut profile::profile("ssd-a").unwrap(), "nope", "1")
        .unwrap_err()
        .to_string();
    for option in OPTIONS {
        assert!(err.contains(option.key), "{err}");
    }
}

#[test]
fn scheme_parts_are_the_parsers_parts() {
    let source = include_str!("../../src/engine/compose.rs");
    let accepted = match_arms(source, "fn apply_part");
    let listed: BTreeSet<String> = PARTS.iter().map(|(name, _)| name.to_string()).collect();
    assert_eq!(listed, accepted, "PARTS vs apply_part's parts");
    for (part, _) in PARTS {
        let with = part_combines_with(part);
        assert!(!with.is_empty(), "part {part} combines with nothing");
        for preset in with {
            Composition::parse(&format!("{}+{part}", preset.name())).unwrap();
        }
    }
}

#[test]
fn listings_show_every_name() {
    let schemes = schemes::render();
    for scheme in Scheme::presets() {
        assert!(schemes.contains(scheme.name()), "{scheme}");
        assert!(schemes.contains(scheme.description()), "{scheme}");
    }
    for (part, meaning) in PARTS {
        assert!(schemes.contains(&format!("+{part}")), "{part}");
        assert!(schemes.contains(meaning), "{part}");
    }
    let devices = devices::render().unwrap();
    for name in PROFILE_NAMES {
        assert!(devices.contains(name), "{name}");
        let one = devices::render_profile(name).unwrap();
        assert!(one.contains("channels="));
        // Whether the real drive has power-loss protection, with its source.
        let record = profile::plp_record(name).unwrap();
        assert!(
            devices.contains(record.source) && one.contains(record.source),
            "{name}"
        );
    }
    for option in OPTIONS {
        assert!(devices.contains(option.meaning), "{}", option.key);
    }
    assert!(devices::render_profile("nope").is_err());
}

/// The README's block between `<!-- listings:begin -->` and `<!-- listings:end -->` is exactly
/// what [`schemes::readme_block`] generates (preset table, parts, device strings). To update
/// it: `cargo test --release --test suite listings_match_parsers::` prints the expected block.
#[test]
fn readme_lists_agree() {
    let readme = include_str!("../../README.md");
    let begin = "<!-- listings:begin -->\n";
    let start = readme.find(begin).expect("README has the listings block") + begin.len();
    let end = readme.find("<!-- listings:end -->").expect("block end");
    let expected = schemes::readme_block();
    assert!(
        readme[start..end] == expected,
        "README's listings block is stale; replace it with:\n{expected}"
    );
}

/// The README's library example is `examples/quickstart.rs` (which `cargo test` compiles), shown
/// whole but for its header; and the example's body is the crate docs' first example (which
/// `cargo test` runs), whitespace aside.
#[test]
fn readme_library_example_is_the_tested_one() {
    let readme = include_str!("../../README.md");
    let start = readme.find("```rust\n").expect("README has a rust block") + 8;
    let end = start + readme[start..].find("```").expect("block end");
    let example = include_str!("../../examples/quickstart.rs");
    let code: String = example
        .lines()
        .skip_while(|line| line.starts_with("//!") || line.is_empty())
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(
        &readme[start..end],
        code,
        "README's rust block is not examples/quickstart.rs"
    );
    let squeeze = |text: &str| text.split_whitespace().collect::<String>();
    let body_start = code.find("const PAGE").expect("the example's body");
    let body_end = code.find("Ok(())").expect("the example's end");
    let docs: String = include_str!("../../src/lib.rs")
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .map(|line| line.trim_start().trim_start_matches("# "))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        squeeze(&docs).contains(&squeeze(&code[body_start..body_end])),
        "examples/quickstart.rs's body is not the crate docs' example"
    );
}
