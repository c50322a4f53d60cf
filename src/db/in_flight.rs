//! The registry of in-flight LSN bounds (`Shared::in_flight` in `db`): lower bounds of the
//! records that mini-transactions and transactions have appended, or are about to append, but
//! whose pages are not yet on the flush list (or, for a transaction, whose outcome record is not
//! yet written). A checkpoint never moves the redo point past the oldest bound.
//!
//! A multiset of LSNs kept as a vector of `(bound, count)` sorted by bound: registrations come
//! at the log's current end, so almost always at the back; the set holds about one bound per
//! running mini-transaction and transaction, and its buffer is kept when it empties, so the
//! steady state allocates nothing (a `BTreeMap` freed its node whenever the set emptied and
//! allocated it again at the next registration, about once per transaction).
//!
//! Invariant: bounds are strictly increasing and every count is positive.

use crate::page::Lsn;

/// A multiset of in-flight LSN bounds (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct InFlightBounds {
    bounds: Vec<(Lsn, usize)>,
}

impl InFlightBounds {
    /// Adds one registration of `bound`.
    pub(crate) fn add(&mut self, bound: Lsn) {
        // The common case: at or past the newest bound.
        match self.bounds.last_mut() {
            Some((last, count)) if *last == bound => *count += 1,
            Some((last, _)) if *last > bound => {
                match self.bounds.binary_search_by_key(&bound, |&(lsn, _)| lsn) {
                    Ok(at) => self.bounds[at].1 += 1,
                    Err(at) => self.bounds.insert(at, (bound, 1)),
                }
            }
            _ => self.bounds.push((bound, 1)),
        }
    }

    /// Removes one registration of `bound`; a bound not registered is ignored.
    pub(crate) fn remove(&mut self, bound: Lsn) {
        if let Ok(at) = self.bounds.binary_search_by_key(&bound, |&(lsn, _)| lsn) {
            let count = &mut self.bounds[at].1;
            *count -= 1;
            if *count == 0 {
                self.bounds.remove(at);
            }
        }
    }

    /// The oldest registered bound.
    pub(crate) fn oldest(&self) -> Option<Lsn> {
        self.bounds.first().map(|&(lsn, _)| lsn)
    }
}

#[cfg(test)]
mod tests {
    use super::InFlightBounds;
    use std::collections::BTreeMap;

    #[test]
    fn agrees_with_a_counted_map_in_any_order() {
        let mut bounds = InFlightBounds::default();
        let mut model: BTreeMap<u64, usize> = BTreeMap::new();
        let mut held: Vec<u64> = Vec::new();
        let mut x = 7u64;
        for step in 0..20_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let choice = (x >> 33) % 10;
            if choice < 5 || held.is_empty() {
                // Mostly at the end, sometimes an older bound (a loser's first LSN).
                let bound = if choice == 0 {
                    (x >> 40) % 500
                } else {
                    400 + step / 8
                };
                bounds.add(bound);
                *model.entry(bound).or_insert(0) += 1;
                held.push(bound);
            } else {
                let bound = held.swap_remove(((x >> 20) as usize) % held.len());
                bounds.remove(bound);
                let count = model.get_mut(&bound).unwrap();
                *count -= 1;
                if *count == 0 {
                    model.remove(&bound);
                }
            }
            assert_eq!(bounds.oldest(), model.keys().next().copied(), "step {step}");
            assert!(bounds.bounds.windows(2).all(|pair| pair[0].0 < pair[1].0));
            assert!(bounds.bounds.iter().all(|&(_, count)| count > 0));
        }
        bounds.remove(123_456);
        assert_eq!(
            bounds.oldest(),
            model.keys().next().copied(),
            "unknown bound ignored"
        );
    }
}
