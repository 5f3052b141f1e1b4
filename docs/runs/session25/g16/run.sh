#!/bin/bash
# twenty-fifth session call 10: issue 4's "M = 16 within 1.5x of M = 1" on 6144x4096 (1.51-1.52x in
# call 9): every valid tile_m 16 TMA GEMV (bf16 fgs, 22 kernels: b_g16, a subset build) on the eight
# layers at M = 16, one process per layer timing all of them, three rounds (sel.csv); then 6144x4096
# at M = 1 (default build's best, n32_m8_k1024_s3) and M = 16 (default n32_m16_k1024_s2 and the
# subset's three fastest there) each in its own process with cuBLAS, three rounds (all.csv)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for r in 1 2 3; do
  for nk in 6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672; do
    set -f; timeout 120 ./b_g16 --m 16 --nk $nk --kernels '*gemv*' --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/sel.csv
  done
done
head -1 /tmp/o.csv > $L/header.csv
echo "selection ${SECONDS}s"
top=$(python3 - $L/sel.csv $L/header.csv <<'PY'
import csv, sys, collections, statistics as st
h = open(sys.argv[2]).read().strip().split(',')
t = collections.defaultdict(list)
for r in csv.reader(open(sys.argv[1])):
    x = dict(zip(h, r[2:]))
    if x['n'] == '6144' and x['status'] == 'W4A16_STATUS_OK': t[x['kernel']].append(float(x['median_us']))
print(','.join(k for k, v in sorted(t.items(), key=lambda kv: st.median(kv[1]))[:3]))
PY
)
echo "top on 6144x4096 M = 16: $top"
SECONDS=0
for r in 1 2 3; do
  timeout 60 ./w4a16_bench --m 1 --nk 6144x4096 --kernels w4a16_gemv_bf16_u4_fgs_n32_m8_k1024_s3_tma --iterations 20 --csv -q -o /tmp/o.csv
  tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  timeout 60 ./w4a16_bench --m 16 --nk 6144x4096 --kernels w4a16_gemv_bf16_u4_fgs_n32_m16_k1024_s2_tma --iterations 20 --csv -q -o /tmp/o.csv
  tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  for k in ${top//,/ }; do
    timeout 60 ./b_g16 --m 16 --nk 6144x4096 --kernels $k --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
done
echo "pairs ${SECONDS}s"
