#!/bin/bash
# Issue 20 check ("no scheme loses more than 5%") for stop 61's LruList::make_young relink:
# fb-before (674938b, release-lto) against fb-after (make_young relinked, release-lto), stop 61. Odd rounds old first, even rounds new first.
cd "$(dirname "$0")"  # run from a directory holding fb-before, fb-after and an emu/ directory
ARGS="bench --workload tpcc --warehouses 10 --schemes vanilla,war,lru-c --device emu:ssd-a --buffer 10% --threads 64 --duration 3s --warmup auto:4s --no-check --model-cores 32 --no-progress"
for r in $(seq $1 $2); do
  if [ $((r % 2)) = 1 ]; then ORDER="before after"; else ORDER="after before"; fi
  for b in $ORDER; do
    echo "== $(date -u +%H:%M:%S) $b run $r load $(cut -d' ' -f1 /proc/loadavg)"
    ./fb-$b $ARGS --db /work/runs/s60/w10.img --out emu/$b-$r > emu/$b-$r.log 2>&1
    echo "== $(date -u +%H:%M:%S) $b run $r rc=$?"
  done
done
echo "== $(date -u +%H:%M:%S) all done"
