"""Per problem, the median over rounds of each variant (`variant,round,<bench csv row>` lines in
all.csv, header.csv the bench's header) and its ratio to variant 0. Usage: vab.py logs_dir"""
import collections
import csv
import statistics as st
import sys

d = sys.argv[1] if len(sys.argv) > 1 else 'logs'
h = open(d + '/header.csv').read().strip().split(',')
t = collections.defaultdict(list)
for r in csv.reader(open(d + '/all.csv')):
    x = dict(zip(h, r[2:]))
    if x['status'] != 'W4A16_STATUS_OK':
        print('not ok:', r)
        continue
    t[((int(x['m']), x['n'] + 'x' + x['k']), int(r[0]))].append(float(x['median_us']))
for p in sorted(set(p for p, _ in t)):
    vs = sorted(v for q, v in t if q == p)
    b = st.median(t[(p, vs[0])])
    print('%5d %-11s' % p, ' '.join('v%d %8.2f (%5.3f)' % (v, st.median(t[(p, v)]), st.median(t[(p, v)]) / b) for v in vs))
