"""A/B table of a run.sh that appends `variant,round,<bench csv row>` lines to all.csv (header.csv:
the bench's header): per kernel and problem, the median over rounds of each variant and its ratio
to variant 0, and the spread of variant 0 over the rounds. Usage: ab.py logs_dir"""
import collections
import lzma
import os
import csv
import statistics as st
import sys

d = sys.argv[1] if len(sys.argv) > 1 else 'logs'
h = open(d + '/header.csv').read().strip().split(',')
t = collections.defaultdict(list)
for r in csv.reader((lzma.open(d + "/all.csv.xz", "rt") if os.path.exists(d + "/all.csv.xz") else open(d + "/all.csv"))):
    x = dict(zip(h, r[2:]))
    if x['status'] != 'W4A16_STATUS_OK':
        print('not ok:', r)
        continue
    key = (x['kernel'].split('_u4_')[1].replace('_cooperative', ''), int(x['m']), x['n'] + 'x' + x['k'])
    t[(key, r[0])].append(float(x['median_us']))
for k in sorted(set(k for k, _ in t)):
    vs = sorted(v for kk, v in t if kk == k)
    med = {v: st.median(t[(k, v)]) for v in vs}
    b = med[vs[0]]
    sp = 100 * (max(t[(k, vs[0])]) - min(t[(k, vs[0])])) / b
    print('%-28s %5d %-11s' % k, ' '.join('v%s %8.2f (%5.3f)' % (v, med[v], med[v] / b) for v in vs),
          ' v%s spread %.1f%%' % (vs[0], sp))
