#!/bin/bash
# usage: abn.sh OUTDIR ROUNDS NAME=BIN[:EXTRA FLAGS] ...: in-memory TPC-C (5 warehouses, 4 KiB,
# mem devices, 2 threads, vanilla), the variants in rotating order per round; prints raw and
# per-CPU-second tx rates and the 1-minute load average.
OUT=$1; ROUNDS=$2; shift 2
VARIANTS=("$@"); N=${#VARIANTS[@]}
mkdir -p $OUT; cd $OUT
for round in $(seq $ROUNDS); do
  for k in $(seq 0 $((N-1))); do
    spec=${VARIANTS[$(( (k + round) % N ))]}
    name=${spec%%=*}; rest=${spec#*=}; bin=${rest%%:*}; extra=""; [[ $rest == *:* ]] && extra=${rest#*:}
    out=tpcc-$name-$round.json; rm -f $out
    $bin bench --workload tpcc --warehouses 5 --page-size 4096 --device mem --log-device mem --buffer 100% --threads 2 --schemes vanilla --duration 10s --warmup 5s --no-check --no-progress $extra --json $out >/dev/null 2>$out.err
    python3 -c "
import json;r=json.load(open('$out'))['runs'][0];d=r['duration_real_s'];c=r['cpu']['cores_used']*d
print('tpcc,$name,$round,%d,%d,%s,%d' % (r['ops']/d, r['ops']/c, open('/proc/loadavg').read().split()[0], r['pool_stats']['sync_recoverability_writes']/d))"
  done
done
