#!/bin/bash
# usage: ab-args.sh OUTDIR ROUNDS POINT BIN "EXTRA_A" "EXTRA_B"  (POINT: lookup | tpcc): one binary, two flag sets, alternating.
OUT=$1; ROUNDS=$2; POINT=$3; BIN=$4; XA=$5; XB=$6
mkdir -p $OUT; cd $OUT
if [ $POINT = lookup ]; then
  ARGS="--workload ycsb-c --records 1000000 --field-count 1 --field-length 120 --request-distribution uniform --db /work/vsv3/workload-ycsb-c-records-1000000-field-count-1-field-length-120-request-distribution-uniform-p4096.img"
else
  ARGS="--workload tpcc --warehouses 5 --page-size 4096 --db /work/vsv3/workload-tpcc-warehouses-5-p4096.img"
fi
for round in $(seq $ROUNDS); do
  if [ $((round % 2)) = 1 ]; then ORDER="A B"; else ORDER="B A"; fi
  for v in $ORDER; do
    if [ $v = A ]; then X=$XA; else X=$XB; fi
    out=$POINT-$v-$round.json; rm -f $out
    nice -n 15 /work/runs/flashbuf-$BIN bench $ARGS $X --device mem --log-device mem --threads 2 --schemes vanilla --duration 10s --warmup 5s --no-check --no-progress --json $out >/dev/null 2>$out.err
    python3 -c "
import json;r=json.load(open('$out'))['runs'][0];d=r['duration_real_s'];c=r['cpu']['cores_used']*d;b=r.get('bytes_per_op',{})
print('$POINT,$v,$round,%d,%d,%s,pw=%.0f' % (r['ops']/d, r['ops']/c, open('/proc/loadavg').read().split()[0], b.get('page_writes',0)))"
  done
done
