#!/bin/bash
# Issue 20 check for the slot array checked once: 7f49a34 against 38717a6.
cd /work/runs
OLD=/work/runs/flashbuf-7f49a34
NEW=/work/runs/flashbuf-38717a6
ARGS="bench --workload tpcc --warehouses 10 --schemes vanilla,war,lru-c --device emu:ssd-a --buffer 10% --threads 64 --duration 3s --warmup auto:4s --no-check --model-cores 32 --no-progress"
mkdir -p ab-s39-emu2
for r in 1 2; do
  for b in old new; do
    if [ $b = old ]; then BIN=$OLD; else BIN=$NEW; fi
    echo "== $(date -u +%H:%M:%S) $b run $r"
    $BIN $ARGS --db /work/runs/w10-f2.img --out /work/runs/ab-s39-emu2/$b-$r > /work/runs/ab-s39-emu2/$b-$r.log 2>&1
    echo "== $(date -u +%H:%M:%S) $b run $r rc=$?"
  done
done
echo "== $(date -u +%H:%M:%S) all done"
