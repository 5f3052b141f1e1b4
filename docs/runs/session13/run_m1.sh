#!/bin/bash
# thirteenth session call 15: is M = 1 slower than M = 8 on 8192x8192 with 128x16x256 (order effects?)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/def; xz -dkf w4a16_bench.xz; chmod +x w4a16_bench
for r in 1 2 3; do
  ./w4a16_bench --m 1,2,4,8,16 --nk 8192x8192,10240x8192 --kernels '*sm90_bf16_u4_fgs_128x16x256_1x1x1*,*sm90_bf16_u4_fgs_128x16x128_1x1x1*' --no-cublas --csv -q -o $L/fwd_r$r.csv
  ./w4a16_bench --m 16,8,4,2,1 --nk 10240x8192,8192x8192 --kernels '*sm90_bf16_u4_fgs_128x16x256_1x1x1*,*sm90_bf16_u4_fgs_128x16x128_1x1x1*' --no-cublas --csv -q -o $L/rev_r$r.csv
done
for m in 1 8; do W4A16_LOG_LEVEL=debug ./w4a16_bench --m $m --nk 8192x8192 --kernels '*sm90_bf16_u4_fgs_128x16x256_1x1x1*' --no-cublas -q > $L/one_m$m.txt 2>&1; done
python3 - <<'P'
import csv,glob,collections
for tag in ('fwd','rev'):
    d=collections.defaultdict(list)
    for f in sorted(glob.glob('%s/logs/%s_r*.csv'%(__import__('os').environ['OUT'],tag))):
        for r in csv.DictReader(open(f)):
            d[(r['n'],r['m'],r['kernel'][23:40])].append(float(r['median_us']))
    for k in sorted(d, key=lambda k:(k[0],k[2],int(k[1]))): print(tag,k,d[k])
P
