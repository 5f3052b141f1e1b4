import csv,sys,glob,collections
d,A,B=sys.argv[1:4]
def load(p):
    t=collections.defaultdict(lambda:1e9)
    for f in glob.glob(f"{d}/{p}_r*.csv"):
        for r in csv.DictReader(open(f)):
            if r['status']!='W4A16_STATUS_OK': continue
            k=(int(r['n']),int(r['k']),int(r['m']),r['kernel']); t[k]=min(t[k],float(r['median_us']))
    return t
a=load(A);b=load(B)
probs=sorted({k[:3] for k in a})
for p in probs:
    ka=min((v,k[3]) for k,v in a.items() if k[:3]==p); kb=min((v,k[3]) for k,v in b.items() if k[:3]==p)
    print(f"{p[0]}x{p[1]} M={p[2]} {ka[0]:.2f} {ka[1].split('_fgs_')[1]} -> {kb[0]:.2f} {kb[1].split('_fgs_')[1]} {kb[0]/ka[0]:.3f}")
