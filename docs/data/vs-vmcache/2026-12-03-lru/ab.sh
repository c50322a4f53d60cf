#!/bin/bash
# Paired runs of one in-memory point through `flashbuf bench`, alternating which binary runs first:
# old = 674938b (release-lto), new = this stop's change. Per CPU-second = throughput / cores_used.
# usage: ab.sh POINT(lookup|tpcc) FIRST LAST
cd "$(dirname "$0")"
IMG=/work/main/target/vs_vmcache
case $1 in
  lookup) ARGS="--workload ycsb-c --records 1000000 --field-count 1 --field-length 120 --request-distribution uniform --db $IMG/workload-ycsb-c-records-1000000-field-count-1-field-length-120-request-distribution-uniform-p4096.img";;
  tpcc) ARGS="--workload tpcc --warehouses 5 --db $IMG/workload-tpcc-warehouses-5-room-400-p4096.img";;
esac
for r in $(seq $2 $3); do
  if [ $((r % 2)) = 1 ]; then ORDER="old new"; else ORDER="new old"; fi
  for b in $ORDER; do
    ./fb-$b bench $ARGS --device mem --log-device mem --buffer 200% --prewarm --threads 2 --schemes vanilla --duration 10s --warmup 5s --no-check --no-progress --json ab/$1-$b-$r.json > /dev/null 2>&1
    python3 -c "
import json,sys;d=json.load(open('ab/$1-$b-$r.json'));r=d['runs'][0];c=r['cpu']['cores_used']
print('$1 $b $r', round(r['throughput']), round(r['throughput']/c), r['pool_stats']['mutexes']['lru']['acquisitions'], open('/proc/loadavg').read().split()[0])"
  done
done
