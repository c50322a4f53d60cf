#!/bin/bash
# Issue 20's check "no scheme loses more than 5% on emulated TPC-C" for one-pass splits and leaf hints: main 3bf98ee
# against main 222ed4f (binary $NEW), same format-2 image, alternating binaries run by run, time scale 16 for both.
cd /work/runs
OLD=/work/runs/flashbuf-3bf98ee
NEW=$1
ARGS="bench --workload tpcc --warehouses 10 --schemes vanilla,war,lru-c --device emu:ssd-a --buffer 10% --threads 64 --duration 3s --warmup auto:4s --no-check --model-cores 32 --no-progress"
for r in 1 2 3; do
  for b in old new; do
    if [ $b = old ]; then BIN=$OLD; IMG=w10-f2.img; else BIN=$NEW; IMG=w10-f2.img; fi
    echo "== $(date -u +%H:%M:%S) $b run $r"
    $BIN $ARGS --db /work/runs/$IMG --out /work/runs/ab-hints/$b-$r > /work/runs/ab-hints/$b-$r.log 2>&1
    echo "== $(date -u +%H:%M:%S) $b run $r rc=$?"
  done
done
echo "== $(date -u +%H:%M:%S) all done"
