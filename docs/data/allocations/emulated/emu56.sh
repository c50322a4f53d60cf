#!/bin/bash
# Issue 20 check ("no scheme loses more than 5%") for this session's allocation change:
# fb-before (3cbf790, release-lto) against fb-after (969684b, release-lto). Round 1 old first, round 2 new first.
cd /work/runs/s55
ARGS="bench --workload tpcc --warehouses 10 --schemes vanilla,war,lru-c --device emu:ssd-a --buffer 10% --threads 64 --duration 3s --warmup auto:4s --no-check --model-cores 32 --no-progress"
mkdir -p emu
for r in 5 6; do
  if [ $r = 5 ]; then ORDER="before after"; else ORDER="after before"; fi
  for b in $ORDER; do
    echo "== $(date -u +%H:%M:%S) $b run $r load $(cut -d' ' -f1 /proc/loadavg)"
    ./fb-$b $ARGS --db /work/runs/w10.img --out emu/$b-$r > emu/$b-$r.log 2>&1
    echo "== $(date -u +%H:%M:%S) $b run $r rc=$?"
  done
done
echo "== $(date -u +%H:%M:%S) all done"
