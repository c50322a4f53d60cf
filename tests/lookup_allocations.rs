//! Heap allocations per transaction in the steady state, counted by a per-thread counting
//! allocator in this test binary only: upper bounds that catch a new allocation on the hot
//! paths. A point lookup (begin, get, commit on a cached tree): the count of the calling thread
//! is deterministic once the pool and the lock manager are warm. A TPC-C transaction (one
//! warehouse, standard mix, cached): the mean over 2,000 transactions of one client. Not
//! timed. The figures per workload are in docs/performance.md, "Cost per transaction".

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use flashbuf::kv::{KvEngine, TreeId};
use flashbuf::txn::{KvConfig, KvStore};

/// The system allocator, counting the allocations of each thread.
struct PerThread;

std::thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: the counter may be gone while a thread exits.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for PerThread {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: PerThread = PerThread;

const KEYS: u64 = 20_000;
/// Today the count is 2 (the boxed transaction and the returned value; the lock set, the undo
/// list and the mini-transaction buffers are reused per thread); the bound leaves room for
/// one more.
const BOUND: u64 = 3;

fn key(n: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(b"userkey:");
    key[8..].copy_from_slice(&n.to_be_bytes());
    key
}

fn lookup(kv: &KvStore, tree: TreeId, n: u64) {
    let mut txn = kv.begin().unwrap();
    assert!(txn.get(tree, &key(n % KEYS)).unwrap().is_some());
    txn.commit().unwrap();
}

#[test]
fn a_point_lookup_transaction_allocates_at_most_the_bound() {
    let (kv, _) = KvStore::open_specs("mem", "mem", 4096, 4096, &KvConfig::new(2048)).unwrap();
    let tree = kv.open_tree("t").unwrap();
    let mut pairs = (0..KEYS).map(|n| (key(n).to_vec(), vec![n as u8; 100]));
    kv.bulk_load(tree, &mut pairs).unwrap();
    // Warm: every leaf in the pool, the lock manager's tables grown.
    for n in 0..KEYS {
        lookup(&kv, tree, n);
    }
    const LOOKUPS: u64 = 5_000;
    let before = ALLOCATIONS.with(Cell::get);
    for n in 0..LOOKUPS {
        lookup(&kv, tree, n * 7919);
    }
    let per_lookup = (ALLOCATIONS.with(Cell::get) - before) as f64 / LOOKUPS as f64;
    eprintln!("{per_lookup:.2} allocations per point-lookup transaction");
    assert!(
        per_lookup <= BOUND as f64,
        "{per_lookup:.2} allocations per point-lookup transaction (bound {BOUND})"
    );
    kv.close().unwrap();
}

/// Today about 44 on the calling thread (mostly the values `get` returns, one per row read;
/// the workload decodes columns borrowed and encodes into reused buffers; a split's two cell
/// buffers and page images now and then); the bound leaves room for the random mix, not for
/// a new allocation per row read or written.
const TPCC_BOUND: f64 = 60.0;

#[test]
fn a_tpcc_transaction_allocates_at_most_the_bound() {
    use flashbuf::workload::record::RecordWorkload;
    use flashbuf::workload::tpcc::{Tpcc, TpccConfig};
    let (kv, _) =
        KvStore::open_specs("mem", "mem", 16 * 1024, 16_384, &KvConfig::new(12_288)).unwrap();
    let tpcc = Tpcc::new(TpccConfig::new(1)).unwrap();
    tpcc.load(&kv, &mut |_| {}).unwrap();
    let trees = kv.trees();
    for tree in trees.trees() {
        trees
            .scan(
                tree.id,
                std::ops::Bound::Unbounded,
                flashbuf::kv::Direction::Forward,
                &mut |_, _| flashbuf::btree::Visit::Continue,
            )
            .unwrap();
    }
    let mut worker = tpcc.worker(0);
    for _ in 0..500 {
        worker.run_one(&kv).unwrap();
    }
    const TXNS: u64 = 2_000;
    let before = ALLOCATIONS.with(Cell::get);
    for _ in 0..TXNS {
        worker.run_one(&kv).unwrap();
    }
    let per_txn = (ALLOCATIONS.with(Cell::get) - before) as f64 / TXNS as f64;
    eprintln!("{per_txn:.1} allocations per TPC-C transaction");
    assert!(
        per_txn <= TPCC_BOUND,
        "{per_txn:.1} allocations per TPC-C transaction (bound {TPCC_BOUND})"
    );
    kv.close().unwrap();
}
