#!/usr/bin/env python3
"""Instructions per TPC-C transaction, flashbuf against vmcache, counted by callgrind (issue 20).

usage: scripts/instructions_vs_vmcache.py VMCACHE_CHECKOUT [--work DIR] [--out FILE.json]
                                          [--short S] [--long S] [--page-size BYTES]
       scripts/instructions_vs_vmcache.py --table FILE.json   (re-prints a sitting's tables)

  scripts/instructions_vs_vmcache.py ~/vmcache     # about 15 minutes on one core

Wall-clock comparisons on a shared host move with the load (scripts/vs_vmcache.py repeats and
interleaves for that); instruction counts do not. Both engines run TPC-C in memory on one
thread, 5 warehouses, 4 KiB pages (vmcache's), under `valgrind --tool=callgrind`:

  vmcache   built from the checkout you provide (never copied here) with scripts/vs_vmcache.py's
            flags (its Makefile's, with -g), into WORK/vmcache-g; run twice, RUNFOR=SHORT and
            RUNFOR=LONG seconds (THREADS=1, DATASIZE=5, PHYSGB=2, VIRTGB=4, BLOCK a sparse file in WORK: nothing is
            read at this size). The load is the same in both runs, so instructions per
            transaction = (I_long - I_short) / (T_long - T_short), T summed from the rows of
            transactions it prints each second; each function's count is differenced the same
            way.
  flashbuf  `examples/txn_cost.rs tpcc` (`cargo build --profile profiling-lto --example
            txn_cost`; `--cargo-profile profiling` for release's code generation):
            500 transactions of warm-up, then 2,000 counted (callgrind collects inside
            `measured_phase` only), full transactions, record locks and the redo log on `mem`.

Each function's own instructions are grouped by what they do (GROUPS below: the first pattern
that matches the function's name wins) and printed per transaction for both engines. The
counts, the groups and the commands go to OUT (JSON). Needs valgrind, g++ (C++20) and libaio's
header (Debian: apt-get install valgrind g++ libaio-dev).
"""
import argparse
import json
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

from vs_vmcache import VMCACHE_CXXFLAGS  # the same build as the wall-clock comparison's

REPO = Path(__file__).resolve().parent.parent
FLASHBUF_WARMUP = 500
FLASHBUF_TXNS = 2000

# (group, pattern on "file:function"); the first match wins.
GROUPS = {
    "flashbuf": [
        ("tree search and descent", r"btree::optimistic::search|NodeRef::search|NodeRef::cell"
                                    r"|NodeRef::new|inner_step|optimistic_to_leaf|copy_row"
                                    r"|read_row|search_key|descend"),
        ("redo log", r"flashbuf::wal::|append_mtr"),
        ("transactions and record locks", r"flashbuf::txn::"),
        ("mini-transactions, undo, row diffs", r"btree::mtr|btree::rollback|btree::patch"),
        ("other B+-tree work (inserts, updates, splits)", r"flashbuf::btree::"),
        ("buffer pool (page table, latches, LRU)", r"flashbuf::core::|flashbuf::pool::"
                                                   r"|flashbuf::policy::"),
        ("copies (memcpy, memset)", r"memcpy|memset|memmove"),
        ("allocation", r"malloc|free|realloc|_int_|alloc::alloc"),
        ("the TPC-C driver", r"workload::|rand::|rand_core"),
    ],
    "vmcache": [
        ("tree search and descent", r"lowerBound|memcmp|findLeaf|checkVersion|GuardO|GuardS"),
        ("other B+-tree work (inserts, updates, splits)", r"BTree::insert|split|copyKeyValue"
                                                          r"|GuardX|insertInPage|storeKeyValue"
                                                          r"|BTree::remove|BTreeNode::"),
        ("buffer pool (page table, latches, LRU)", r"BufferManager|PageState|ResidentPageSet"),
        ("copies (memcpy, memset)", r"memcpy|memset|memmove"),
        ("allocation", r"malloc|free|_int_|operator new|operator delete"),
        ("the TPC-C driver", r"TPCCWorkload|RandomGenerator|Mersenne|std::vector|std::function"
                             r"|scan|Adapter"),
    ],
}


