"""A/B of two kernels per problem from a run.sh that appends `variant,round,<bench csv row>` lines to
all.csv (variant 0: the baseline kernel, 1: the other): per problem the median over rounds of each and
their ratio. Usage: kab.py logs_dir"""
import collections
import csv
import statistics as st
import sys

d = sys.argv[1] if len(sys.argv) > 1 else 'logs'
h = open(d + '/header.csv').read().strip().split(',')
t = collections.defaultdict(list)
names = {}
for r in csv.reader(open(d + '/all.csv')):
    x = dict(zip(h, r[2:]))
    if x['status'] != 'W4A16_STATUS_OK':
        print('not ok:', r)
        continue
    key = (int(x['m']), x['n'] + 'x' + x['k'])
    t[(key, r[0])].append(float(x['median_us']))
    names[(key, r[0])] = x['kernel'].split('_u4_')[1].replace('_cooperative', '').replace('_1x1x1', '')
for k in sorted(set(k for k, _ in t)):
    if (k, '0') not in t or (k, '1') not in t:
        continue
    a, b = st.median(t[(k, '0')]), st.median(t[(k, '1')])
    print('%5d %-11s %-14s %8.2f  %-14s %8.2f  (%5.3f)  rounds %d' % (k[0], k[1], names[(k, '0')], a, names[(k, '1')], b,
                                                                   b / a, len(t[(k, '0')])))
