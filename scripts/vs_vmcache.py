#!/usr/bin/env python3
"""Runs flashbuf and vmcache side by side, interleaved, on this machine (issue 20 item 5).

usage: scripts/vs_vmcache.py --table RESULTS.json   (re-prints a sitting's tables)
       scripts/vs_vmcache.py --pool RESULTS.json...  (one table over several sittings)
       scripts/vs_vmcache.py VMCACHE_CHECKOUT [--quick] [--runs N] [--seconds S]
                             [--points tpcc-mem,tpcc-oom,lookup-mem] [--work DIR]
                             [--out FILE.json] [--nice N] [--page-size BYTES]
                             [--flashbuf BINARY] [--flashbuf-oom-warehouses W]
                             [--flashbuf-pool-config FILE.toml] [--threads N]

  git clone https://github.com/viktorleis/vmcache ~/vmcache
  scripts/vs_vmcache.py ~/vmcache --quick      # checks the script: about 4 minutes
  scripts/vs_vmcache.py ~/vmcache              # 3 runs each: about 12 minutes on 2 loaded cores

WORK (default target/vs_vmcache) needs about 12 GB of disk; peak RAM is `flashbuf load`'s, about
3x the image (3.6 GB for 15 warehouses, about 4.8 GB for 20).

VMCACHE_CHECKOUT is a checkout of https://github.com/viktorleis/vmcache that you provide (it is
never copied into this repository). The script
  1. builds vmcache from it with the flags of its Makefile into WORK/vmcache (needs g++ with
     C++20 and libaio's header: on Debian `apt-get install g++ libaio-dev`), and flashbuf with
     `cargo build --profile release-lto --locked` (one code-generation unit and fat LTO, as
     vmcache is one translation unit; `--cargo-profile release` for the default build);
  2. pre-writes vmcache's data files in WORK (real zeros, not a sparse or fallocated file, whose
     unwritten extents would read back as zeros without touching the device) and builds
     flashbuf's images with `flashbuf load` (kept in WORK and reused by later sittings);
  3. runs, for every point, flashbuf then vmcache, RUNS times (A B A B ...), each run 5 s of
     warm-up then SECONDS measured, both engines with the same worker threads at the same nice
     level (flashbuf: scheme `vanilla`, its full transactions and redo log, the consistency
     check skipped; its pool starts cold, hence the warm-up and the hit % in the second table);
  4. records per run the throughput, the CPU seconds the process used in the measured phase,
     throughput per CPU-second and the 1-minute load average before and after, prints a table
     of medians with the flashbuf/vmcache ratios (raw and per CPU-second) and the per-round
     ratio per CPU-second (each flashbuf run over the vmcache run after it) with its mean and
     95% interval, and writes every run and the summary to OUT (JSON) and OUT with .csv (one
     row per run). `--pool` prints the same table over the runs of several sittings; no run is
     left out (a run the host disturbed shows in its CSV row: bound, run-queue wait share).

The points (docs/performance.md, "Side by side with vmcache"):
  tpcc-mem    TPC-C in memory, 5 warehouses, 2 threads, pool larger than the data
  tpcc-oom    TPC-C out of memory, 20 warehouses, data about 3.6x the pool, 2 threads, data on
              a file in WORK (flashbuf: data and redo log files, O_DIRECT; vmcache: its BLOCK)
  lookup-mem  point lookups in memory, 10^6 rows of an 8-byte key and a 120-byte value, 2 threads
              (flashbuf: YCSB-C, uniform, `--key-format binary`)

The measured phase: flashbuf's own (results.json: ops, duration_real_s, cpu.cores_used, taken
over the measured phase only); vmcache prints a row of transactions each second, and the script
reads the process's CPU time (/proc/PID/stat) when each row arrives, skipping the rows of the
warm-up. Neither includes the load. --quick makes one run of each engine per point, 3 s measured
after 1 s of warm-up, to check the script itself (the figures are not worth keeping).
"""
import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GIB = 1 << 30
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