def fail(message):
    sys.exit(f"instructions_vs_vmcache: {message}")


def run(command, **kwargs):
    print("+ " + " ".join(str(c) for c in command), file=sys.stderr, flush=True)
    done = subprocess.run(command, **kwargs)
    if done.returncode != 0:
        fail(f"failed ({done.returncode}): {command[0]}")
    return done


def functions(callgrind_out):
    """Each function's own instructions in a callgrind output, and the total."""
    text = run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100",
                str(callgrind_out)], capture_output=True, text=True).stdout
    counts, total = {}, None
    for line in text.splitlines():
        match = re.match(r"^\s*([0-9,]+) \(\s*[0-9.]+%\)\s+(.*)$", line)
        if not match:
            continue
        count, name = int(match.group(1).replace(",", "")), match.group(2).strip()
        if "PROGRAM TOTALS" in name:
            total = count
        else:
            counts[name] = counts.get(name, 0) + count
    if total is None:
        fail(f"{callgrind_out}: no PROGRAM TOTALS in callgrind_annotate's output")
    return counts, total


def grouped(engine, counts, per):
    """Instructions per transaction by group (and the rest's largest functions)."""
    sums = {group: 0.0 for group, _ in GROUPS[engine]}
    rest = {}
    for name, count in counts.items():
        for group, pattern in GROUPS[engine]:
            if re.search(pattern, name):
                sums[group] += count / per
                break
        else:
            rest[name] = count / per
    sums["the rest"] = sum(rest.values())
    largest = sorted(rest.items(), key=lambda item: -item[1])[:5]
    return sums, largest


def vmcache(checkout, work, short, long_):
    if not (checkout / "vmcache.cpp").is_file():
        fail(f"{checkout}: not a vmcache checkout (no vmcache.cpp)")
    for tool in ("g++", "valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            fail(f"{tool} is missing (Debian: apt-get install g++ valgrind)")
    if not Path("/usr/include/libaio.h").exists():
        fail("libaio's header is missing (Debian: apt-get install libaio-dev)")
    binary = work / "vmcache-g"
    run(["g++", *VMCACHE_CXXFLAGS, str(checkout / "vmcache.cpp"), "-o", str(binary), "-laio"])
    block = work / "vmcache-block"
    with open(block, "wb") as file:
        file.truncate(4 << 30)
    runs = {}
    for seconds in (short, long_):
        out = work / f"vmcache.{seconds}.callgrind"
        env = {"THREADS": "1", "DATASIZE": "5", "PHYSGB": "2", "VIRTGB": "4",
               "RUNFOR": str(seconds), "BLOCK": str(block), "PATH": "/usr/bin:/bin"}
        done = run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(binary)],
                   env=env, capture_output=True, text=True)
        rows = [line.split(",") for line in done.stdout.splitlines() + done.stderr.splitlines()
                if line.count(",") >= 4 and ",vmcache," in line]
        transactions = sum(int(row[1]) for row in rows)
        counts, total = functions(out)
        runs[seconds] = {"transactions": transactions, "total": total, "counts": counts}
    delta = runs[long_]["transactions"] - runs[short]["transactions"]
    if delta <= 0:
        fail("vmcache ran no more transactions in the long run than in the short one")
    names = set(runs[long_]["counts"]) | set(runs[short]["counts"])
    counts = {name: runs[long_]["counts"].get(name, 0) - runs[short]["counts"].get(name, 0)
              for name in names}
    return {
        "transactions": delta,
        "per_transaction": (runs[long_]["total"] - runs[short]["total"]) / delta,
        "counts": counts,
        "runs": {str(k): {"transactions": v["transactions"], "instructions": v["total"]}
                 for k, v in runs.items()},
    }


