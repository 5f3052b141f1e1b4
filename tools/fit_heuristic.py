#!/usr/bin/env python3
"""Fit the heuristic's per-(M bucket, N range) kernel-class table from a `w4a16 tune --dump` TSV.

For each (M bucket, N range [, K range]) it picks the kernel class (family, tile_n, tile_m, tile_k) with the smallest
worst-case (then mean) slowdown against the profiled best, taking inside a class the kernel the
cost model ranks first (lowest heur_est_us), and prints the score and rows for runtime/select.c.
Usage: python3 tools/fit_heuristic.py DUMP.tsv [DUMP.tsv ...]
Several dumps (runs of the same build on the same device) are scored together, each problem of
each run a sample, so a choice that flips between runs on near-ties is judged on all of them.
A group's primary class and the class of its "-alt" row are chosen together: a sample that no
kernel of the primary class ran on (a K its tile_k does not divide, say) is scored with the
alternate, the best class among those present on all such samples; the "-alt" row is printed
after its primary where the primary leaves samples uncovered.

With --extra (first argument) it fits only the two layer classes that hold none of the eight
default Llama-3 layers, from profiles of other models' layers (heuristics/profiles/session14-gen_*,
stored as .tsv.xz: xz -dk them first): the
small layers (N <= 3584, K <= 8192) and the middle-width short-K layers (N = 6145..16384,
K <= 6144); their rows go right before the rows of the same M bucket in runtime/select.c (the
first row whose ranges hold wins), and problems of other classes in the dumps are ignored.
"""
import csv, collections, math, re, sys
EXTRA=len(sys.argv)>1 and sys.argv[1]=='--extra'
if EXTRA: sys.argv=sys.argv[:1]+sys.argv[2:]
SM=int(re.search(r'sm_count=(\d+)', open(sys.argv[1]).readline()).group(1))
CC=int(re.search(r'cc=(\d+)', open(sys.argv[1]).readline()).group(1))
rows=[]
for run, path in enumerate(sys.argv[1:]):
    for r in csv.DictReader((l for l in open(path) if not l.startswith('#')), delimiter='\t'):
        if r['status'] == 'W4A16_STATUS_OK':
            r['run'] = run
            rows.append(r)
# problem classes (N range, K range; 0 = open): the narrow layers split by K (a long K wants
# fewer rows per CTA in the decode kernels)
# at M <= 16 the narrow short-K class is split at N = 4096 (256 16-row units: one per CTA slot of
# the TMA GEMV on 132 SMs, where 8 KB stages win)
NCLS=[(0,6144,0,8192),(0,6144,8193,0),(6145,16384,0,0),(16385,0,0,0),(0,4096,0,8192),(4097,6144,0,8192)]
if EXTRA: NCLS=[(0,3584,0,8192),(6145,16384,0,6144)]
def ncls(n,k,m=0):
    order=[0,1] if EXTRA else [4,5,1,2,3] if m<=16 else [0,1,2,3]
    for i in order:
        a,b,c,d=NCLS[i]
        if n>=a and (b==0 or n<=b) and k>=c and (d==0 or k<=d): return i
BUCKETS=[(1,1),(2,2),(3,4),(5,8),(9,16),(17,32),(33,64),(65,128),(129,256),(257,512),(513,1024),(1025,2048),(2049,0)]
def bucket(m):
    for i,(a,b) in enumerate(BUCKETS):
        if m>=a and (b==0 or m<=b): return i
prob=collections.defaultdict(list)
for r in rows: prob[(int(r['m']),int(r['n']),int(r['k']),r['run'])].append(r)
def cls(r): return (r['family'],int(r['tile_n']),int(r['tile_m']),int(r['tile_k']))
# a class may also be narrowed to one stage count (the rule's stages_min = stages_max) where the
# cost model cannot tell its members apart (equal estimates; e.g. the TMA GEMV's s2 and s4 with 8 KB
# stages, one the best at M = 1 and the other at M = 2..8); the unrestricted class wins ties
def classes_of(r): return {cls(r)+(0,), cls(r)+(int(r['stages']),)}
def member(r,c): return cls(r)==c[:4] and (c[4]==0 or int(r['stages'])==c[4])
# time of a class on a problem = measured time of the class member with the lowest heuristic estimate
def ctime(rs,c):
    mem=[r for r in rs if member(r,c)]
    if not mem: return None
    # (the runtime's order within a tier: estimate, then more stages, then the name)
    return float(min(mem,key=lambda r:(float(r['heur_est_us']),-int(r['stages']),r['kernel']))['median_us'])
