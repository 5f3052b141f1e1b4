import sys, statistics as st
def pct(v, ps=(0,10,50,90,100)):
    v=sorted(v); return " ".join("%6.0f"%v[min(len(v)-1,int(p/100*(len(v)-1)+0.5))] for p in ps)
for fn in sys.argv[1:]:
    rows=[list(map(int,l.split())) for l in open(fn)]
    # row: b, then 32 values
    t0=min(r[1] for r in rows)
    print("==",fn,"ctas",len(rows), "units/total", set((r[32]>>32, r[32]&0xffffffff) for r in rows))
    names={0:'entry',1:'wait_done'}
    for i in range(2,18): names[i]='full%d'%(i-2)
    for j in range(4): names[20+j]='mathdone%d'%j; names[24+j]='stored%d'%j
    for i in sorted(names):
        v=[r[1+i]-t0 for r in rows if r[1+i]]
        if v: print("%-10s n=%3d  p0/10/50/90/100: %s"%(names[i],len(v),pct(v)))
