#!/usr/bin/env python3
"""Where a transaction's heap allocations come from, per transaction (issue 20's
"allocation-free steady state").

usage: scripts/alloc_sites.py [--build] [--workload tpcc|lookup] [--txns SHORT,LONG]
                              [--page-size BYTES] [--work DIR] [--min PER_TXN] [--depth FRAMES]
                              [--out FILE.json]
       scripts/alloc_sites.py --table FILE.json        (re-prints a kept measurement)

  scripts/alloc_sites.py --build     # about 3 minutes: two DHAT runs of one warehouse

`examples/txn_cost.rs` counts allocations per transaction; this says where they are. It runs
the example twice under `valgrind --tool=dhat` (one warehouse, TXN_COST_WAREHOUSES=1), with
SHORT and LONG measured transactions after the same load and warm-up, and differences each
allocation site's count: what the load and warm-up allocated cancels, so a site's figure is its
allocations per transaction in the steady state (every thread of the process: the log writer
and page cleaner count too). A site is the innermost three flashbuf frames of its stack, with
the allocator's and the standard library's frames left out (`--depth` for more frames). The
example must be built with line tables: `--build` runs
`cargo build --profile profiling-lto --locked --example txn_cost`. Needs valgrind.
"""

import argparse
import collections
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "target", "profiling-lto", "examples", "txn_cost")
# Frames of these files are the allocator, the counting wrapper or the standard library.
SKIPPED = ("txn_cost.rs", "library/alloc", "library/core", "library/std", "vgpreload")


def fail(message):
    print(f"alloc_sites.py: {message}", file=sys.stderr)
    sys.exit(2)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="store_true", help="build the example first")
    parser.add_argument("--workload", default="tpcc", choices=["tpcc", "lookup"])
    parser.add_argument("--txns", default="1000,5000", help="SHORT,LONG measured transactions")
    parser.add_argument("--page-size", type=int, default=4096)
    parser.add_argument("--work", default=os.path.join(ROOT, "target", "alloc_sites"))
    parser.add_argument("--min", type=float, default=0.04, help="smallest site printed")
    parser.add_argument("--depth", type=int, default=3, help="flashbuf frames per site")
    parser.add_argument("--out", help="write the sites as JSON here")
    parser.add_argument("--table", help="re-print a kept measurement (JSON)")
    args = parser.parse_args()
    if args.table:
        return args
    if args.depth < 1:
        fail(f"--depth must be at least 1, not {args.depth}")
    try:
        short, long = (int(n) for n in args.txns.split(","))
    except ValueError:
        fail(f"--txns takes SHORT,LONG (two whole numbers), not {args.txns!r}")
    if not 0 < short < long:
        fail(f"--txns needs 0 < SHORT < LONG, got {short},{long}")
    if args.page_size < 512 or args.page_size & (args.page_size - 1):
        fail(f"--page-size must be a power of two of at least 512, not {args.page_size}")
    args.short, args.long = short, long
    return args


def run_dhat(args, txns):
    out = os.path.join(args.work, f"dhat-{txns}.json")
    env = dict(
        os.environ,
        TXN_COST_WAREHOUSES="1",
        TXN_COST_PAGE_SIZE=str(args.page_size),
        TXN_COST_WARMUP="500",
        TXN_COST_TXNS=str(txns),
    )
    command = ["valgrind", "--tool=dhat", "--read-inline-info=yes", f"--dhat-out-file={out}",
               EXAMPLE, args.workload]
    print(f"running {' '.join(command)} ({txns} transactions)", file=sys.stderr)
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    summary = [line for line in done.stdout.splitlines() if "transactions in" in line]
    return out, summary[-1] if summary else ""


def is_ours(frame):
    """Whether a frame is flashbuf's: its own symbol, or a function inlined into one (shown
    with its file only, `--read-inline-info`), but not the allocator, the standard library,
    another crate or the example's counting wrapper."""
    if any(skipped in frame for skipped in SKIPPED) or ".cargo/registry" in frame:
        return False
    if frame.startswith(("UnknownInlinedFun", "malloc", "calloc", "realloc", "???")):
        return False
    return "flashbuf" in frame or ".rs:" in frame


def sites(path, depth):
    data = json.load(open(path))
    frames = data["ftbl"]
    counts = collections.Counter()
    for point in data["pps"]:
        names = [frames[i].split(": ", 1)[-1] for i in point["fs"]]
        ours = [n for n in names if is_ours(n)]
        counts[" <- ".join(n[:100] for n in ours[:depth]) or "(outside flashbuf)"] += point["tbk"]
    return counts


def table(result):
    print(f"{result['total_per_txn']:.2f} allocations per transaction ({result['workload']}, "
          f"{result['page_size']}-byte pages, one warehouse; DHAT, {result['short']} and "
          f"{result['long']} transactions differenced)")
    for site in result["sites"]:
        print(f"{site['per_txn']:6.2f}  {site['site']}")


def main():
    args = parse_args()
    if args.table:
        table(json.load(open(args.table)))
        return
    if args.build:
        subprocess.run(
            ["cargo", "build", "--profile", "profiling-lto", "--locked", "--example", "txn_cost"],
            cwd=ROOT,
            check=True,
        )
    if not os.path.exists(EXAMPLE):
        fail(f"{EXAMPLE} is missing: run with --build")
    os.makedirs(args.work, exist_ok=True)
    short_path, short_line = run_dhat(args, args.short)
    long_path, long_line = run_dhat(args, args.long)
    before, after = sites(short_path, args.depth), sites(long_path, args.depth)
    span = args.long - args.short
    per_txn = {site: (after[site] - before[site]) / span for site in after}
    ranked = sorted(per_txn.items(), key=lambda item: -item[1])
    result = {
        "workload": args.workload,
        "page_size": args.page_size,
        "short": args.short,
        "long": args.long,
        "example_lines": [short_line, long_line],
        "total_per_txn": sum(per_txn.values()),
        "sites": [{"site": s, "per_txn": v} for s, v in ranked if v >= args.min],
    }
    table(result)
    if args.out:
        with open(args.out, "w") as out:
            json.dump(result, out, indent=1)
        print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
