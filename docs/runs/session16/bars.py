import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
best={};cub={}
for r in rows:
    key=(int(r['n']),int(r['k']),int(r['m']))
    if 'cublas' in r['kernel'].lower(): cub[key]=float(r['median_us']); continue
    if r['status']!='W4A16_STATUS_OK' or 'sm90' not in r['kernel']: continue
    t=float(r['median_us'])
    if key not in best or t<best[key][0]: best[key]=(t,r['kernel'][11:].replace('_1x1x1_cooperative',''),float(r['floor_fraction']))
for key in sorted(best):
    t,k,f=best[key]; c=cub.get(key)
    print(f"{key[0]}x{key[1]} M={key[2]}: {t:.2f} us {k} floor {f:.3f} cuBLAS {c} x{c/t:.3f}" if c else f"{key} {t} {k} {f}")
