#!/usr/bin/env python3
"""One line per run of the RW-knobs check (docs/regime.md, "The RW authors' own knobs and
counters"): throughput, tpmC, device IOPS and bandwidth share, read stalls, where the misses'
frames came from, and the regime quantities the check is about.

usage: python3 summary.py RUN_DIR...   (each holding a bench results.json)
"""
import json,sys
for path in sys.argv[1:]:
    d=json.load(open(path+'/results.json'))
    for r in d['runs']:
        e=r['pool_stats']['extra']; ps=r['pool_stats']; io=r['io']
        m=ps['misses']
        q={x['name']:x['ours'] for x in r['regime']['quantities']}
        print(f"{path:28s} {r['scheme']:16s} {r['throughput']:6.0f} tx/s tpmC {r['tpmc']:7.0f} r {io.get('read_iops',0):6.0f} w {io.get('write_iops',0):6.0f} bw {io.get('bandwidth_share',0)*100:.0f}% stall {r['read_stall_ratio']*100:.1f}% free-list {e['misses_from_free_list']/m*100:.1f}% clean-freed/miss {e['cleaner_freed_clean_pages']/m:.2f} lru-flush/miss {ps['lru_flushes']/m:.2f} r/tx {q['reads_per_transaction']:.2f} w/tx {q['writes_per_transaction']:.2f} cap/miss {q['cleaner_capacity_over_miss_rate']:.2f}")
