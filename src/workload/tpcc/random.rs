//! TPC-C input generation (specification revision 5.11, clauses 2.1.6 and 4.3.2).
//!
//! - [`nurand`]: NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
//!   (2.1.6), with A = 255 for C_LAST, 1023 for C_ID and 8191 for OL_I_ID.
//! - [`NurandConstants`]: the run-time constants C, one per field, shared by every terminal.
//!   C for C_LAST at run time must differ from the one used at load by C_DELTA =
//!   |C_RUN - C_LOAD| in [65..119], excluding 96 and 112 (2.1.6.1); C for C_ID and OL_I_ID is
//!   any value in [0..A].
//! - [`last_name`]: C_LAST from the syllable table (4.3.2.3).
//! - [`a_string`], [`n_string`], [`zip_code`], [`with_original`]: the random strings of
//!   4.3.2.2 (alphanumeric and numeric, uniform length in [x..y]) and 4.3.2.7 (a 4-digit
//!   n-string followed by "11111"), and the "ORIGINAL" marker of 4.3.3.1.
//!
//! Pure functions over a caller's random source; no state, no locks.

use rand::Rng;
use rand::seq::SliceRandom;

use crate::error::{Error, Result};

/// A for C_LAST (a number in [0..999] that picks three syllables).
pub const A_C_LAST: u32 = 255;
/// A for C_ID.
pub const A_C_ID: u32 = 1023;
/// A for OL_I_ID.
pub const A_OL_I_ID: u32 = 8191;

/// NURand(A, x, y) with constant `c` (2.1.6).
pub fn nurand<R: Rng + ?Sized>(rng: &mut R, a: u32, c: u32, x: u32, y: u32) -> u32 {
    assert!(x <= y, "NURand range [{x}..{y}] is empty");
    assert!(c <= a, "NURand constant {c} exceeds A = {a}");
    let span = u64::from(y - x) + 1;
    let mixed = u64::from(rng.gen_range(0..=a) | rng.gen_range(x..=y));
    ((mixed + u64::from(c)) % span) as u32 + x
}

/// Whether `c_run` may be used at run time with C_LAST loaded using `c_load` (2.1.6.1).
#[must_use]
pub fn c_last_delta_ok(c_load: u32, c_run: u32) -> bool {
    let delta = c_load.abs_diff(c_run);
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// The run-time NURand constants C (2.1.6), one per field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct NurandConstants {
    /// C for C_LAST (A = 255).
    pub c_last: u32,
    /// C for C_ID (A = 1023).
    pub c_id: u32,
    /// C for OL_I_ID (A = 8191).
    pub ol_i_id: u32,
}

impl NurandConstants {
    /// The C for C_LAST used by the load: any value in [0..255].
    pub fn load_c_last<R: Rng + ?Sized>(rng: &mut R) -> u32 {
        rng.gen_range(0..=A_C_LAST)
    }

    /// Run-time constants for a database whose C_LAST was loaded with `c_load`: C_LAST's C
    /// uniform among the values the C_DELTA rule allows, the others uniform in [0..A].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `c_load` is not in [0..255].
    pub fn for_run<R: Rng + ?Sized>(rng: &mut R, c_load: u32) -> Result<NurandConstants> {
        if c_load > A_C_LAST {
            return Err(Error::InvalidArgument(format!(
                "load-time C for C_LAST is {c_load}, outside [0..{A_C_LAST}]"
            )));
        }
        let allowed: Vec<u32> = (0..=A_C_LAST)
            .filter(|&c| c_last_delta_ok(c_load, c))
            .collect();
        // Never empty: for c_load <= 136, c_load + 65 ..= c_load + 119 fits in [0..255] and
        // holds 55 values of which at most two are excluded; otherwise c_load - 119 >= 18.
        let c_last = *allowed.choose(rng).ok_or_else(|| {
            Error::InvalidArgument(format!("no C_LAST run constant for C_LOAD = {c_load}"))
        })?;
        Ok(NurandConstants {
            c_last,
            c_id: rng.gen_range(0..=A_C_ID),
            ol_i_id: rng.gen_range(0..=A_OL_I_ID),
        })
    }
}

/// The syllables of C_LAST (4.3.2.3).
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The longest C_LAST: three syllables of at most five letters.
pub const LAST_NAME_MAX: usize = 15;

/// A C_LAST held inline, so that a transaction's input allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastName {
    bytes: [u8; LAST_NAME_MAX],
    len: usize,
}