best={p:min(float(r['median_us']) for r in rs) for p,rs in prob.items()}
groups=collections.defaultdict(list)
for p in prob:
    if ncls(p[1],p[2],p[0]) is not None: groups[(bucket(p[0]),ncls(p[1],p[2],p[0]))].append(p)
ok=tot=0; worst=0; rules=[]
def score_of(rat): return max(rat)*10+sum(math.log(x) for x in rat)
for g in sorted(groups):
    ps=groups[g]
    present=[set().union(*[classes_of(r) for r in prob[p]]) for p in ps]
    # a primary class and the classes of its "-alt" (and "-alt2") rows, fitted together: a problem
    # that no kernel of the primary class implements (a K that its tile_k does not divide) takes
    # the alternate class, and one that the alternate does not implement either the second one;
    # the last class of a chain is present on every problem left to it. A second alternate is
    # kept only where it lowers the score by more than 0.3 (about 3 % of the worst slowdown).
    def t_of(chain):
        out=[]
        for p,pr in zip(ps,present):
            c=next(c for c in chain if c in pr)
            out.append(ctime(prob[p],c)/best[p])
        return out
    def last(unc_idx):
        pool=set.intersection(*[present[i] for i in unc_idx])
        if not pool: return None
        return min(pool,key=lambda c:(score_of([ctime(prob[ps[i]],c)/best[ps[i]] for i in unc_idx]),c[4]!=0,c))
    cands=[]
    allc=set().union(*present)
    for c1 in allc:
        unc=[i for i,pr in enumerate(present) if c1 not in pr]
        if not unc:
            cands.append(((score_of(t_of([c1])),c1[4]!=0,0,c1),[c1])); continue
        c2=last(unc)
        if c2:
            cands.append(((score_of(t_of([c1,c2])),c1[4]!=0,1,c1),[c1,c2]))
        for c2b in set().union(*[present[i] for i in unc]):
            if c2b==c2: continue
            unc2=[i for i in unc if c2b not in present[i]]
            if not unc2: continue
            c3=last(unc2)
            if c3: cands.append(((score_of(t_of([c1,c2b,c3]))+0.3,c1[4]!=0,2,c1),[c1,c2b,c3]))
    _,chain=min(cands)
    c=chain[0]
    rat=t_of(chain)
    ok+=sum(x<=1.10 for x in rat); tot+=len(rat); worst=max(worst,max(rat))
    rules.append((g,c,rat))
    for j,a in enumerate(chain[1:]): rules.append((g,a,j+1))
    print(BUCKETS[g[0]],NCLS[g[1]],' / '.join(map(str,chain)),' '.join('%.2f'%x for x in rat))
print(ok,tot,'%.3f'%(ok/tot),'%.3f'%worst)
# usage: python3 tools/fit_heuristic.py DUMP.tsv  (a `w4a16 tune --dump` file from the device)
FAM={'gemv':'W4A16_FAMILY_GEMV','sm80':'W4A16_FAMILY_SM80','sm90':'W4A16_FAMILY_SM90'}
for g,c,rat in rules:
    (m0,m1),(n0,n1,k0,k1)=BUCKETS[g[0]],NCLS[g[1]]
    kname='-k%d-%s'%(k0,k1 or 'up') if (k0 or k1) else ''
    if isinstance(rat,int): kname+='-alt' if rat==1 else '-alt%d'%rat
    print('    {"h100-m%d-%s-n%d-%s%s", %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %s, %d, %d, %d, %d, %d, %d, 0, 0.0f, %d, %d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},'%(m0,m1 or 'up',n0,n1 or 'up',kname,m0,m1,n0,n1,k0,k1,SM,SM,CC,CC,FAM[c[0]],c[2],c[2],c[1],c[1],c[4],c[4],c[3],c[3]))
