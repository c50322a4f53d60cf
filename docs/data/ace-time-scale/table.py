"""Prints the time-scale A/B of ace-fig10g.p3: per scheme the throughput (each repeat), the
timing error the verdicts judge (lateness over the mean fsync) and the error per operation
(lateness x device requests per operation over the mean operation), and ACE-LRU over LRU with
its paired 95% interval.

    python3 docs/data/ace-time-scale/table.py results/reproduction/ace-fig10g/points/ace-fig10g.p3.point.json docs/data/ace-time-scale/*.point.json
"""
import json
import statistics as st
import sys

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571}

for path in sys.argv[1:]:
    runs = json.load(open(path))["point"]["results"]["runs"]
    by_scheme = {}
    for r in runs:
        late = r["host_lateness"]
        requests = (r["io"]["read_iops"] + r["io"]["write_iops"]) * r["duration_s"] + r["fsync"]["count"]
        per_op = requests / r["ops"]
        op_error = late["device_mean_us"] * per_op / (r["latency_ms"]["mean"] * 1000)
        repeats = [x["throughput"] for x in r.get("runs") or [r]]
        by_scheme[r["scheme"]] = repeats
        print(
            "%-32s %-8s %6.1fk (%s) scale %3.0f  timing error %5.1f%%  per operation %4.2f%%  "
            "requests/op %.2f  fsync %.1f us  op %.0f us"
            % (path.split("/")[-1], r["scheme"], r["throughput"] / 1000,
               ", ".join("%.1f" % (x / 1000) for x in repeats), r["time_scale"],
               late["error_share"] * 100, op_error * 100, per_op,
               r["fsync"]["mean_ms"] * 1000, r["latency_ms"]["mean"] * 1000)
        )
    ace, base = by_scheme.get("ace-lru"), by_scheme.get("pg-lru")
    if ace and base and len(ace) == len(base) > 1:
        ratios = [a / b for a, b in zip(ace, base)]
        half = T975[len(ratios) - 1] * st.stdev(ratios) / len(ratios) ** 0.5
        print("    ace-lru / pg-lru %.3f ±%.3f" % (st.mean(ratios), half))
