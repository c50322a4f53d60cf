#!/usr/bin/env python3
"""The table of docs/devices.md, "Which state the papers' drives were in": per device state
(sweep point), vanilla's and lru-c's throughput, their ratio, the measured phase's GC writes per
host write, and vanilla's calibration target (the doublewrite slot hold time, 8 / read stalls
per device second; experiments/calibration/lruc-vanilla.toml) with its residual against the
paper's 3.53 ms.

usage: states.py SWEEP.json [SWEEP.json ...]
"""
import json
import statistics
import sys

PAPER_SLOT_HOLD_MS = 3.53


def mean(xs):
    return statistics.fmean(xs) if xs else float("nan")


def half_width(xs):
    # 95% Student t half-width for n = 2..5 (the repeats these sweeps ran).
    t = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78}
    if len(xs) < 2:
        return float("nan")
    return t.get(len(xs), 2.0) * statistics.stdev(xs) / len(xs) ** 0.5


def main(paths):
    print("| device state | vanilla tx/s | lru-c tx/s | lru-c / vanilla | GC writes per host write, vanilla / lru-c | vanilla slot hold ms (residual) | vanilla stall wait ms |")
    print("|---|---|---|---|---|---|---|")
    for path in paths:
        sweep = json.load(open(path))
        for point in sweep["points"]:
            by = {r["scheme"]: r.get("runs", [r]) for r in point["results"]["runs"]}
            van, lru = by.get("vanilla", []), by.get("lru-c", [])
            tv = [r["throughput"] for r in van]
            tl = [r["throughput"] for r in lru]
            gc = lambda runs: mean([r["device_stats"]["gc_writes"] / r["device_stats"]["writes"] for r in runs])
            hold = [8.0 / (r["pool_stats"]["read_stalls"] / r["duration_s"]) * 1000.0 for r in van]
            wait = [r["read_stall_wait_ms"]["mean"] for r in van]
            ratio = [l / v for v, l in zip(tv, tl)]
            print(
                f"| {point['value']} | {mean(tv):,.0f} ±{half_width(tv):,.0f} | {mean(tl):,.0f} ±{half_width(tl):,.0f} "
                f"| {mean(ratio):.2f} ({', '.join(f'{x:.2f}' for x in ratio)}) | {gc(van):.2f} / {gc(lru):.2f} "
                f"| {mean(hold):.2f} ({mean(hold) / PAPER_SLOT_HOLD_MS:.2f}) | {mean(wait):.1f} |"
            )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
