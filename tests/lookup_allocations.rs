//! Heap allocations per transaction in the steady state, counted by a per-thread counting
//! allocator in this test binary only: upper bounds that catch a new allocation on the hot
//! paths. A point lookup (begin, `get` or `get_into`, commit on a cached tree): the count of the
//! calling thread is deterministic once the pool and the lock manager are warm. A TPC-C transaction (one
//! warehouse, standard mix, cached): the mean over 2,000 transactions of one client. Not
//! timed. The figures per workload are in docs/performance.md, "Cost per transaction".

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use flashbuf::kv::{KvEngine, KvTxn, TreeId, TxnEnd};
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
/// A lookup through `get`: today 1, the returned value (the transaction lives on the stack
/// with `KvEngine::transact`; the lock set, the undo list and the mini-transaction buffers are
/// reused per thread); the bound leaves no room for another allocation per lookup.
const GET_BOUND: f64 = 1.5;
/// A lookup through `get_into` a reused buffer: today none; the bound leaves room for a lock
/// bucket's first overflow entry now and then, not for an allocation per lookup.
const GET_INTO_BOUND: f64 = 0.5;

fn key(n: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(b"userkey:");
    key[8..].copy_from_slice(&n.to_be_bytes());
    key
}

/// How a lookup reads its key's value in a transaction.
type Read<'a> = dyn FnMut(&mut dyn KvTxn, TreeId, &[u8]) + 'a;

/// One point-lookup transaction of key `n`, reading through `read`.
fn lookup(kv: &KvStore, tree: TreeId, n: u64, read: &mut Read<'_>) {
    let key = key(n % KEYS);
    let end = kv
        .transact(&mut |txn| {
            read(txn, tree, &key);
            Ok(TxnEnd::Commit)
        })
        .unwrap();
    assert_eq!(end, TxnEnd::Commit);
}

/// Allocations of the calling thread per point-lookup transaction reading through `read`,
/// on a warm cached tree.
fn allocations_per_lookup(read: &mut Read<'_>) -> f64 {
    let (kv, _) = KvStore::open_specs("mem", "mem", 4096, 4096, &KvConfig::new(2048)).unwrap();
    let tree = kv.open_tree("t").unwrap();
    let mut pairs = (0..KEYS).map(|n| (key(n).to_vec(), vec![n as u8; 100]));
    kv.bulk_load(tree, &mut pairs).unwrap();
    // Warm: every leaf in the pool, the lock manager's tables grown, `read`'s buffers grown.
    for n in 0..KEYS {
        lookup(&kv, tree, n, read);
    }
    const LOOKUPS: u64 = 5_000;
    let before = ALLOCATIONS.with(Cell::get);
    for n in 0..LOOKUPS {
        lookup(&kv, tree, n * 7919, read);
    }
    let per_lookup = (ALLOCATIONS.with(Cell::get) - before) as f64 / LOOKUPS as f64;
    kv.close().unwrap();
    per_lookup
}

#[test]
fn a_point_lookup_transaction_allocates_at_most_the_bound() {
    let per_lookup = allocations_per_lookup(&mut |txn, tree, key| {
        assert_eq!(txn.get(tree, key).unwrap().map(|v| v.len()), Some(100));
    });
    eprintln!("{per_lookup:.2} allocations per point-lookup transaction (get)");
    assert!(
        per_lookup <= GET_BOUND,
        "{per_lookup:.2} allocations per point-lookup transaction with get (bound {GET_BOUND})"
    );
}

#[test]
fn a_point_lookup_into_a_reused_buffer_allocates_at_most_the_bound() {
    let mut value = Vec::new();
    let per_lookup = allocations_per_lookup(&mut |txn, tree, key| {
        assert!(txn.get_into(tree, key, &mut value).unwrap());
        assert_eq!(value.len(), 100);
    });
    eprintln!("{per_lookup:.2} allocations per point-lookup transaction (get_into)");
    assert!(
        per_lookup <= GET_INTO_BOUND,
        "{per_lookup:.2} allocations per point-lookup transaction with get_into \
         (bound {GET_INTO_BOUND})"
    );
}

/// Today about 0.4 on the calling thread: the lock buckets' overflow lists growing (a
/// warm-up that a longer run shows falling) and a rollback's deleted rows now and then.
/// The transaction lives on the stack (`KvEngine::transact`); rows are read with `get_into`
/// into the client's buffers, decoded borrowed and encoded into reused buffers; a row change
/// copies the value it replaces into a reused buffer; scans, splits, the commit's log write, a
/// rollback's undo list and the input's lines and last name reuse buffers or live on the
/// stack. The bound leaves room for the random mix, not for an allocation per row read or
/// written (about 24 reads and 20 writes in a New-Order), per statement or per transaction.
const TPCC_BOUND: f64 = 1.5;

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
