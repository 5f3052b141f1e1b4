#!/bin/bash
# twentieth session call 11: issue 3's M = 256 and M = 1024 bars, one bench process per problem
# (the sm90 128-row bf16 tiles and cuBLAS in it), problems in rotating order, three rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
P=()
for m in 256 1024; do for nk in 6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672; do P+=("$m $nk"); done; done
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$(( (i + 5 * r) % ${#P[@]} ))]}
    ./w4a16_bench --m $1 --nk $2 --kernels '*sm90_bf16_u4_fgs_128x*' --iterations 20 --top 3 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 450 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
