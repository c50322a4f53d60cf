#!/usr/bin/env python3
"""Paired A/B of `cargo bench --bench hit_path` binaries: alternate old and new N times (the
order flipped every pair), parse the single-thread ns-per-hit lines, print per-line means and the
new/old ratio's mean with a 95% interval over the pairs."""
import re, subprocess, sys, statistics, json
old, new, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
LINE = re.compile(r"^(\S+ 1 thread, [^:]+?)\s*:\s*([\d.]+) ns per (optimistic )?hit")
def run(binary):
    out = subprocess.run([binary], capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            res[m.group(1) + (" optimistic" if m.group(3) else "")] = float(m.group(2))
    return res
pairs = []
for i in range(n):
    order = [("old", old), ("new", new)] if i % 2 == 0 else [("new", new), ("old", old)]
    got = {name: run(b) for name, b in order}
    pairs.append(got)
    print(i, json.dumps(got), flush=True)
T = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}
for key in pairs[0]["old"]:
    o = [p["old"][key] for p in pairs]; w = [p["new"][key] for p in pairs]
    r = [b / a for a, b in zip(o, w)]
    half = T.get(len(r), 2.0) * statistics.stdev(r) / len(r) ** 0.5 if len(r) > 1 else float("nan")
    print(f"{key:45s} old {statistics.mean(o):6.1f} (min {min(o):5.1f})  new {statistics.mean(w):6.1f} (min {min(w):5.1f})  new/old {statistics.mean(r):.3f} ±{half:.3f}")
