#!/bin/bash
# usage: ab.sh OUTDIR ROUNDS OLD_BIN NEW_BIN: in-memory TPC-C (5 warehouses, 4 KiB, mem devices,
# 2 threads, vanilla), alternating old/new per round; prints raw and per-CPU-second tx rates.
OUT=$1; ROUNDS=$2; OLD=$3; NEW=$4
mkdir -p $OUT; cd $OUT
for round in $(seq $ROUNDS); do
  if [ $((round % 2)) = 1 ]; then ORDER="old new"; else ORDER="new old"; fi
  for v in $ORDER; do
    b=$OLD; [ $v = new ] && b=$NEW
    out=tpcc-$v-$round.json; rm -f $out
    $b bench --workload tpcc --warehouses 5 --page-size 4096 --db /work/runs/s48/mem/w5-4k.img --device mem --log-device mem --buffer 100% --threads 2 --schemes vanilla --duration 10s --warmup 5s --no-check --no-progress --json $out >/dev/null 2>$out.err
    python3 -c "
import json;r=json.load(open('$out'))['runs'][0];d=r['duration_real_s'];c=r['cpu']['cores_used']*d
print('tpcc,$v,$round,%d,%d,%s' % (r['ops']/d, r['ops']/c, open('/proc/loadavg').read().split()[0]))"
  done
done
