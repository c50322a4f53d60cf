#!/usr/bin/env python3
"""Paired rounds of emu.sh: throughput per scheme, before (674938b) and after (5246e55), the
ratio of means and the mean of the per-round ratios with its 95% interval (Student t)."""
import glob, json, os, statistics as st

HERE = os.path.dirname(os.path.abspath(__file__))
T95 = {7: 2.365, 8: 2.306, 1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447}
rows = {}
for path in sorted(glob.glob(os.path.join(HERE, "*.results.json"))):
    build, rnd = os.path.basename(path).split(".")[0].split("-")
    for run in json.load(open(path))["runs"]:
        rows.setdefault(run["scheme"], {}).setdefault(build, {})[int(rnd)] = run["throughput"]
for scheme, by in rows.items():
    rounds = sorted(set(by.get("before", {})) & set(by.get("after", {})))
    ratios = [by["after"][r] / by["before"][r] for r in rounds]
    before = [round(by["before"][r]) for r in rounds]
    after = [round(by["after"][r]) for r in rounds]
    half = T95[len(ratios) - 1] * st.stdev(ratios) / len(ratios) ** 0.5 if len(ratios) > 1 else float("nan")
    print(f"{scheme}: before {before} after {after} ratio of means "
          f"{st.mean(after) / st.mean(before):.3f}, per-round ratio {st.mean(ratios):.3f} ±{half:.3f}")