# vmcache's build line (its Makefile's), run from the script so that the checkout stays as given.
VMCACHE_CXXFLAGS = [
    "-DNDEBUG",
    "-O3",
    "-std=c++20",
    "-g",
    "-fnon-call-exceptions",
    "-fasynchronous-unwind-tables",
]


class Point:
    """One row of the comparison: how each engine runs it."""

    def __init__(self, name, title, threads, warmup_s, flashbuf_load, flashbuf_bench, vmcache_env,
                 vmcache_file_gib):
        self.name = name
        self.base = name  # the point this one runs (its name before `--threads`)
        self.title = title
        self.threads = threads
        self.warmup_s = warmup_s
        self.flashbuf_load = flashbuf_load  # `flashbuf load` flags shaping the image
        self.flashbuf_bench = flashbuf_bench  # `flashbuf bench` flags beyond the load's
        self.vmcache_env = vmcache_env  # vmcache's environment beyond THREADS/RUNFOR/BLOCK
        self.vmcache_file_gib = vmcache_file_gib  # size of vmcache's pre-written data file


def points(work, oom_warehouses):
    """The issue's table, as flags of both engines (threads fixed at 2 as in the issue)."""
    oom_data = work / "flashbuf-oom.data"
    oom_log = work / "flashbuf-oom.log"
    # In memory both engines run with the database cached and room to grow: vmcache's pool is
    # about twice its data and its load goes through the pool; flashbuf's pool is twice its
    # loaded image, read into the pool before the workers start (`--prewarm`), so that
    # neither measures misses (docs/performance.md, "The in-memory point's misses").
    mem_devices = ["--device", "mem", "--log-device", "mem", "--buffer", "200%", "--prewarm"]
    return {
        "tpcc-mem": Point(
            "tpcc-mem",
            "TPC-C in memory, 5 warehouses, 2 threads",
            2,
            5,
            ["--workload", "tpcc", "--warehouses", "5"],
            mem_devices,
            # vmcache's 5 warehouses take about 0.95 GB in its 4 KiB pages.
            {"DATASIZE": "5", "PHYSGB": "2", "VIRTGB": "4"},
            1,
        ),
        "tpcc-oom": Point(
            "tpcc-oom",
            "TPC-C out of memory, 20 warehouses"
            + (f" (flashbuf {oom_warehouses})" if oom_warehouses != 20 else "")
            + ", data ~3.6x the pool, 2 threads",
            2,
            5,
            ["--workload", "tpcc", "--warehouses", str(oom_warehouses)],
            # 28% = 1 / 3.6; vmcache's 20 warehouses take about 3.7 GB against PHYSGB=1
            # (vmcache reads PHYSGB as a whole number of GB).
            ["--device", f"file:{oom_data}", "--log-device", f"file:{oom_log}", "--buffer", "28%"],
            {"DATASIZE": "20", "PHYSGB": "1", "VIRTGB": "8"},
            6,
        ),
        "lookup-mem": Point(
            "lookup-mem",
            "point lookups in memory, 10^6 rows, 2 threads",
            2,
            5,
            # vmcache's rows: an 8-byte key and a 120-byte payload; flashbuf's keys are the
            # same 8 big-endian bytes (`--key-format binary`, YCSB's 23-byte text keys before
            # 2026-12-03: docs/performance.md, "The lookups with vmcache's 8-byte keys").
            ["--workload", "ycsb-c", "--records", "1000000", "--field-count", "1",
             "--field-length", "120", "--request-distribution", "uniform",
             "--key-format", "binary"],
            mem_devices,
            {"RNDREAD": "1", "DATASIZE": "1e6", "PHYSGB": "2", "VIRTGB": "4"},
            1,
        ),
    }


def fail(message):
    sys.exit(f"vs_vmcache: {message}")


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def nice_prefix(level):
    return ["nice", "-n", str(level)] if level else []


# ----- building -------------------------------------------------------------------------------


