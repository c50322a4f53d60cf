#!/bin/bash
# Issue 20 check ("no scheme loses more than 5%") for the lock-manager changes: e6656c7 (old) against bcec782 (new).
# Rounds 3-4: round 3 runs old first, round 4 new first.
cd /work/runs
OLD=/work/runs/flashbuf-e6656c7
NEW=/work/runs/flashbuf-bcec782
ARGS="bench --workload tpcc --warehouses 10 --schemes vanilla,war,lru-c --device emu:ssd-a --buffer 10% --threads 64 --duration 3s --warmup auto:4s --no-check --model-cores 32 --no-progress"
OUT=/work/runs/s41/emu
for r in 3 4; do
  if [ $r = 3 ]; then ORDER="old new"; else ORDER="new old"; fi
  for b in $ORDER; do
    if [ $b = old ]; then BIN=$OLD; else BIN=$NEW; fi
    echo "== $(date -u +%H:%M:%S) $b run $r"
    $BIN $ARGS --db /work/runs/w10-f2.img --out $OUT/$b-$r > $OUT/$b-$r.log 2>&1
    echo "== $(date -u +%H:%M:%S) $b run $r rc=$?"
  done
done
echo "== $(date -u +%H:%M:%S) all done"
