#!/bin/bash
# Paired `flashbuf bench` runs of the harness's lookup point, text keys against binary keys,
# alternating which runs first; same binary. Per CPU-second = throughput / cores_used.
cd "$(dirname "$0")"
IMG=/work/main/target/vs_vmcache
BASE="--workload ycsb-c --records 1000000 --field-count 1 --field-length 120 --request-distribution uniform"
for r in $(seq $1 $2); do
  if [ $((r % 2)) = 1 ]; then ORDER="text binary"; else ORDER="binary text"; fi
  for k in $ORDER; do
    if [ $k = text ]; then ARGS="$BASE --db $IMG/workload-ycsb-c-records-1000000-field-count-1-field-length-120-request-distribution-uniform-p4096.img";
    else ARGS="$BASE --key-format binary --db $IMG/workload-ycsb-c-records-1000000-field-count-1-field-length-120-request-distribution-uniform-key-format-binary-p4096.img"; fi
    ./fb-keys bench $ARGS --device mem --log-device mem --buffer 200% --prewarm --threads 2 --schemes vanilla --duration 10s --warmup 5s --no-check --no-progress --json ab/keys-$k-$r.json > /dev/null 2>ab/keys-$k-$r.err || { echo FAIL $k $r; cat ab/keys-$k-$r.err | tail -3; }
    python3 -c "
import json;d=json.load(open('ab/keys-$k-$r.json'));r=d['runs'][0];c=r['cpu']['cores_used']
print('$k $r', round(r['throughput']), round(r['throughput']/c), r['db_pages'], open('/proc/loadavg').read().split()[0])"
  done
done
