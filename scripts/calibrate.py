#!/usr/bin/env python3
"""Residuals of a calibration: the paper's vanilla figures against a flashbuf sweep's.

usage:
  scripts/calibrate.py TARGETS.toml SWEEP.json [--scheme vanilla] [--toml]
  (a bench results.json stands for the point 10%)
  scripts/calibrate.py --fit TARGETS.toml VALUE=SWEEP_OR_RESULTS.json ...

TARGETS.toml lists `[[target]]`s (experiments/calibration/lruc-vanilla.toml): a metric path in a
run of results.json (`read_stall_wait_ms.mean`, `io.bandwidth_share`, or `A/B` for a quotient of
two), the sweep point it is read at, the paper's value and its source, and `normalize_to` for a
trend (ours and the paper's each divided by their value at that point).

Without --fit: one Markdown row per target, ours (the mean of the repeats, with its 95% interval
when the sweep ran with --repeat) beside the paper's, and the residual ours / paper. With --toml
the rows come as `[[residual]]` tables to paste into the targets file.

With --fit: for each candidate VALUE of the fitted parameter, the fitted target (`fitted = true`)
measured in that run, and the value at which the paper's figure is met by linear interpolation
between the two candidates around it.
"""
import json
import sys
import tomllib


# InnoDB 5.6/5.7's single-page doublewrite slots (2 x 64 - 120).
SINGLE_SLOTS = 8


def path_value(run, path):
    """A number from a run record by a dotted path, the quotient of two, or a derived one:
    `slot_hold_ms`, how long a single-page flush holds its doublewrite slot when the slots are
    always taken (8 / stalls per device second; None unless 95% of stalls queued for a slot)."""
    if path == "slot_hold_ms":
        stalls = path_value(run, "pool_stats.read_stalls")
        queued = path_value(run, "doublewrite.slot_waits")
        seconds = path_value(run, "duration_s")
        if not stalls or not seconds or queued is None or queued / stalls < 0.95:
            return None
        return SINGLE_SLOTS / (stalls / seconds) * 1000.0
    if "/" in path:
        top, bottom = path.split("/", 1)
        a, b = path_value(run, top), path_value(run, bottom)
        return None if a is None or not b else a / b
    value = run
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return float(value) if isinstance(value, (int, float)) else None


def interval(run, path):
    """The 95% half-width of a metric over repeats (results.json `summary`), if any."""
    if "/" in path:
        return None
    summary = run.get("summary") or {}
    entry = summary.get(path)
    return entry.get("ci95") if isinstance(entry, dict) else None


def runs_by_point(data, scheme, bench_point="10%"):
    """{point value: run} from a sweep.json, or {bench_point: run} from a bench results.json."""
    found = {}
    if "points" in data:
        for point in data["points"]:
            results = point.get("results") or {}
            for run in results.get("runs", []):
                if run["scheme"] == scheme:
                    found[point["value"]] = run
    else:
        for run in data.get("runs", []):
            if run["scheme"] == scheme:
                found[bench_point] = run
    return found


def measure(target, runs):
    """(ours, ci95, paper) for a target; ours None when the run lacks the point or metric."""
    run = runs.get(target["point"])
    if run is None:
        return None, None, target["paper"]
    ours = path_value(run, target["metric"])
    ci = interval(run, target["metric"])
    paper = target["paper"]
    base_point = target.get("normalize_to")
    if base_point is not None and ours is not None:
        base_run = runs.get(base_point)
        base_paper = next(
            t["paper"]
            for t in TARGETS
            if t["metric"] == target["metric"] and t["point"] == base_point
        )
        base = path_value(base_run, target["metric"]) if base_run else None
        if not base:
            return None, None, paper / base_paper
        ours, ci = ours / base, (ci / base if ci is not None else None)
        paper = paper / base_paper
    return ours, ci, paper


def fmt(x):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def residuals(targets_path, sweep_path, scheme, as_toml):
    with open(sweep_path) as f:
        runs = runs_by_point(json.load(f), scheme)
    if not runs:
        sys.exit(f"{sweep_path}: no run of scheme {scheme}")
    rows = []
    for target in TARGETS:
        ours, ci, paper = measure(target, runs)
        residual = ours / paper if ours is not None and paper else None
        rows.append((target, ours, ci, paper, residual))
    if as_toml:
        for target, ours, ci, paper, residual in rows:
            print("[[residual]]")
            print(f'metric = "{target["metric"]}"')
            print(f'point = "{target["point"]}"')
            if target.get("normalize_to"):
                print(f'normalized_to = "{target["normalize_to"]}"')
            print(f"paper = {paper:.6g}")
            print(f"ours = {ours:.6g}" if ours is not None else "# ours: not measured")
            if ci is not None:
                print(f"ours_ci95 = {ci:.6g}")
            if residual is not None:
                print(f"ours_over_paper = {residual:.4g}")
            print()
        return
    print("| metric | point | paper | ours | ours / paper | source |")
    print("|---|---|---|---|---|---|")
    for target, ours, ci, paper, residual in rows:
        name = target["metric"] + (
            f" (over {target['normalize_to']})" if target.get("normalize_to") else ""
        )
        shown = fmt(ours) + (f" ±{fmt(ci)}" if ci is not None else "")
        fitted = " (fitted)" if target.get("fitted") else ""
        print(
            f"| {name}{fitted} | {target['point']} | {fmt(paper)} | {shown} | "
            f"{fmt(residual)} | {target['source']} |"
        )


def fit(candidates, scheme):
    target = next(t for t in TARGETS if t.get("fitted"))
    measured = []
    for arg in candidates:
        value, _, path = arg.partition("=")
        with open(path) as f:
            runs = runs_by_point(json.load(f), scheme)
        ours, _, paper = measure(target, runs)
        measured.append((float(value), ours))
        print(f"{value}: {target['metric']} at {target['point']} = {fmt(ours)} (paper {paper})")
    measured.sort()
    paper = target["paper"]
    for (x0, y0), (x1, y1) in zip(measured, measured[1:]):
        if y0 is not None and y1 is not None and min(y0, y1) <= paper <= max(y0, y1) and y1 != y0:
            x = x0 + (paper - y0) * (x1 - x0) / (y1 - y0)
            print(f"the paper's {paper} is met at about {x:.0f} (between {x0:g} and {x1:g})")
            return
    print(f"the paper's {paper} lies outside the candidates' range")


def main():
    global TARGETS
    args = sys.argv[1:]
    scheme = "vanilla"
    if "--scheme" in args:
        i = args.index("--scheme")
        scheme = args[i + 1]
        del args[i : i + 2]
    as_toml = "--toml" in args
    args = [a for a in args if a != "--toml"]
    fitting = "--fit" in args
    args = [a for a in args if a != "--fit"]
    if len(args) < 2:
        sys.exit(__doc__)
    with open(args[0], "rb") as f:
        TARGETS = tomllib.load(f)["target"]
    for target in TARGETS:
        if not target.get("source"):
            sys.exit(f"{args[0]}: target {target['metric']} at {target['point']} has no source")
    if fitting:
        fit(args[1:], scheme)
    else:
        residuals(args[0], args[1], scheme, as_toml)


TARGETS = []

if __name__ == "__main__":
    main()