def build_vmcache(checkout, work, nice):
    source = checkout / "vmcache.cpp"
    if not source.is_file() or not (checkout / "tpcc").is_dir():
        fail(f"{checkout}: not a vmcache checkout (no vmcache.cpp and tpcc/)")
    compiler = shutil.which("g++")
    if compiler is None:
        fail("g++ is missing (Debian: apt-get install g++)")
    if not Path("/usr/include/libaio.h").exists():
        fail("libaio's header is missing (Debian: apt-get install libaio-dev)")
    binary = work / "vmcache"
    sources = [source, *(checkout / "tpcc").iterdir()]
    if binary.exists() and all(binary.stat().st_mtime >= s.stat().st_mtime for s in sources):
        log(f"vmcache is up to date: {binary}")
        return binary
    log(f"building vmcache from {checkout} into {binary}")
    command = [*nice_prefix(nice), compiler, *VMCACHE_CXXFLAGS, str(source), "-o", str(binary),
               "-laio"]
    if subprocess.run(command).returncode != 0:
        fail("the vmcache build failed (see above)")
    return binary


def checkout_commit(checkout):
    try:
        out = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def build_flashbuf(nice, profile):
    log(f"building flashbuf (cargo build --profile {profile} --locked)")
    command = [*nice_prefix(nice), "cargo", "build", "--profile", profile, "--locked", "--quiet",
               "--bin", "flashbuf"]
    if subprocess.run(command, cwd=REPO).returncode != 0:
        fail("the flashbuf build failed (see above)")
    binary = REPO / "target" / profile / "flashbuf"
    if not binary.is_file():
        fail(f"{binary} missing after the build")
    return binary


# ----- data ------------------------------------------------------------------------------------


def prewrite(path, gib):
    """vmcache's data file, every byte written once (reused when it is already that large)."""
    size = gib * GIB
    if path.exists() and path.stat().st_size >= size and path.stat().st_blocks * 512 >= size:
        return
    log(f"pre-writing {path} ({gib} GiB of zeros)")
    chunk = bytes(64 << 20)
    with open(path, "wb") as f:
        for _ in range(size // len(chunk)):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())


# Room an image keeps for a run's inserts (`flashbuf load --room`), where the default (as many
# pages again as loaded) is not enough: in-memory TPC-C at 40k transactions a second fills 5
# warehouses' default room in the 15 s of a run (docs/performance.md, "Where it stands").
IMAGE_ROOM = {"tpcc-mem": "400%"}


def flashbuf_image(flashbuf, point, work, page_size, nice):
    """The point's image (`flashbuf load`), built once and reused."""
    flags = list(point.flashbuf_load)
    if point.base in IMAGE_ROOM:
        flags += ["--room", IMAGE_ROOM[point.base]]
    name = "-".join(flag.lstrip("-").rstrip("%") for flag in flags) + f"-p{page_size}.img"
    image = work / name
    if image.exists():
        return image
    log(f"building flashbuf's image {image}")
    command = [*nice_prefix(nice), str(flashbuf), "load", *flags, "--page-size", str(page_size),
               "--db", str(image)]
    if subprocess.run(command, stdout=subprocess.DEVNULL).returncode != 0:
        fail(f"`{' '.join(command)}` failed")
    return image


# ----- runs ------------------------------------------------------------------------------------


def process_cpu_seconds(pid):
    """utime + stime of a process (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def per_op_kib(result, kind):
    value = (result.get("bytes_per_op") or {}).get(kind)
    return value / 1024 if value is not None else None


def process_run_queue_seconds(pid):
    """Seconds the process's live threads waited runnable for a core (schedstat's 2nd field)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return total / 1e9


