import struct,sys,collections
# per-launch timeline from a W4A16_GEMV_TMA_TRACE dump: records (t0 entry, t1 producer past
# griddepcontrol.wait, t2 consumer warp 0's first full stage, t3 its math done, t4 its store done,
# smid | block << 32, w pointer, units)
CAP=1<<16
d=open(sys.argv[1],'rb').read()
n=struct.unpack('<Q',d[:8])[0]
recs=[struct.unpack('<8Q',d[8+64*i:8+64*(i+1)]) for i in range(min(n,CAP))]
recs=[r for r in recs if r[0]]
recs.sort(key=lambda r:r[0])
# launches: runs of one w pointer in entry order
L=[]
for r in recs:
    if L and L[-1][0][6]==r[6] and r[0]-L[-1][-1][0] < 20000: L[-1].append(r)
    else: L.append([r])
L=L[-int(sys.argv[2]) if len(sys.argv)>2 else -12:]
base=L[0][0][0]
print('launch ctas | entry first..last | wait ret first..last | A/stage0 first..last | math end first..last | exit first..last  (µs from first entry)')
pe=None
for l in L:
    f=lambda i:(min(r[i] for r in l)-base)/1e3
    g=lambda i:(max(r[i] for r in l)-base)/1e3
    late=sorted(r[0] for r in l)
    per_sm=collections.Counter(r[5]&0xffffffff for r in l)
    ex=g(4)
    print('%4d %5.2f..%5.2f | %5.2f..%5.2f | %5.2f..%5.2f | %5.2f..%5.2f | %5.2f..%5.2f  period %s  sm-max %d'%(
        len(l),f(0),g(0),f(1),g(1),f(2),g(2),f(3),g(3),f(4),ex,'%.2f'%(ex-pe) if pe is not None else '-',max(per_sm.values())))
    pe=ex
if len(sys.argv)>3:
    l=L[int(sys.argv[3])]
    W=min(r[1] for r in l)
    per_sm=collections.Counter(r[5]&0xffffffff for r in l)
    rows=sorted(l,key=lambda r:r[3])
    print('block sm n_sm | entry | stage0 | math end | exit   (µs from the launch\'s first wait return)')
    for r in rows[::int(sys.argv[4]) if len(sys.argv)>4 else 8]:
        sm=r[5]&0xffffffff
        print('%4d %3d %d | %6.2f | %5.2f | %5.2f | %5.2f'%(r[5]>>32,sm,per_sm[sm],(r[0]-W)/1e3,(r[2]-W)/1e3,(r[3]-W)/1e3,(r[4]-W)/1e3))
