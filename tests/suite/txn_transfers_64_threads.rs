//! 64 threads run conflicting bank transfers (read both balances, write both: shared locks
//! upgraded to exclusive, so deadlocks happen and victims retry) on a few accounts, while an
//! auditor repeatedly sums every balance in one transaction (a full scan under shared locks).
//! Every audit and the final state must show the initial total, every committed transfer must
//! be counted, and the tree must check clean.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use flashbuf::device::SharedDevice;
use flashbuf::device::memory::MemoryDevice;
use flashbuf::kv::{Direction, FULL_RANGE, KvEngine, KvTxn, with_retries};
use flashbuf::txn::{KvConfig, KvStore};
use flashbuf::wal::WalConfig;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const PAGE: usize = 4096;
const THREADS: u64 = 64;
const ACCOUNTS: u32 = 40;
const TRANSFERS_PER_THREAD: u32 = 60;
const INITIAL: i64 = 10_000;

fn account(n: u32) -> Vec<u8> {
    format!("account-{n:04}").into_bytes()
}

fn balance(value: Option<Vec<u8>>) -> flashbuf::Result<i64> {
    let value = value.ok_or_else(|| flashbuf::Error::InvalidArgument("missing account".into()))?;
    Ok(i64::from_le_bytes(value[..8].try_into().unwrap()))
}

#[test]
fn sixty_four_threads_of_transfers_keep_the_sum() {
    let mut config = KvConfig::new(64);
    config.database.wal = WalConfig {
        log_size: 32 << 20,
        page_size: PAGE,
        buffer_size: 1 << 20,
        full_timeout: Duration::from_secs(10),
    };
    config.lock_timeout = Duration::from_secs(2);
    let data: SharedDevice = Arc::new(MemoryDevice::new(PAGE, 1024).unwrap());
    let log: SharedDevice = Arc::new(MemoryDevice::new(PAGE, (32 << 20) / PAGE as u64).unwrap());
    let (kv, _) = KvStore::open(data, log, &config).unwrap();
    let kv = Arc::new(kv);
    let tree = kv.open_tree("accounts").unwrap();
    let mut txn = kv.begin().unwrap();
    for n in 0..ACCOUNTS {
        txn.put(tree, &account(n), &INITIAL.to_le_bytes()).unwrap();
    }
    txn.commit().unwrap();
    let total = INITIAL * i64::from(ACCOUNTS);
    let committed = AtomicU64::new(0);
    let retries = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let audits = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let auditor = {
            let kv = Arc::clone(&kv);
            let (done, audits) = (&done, &audits);
            scope.spawn(move || {
                while !done.load(Ordering::Acquire) {
                    let (sum, _) = with_retries(kv.as_ref(), 1000, |txn: &mut dyn KvTxn| {
                        let mut sum = 0i64;
                        let mut count = 0;
                        txn.scan(
                            tree,
                            FULL_RANGE,
                            Direction::Forward,
                            usize::MAX,
                            &mut |_, v| {
                                sum += i64::from_le_bytes(v[..8].try_into().unwrap());
                                count += 1;
                                true
                            },
                        )?;
                        assert_eq!(count, ACCOUNTS);
                        Ok(sum)
                    })
                    .unwrap();
                    assert_eq!(sum, total, "an audit saw money created or lost");
                    audits.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let kv = Arc::clone(&kv);
                let (committed, retries) = (&committed, &retries);
                scope.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(thread);
                    for _ in 0..TRANSFERS_PER_THREAD {
                        let from = rng.gen_range(0..ACCOUNTS);
                        let to = (from + rng.gen_range(1..ACCOUNTS)) % ACCOUNTS;
                        let amount = rng.gen_range(1..100i64);
                        let ((), retried) =
                            with_retries(kv.as_ref(), 1000, |txn: &mut dyn KvTxn| {
                                let a = balance(txn.get(tree, &account(from))?)?;
                                let b = balance(txn.get(tree, &account(to))?)?;
                                txn.put(tree, &account(from), &(a - amount).to_le_bytes())?;
                                txn.put(tree, &account(to), &(b + amount).to_le_bytes())
                            })
                            .unwrap();
                        committed.fetch_add(1, Ordering::Relaxed);
                        retries.fetch_add(retried as u64, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        done.store(true, Ordering::Release);
        auditor.join().unwrap();
    });
    let mut txn = kv.begin().unwrap();
    let mut sum = 0i64;
    txn.scan(
        tree,
        FULL_RANGE,
        Direction::Backward,
        usize::MAX,
        &mut |_, v| {
            sum += i64::from_le_bytes(v[..8].try_into().unwrap());
            true
        },
    )
    .unwrap();
    txn.commit().unwrap();
    assert_eq!(sum, total);
    assert_eq!(
        committed.load(Ordering::Relaxed),
        THREADS * u64::from(TRANSFERS_PER_THREAD)
    );
    let report = kv.check().unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    let stats = kv.lock_stats();
    eprintln!(
        "{} transfers, {} retries, {} audits; lock waits {}, deadlocks {}, timeouts {}",
        committed.load(Ordering::Relaxed),
        retries.load(Ordering::Relaxed),
        audits.load(Ordering::Relaxed),
        stats.waits,
        stats.deadlocks,
        stats.timeouts
    );
    assert!(stats.deadlocks > 0, "the transfers must conflict");
    Arc::try_unwrap(kv).ok().unwrap().close().unwrap();
}
