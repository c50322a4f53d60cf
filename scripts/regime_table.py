#!/usr/bin/env python3
"""Prints the regime of one scheme across several `flashbuf bench` results.json files as a
Markdown table: the paper's value, then each file's (docs/regime.md).

usage: scripts/regime_table.py SCHEME LABEL=results.json[@POINT] [LABEL=results.json ...]

A results.json of `flashbuf bench`, or of `sweep`/`reproduce` (then the first point, or POINT).
"""
import json
import sys


def fmt(value):
    if value is None:
        return "-"
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    scheme = sys.argv[1]
    columns = []
    for arg in sys.argv[2:]:
        label, _, path = arg.partition("=")
        point = None
        if "@" in path:
            path, _, point = path.partition("@")
        with open(path) as f:
            results = json.load(f)
        if "points" in results:  # a sweep's or a reproduction's results.json
            points = [p for p in results["points"] if point is None or p["value"] == point]
            if not points:
                sys.exit(f"{path}: no point {point}")
            results = points[0]["results"]
        runs = [r for r in results["runs"] if r["scheme"] == scheme]
        if not runs:
            sys.exit(f"{path}: no run of scheme {scheme}")
        columns.append((label, runs[0]))
    first = columns[0][1]["regime"]
    names = [q["name"] for q in first["quantities"]]
    print("| quantity | paper | " + " | ".join(label for label, _ in columns) + " |")
    print("|---" * (2 + len(columns)) + "|")
    for i, name in enumerate(names):
        paper = first["quantities"][i]["paper"]
        cells = []
        for _, run in columns:
            q = run["regime"]["quantities"][i]
            mark = " (out)" if q["within"] is False else ""
            cells.append(fmt(q["ours"]) + mark)
        print(f"| {name} | {fmt(paper)} | " + " | ".join(cells) + " |")
    print("| throughput (tx/s) | 247 | " + " | ".join(fmt(r["throughput"]) for _, r in columns) + " |")


if __name__ == "__main__":
    main()
