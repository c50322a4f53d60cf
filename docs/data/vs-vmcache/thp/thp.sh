#!/bin/bash
# thp.sh N: N in-memory TPC-C runs (fb-after, the harness's image); per run: per-CPU-second rate
# and the process's AnonHugePages / FilePmdMapped sampled 9 s in (inside the measured phase).
cd /work/runs/s55; mkdir -p thp
IMG=/work/runs/s55/vsw/workload-tpcc-warehouses-5-room-400-p4096.img
for i in $(seq $1); do
  out=thp/run-$i.json; rm -f $out
  ./fb-after bench --workload tpcc --warehouses 5 --device mem --log-device mem --buffer 100% --threads 2 --schemes vanilla --duration 10s --warmup 5s --no-check --no-progress --db $IMG --json $out > /dev/null 2> thp/run-$i.err &
  pid=$!
  sleep 9
  huge=$(grep -E "AnonHugePages" /proc/$pid/smaps_rollup | awk '{print $2}')
  anon=$(grep -E "^Anonymous" /proc/$pid/smaps_rollup | awk '{print $2}')
  wait $pid
  python3 -c "
import json;r=json.load(open('$out'))['runs'][0];d=r['duration_real_s'];c=r['cpu']['cores_used']*d
print('run $i,%d,%d,huge_kb=$huge,anon_kb=$anon,load=%s' % (r['ops']/d, r['ops']/c, open('/proc/loadavg').read().split()[0]))"
done
