#!/bin/bash
# A/B of two flashbuf builds on the in-memory lookup point (vs_vmcache's flags), alternating.
IMG=/work/main/target/vs_vmcache/workload-ycsb-c-records-1000000-field-count-1-field-length-120-request-distribution-uniform-p4096.img
for i in 1 2 3; do for B in $A_BUILDS; do rm -f ab.json
nice -n 15 ./flashbuf-$B bench --workload ycsb-c --records 1000000 --field-count 1 --field-length 120 --request-distribution uniform --device mem --log-device mem --buffer 100% --db $IMG --threads 2 --schemes vanilla --duration 10s --warmup 5s --no-check --no-progress --json ab.json >/dev/null 2>&1
python3 -c "
import json;r=json.load(open('ab.json'))['runs'][0];d=r['duration_real_s'];c=r['cpu']['cores_used']
print('$B', round(r['ops']/d), round(r['ops']/d/c), 'cores',round(c,2), 'p50', r.get('latency_us',{}).get('p50') if isinstance(r.get('latency_us'),dict) else '')"
done; done
