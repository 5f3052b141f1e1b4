import csv,glob,collections,sys
d=collections.defaultdict(list)
pre=sys.argv[1] if len(sys.argv)>1 else ''
for f in sorted(glob.glob('v*_r*.csv')):
    v=f.split('_')[0]
    for r in csv.DictReader(l for l in open(f) if not l.startswith('#')):
        if r['status']!='W4A16_STATUS_OK': continue
        d[(int(r['n']),int(r['k']),int(r['m']),r['kernel'].replace('w4a16_sm90_bf16_u4_fgs_','').replace('w4a16_gemv_bf16_u4_fgs_',''),v)].append(float(r['median_us']))
vs=sorted(set(k[4] for k in d))
for p in sorted(set(k[:3] for k in d)):
    for kn in sorted(set(k[3] for k in d if k[:3]==p)):
        print(p, '%-30s'%kn, ' '.join('%s=%s'%(v, '/'.join('%.2f'%x for x in d.get(p+(kn,v),[]))) for v in vs))