def run_flashbuf(flashbuf, point, image, work, seconds, nice):
    out = work / f"flashbuf-{point.name}.json"
    # `bench` creates its file: devices and refuses existing ones; a run interrupted before it
    # removed them leaves them behind (they are this script's, in WORK).
    stale = [out, *(Path(arg[5:]) for arg in point.flashbuf_bench if arg.startswith("file:"))]
    for path in stale:
        if path.exists():
            path.unlink()
    command = [*nice_prefix(nice), str(flashbuf), "bench", *point.flashbuf_load,
               *point.flashbuf_bench, "--db",
               str(image), "--threads", str(point.threads), "--schemes", "vanilla", "--duration",
               f"{seconds}s", "--warmup", f"{point.warmup_s}s", "--no-check", "--no-progress",
               "--json", str(out)]
    load_before = load_average()
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    load_after = load_average()
    stderr = proc.stderr.read()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0 or not out.exists():
        fail(f"`{' '.join(command)}` failed:\n{stderr}")
    with open(out) as f:
        result = json.load(f)["runs"][0]
    measured = result["duration_real_s"]
    cores = result["cpu"]["cores_used"]
    cpu = cores * measured if cores is not None else None
    throughput = result["ops"] / measured
    return {
        "engine": "flashbuf",
        "throughput": throughput,
        "measured_s": measured,
        "cpu_s": cpu,
        "per_cpu_s": throughput * measured / cpu if cpu else None,
        "process_cpu_s": usage.ru_utime + usage.ru_stime,
        "process_wall_s": wall,
        "max_rss_mib": usage.ru_maxrss / 1024,
        "load_before": load_before,
        "load_after": load_after,
        "bound": result["cpu"].get("bound"),
        "run_queue_wait_share": result["cpu"].get("run_queue_wait_share"),
        "hit_ratio": result.get("hit_ratio"),
        "kb_read_per_op": per_op_kib(result, "data_reads"),
        "kb_written_per_op": per_op_kib(result, "total_written"),
        "data_to_pool": result["db_pages"] / result["buffer_pages"],
        "bytes_per_op": result.get("bytes_per_op"),
        "buffer_pages": result.get("buffer_pages"),
        "db_pages": result.get("db_pages"),
        "page_size": result.get("page_size"),
    }


def run_vmcache(vmcache, point, work, seconds, nice):
    data = work / f"vmcache-{point.base}.data"
    env = dict(os.environ)
    env.update(point.vmcache_env)
    env.update({"THREADS": str(point.threads), "RUNFOR": str(point.warmup_s + seconds),
                "BLOCK": str(data)})
    command = [*nice_prefix(nice), str(vmcache)]
    load_before = load_average()
    started = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    # Each row: (monotonic time, process CPU seconds, its transactions, run-queue wait
    # seconds); the header is row 0.
    samples = []
    rows = []
    for line in proc.stdout:
        now = time.monotonic()
        cpu = process_cpu_seconds(proc.pid)
        queued = process_run_queue_seconds(proc.pid)
        if line.startswith("ts,"):
            samples.append((now, cpu, 0, queued))
        elif samples and line[:1].isdigit():
            fields = line.strip().split(",")
            rows.append(fields)
            samples.append((now, cpu, int(fields[1]), queued))
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    load_after = load_average()
    stderr = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0 or len(samples) < point.warmup_s + 2:
        fail(f"vmcache ({' '.join(f'{k}={v}' for k, v in point.vmcache_env.items())}) failed "
             f"or printed too few rows:\n{stderr}")
    # Measure from the row that ends the warm-up to the last row; a sample whose process was
    # already gone (the last row races with the exit) is replaced by the rusage total.
    first = samples[point.warmup_s]
    last = samples[-1]
    last_cpu = last[1] if last[1] is not None else usage.ru_utime + usage.ru_stime
    measured = last[0] - first[0]
    transactions = sum(sample[2] for sample in samples[point.warmup_s + 1:])
    cpu = last_cpu - first[1]
    # schedstat is summed over the threads alive at each sample: once vmcache's workers exit,
    # a late sample shrinks (the quick mode read a share of -2.22). Take the largest sample
    # of the measured phase, and no figure at all if even that went backwards.
    waits = [sample[3] for sample in samples[point.warmup_s:] if sample[3] is not None]
    queued = (max(waits) - first[3]) if waits and first[3] is not None else None
    if queued is not None and queued < 0:
        queued = None
    space = [line for line in stderr.splitlines() if line.startswith("space:")]
    mib_read = sum(float(row[2]) for row in rows[point.warmup_s:])
    mib_written = sum(float(row[3]) for row in rows[point.warmup_s:])
    return {
        "engine": "vmcache",
        "throughput": transactions / measured,
        "measured_s": measured,
        "cpu_s": cpu,
        "per_cpu_s": transactions / cpu if cpu > 0 else None,
        "process_cpu_s": usage.ru_utime + usage.ru_stime,
        "process_wall_s": wall,
        "max_rss_mib": usage.ru_maxrss / 1024,
        "load_before": load_before,
        "load_after": load_after,
        "run_queue_wait_share": (queued / (queued + cpu)
                                 if queued is not None and queued + cpu > 0 else None),
        "space_gb_after_load": float(space[0].split()[1]) if space else None,
        "data_to_pool": (float(space[0].split()[1]) / float(point.vmcache_env["PHYSGB"])
                         if space else None),
        "kb_read_per_op": 1024 * mib_read / transactions if transactions else None,
        "kb_written_per_op": 1024 * mib_written / transactions if transactions else None,
    }


