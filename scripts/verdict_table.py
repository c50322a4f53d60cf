#!/usr/bin/env python3
"""The current verdict of every claim of every experiment, from the runs kept in the repository.

For each experiment of `experiments/*.toml` it takes the latest full run kept under
`results/reproduction/` (a directory named after the experiment, or the experiment and a suffix
such as `rw-fig7-knobs`; the latest by its results.json's date), rescores it with the current
verdict rules (`flashbuf reproduce --rescore DIR`, which runs nothing and writes
DIR/verdicts-rescored.json) unless `--no-rescore`, and prints a markdown page: the counts by
outcome, one table row per experiment, one per claim, the experiments with no full run, and
the full runs under way in `results/reproduction/in-progress/` (points done, runs ended).

    scripts/verdict_table.py --flashbuf target/release/flashbuf > docs/verdicts.md
    scripts/verdict_table.py --no-rescore      # the verdicts as each run was judged
"""

import argparse
import datetime
import json
import pathlib
import subprocess
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    tomllib = None

OUTCOMES = ["reproduced", "right_direction", "not_reproduced", "not_evaluated"]
WORDS = {
    "reproduced": "reproduced",
    "right_direction": "right direction only",
    "not_reproduced": "not reproduced",
    "not_evaluated": "not evaluated",
}


def experiment_ids(root):
    """Experiment ids in file order, with what each needs (empty: runnable)."""
    found = []
    for path in sorted((root / "experiments").glob("*.toml")):
        needs = ""
        if tomllib is not None:
            with open(path, "rb") as f:
                needs = tomllib.load(f).get("needs", "")
        found.append((path.stem, needs))
    return found


def full_runs(results, experiment):
    """(date, dir) of every full run of `experiment` kept at the top of `results`."""
    runs = []
    for path in results.iterdir():
        if not path.is_dir():
            continue
        if path.name != experiment and not path.name.startswith(experiment + "-"):
            continue
        verdicts, data = path / "verdicts.json", path / "results.json"
        if not (verdicts.exists() and data.exists()):
            continue
        judged = json.loads(verdicts.read_text())
        if judged.get("id") != experiment or judged.get("quick"):
            continue
        date = json.loads(data.read_text())["header"]["date"]
        runs.append((date, path))
    return sorted(runs)


def verdicts_of(run, flashbuf):
    """The run's verdicts, rescored with the current rules when `flashbuf` is given."""
    if flashbuf:
        done = subprocess.run(
            [flashbuf, "reproduce", "--rescore", str(run)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            sys.exit(f"{flashbuf} reproduce --rescore {run} failed:\n{done.stderr}")
        rescored = json.loads((run / "verdicts-rescored.json").read_text())
        judged = {v["claim"]: v["outcome"] for v in rescored.get("before", [])}
        for verdict in rescored["verdicts"]:
            before = judged.get(verdict["claim"])
            if before and before != verdict["outcome"]:
                verdict["reason"] += f" (judged {WORDS[before]} when run)"
        return rescored["verdicts"]
    return json.loads((run / "verdicts.json").read_text())["verdicts"]


def under_way(results):
    """Per directory under `results/in-progress/` holding point files: its experiment, how many
    of the plan's points are done, and each unfinished point's runs ended of its total."""
    found = []
    base = results / "in-progress"
    if not base.is_dir():
        return found
    for points in sorted(base.glob("**/points")):
        files = sorted(points.glob("*.point.json"))
        if not files:
            continue
        plans, done, partial = {}, set(), []
        for path in files:
            point = json.loads(path.read_text())
            plan = point["plan"]
            plans[plan["experiment"] or "sweep"] = len(plan["values"])
            if point["point"]["status"] == "done":
                done.add(point["id"])
            else:
                total = plan["repeats"] * len(plan["schemes"])
                partial.append(f"{point['id']} {len(point.get('ended_runs', []))} of {total} runs")
        for experiment, total_points in plans.items():
            found.append((experiment, points.parent, len(done), total_points, partial))
    return found


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=".", help="the repository (default: .)")
    parser.add_argument(
        "--flashbuf",
        default="target/release/flashbuf",
        help="the binary that rescores (default: target/release/flashbuf)",
    )
    parser.add_argument(
        "--no-rescore",
        action="store_true",
        help="print the verdicts as each run was judged, without rescoring",
    )
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    results = root / "results" / "reproduction"
    flashbuf = None if args.no_rescore else args.flashbuf
    if flashbuf and not pathlib.Path(flashbuf).exists():
        sys.exit(f"--flashbuf {flashbuf}: no such file (build it, or pass --no-rescore)")

    totals = dict.fromkeys(OUTCOMES, 0)
    experiment_rows, claim_rows, missing = [], [], []
    for experiment, needs in experiment_ids(root):
        runs = full_runs(results, experiment)
        if not runs:
            missing.append((experiment, needs))
            continue
        date, run = runs[-1]
        counts = dict.fromkeys(OUTCOMES, 0)
        for verdict in verdicts_of(run, flashbuf):
            counts[verdict["outcome"]] += 1
            claim_rows.append(
                f"| {experiment} | {cell(verdict['claim'])} | **{WORDS[verdict['outcome']]}** "
                f"| {cell(verdict['criterion'])}; {cell(verdict['reason'])} |"
            )
        for outcome in OUTCOMES:
            totals[outcome] += counts[outcome]
        experiment_rows.append(
            f"| {experiment} | `{run.relative_to(root)}` | {date[:16].replace('T', ' ')} | "
            + " | ".join(str(counts[o]) for o in OUTCOMES)
            + " |"
        )

    claims = sum(totals.values())
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print("# The current verdicts\n")
    print(
        f"Generated by `scripts/verdict_table.py` on {now}: the latest full run of each "
        "experiment kept under `results/reproduction/`, "
        + (
            "rescored with the current verdict rules (`flashbuf reproduce --rescore`). "
            if flashbuf
            else "as each run was judged. "
        )
        + "`docs/reproduction.md` discusses the runs, their regimes and why results differ "
        "from the papers'; `docs/reproduce.md` gives the rules.\n"
    )
    print(
        f"**{claims} claims of {len(experiment_rows)} experiments:** "
        + ", ".join(f"{WORDS[o]} {totals[o]}" for o in OUTCOMES)
        + f". {len(missing)} experiments have no full run kept.\n"
    )
    print("| experiment | run | date (UTC) | " + " | ".join(WORDS[o] for o in OUTCOMES) + " |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(experiment_rows))
    print("\n## Claim by claim\n")
    print("| experiment | claim | verdict | criterion and measurement |")
    print("|---|---|---|---|")
    print("\n".join(claim_rows))
    print("\n## No full run kept\n")
    for experiment, needs in missing:
        print(f"- `{experiment}`" + (f": needs {needs}" if needs else ""))
    going = under_way(results)
    if going:
        print("\n## Under way\n")
        print(
            "Point files of full runs that a later sitting continues "
            "(`results/reproduction/in-progress/README.md` says how); a point under way keeps "
            "the runs that ended, and a rerun into the same directory runs only the rest.\n"
        )
        for experiment, directory, done, total, partial in going:
            rest = f"; under way: {', '.join(partial)}" if partial else ""
            print(
                f"- `{experiment}` (`{directory.relative_to(root)}`): {done} of {total} "
                f"points done{rest}"
            )


if __name__ == "__main__":
    main()
