#!/usr/bin/env python3
"""Recompute the device bandwidth share of saved runs with `flashbuf device peak`.

Before 2026-11-25 a run's `io.bandwidth_share` divided by a peak measured on a fresh device
model (40,000 requests), which ran in the controller's buffer and the SLC cache at 2-5 times
the sustained rate; the share was understated as much. This prints, for each run of each
results.json given (a bench's or a reproduction's), the share as saved and as recomputed
against the sustained peak (src/bench/capacity.rs), and the run's device write IOPS against
the device's sustained write IOPS.

usage: scripts/device_share.py [--flashbuf BIN] LABEL=results.json ...
"""
import json
import subprocess
import sys


def runs_of(doc):
    if "runs" in doc:
        yield from doc["runs"]
    for point in doc.get("points", []):
        results = point.get("results") or {}
        for run in results.get("runs", []):
            run = dict(run)
            run["_point"] = point.get("value")
            yield run


def peak(binary, device, pages, page_size, fraction, cache):
    key = (device, pages, page_size, round(fraction, 3))
    if key not in cache:
        out = subprocess.run(
            [binary, "device", "peak", "--device", device, "--pages", str(pages),
             "--page-size", str(page_size), "--read-fraction", f"{fraction:.4f}", "--json"],
            check=True, capture_output=True, text=True).stdout
        cache[key] = json.loads(out)[0]["mbps"]
    return cache[key]


def main(argv):
    binary = "target/release/flashbuf"
    if argv[:1] == ["--flashbuf"]:
        binary, argv = argv[1], argv[2:]
    if not argv:
        sys.exit(__doc__)
    cache = {}
    print(f"{'run':<22} {'scheme':<14} {'point':>6} {'tx/s':>7} {'read sh':>7} {'MB/s':>6} "
          f"{'peak then':>9} {'share then':>10} {'peak now':>8} {'share now':>9} {'w/s':>7} "
          f"{'w peak':>7} {'w share':>7}")
    for arg in argv:
        label, _, path = arg.partition("=")
        doc = json.load(open(path))
        for run in runs_of(doc):
            io = run.get("io") or {}
            ios = io.get("read_iops", 0) + io.get("write_iops", 0)
            if not ios or not str(run.get("device", "")).startswith("emu:"):
                continue
            fraction = io["read_iops"] / ios
            mbps = io["read_mbps"] + io["write_mbps"]
            page = run.get("page_size", 16384)
            now = peak(binary, run["device"], run["db_pages"], page, fraction, cache)
            writes = peak(binary, run["device"], run["db_pages"], page, 0.0, cache) * 1e6 / page
            then = io.get("peak_mbps") or float("nan")
            print(f"{label:<22} {run['scheme']:<14} {str(run.get('_point', '-')):>6} "
                  f"{run['throughput']:>7.0f} {fraction:>7.2f} {mbps:>6.0f} {then:>9.0f} "
                  f"{io.get('bandwidth_share') or float('nan'):>10.3f} {now:>8.0f} "
                  f"{mbps / now:>9.3f} {io['write_iops']:>7.0f} {writes:>7.0f} "
                  f"{io['write_iops'] / writes:>7.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
