#!/usr/bin/env python3
"""pairs.py DIR POINT A B: per-round ratios B/A of raw and per-CPU-second throughput, mean ±95% t."""
import json, sys, glob, math, statistics as st
d, point, a, b = sys.argv[1:5]
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201}
def load(binary, rnd):
    r = json.load(open(f"{d}/{point}-{binary}-{rnd}.json"))["runs"][0]
    t = r["duration_real_s"]
    return r["ops"] / t, r["ops"] / (r["cpu"]["cores_used"] * t)
rounds = sorted({int(p.rsplit("-", 1)[1].split(".")[0]) for p in glob.glob(f"{d}/{point}-{a}-*.json")})
for i, name in enumerate(["raw", "per CPU-s"]):
    ra = [load(a, n)[i] for n in rounds]; rb = [load(b, n)[i] for n in rounds]
    ratios = [y / x for x, y in zip(ra, rb)]
    m = st.mean(ratios); h = T[len(ratios) - 1] * st.stdev(ratios) / math.sqrt(len(ratios))
    print(f"{point} {name}: {a} mean {st.mean(ra):,.0f}, {b} mean {st.mean(rb):,.0f}; ratios {', '.join(f'{r:.2f}' for r in ratios)} -> {m:.2f} ±{h:.2f}")