# ----- report ----------------------------------------------------------------------------------


def median(runs, key):
    values = [run[key] for run in runs if run.get(key) is not None]
    return statistics.median(values) if values else None


# Two-sided 95% quantiles of Student's t by degrees of freedom (1-30; 1.96 beyond).
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
       2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
       2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def round_ratios(runs, key="per_cpu_s"):
    """flashbuf over vmcache for each round that ran both engines (a round's two runs are
    adjacent in time, so the host's drift between rounds cancels in the ratio)."""
    by_round = {}
    for run in runs:
        if run.get(key):
            by_round.setdefault(run["round"], {})[run["engine"]] = run[key]
    return [pair["flashbuf"] / pair["vmcache"] for _, pair in sorted(by_round.items())
            if "flashbuf" in pair and "vmcache" in pair]


def mean_ci95(values):
    """The mean and the half-width of its 95% interval (None with fewer than two values)."""
    if not values:
        return None, None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None
    df = len(values) - 1
    t = T95[df - 1] if df <= len(T95) else 1.96
    return mean, t * statistics.stdev(values) / len(values) ** 0.5


def fmt(value, digits=0):
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value / 1000:,.1f}k"
    return f"{value:.{digits}f}"


def summarize(results):
    summary = {}
    for name, runs in results.items():
        entry = {}
        for engine in ("flashbuf", "vmcache"):
            mine = [r for r in runs if r["engine"] == engine]
            entry[engine] = {key: median(mine, key) for key in
                             ("throughput", "per_cpu_s", "cpu_s", "measured_s", "load_before",
                              "load_after", "hit_ratio", "kb_read_per_op", "kb_written_per_op",
                              "data_to_pool", "run_queue_wait_share")}
            entry[engine]["runs"] = len(mine)
        loads = [run[key] for run in runs for key in ("load_before", "load_after")]
        entry["load_min"], entry["load_max"] = min(loads), max(loads)
        f, v = entry["flashbuf"], entry["vmcache"]
        entry["ratio"] = f["throughput"] / v["throughput"] if v["throughput"] else None
        entry["ratio_per_cpu_s"] = (f["per_cpu_s"] / v["per_cpu_s"]
                                    if f["per_cpu_s"] and v["per_cpu_s"] else None)
        entry["round_ratios_per_cpu_s"] = round_ratios(runs)
        entry["ratio_per_cpu_s_mean"], entry["ratio_per_cpu_s_ci95"] = mean_ci95(
            entry["round_ratios_per_cpu_s"])
        summary[name] = entry
    return summary


