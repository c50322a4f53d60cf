#!/bin/bash
# usage: ab2.sh OUTDIR ROUNDS POINT BIN_A BIN_B   (POINT: lookup | tpcc), alternating A/B per round.
OUT=$1; ROUNDS=$2; POINT=$3; A=$4; B=$5
mkdir -p $OUT; cd $OUT
if [ $POINT = lookup ]; then
  ARGS="--workload ycsb-c --records 1000000 --field-count 1 --field-length 120 --request-distribution uniform --db /work/vsv3/workload-ycsb-c-records-1000000-field-count-1-field-length-120-request-distribution-uniform-p4096.img"
else
  ARGS="--workload tpcc --warehouses 5 --page-size 4096 --db /work/vsv3/workload-tpcc-warehouses-5-p4096.img"
fi
for round in $(seq $ROUNDS); do
  if [ $((round % 2)) = 1 ]; then ORDER="$A $B"; else ORDER="$B $A"; fi
  for b in $ORDER; do
    out=$POINT-$b-$round.json; rm -f $out
    nice -n 15 /work/runs/flashbuf-$b bench $ARGS --device mem --log-device mem --buffer 100% --threads 2 --schemes vanilla --duration 10s --warmup 5s --no-check --no-progress --json $out >/dev/null 2>$out.err
    python3 -c "
import json;r=json.load(open('$out'))['runs'][0];d=r['duration_real_s'];c=r['cpu']['cores_used']*d
print('$POINT,$b,$round,%d,%d,%s' % (r['ops']/d, r['ops']/c, open('/proc/loadavg').read().split()[0]))"
  done
done
