//! The registry of in-flight LSN bounds (`Shared::in_flight` in `db`): lower bounds of the
//! records that mini-transactions and transactions have appended, or are about to append, but
//! whose pages are not yet on the flush list (or, for a transaction, whose outcome record is not
//! yet written). A checkpoint never moves the redo point past the oldest bound.
//!
//! **Stripes.** Every mini-transaction registers a bound before its append and withdraws it
//! once its pages are dirty, so one mutex for the whole registry was taken twice per change by
//! every thread, and its cache line moved between the cores at each (about 2% of in-memory
//! TPC-C's cycles at two threads, `docs/performance.md`, "The log's reads without its lock").
//! [`InFlightRegistry`] splits the multiset into [`STRIPES`] stripes, each under its own mutex
//! on its own cache lines; a thread registers into the stripe of its own index, so the common
//! registration and withdrawal lock a line that stays with its core. A checkpoint locks *every*
//! stripe (in index order; [`InFlightRegistry::lock_all`]) for as long as the single mutex was
//! held, so it still sees no registration or withdrawal while it computes the redo point, which
//! is all the protocol in `Shared::checkpoint` relies on. A bound is withdrawn from the
//! withdrawing thread's stripe, or from any stripe holding one registration of the same LSN
//! (registrations of one LSN are interchangeable: the union of the stripes is the multiset).
//!
//! Lock order: a thread holds at most one stripe, except the checkpointer (which holds the
//! `checkpoint_lock` and takes them all in index order).
//!
//! Each stripe is a multiset of LSNs kept as a vector of `(bound, count)` sorted by bound:
//! registrations come at the log's current end, so almost always at the back; the set holds
//! about one bound per running mini-transaction and transaction, and its buffer is kept when it
//! empties, so the steady state allocates nothing (a `BTreeMap` freed its node whenever the set
//! emptied and allocated it again at the next registration, about once per transaction).
//!
//! Invariant: in each stripe, bounds are strictly increasing and every count is positive.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::{Mutex, MutexGuard};

use crate::page::Lsn;
use crate::sync::CacheLines;

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

    /// Removes one registration of `bound`; returns whether there was one (a bound not
    /// registered is ignored).
    pub(crate) fn remove(&mut self, bound: Lsn) -> bool {
        let Ok(at) = self.bounds.binary_search_by_key(&bound, |&(lsn, _)| lsn) else {
            return false;
        };
        let count = &mut self.bounds[at].1;
        *count -= 1;
        if *count == 0 {
            self.bounds.remove(at);
        }
        true
    }

    /// The oldest registered bound.
    pub(crate) fn oldest(&self) -> Option<Lsn> {
        self.bounds.first().map(|&(lsn, _)| lsn)
    }
}

/// Stripes of an [`InFlightRegistry`] (a power of two, so a thread's index maps by a mask).
pub(crate) const STRIPES: usize = 16;

/// One stripe, alone on its cache lines.
type Stripe = CacheLines<Mutex<InFlightBounds>>;

/// Hands each thread its stripe index, round robin in the order threads first register.
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

std::thread_local! {
    /// This thread's stripe index (`usize::MAX`: not assigned yet).
    static THREAD_STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// The calling thread's stripe.
fn thread_stripe() -> usize {
    THREAD_STRIPE
        .try_with(|stripe| {
            if stripe.get() == usize::MAX {
                stripe.set(NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES);
            }
            stripe.get()
        })
        .unwrap_or(0) // a thread being torn down: any stripe is correct
}

/// The in-flight bounds of a database, striped by thread (see the module docs).
#[derive(Debug)]
pub(crate) struct InFlightRegistry {
    stripes: Box<[Stripe]>,
}

impl Default for InFlightRegistry {
    fn default() -> Self {
        InFlightRegistry {
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
        }
    }
}

/// Every stripe of a registry, locked ([`InFlightRegistry::lock_all`]).
pub(crate) struct AllStripes<'a> {
    guards: Vec<MutexGuard<'a, InFlightBounds>>,
}

impl AllStripes<'_> {
    /// The oldest bound registered in any stripe.
    pub(crate) fn oldest(&self) -> Option<Lsn> {
        self.guards
            .iter()
            .filter_map(|stripe| stripe.oldest())
            .min()
    }
}

impl InFlightRegistry {
    /// Registers the bound `bound_now` returns, called under the calling thread's stripe lock
    /// (so no checkpoint runs between reading the bound and registering it); returns it.
    pub(crate) fn register_with(&self, bound_now: impl FnOnce() -> Lsn) -> Lsn {
        let mut stripe = self.stripes[thread_stripe()].0.lock();
        let bound = bound_now();
        stripe.add(bound);
        bound
    }

    /// Registers `bound` (a loser transaction's first LSN during recovery).
    pub(crate) fn register(&self, bound: Lsn) {
        self.stripes[thread_stripe()].0.lock().add(bound);
    }

    /// Withdraws one registration of `bound`: from the calling thread's stripe when it holds
    /// one (the common case: the thread that registered it), else from the first stripe that
    /// does. A bound registered nowhere is ignored.
    pub(crate) fn withdraw(&self, bound: Lsn) {
        let own = thread_stripe();
        if self.stripes[own].0.lock().remove(bound) {
            return;
        }
        // Bound: one pass over the stripes.
        for (index, stripe) in self.stripes.iter().enumerate() {
            if index != own && stripe.0.lock().remove(bound) {
                return;
            }
        }
    }

    /// Locks every stripe, in index order: no registration or withdrawal happens until the
    /// result drops. For the checkpointer only (see the module's lock order).
    pub(crate) fn lock_all(&self) -> AllStripes<'_> {
        AllStripes {
            guards: self.stripes.iter().map(|stripe| stripe.0.lock()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{InFlightBounds, InFlightRegistry, STRIPES};
    use std::collections::BTreeMap;

    #[test]
    fn a_bound_registered_by_one_thread_is_withdrawn_by_another() {
        let registry = InFlightRegistry::default();
        let bounds: Vec<u64> = (0..STRIPES as u64 + 3).map(|n| 100 + n).collect();
        // Each bound registered from its own thread (spread over every stripe), then
        // withdrawn by this one, oldest last.
        std::thread::scope(|scope| {
            for &bound in &bounds {
                let registry = &registry;
                scope.spawn(move || registry.register_with(|| bound));
            }
        });
        registry.register(100); // a second registration of the oldest, from this thread
        assert_eq!(registry.lock_all().oldest(), Some(100));
        for &bound in bounds.iter().rev() {
            registry.withdraw(bound);
        }
        assert_eq!(
            registry.lock_all().oldest(),
            Some(100),
            "one registration of 100 left"
        );
        registry.withdraw(100);
        registry.withdraw(100); // registered nowhere now: ignored
        assert_eq!(registry.lock_all().oldest(), None);
    }

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