def print_table(summary, titles):
    print("| point | vmcache /s | flashbuf /s | ratio | vmcache per CPU-s | flashbuf per CPU-s "
          "| ratio per CPU-s | per round: mean, 95% (rounds) | load average, all runs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, entry in summary.items():
        f, v = entry["flashbuf"], entry["vmcache"]
        load = f"{entry['load_min']:.1f}-{entry['load_max']:.1f}"
        print(f"| {titles[name]} | {fmt(v['throughput'])} | {fmt(f['throughput'])} | "
              f"{fmt(entry['ratio'], 2)} | {fmt(v['per_cpu_s'])} | {fmt(f['per_cpu_s'])} | "
              f"{fmt(entry['ratio_per_cpu_s'], 2)} | {per_round(entry)} | {load} |")
    print()
    print("| point | data / pool (flashbuf, vmcache) | flashbuf hit % | KB read / written per "
          "op, flashbuf | same, vmcache | run-queue wait share (flashbuf, vmcache) |")
    print("|---|---|---|---|---|---|")
    for name, entry in summary.items():
        f, v = entry["flashbuf"], entry["vmcache"]
        hit = f"{100 * f['hit_ratio']:.1f}" if f["hit_ratio"] is not None else "-"
        print(f"| {titles[name]} | {fmt(f['data_to_pool'], 2)}, {fmt(v['data_to_pool'], 2)} | "
              f"{hit} | {fmt(f['kb_read_per_op'], 1)} / {fmt(f['kb_written_per_op'], 1)} | "
              f"{fmt(v['kb_read_per_op'], 1)} / {fmt(v['kb_written_per_op'], 1)} | "
              f"{fmt(f['run_queue_wait_share'], 2)}, {fmt(v['run_queue_wait_share'], 2)} |")


def per_round(entry):
    """The per-round ratios' mean and 95% interval, as the table prints them."""
    mean, half = entry.get("ratio_per_cpu_s_mean"), entry.get("ratio_per_cpu_s_ci95")
    rounds = len(entry.get("round_ratios_per_cpu_s", []))
    if mean is None:
        return "-"
    if half is None:
        return f"{mean:.2f} (1)"
    return f"{mean:.2f} ±{half:.2f} ({rounds})"


def pooled(reports):
    """One report of several sittings' runs: each sitting's rounds renumbered after the last
    one's, every point that any sitting ran."""
    runs, offset = {}, 0
    for report in reports:
        last = 0
        for name, point_runs in report["runs"].items():
            for run in point_runs:
                runs.setdefault(name, []).append({**run, "round": run["round"] + offset})
                last = max(last, run["round"])
        offset += last
    first = reports[0]
    titles = {}
    for report in reports:
        titles.update(report["points"])
    return {**first, "runs": runs, "points": titles}


def write_csv(path, results):
    keys = ["point", "round", "engine", "throughput", "measured_s", "cpu_s", "per_cpu_s",
            "process_cpu_s", "process_wall_s", "max_rss_mib", "load_before", "load_after",
            "run_queue_wait_share", "hit_ratio", "kb_read_per_op", "kb_written_per_op"]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        writer.writeheader()
        for name, runs in results.items():
            for run in runs:
                writer.writerow({"point": name, **run})


def machine():
    model = None
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    return {"cpu": model, "cores": os.cpu_count(), "mem_gib": round(mem_kib / (1 << 20), 1),
            "kernel": platform.release()}


# ----- main ------------------------------------------------------------------------------------


def print_report(report):
    """The summary lines and tables of a results file."""
    load_start, load_end = report["load_average_start_end"]
    print(f"flashbuf {report['flashbuf_commit']} against vmcache {report['vmcache_commit']}; "
          f"{report['runs_per_engine']} interleaved runs per engine, {report['measured_s']} s "
          f"measured; medians; sitting {report['sitting_s']:.0f} s from "
          f"{report['started_utc']}, load average {load_start:.1f} -> {load_end:.1f} on "
          f"{report['machine']['cores']} cores ({report['machine']['cpu']})")
    titles = {name: point["title"] for name, point in report["points"].items()}
    print_table(report["summary"], titles)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    if len(sys.argv) == 3 and sys.argv[1] == "--table":
        with open(sys.argv[2]) as f:
            report = json.load(f)
        report["summary"] = summarize(report["runs"])
        print_report(report)
        sys.exit(0)
    if len(sys.argv) >= 3 and sys.argv[1] == "--pool":
        reports = []
        for path in sys.argv[2:]:
            try:
                with open(path) as f:
                    reports.append(json.load(f))
            except (OSError, json.JSONDecodeError) as err:
                sys.exit(f"--pool {path}: {err}")
        report = pooled(reports)
        report["summary"] = summarize(report["runs"])
        print(f"{len(reports)} sittings pooled, from {reports[0]['started_utc']} to "
              f"{reports[-1]['started_utc']}; medians of all runs, and the per-round ratios' "
              f"mean with its 95% interval")
        print_table(report["summary"], {name: p["title"] for name, p in report["points"].items()})
        sys.exit(0)
    parser.add_argument("vmcache", type=Path, help="a vmcache checkout (not vendored)")
    parser.add_argument("--quick", action="store_true",
                        help="one run per engine and point, 3 s measured after 1 s of warm-up")
    parser.add_argument("--runs", type=int, default=3, help="runs per engine and point (3)")
    parser.add_argument("--seconds", type=int, default=10, help="measured seconds per run (10)")
    parser.add_argument("--points", default="tpcc-mem,tpcc-oom,lookup-mem",
                        help="comma-separated points (default: all three)")
    parser.add_argument("--work", type=Path, default=REPO / "target" / "vs_vmcache",
                        help="scratch directory: binaries, images, data files (large)")
    parser.add_argument("--out", type=Path, default=None,
                        help="results JSON (default WORK/vs_vmcache.json; CSV beside it)")
    parser.add_argument("--threads", type=int, default=None,
                        help="worker threads of both engines at every point (default: the "
                             "issue's 2); the points are then named NAME-Nt")
    parser.add_argument("--nice", type=int, default=15,
                        help="nice level of builds and runs, both engines (15; 0: none)")
    parser.add_argument("--page-size", type=int, default=4096,
                        help="flashbuf's page size (4096, vmcache's)")
    parser.add_argument("--flashbuf", type=Path, default=None,
                        help="use this flashbuf binary instead of building the repository's")
    parser.add_argument("--cargo-profile", default="release-lto",
                        choices=["release", "release-lto", "profiling", "profiling-lto"],
                        help="the Cargo profile flashbuf is built with (release-lto: one "
                             "code-generation unit and fat LTO, the counterpart of vmcache's "
                             "single translation unit; `release` for the default build)")
    parser.add_argument("--flashbuf-oom-warehouses", type=int, default=20,
                        help="flashbuf's warehouses at tpcc-oom (20); `flashbuf load` holds "
                             "about 3x the image in RAM, about 5 GB for 20 warehouses: give "
                             "fewer on a host without it (the pool stays 28%% of the data)")
    parser.add_argument("--flashbuf-pool-config", type=Path, default=None,
                        help="a buffer-pool configuration file (TOML) that flashbuf's runs get "
                             "at every point (`bench --pool-config`), e.g. one setting "
                             "torn_page_protection = \"doublewrite8\"")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.threads is not None and not 1 <= args.threads <= 256:
        parser.error("--threads must be from 1 to 256")
    if not 1 <= args.seconds <= 600:
        parser.error("--seconds must be from 1 to 600")
    if args.page_size not in (4096, 8192, 16384, 32768):
        parser.error("--page-size must be 4096, 8192, 16384 or 32768")
    if not 1 <= args.flashbuf_oom_warehouses <= 1000:
        parser.error("--flashbuf-oom-warehouses must be from 1 to 1000")
    if args.flashbuf is not None and not os.access(args.flashbuf, os.X_OK):
        parser.error(f"--flashbuf {args.flashbuf}: not an executable file")
    if args.flashbuf_pool_config is not None and not args.flashbuf_pool_config.is_file():
        parser.error(f"--flashbuf-pool-config {args.flashbuf_pool_config}: no such file")
    if not args.vmcache.is_dir():
        parser.error(f"{args.vmcache}: no such directory")
    if args.quick:
        args.runs, args.seconds = 1, 3
    return args


def main():
    args = parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    table = points(work, args.flashbuf_oom_warehouses)
    wanted = [name.strip() for name in args.points.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in table]
    if unknown or not wanted:
        fail(f"--points: unknown {unknown} (known: {', '.join(table)})")
    if args.threads is not None:
        # Another thread count is another point: renamed, so that `--pool` never mixes it with
        # the 2-thread rows.
        for name in wanted:
            point = table.pop(name)
            point.name = f"{name}-{args.threads}t"
            point.title = point.title.replace(f"{point.threads} threads", f"{args.threads} threads")
            point.threads = args.threads
            table[point.name] = point
        wanted = [f"{name}-{args.threads}t" for name in wanted]
    if args.quick:
        for point in table.values():
            point.warmup_s = 1
    if args.flashbuf_pool_config is not None:
        for point in table.values():
            # A new list: points may share one (the in-memory points share their devices').
            point.flashbuf_bench = [*point.flashbuf_bench, "--pool-config",
                                    str(args.flashbuf_pool_config.resolve())]
    out = (args.out or work / "vs_vmcache.json").resolve()

    vmcache = build_vmcache(args.vmcache.resolve(), work, args.nice)
    flashbuf = (args.flashbuf.resolve() if args.flashbuf
                else build_flashbuf(args.nice, args.cargo_profile))
    images = {}
    for name in wanted:
        point = table[name]
        prewrite(work / f"vmcache-{point.base}.data", point.vmcache_file_gib)
        images[name] = flashbuf_image(flashbuf, point, work, args.page_size, args.nice)

    started = time.time()
    load_start = load_average()
    results = {name: [] for name in wanted}
    for name in wanted:
        point = table[name]
        for round_ in range(args.runs):
            for engine in ("flashbuf", "vmcache"):
                log(f"{name} round {round_ + 1}/{args.runs}: {engine}")
                if engine == "flashbuf":
                    run = run_flashbuf(flashbuf, point, images[name], work, args.seconds,
                                       args.nice)
                else:
                    run = run_vmcache(vmcache, point, work, args.seconds, args.nice)
                run["round"] = round_ + 1
                results[name].append(run)
                log(f"  {fmt(run['throughput'])}/s, {fmt(run['per_cpu_s'])} per CPU-s, "
                    f"load {run['load_before']:.1f} -> {run['load_after']:.1f}")

    summary = summarize(results)
    report = {
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "sitting_s": round(time.time() - started, 1),
        "load_average_start_end": [load_start, load_average()],
        "machine": machine(),
        # A binary given with --flashbuf need not come from this checkout: say so.
        "flashbuf_commit": (checkout_commit(REPO) if args.flashbuf is None
                            else f"unknown: --flashbuf {flashbuf} (this checkout is at "
                                 f"{checkout_commit(REPO)})"),
        "flashbuf_binary": str(flashbuf),
        "flashbuf_cargo_profile": None if args.flashbuf else args.cargo_profile,
        "vmcache_commit": checkout_commit(args.vmcache.resolve()),
        "runs_per_engine": args.runs,
        "measured_s": args.seconds,
        "nice": args.nice,
        "flashbuf_page_size": args.page_size,
        "flashbuf_pool_config": (None if args.flashbuf_pool_config is None
                                 else {"path": str(args.flashbuf_pool_config),
                                       "text": args.flashbuf_pool_config.read_text()}),
        "points": {name: {"title": table[name].title,
                          "warmup_s": table[name].warmup_s,
                          "flashbuf": ["bench", *table[name].flashbuf_load,
                                       *table[name].flashbuf_bench],
                          "vmcache_env": table[name].vmcache_env}
                   for name in wanted},
        "summary": summary,
        "runs": results,
    }
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    write_csv(out.with_suffix(".csv"), results)
    print_report(report)
    print(f"wrote {out} and {out.with_suffix('.csv')}")


if __name__ == "__main__":
    main()