def flashbuf(work, page_size, profile):
    run(["cargo", "build", "--profile", profile, "--locked", "--quiet", "--example",
         "txn_cost"], cwd=REPO)
    binary = REPO / "target" / profile / "examples" / "txn_cost"
    out = work / "flashbuf.callgrind"
    env = {"TXN_COST_PAGE_SIZE": str(page_size), "TXN_COST_WARMUP": str(FLASHBUF_WARMUP),
           "TXN_COST_TXNS": str(FLASHBUF_TXNS), "PATH": "/usr/bin:/bin"}
    run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
         "--toggle-collect=*measured_phase*", str(binary), "tpcc"], env=env,
        capture_output=True, text=True)
    counts, total = functions(out)
    return {"transactions": FLASHBUF_TXNS, "per_transaction": total / FLASHBUF_TXNS,
            "counts": counts}


def print_tables(report):
    engines = report["engines"]
    tables = {name: grouped(name, engine["counts"], engine["transactions"])
              for name, engine in engines.items()}
    groups = []
    for name in ("flashbuf", "vmcache"):
        groups += [g for g in tables[name][0] if g not in groups]
    print("| what | flashbuf | vmcache | flashbuf / vmcache |")
    print("|---|---|---|---|")
    for group in groups:
        ours = tables["flashbuf"][0].get(group)
        theirs = tables["vmcache"][0].get(group)
        ratio = f"{ours / theirs:.1f}" if ours and theirs else ""
        cell = lambda v: f"{v:,.0f}" if v is not None else "(none)"
        print(f"| {group} | {cell(ours)} | {cell(theirs)} | {ratio} |")
    ours, theirs = (engines[n]["per_transaction"] for n in ("flashbuf", "vmcache"))
    print(f"| **total per transaction** | **{ours:,.0f}** | **{theirs:,.0f}** | "
          f"**{ours / theirs:.1f}** |")
    for name in ("flashbuf", "vmcache"):
        for function, count in tables[name][1]:
            print(f"  {name}, the rest's largest: {count:8,.0f} {function[:110]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkout", nargs="?", type=Path)
    parser.add_argument("--work", type=Path, default=REPO / "target" / "instructions_vs_vmcache")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--short", type=int, default=10, help="vmcache's short run, seconds")
    parser.add_argument("--long", type=int, default=40, help="vmcache's long run, seconds")
    parser.add_argument("--page-size", type=int, default=4096, help="flashbuf's page size")
    parser.add_argument("--cargo-profile", default="profiling-lto",
                        choices=["profiling", "profiling-lto"],
                        help="flashbuf's build: profiling-lto (fat LTO, one code-generation "
                             "unit, line tables; the default) or profiling (release's codegen)")
    parser.add_argument("--table", type=Path, help="re-print the tables of a saved FILE.json")
    args = parser.parse_args()
    if args.table:
        print_tables(json.loads(args.table.read_text()))
        return
    if args.checkout is None:
        fail("give the vmcache checkout (or --table FILE.json)")
    if not 0 < args.short < args.long:
        fail("--short must be positive and below --long")
    args.work.mkdir(parents=True, exist_ok=True)
    report = {
        "host": platform.node(),
        "machine": platform.machine(),
        "flashbuf_commit": subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"],
                                          capture_output=True, text=True).stdout.strip(),
        "settings": {"warehouses": 5, "threads": 1, "vmcache_page_size": 4096,
                     "flashbuf_page_size": args.page_size, "vmcache_runfor": [args.short, args.long],
                     "flashbuf_transactions": FLASHBUF_TXNS, "flashbuf_warmup": FLASHBUF_WARMUP,
                     "flashbuf_cargo_profile": args.cargo_profile},
        "engines": {"vmcache": vmcache(args.checkout, args.work, args.short, args.long),
                    "flashbuf": flashbuf(args.work, args.page_size, args.cargo_profile)},
    }
    out = args.out or args.work / "instructions.json"
    out.write_text(json.dumps(report, indent=1))
    print_tables(report)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
