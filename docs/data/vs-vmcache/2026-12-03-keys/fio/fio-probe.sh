#!/bin/bash
# The probe (file:, 32 threads x 1 outstanding 16 KiB I/O) against fio with io_uring (1 job x
# iodepth 32), interleaved rounds, on one pre-written 256 MiB file. No nice, quiet host.
# usage: fio-probe.sh LAST FIRST   (rounds FIRST..LAST; fb-keys is 65ed5af's release-lto binary)
# The probe's own shape in fio (32 jobs x iodepth 1) ran after it: fio32x1-*.json.
cd "$(dirname "$0")"
F=/work/main/target/probe-fio.dat
[ -f $F ] || dd if=/dev/urandom of=$F bs=1M count=256 oflag=direct status=none
for r in $(seq $2 $1); do
  ./fb-keys device probe --device file:$F --concurrency 32 --duration-ms 4000 --precondition none --no-fsync --region-mb 256 --page-size 16384 > fio/probe-$r.txt 2>&1
  for rw in randwrite randread; do
    fio --name=j --filename=$F --rw=$rw --bs=16k --direct=1 --ioengine=io_uring --size=256M --thread --group_reporting --ramp_time=1 --runtime=4 --time_based --iodepth=32 --numjobs=1 --output-format=json > fio/fio-$rw-$r.json 2>/dev/null
  done
  python3 - <<PY
import json,re
w=json.load(open('fio/fio-randwrite-$r.json'))['jobs'][0]['write']['iops']
rd=json.load(open('fio/fio-randread-$r.json'))['jobs'][0]['read']['iops']
t=open('fio/probe-$r.txt').read()
print('round $r', 'fio write %.0f read %.0f' % (w, rd), open('/proc/loadavg').read().split()[0])
PY
  grep -i "iops" fio/probe-$r.txt | head -4
done
