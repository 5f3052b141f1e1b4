"""Issue 3's bars from rbars/run.sh (all.csv lines `round,<bench csv row>`, every sm90 kernel and
cuBLAS timed in the same rounds of one process): per problem the kernel fastest over the rounds'
medians, its time and cuBLAS's, and cuBLAS time over kernel time per process (same process).
Usage: rbars.py logs_dir"""
import collections
import csv
import statistics as st
import sys

d = sys.argv[1] if len(sys.argv) > 1 else 'logs'
h = open(d + '/header.csv').read().strip().split(',')
t = collections.defaultdict(dict)  # (m, nk) -> round -> kernel -> us
for r in csv.reader(open(d + '/all.csv')):
    x = dict(zip(h, r[1:]))
    if x['status'] != 'W4A16_STATUS_OK':
        continue
    name = 'cublas' if 'cublas' in x['kernel'].lower() else x['kernel'].split('_u4_fgs_')[1].replace('_cooperative', '')
    t[(int(x['m']), x['n'] + 'x' + x['k'])].setdefault(r[0], {})[name] = float(x['median_us'])
for key in sorted(t):
    rounds = t[key]
    ks = set.intersection(*(set(v) for v in rounds.values())) - {'cublas'}
    best = min(ks, key=lambda k: st.median(v[k] for v in rounds.values()))
    ratios = [v['cublas'] / v[best] for v in rounds.values()]
    print('M=%-5d %-11s %-22s kernel %8.2f cublas %8.2f ratio %.3f [%s]' % (
        key[0], key[1], best, st.median(v[best] for v in rounds.values()),
        st.median(v['cublas'] for v in rounds.values()), st.median(ratios), ' '.join('%.3f' % x for x in ratios)))
