#!/usr/bin/env python3
"""Where a miss's frame came from, per run of a sweep or bench (docs/regime.md, "Where
vanilla's frames come from").

usage:
  scripts/frames_source.py DIR_OR_FILE ... [--scheme vanilla]

Each argument is a sweep's or reproduction's output directory (its points/*.point.json), a
point file, or a bench results.json. For every run of the scheme it prints one Markdown row:
the misses of the measured window split into those served by the free list, by the miss's own
scan of the LRU tail for a clean page, and by a read stall (a single-page flush), each as a
share of the misses; what the page cleaner's LRU part freed (clean pages evicted, dirty pages
written) per miss, beside its nominal capacity (scan depth x instances per period over the
miss rate); how dirty the LRU tail was where the misses scanned it; how long the page
cleaner's rounds took against the period it is set to, with the pages each round wrote; and,
for runs that sampled it (`tail_profile`, flashbuf after 2026-11-30), the dirty share of the
order's last 1% and of its 10-25% band, the mean run of pages a miss could not evict from the
tail and the share of samples in which that run reached the first scan's depth (docs/regime.md,
"Why vanilla's LRU tail stays clean").

Needs results whose `pool_stats.extra` counters are windowed (flashbuf after 2026-11-28;
earlier runs counted them from the pool's opening): the script refuses runs whose split does
not add up to the window's misses.
"""
import glob
import json
import os
import sys


def runs_of(path):
    """(point value, run) for every single run under `path`."""
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, "points", "*.point.json")))
        if not files and os.path.exists(os.path.join(path, "results.json")):
            files = [os.path.join(path, "results.json")]
    else:
        files = [path]
    for file in files:
        with open(file) as f:
            doc = json.load(f)
        if "point" in doc:
            value = doc["point"]["value"]
            aggregates = doc["point"]["results"]["runs"]
        else:
            value = os.path.basename(os.path.dirname(os.path.abspath(file)))
            aggregates = doc["runs"]
        for aggregate in aggregates:
            for run in aggregate.get("runs") or [aggregate]:
                yield value, run


def quantity(run, name):
    for q in run.get("regime", {}).get("quantities", []):
        if q["name"] == name:
            return q["ours"]
    return None


def row(value, run):
    pool = run["pool_stats"]
    extra = pool["extra"]
    misses = pool["misses"]
    stalls = pool["read_stalls"]
    free = extra.get("misses_from_free_list")
    scan = extra.get("misses_from_own_scan")
    if free is None or scan is None or misses == 0:
        return None
    split = free + scan + stalls
    if abs(split - misses) > 0.02 * misses:
        sys.exit(
            f"{value}: the split ({split:.0f}) is not the window's misses ({misses}): "
            "a run whose extra counters are not windowed (before 2026-11-28)"
        )
    clean = extra.get("cleaner_freed_clean_pages", 0.0)
    written = pool["lru_flushes"]
    scanned_dirty = extra.get("user_scan_dirty_pages", 0.0)
    scanned_clean = extra.get("user_scan_clean_pages", 0.0)
    scanned = scanned_dirty + scanned_clean
    nominal = quantity(run, "cleaner_capacity_over_miss_rate")
    rounds = extra.get("cleaner_rounds", 0.0)
    period_ms = run.get("regime", {}).get("cleaner_period_ms")
    round_ms = 1000.0 * run["duration_s"] / rounds if rounds else None
    return [
        value,
        f"{run['throughput']:,.0f}",
        f"{misses:,}",
        f"{100 * free / misses:.1f}",
        f"{100 * scan / misses:.1f}",
        f"{100 * stalls / misses:.1f}",
        f"{clean / misses:.3f}",
        f"{written / misses:.3f}",
        f"{(clean + written) / misses:.3f}",
        "" if nominal is None else f"{nominal:.2f}",
        "" if scanned == 0 else f"{scanned / max(scan + stalls, 1):.1f}",
        "" if scanned == 0 else f"{100 * scanned_dirty / scanned:.1f}",
        f"{100 * pool['dirty_pages'] / pool['frames']:.0f}",
        "" if round_ms is None or not period_ms else f"{round_ms:.0f} / {period_ms}",
        "" if not rounds else f"{written / rounds:.0f} + {pool['flush_list_flushes'] / rounds:.0f}",
    ] + tail_cells(run.get("tail_profile"))


def tail_cells(tail):
    """The tail profile's four columns (empty for a run that did not sample it)."""
    if not tail:
        return [""] * 4
    bands = tail["bands"]
    return [
        f"{100 * bands[0]['dirty']:.0f} ({100 * bands[0]['writing']:.0f})",
        f"{100 * bands[-1]['dirty']:.0f}",
        f"{tail['unevictable_run_mean']:.1f}",
        f"{100 * tail['run_at_depth']:.1f} (depth {tail['scan_depth']})",
    ]


HEADER = [
    "point",
    "tx/s",
    "misses",
    "free list %",
    "own scan %",
    "stall %",
    "cleaner freed clean / miss",
    "cleaner wrote / miss",
    "cleaner freed / miss",
    "nominal capacity / miss rate",
    "pages scanned per scanning miss",
    "dirty % of scanned",
    "dirty % of pool (end)",
    "cleaner round / period, ms",
    "pages written per round, LRU + flush list",
    "tail's last 1%: dirty % (being written %)",
    "tail 10-25%: dirty %",
    "unevictable run from the tail, pages",
    "samples with the run >= scan depth, %",
]


def main(argv):
    scheme = "vanilla"
    if "--scheme" in argv:
        at = argv.index("--scheme")
        scheme = argv[at + 1]
        del argv[at : at + 2]
    if not argv:
        sys.exit(__doc__)
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for path in argv:
        for value, run in runs_of(path):
            if run.get("scheme") != scheme:
                continue
            cells = row(value, run)
            if cells:
                print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
