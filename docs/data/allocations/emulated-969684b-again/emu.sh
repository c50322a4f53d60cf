#!/bin/bash
# Issue 20: is 969684b's lru-c loss against 3cbf790 (0.968 ±0.028, 2026-12-01) real?
# lru-c only, the same flags as that check, rounds alternating which build goes first.
cd /work/runs/s58
ARGS="bench --workload tpcc --warehouses 10 --schemes lru-c --device emu:ssd-a --buffer 10% --threads 64 --duration 3s --warmup auto:4s --no-check --model-cores 32 --no-progress"
mkdir -p emu
for r in 1 2 3 4 5 6; do
  if [ $((r % 2)) = 1 ]; then ORDER="3cbf790 969684b"; else ORDER="969684b 3cbf790"; fi
  for b in $ORDER; do
    echo "== $(date -u +%H:%M:%S) $b run $r load $(cut -d' ' -f1 /proc/loadavg)"
    ./fb-$b $ARGS --db /work/runs/w10.img --out emu/$b-$r > emu/$b-$r.log 2>&1
    echo "== $(date -u +%H:%M:%S) $b run $r rc=$?"
  done
done
echo "== $(date -u +%H:%M:%S) all done"
