#!/bin/bash
# Issue 20 check for the slot array checked once, rounds 3-4 with the new binary first (rounds 1-2 ran old first).
cd /work/runs
OLD=/work/runs/flashbuf-7f49a34
NEW=/work/runs/flashbuf-38717a6
ARGS="bench --workload tpcc --warehouses 10 --schemes vanilla,war,lru-c --device emu:ssd-a --buffer 10% --threads 64 --duration 3s --warmup auto:4s --no-check --model-cores 32 --no-progress"
for r in 3 4; do
  for b in new old; do
    if [ $b = old ]; then BIN=$OLD; else BIN=$NEW; fi
    echo "== $(date -u +%H:%M:%S) $b run $r"
    $BIN $ARGS --db /work/runs/w10-f2.img --out /work/runs/ab-s39-emu2/$b-$r > /work/runs/ab-s39-emu2/$b-$r.log 2>&1
    echo "== $(date -u +%H:%M:%S) $b run $r rc=$?"
  done
done
echo "== $(date -u +%H:%M:%S) all done"
