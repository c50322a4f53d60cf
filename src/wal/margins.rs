//! InnoDB's redo log margins (docs/algorithms.md section 1, "Redo log margins"; section 6 uses
//! `max_modified_age_sync` for Percona's furious flushing and the self-tuning `NP_sync_rec`).
//!
//! From the log's hard capacity `C` (ring bytes the checkpoint may span, see
//! `Geometry::capacity`): InnoDB's `log_group_capacity = 0.9 * C` (InnoDB keeps 10% free),
//! `margin = 0.9 * log_group_capacity` (the small per-thread reserves are ignored),
//! `max_modified_age_async = margin - margin/8`, `max_modified_age_sync = margin - margin/16`,
//! `max_checkpoint_age = margin - margin/32`, and the adaptive-flushing low-water mark is 10% of
//! `log_group_capacity`. Invariant: `lwm < async < sync < max_checkpoint_age < C`.

use crate::page::Lsn;

/// The margins of one log, in bytes of LSN distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct LogMargins {
    /// Hard capacity: appending past `checkpoint_lsn + capacity` blocks.
    pub capacity: u64,
    /// InnoDB's `log_group_capacity` (90% of the hard capacity).
    pub log_group_capacity: u64,
    /// Below this modified age adaptive flushing does nothing for the log (`pct_for_lsn = 0`).
    pub adaptive_flushing_lwm: u64,
    /// Above this age the page cleaner flushes the oldest pages (asynchronous preflush).
    pub max_modified_age_async: u64,
    /// Above this age the thread generating log must flush the oldest pages itself
    /// (a synchronous recoverability write).
    pub max_modified_age_sync: u64,
    /// Above this checkpoint age a checkpoint must be written before more log is generated.
    pub max_checkpoint_age: u64,
}

impl LogMargins {
    /// The margins of a log of hard capacity `capacity` bytes.
    #[must_use]
    pub fn from_capacity(capacity: u64) -> Self {
        let log_group_capacity = capacity / 10 * 9;
        let margin = log_group_capacity / 10 * 9;
        let margins = LogMargins {
            capacity,
            log_group_capacity,
            adaptive_flushing_lwm: log_group_capacity / 10,
            max_modified_age_async: margin - margin / 8,
            max_modified_age_sync: margin - margin / 16,
            max_checkpoint_age: margin - margin / 32,
        };
        assert!(
            capacity < 100
                || (margins.adaptive_flushing_lwm < margins.max_modified_age_async
                    && margins.max_modified_age_async < margins.max_modified_age_sync
                    && margins.max_modified_age_sync < margins.max_checkpoint_age
                    && margins.max_checkpoint_age < capacity),
            "margins are ordered"
        );
        margins
    }

    /// Classifies the log's state for the buffer pool.
    ///
    /// `modified_age = current_lsn - oldest_dirty_lsn` (0 when `oldest_dirty_lsn` is 0, i.e.
    /// nothing is dirty), `checkpoint_age = current_lsn - checkpoint_lsn`.
    #[must_use]
    pub fn classify(
        &self,
        current_lsn: Lsn,
        checkpoint_lsn: Lsn,
        oldest_dirty_lsn: Lsn,
    ) -> AgeState {
        let modified_age = if oldest_dirty_lsn == 0 {
            0
        } else {
            current_lsn.saturating_sub(oldest_dirty_lsn)
        };
        let checkpoint_age = current_lsn.saturating_sub(checkpoint_lsn);
        let zone = if checkpoint_age >= self.max_checkpoint_age {
            AgeZone::CheckpointRequired
        } else if modified_age >= self.max_modified_age_sync {
            AgeZone::SyncFlush
        } else if modified_age >= self.max_modified_age_async {
            AgeZone::AsyncFlush
        } else if modified_age >= self.adaptive_flushing_lwm {
            AgeZone::Adaptive
        } else {
            AgeZone::BelowLowWater
        };
        AgeState {
            modified_age,
            checkpoint_age,
            zone,
        }
    }
}

/// What the pool should do about the log's age, mildest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum AgeZone {
    /// Modified age below the adaptive-flushing low-water mark: no log-driven flushing.
    BelowLowWater,
    /// Between the low-water mark and `max_modified_age_async`: adaptive flushing
    /// (`pct_for_lsn` with `f = age * 100 / max_modified_age_async`).
    Adaptive,
    /// Past `max_modified_age_async`: the page cleaner preflushes the oldest pages.
    AsyncFlush,
    /// Past `max_modified_age_sync`: log-generating threads flush the oldest pages themselves.
    SyncFlush,
    /// Checkpoint age past `max_checkpoint_age`: write a checkpoint before generating more log.
    CheckpointRequired,
}

/// The log's ages and zone, as the pool sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct AgeState {
    /// `current_lsn - oldest_dirty_lsn`.
    pub modified_age: u64,
    /// `current_lsn - checkpoint_lsn`.
    pub checkpoint_age: u64,
    /// The zone the ages fall in.
    pub zone: AgeZone,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn margins_follow_innodb_and_zones_are_ordered() {
        let m = LogMargins::from_capacity(1_000_000);
        assert_eq!(m.log_group_capacity, 900_000);
        assert_eq!(m.max_modified_age_async, 810_000 - 810_000 / 8);
        assert_eq!(m.max_modified_age_sync, 810_000 - 810_000 / 16);
        assert_eq!(m.max_checkpoint_age, 810_000 - 810_000 / 32);
        assert_eq!(m.adaptive_flushing_lwm, 90_000);
        let at = |age: u64| {
            m.classify(2_000_000, 2_000_000 - age / 2, 2_000_000 - age)
                .zone
        };
        assert_eq!(m.classify(5, 5, 0).zone, AgeZone::BelowLowWater);
        assert_eq!(at(10_000), AgeZone::BelowLowWater);
        assert_eq!(at(100_000), AgeZone::Adaptive);
        assert_eq!(at(720_000), AgeZone::AsyncFlush);
        assert_eq!(at(770_000), AgeZone::SyncFlush);
        assert_eq!(
            m.classify(2_000_000, 1_000_000, 1_500_000).zone,
            AgeZone::CheckpointRequired
        );
    }
}