impl LastName {
    /// The name's letters.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// C_LAST for `number` in [0..999]: the syllables of its three digits.
#[must_use]
pub fn last_name_of(number: u32) -> LastName {
    assert!(number < 1000, "C_LAST number {number} is not in [0..999]");
    let mut name = LastName {
        bytes: [0; LAST_NAME_MAX],
        len: 0,
    };
    for digit in [number / 100, number / 10 % 10, number % 10] {
        let syllable = SYLLABLES[digit as usize].as_bytes();
        name.bytes[name.len..name.len + syllable.len()].copy_from_slice(syllable);
        name.len += syllable.len();
    }
    name
}

/// C_LAST for `number` in [0..999] as a `String` ([`last_name_of`]).
#[must_use]
pub fn last_name(number: u32) -> String {
    String::from_utf8_lossy(last_name_of(number).as_bytes()).into_owned()
}

const ALPHANUMERIC: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A random a-string [min..max]: alphanumeric characters, length uniform in [min..max].
pub fn a_string<R: Rng + ?Sized>(rng: &mut R, min: usize, max: usize) -> Vec<u8> {
    let len = rng.gen_range(min..=max);
    (0..len)
        .map(|_| ALPHANUMERIC[rng.gen_range(0..ALPHANUMERIC.len())])
        .collect()
}

/// A random n-string [min..max]: decimal digits, length uniform in [min..max].
pub fn n_string<R: Rng + ?Sized>(rng: &mut R, min: usize, max: usize) -> Vec<u8> {
    let len = rng.gen_range(min..=max);
    (0..len).map(|_| b'0' + rng.gen_range(0..10u8)).collect()
}

/// A zip code (4.3.2.7): a random n-string of 4 digits followed by "11111".
pub fn zip_code<R: Rng + ?Sized>(rng: &mut R) -> Vec<u8> {
    let mut zip = n_string(rng, 4, 4);
    zip.extend_from_slice(b"11111");
    zip
}

/// The marker 10% of I_DATA and S_DATA hold (4.3.3.1).
pub const ORIGINAL: &[u8] = b"ORIGINAL";

/// Overwrites eight consecutive characters of `data` (at least 8 long) at a random position
/// with "ORIGINAL".
pub fn with_original<R: Rng + ?Sized>(rng: &mut R, mut data: Vec<u8>) -> Vec<u8> {
    assert!(data.len() >= ORIGINAL.len(), "data too short for ORIGINAL");
    let at = rng.gen_range(0..=data.len() - ORIGINAL.len());
    data[at..at + ORIGINAL.len()].copy_from_slice(ORIGINAL);
    data
}

/// Whether `data` holds "ORIGINAL".
#[must_use]
pub fn has_original(data: &[u8]) -> bool {
    data.windows(ORIGINAL.len()).any(|w| w == ORIGINAL)
}

/// `count` flags of which exactly `chosen` are set, at random positions ("10% of the rows,
/// selected at random").
pub fn random_subset<R: Rng + ?Sized>(rng: &mut R, count: usize, chosen: usize) -> Vec<bool> {
    assert!(chosen <= count, "cannot choose {chosen} of {count}");
    let mut flags = vec![false; count];
    for index in rand::seq::index::sample(rng, count, chosen) {
        flags[index] = true;
    }
    flags
}

/// A random permutation of 1..=count (O_C_ID of the loaded orders).
pub fn permutation<R: Rng + ?Sized>(rng: &mut R, count: u32) -> Vec<u32> {
    let mut ids: Vec<u32> = (1..=count).collect();
    ids.shuffle(rng);
    ids
}

/// A uniformly random warehouse in 1..=warehouses other than `home` (or `home` when it is the
/// only one).
pub fn other_warehouse<R: Rng + ?Sized>(rng: &mut R, home: u16, warehouses: u16) -> u16 {
    assert!((1..=warehouses).contains(&home), "home warehouse {home}");
    if warehouses == 1 {
        return home;
    }
    let pick = rng.gen_range(1..warehouses);
    if pick >= home { pick + 1 } else { pick }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    #[test]
    fn last_names_follow_the_syllable_table() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
        assert_eq!(last_name_of(371).as_bytes(), b"PRICALLYOUGHT");
        let longest = (0..1000).map(|n| last_name_of(n).as_bytes().len()).max();
        assert_eq!(
            longest,
            Some(LAST_NAME_MAX),
            "the inline name fits the longest"
        );
    }

    #[test]
    fn strings_have_their_lengths_and_alphabets() {
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..1000 {
            let a = a_string(&mut rng, 26, 50);
            assert!((26..=50).contains(&a.len()));
            assert!(a.iter().all(u8::is_ascii_alphanumeric));
            let n = n_string(&mut rng, 16, 16);
            assert!(n.len() == 16 && n.iter().all(u8::is_ascii_digit));
            let zip = zip_code(&mut rng);
            assert!(zip.len() == 9 && zip.ends_with(b"11111"));
            assert!(has_original(&with_original(&mut rng, a)));
        }
    }

    #[test]
    fn other_warehouse_is_never_home() {
        let mut rng = SmallRng::seed_from_u64(4);
        for _ in 0..1000 {
            let w = other_warehouse(&mut rng, 3, 5);
            assert!(w != 3 && (1..=5).contains(&w));
        }
        assert_eq!(other_warehouse(&mut rng, 1, 1), 1);
    }

    #[test]
    fn subsets_have_exact_sizes() {
        let mut rng = SmallRng::seed_from_u64(5);
        let flags = random_subset(&mut rng, 3000, 300);
        assert_eq!(flags.iter().filter(|&&f| f).count(), 300);
        let mut perm = permutation(&mut rng, 3000);
        perm.sort_unstable();
        assert_eq!(perm, (1..=3000).collect::<Vec<_>>());
    }
}
