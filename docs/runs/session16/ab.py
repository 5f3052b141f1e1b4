import csv,sys,collections,math
# usage: ab.py dir variantA variantB ... ; files <variant>_r*.csv ; prints per (problem,kernel) min over rounds and ratios vs first
d=sys.argv[1]; vs=sys.argv[2:]
import glob
data={}
for v in vs:
    for f in glob.glob(f"{d}/{v}_r*.csv"):
        for row in csv.DictReader(open(f)):
            if row['status']!='W4A16_STATUS_OK': continue
            key=(int(row['n']),int(row['k']),int(row['m']),row['kernel'].replace('w4a16_sm90_','').replace('_1x1x1_cooperative',''))
            t=float(row['median_us'])
            data.setdefault(key,{}).setdefault(v,[]).append(t)
best={}
for key,dv in sorted(data.items()):
    if not all(v in dv for v in vs): continue
    mins=[min(dv[v]) for v in vs]
    pk=key[:3]
    for i,v in enumerate(vs):
        b=best.setdefault(pk,{})
        if v not in b or mins[i]<b[v][0]: b[v]=(mins[i],key[3])
    if '-k' in sys.argv[0:1]: pass
rat=collections.defaultdict(list)
print('N K M : ' + ' | '.join(vs))
for pk,b in sorted(best.items()):
    base=b[vs[0]][0]
    s=f"{pk[0]}x{pk[1]} M={pk[2]}: " + ' | '.join(f"{b[v][0]:.2f} {b[v][1][-14:]} ({b[v][0]/base:.3f})" for v in vs)
    print(s)
    for v in vs: rat[v].append(b[v][0]/base)
for v in vs: print(v, 'geomean best-per-problem ratio %.4f'%math.exp(sum(map(math.log,rat[v]))/len(rat[v])))
