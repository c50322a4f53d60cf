#!/usr/bin/env python3
"""Paired rounds of emu.sh: lru-c's throughput under 3cbf790 (before) and 969684b (after), the
ratio of means and the mean of the per-round ratios with its 95% interval (Student t); also
each run's device-bound verdict and timing error."""
import glob, json, os, statistics as st

HERE = os.path.dirname(os.path.abspath(__file__))
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447}
BEFORE, AFTER = "3cbf790", "969684b"
rows, notes = {}, []
for path in sorted(glob.glob(os.path.join(HERE, "*.results.json"))):
    build, rnd = os.path.basename(path).split(".")[0].split("-")
    for run in json.load(open(path))["runs"]:
        rows.setdefault(run["scheme"], {}).setdefault(build, {})[int(rnd)] = run["throughput"]
        notes.append(f"{build}-{rnd}: {run['bound']}")
for scheme, by in rows.items():
    rounds = sorted(set(by.get(BEFORE, {})) & set(by.get(AFTER, {})))
    ratios = [by[AFTER][r] / by[BEFORE][r] for r in rounds]
    before = [round(by[BEFORE][r]) for r in rounds]
    after = [round(by[AFTER][r]) for r in rounds]
    half = T95[len(ratios) - 1] * st.stdev(ratios) / len(ratios) ** 0.5 if len(ratios) > 1 else float("nan")
    print(f"{scheme}: {BEFORE} {before} {AFTER} {after} ratio of means "
          f"{st.mean(after) / st.mean(before):.3f}, per-round ratio {st.mean(ratios):.3f} ±{half:.3f}")
print("; ".join(notes))
