"""Per problem and kernel: the median time of variant 0 and 1 over rounds and their ratio (v1 / v0),
from all.csv lines `variant,round,<bench csv row>` (several kernels a process). Usage: ab.py logs_dir
[min_change] (only the rows whose ratio differs from 1 by at least min_change, default 0)"""
import csv
import collections
import statistics as st
import sys

d = sys.argv[1] if len(sys.argv) > 1 else 'logs'
lim = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
h = open(d + '/header.csv').read().strip().split(',')
t = collections.defaultdict(list)
for r in csv.reader(open(d + '/all.csv')):
    x = dict(zip(h, r[2:]))
    t[(int(x['m']), x['n'] + 'x' + x['k'], x['kernel'].split('_u4_')[1].replace('_cooperative', ''), r[0])].append(float(x['median_us']))
ratios = []
for k in sorted(set(k[:3] for k in t)):
    a, b = st.median(t[k + ('0',)]), st.median(t[k + ('1',)])
    ratios.append(b / a)
    if abs(b / a - 1) >= lim:
        print('M=%-4d %-11s %-20s v0 %8.2f v1 %8.2f  %.3f  [%s | %s]' % (k[0], k[1], k[2], a, b, b / a,
              ' '.join('%.2f' % v for v in t[k + ('0',)]), ' '.join('%.2f' % v for v in t[k + ('1',)])))
print('%d rows, geomean %.4f' % (len(ratios), st.geometric_mean(ratios)))
