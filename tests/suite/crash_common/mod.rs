//! What the crash tests over the transactional store share (`tests/suite/txn_crash.rs`,
//! `tests/suite/tpcc_crash.rs`): the seeded fault configuration and the crash itself, optionally
//! followed by a second crash during recovery (redo and loser rollback must be idempotent).

use std::sync::Arc;

use flashbuf::device::SharedDevice;
use flashbuf::device::fault::{FaultConfig, FaultDevice, UnsyncedOnCrash};
use flashbuf::txn::{KvConfig, KvStore};
use rand::Rng;
use rand::rngs::SmallRng;

/// A fault device setting: `seed`, a crash after `crash_at` operations, `fate` for the writes
/// not yet synced at the crash.
pub fn fault(seed: u64, crash_at: Option<u64>, fate: UnsyncedOnCrash) -> FaultConfig {
    FaultConfig {
        seed,
        crash_after_ops: crash_at,
        unsynced_on_crash: fate,
        ..FaultConfig::default()
    }
}

/// The durable images of `data` and `log` after their crash. For every third seed, recovery
/// is started on them and crashed again (on the data device, after 1-79 operations), and the
/// images after that second crash are returned.
pub fn crash_images(
    seed: u64,
    rng: &mut SmallRng,
    data: &FaultDevice,
    log: &FaultDevice,
    config: &KvConfig,
) -> (SharedDevice, SharedDevice) {
    let mut data_image: SharedDevice = Arc::new(data.crash().unwrap());
    let mut log_image: SharedDevice = Arc::new(log.crash().unwrap());
    if seed.is_multiple_of(3) {
        let again = fault(
            seed ^ 0xAAAA,
            Some(rng.gen_range(1..80)),
            UnsyncedOnCrash::Random,
        );
        let data2 = Arc::new(FaultDevice::new(Arc::clone(&data_image), again.clone()).unwrap());
        let log2 = Arc::new(
            FaultDevice::new(
                Arc::clone(&log_image),
                FaultConfig {
                    crash_after_ops: None,
                    ..again
                },
            )
            .unwrap(),
        );
        if let Ok((kv, _)) = KvStore::open(
            Arc::clone(&data2) as SharedDevice,
            Arc::clone(&log2) as SharedDevice,
            config,
        ) {
            kv.abandon();
        }
        data_image = Arc::new(data2.crash().unwrap());
        log_image = Arc::new(log2.crash().unwrap());
    }
    (data_image, log_image)
}
