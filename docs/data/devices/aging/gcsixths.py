"""GC writes per host write and throughput by sixth of the measured phase (ratios of sums
where the timeline carries counts; else the whole phase's from device_stats)."""
import json, sys
for path in sys.argv[1:]:
    run = json.load(open(path))['runs'][0]
    tl = run['timeline']; n = len(tl) // 6
    d = run['device_stats']
    sixths = []
    for i in range(6):
        part = tl[i * n:(i + 1) * n]
        host = sum(p.get('host_writes', 0) for p in part)
        gc = sum(p.get('gc_writes', 0) for p in part)
        sixths.append((round(gc / host, 3) if host else None, round(sum(p['throughput'] for p in part) / len(part))))
    aging = run.get('device_aging')
    print(f"{path}: {run['throughput']:.0f} {run['unit']}, GC/write {d['gc_writes'] / max(d['writes'], 1):.3f} overall, "
          f"steady {run['steadiness']['verdict'][:50]}")
    print("  aged:", aging and {k: (round(v, 3) if isinstance(v, float) else v) for k, v in aging.items()})
    print("  GC/write by sixth:", [s[0] for s in sixths])
    print("  throughput by sixth:", [s[1] for s in sixths])
