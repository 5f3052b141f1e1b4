"""Per-process kernel / cuBLAS pairs of a run.sh that times one kernel and cuBLAS per bench process
(all.csv lines `0,round,<bench csv row>`, the kernel's row then cuBLAS's): per problem and kernel the
medians over rounds, the median ratio (cuBLAS time / kernel time) and each round's ratio, the floor
fraction. Usage: pairs.py logs_dir"""
import csv
import collections
import lzma
import os
import statistics as st
import sys

d = sys.argv[1] if len(sys.argv) > 1 else 'logs'
h = open(d + '/header.csv').read().strip().split(',')
f = lzma.open(d + '/all.csv.xz', 'rt') if os.path.exists(d + '/all.csv.xz') else open(d + '/all.csv')
out = collections.defaultdict(list)
prev = None
for r in csv.reader(f):
    x = dict(zip(h, r[2:]))
    if 'cublas' in x['kernel'].lower():
        a = prev
        key = ((int(a['m']), a['n'] + 'x' + a['k']), a['kernel'].split('_u4_')[1].replace('_cooperative', ''))
        out[key].append((float(a['median_us']), float(x['median_us']), float(a['vs_cublas']), float(a['floor_fraction'])))
    else:
        prev = x
for k in sorted(out):
    v = out[k]
    print('M=%-5d %-11s %-22s kernel %8.2f cublas %8.2f ratio %.3f floor %.3f [%s]' %
          (k[0][0], k[0][1], k[1], st.median(x[0] for x in v), st.median(x[1] for x in v), st.median(x[2] for x in v),
           st.median(x[3] for x in v), ' '.join('%.3f' % x[2] for x in v)))
