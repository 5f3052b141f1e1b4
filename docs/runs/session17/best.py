import csv,glob,collections,sys,math
# best kernel per problem per variant (min over rounds of per-round best)
d=collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob('v*_r*.csv')):
    v=f.split('_')[0]
    rows=collections.defaultdict(list)
    for r in csv.DictReader(l for l in open(f) if not l.startswith('#')):
        if r['status']!='W4A16_STATUS_OK': continue
        rows[(int(r['n']),int(r['k']),int(r['m']))].append(float(r['median_us']))
    for p,x in rows.items(): d[p][v].append(min(x))
vs=sorted(set(v for p in d for v in d[p]))
base=vs[0]; g=collections.defaultdict(list)
for p in sorted(d):
    line='%-18s'%str(p)
    b=min(d[p][base])
    for v in vs:
        m=min(d[p][v]); g[v].append(m/b)
        line+=' %s=%6.2f(%.3f)'%(v,m,m/b)
    print(line)
print('geomean', ' '.join('%s=%.4f'%(v, math.exp(sum(map(math.log,g[v]))/len(g[v]))) for v in vs))
