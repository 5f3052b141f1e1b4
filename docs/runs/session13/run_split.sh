#!/bin/bash
# thirteenth session call 17: split-K of 128x16x128 / 256x16x128 on 10240x8192 at M <= 16 (W4A16_SM90_SPLIT=s)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/def; xz -dkf w4a16_bench.xz; chmod +x w4a16_bench
for r in 1 2; do for s in 0 2 3 4 5 6 8; do
  if [ $s = 0 ]; then unset W4A16_SM90_SPLIT; else export W4A16_SM90_SPLIT=$s; fi
  ./w4a16_bench --m 1,8,16 --nk 10240x8192,8192x8192 --kernels '*sm90_bf16_u4_fgs_128x16x128_1x1x1*,*sm90_bf16_u4_fgs_256x16x128_1x1x1*' --no-cublas --csv -q -o $L/s${s}_r$r.csv
done; done
python3 - <<'P'
import csv,glob,collections,os
d=collections.defaultdict(dict)
for f in glob.glob(os.environ['OUT']+'/logs/s*_r*.csv'):
    s=os.path.basename(f).split('_')[0]
    for r in csv.DictReader(open(f)):
        if r['status']!='W4A16_STATUS_OK': continue
        k=(r['n'],int(r['m']),r['kernel'][23:40]); d[k][s]=min(d[k].get(s,1e9),float(r['median_us']))
for k in sorted(d): print(k, ' '.join('%s:%.2f'%(s,d[k][s]) for s in sorted(d[k])))
P
