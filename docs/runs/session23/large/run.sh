#!/bin/bash
# twenty-third session call 6: M = 1024 on the 8B layers' open bars (default build of HEAD e1f0d2b):
# 128x256x64 1x1x1 and 2x1x1 on 4096x4096 and 6144x4096 with cuBLAS in each process, and what one
# wave of DP tiles plus K pairs for 6144x4096's remainder would take: 4096x4096 M = 1024 (128 tiles,
# one wave) next to 3840x4096 M = 512 (60 tiles as K pairs on 120 CTAs); four rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'
P=("$A 1024 4096x4096" "$B 1024 4096x4096" "$A 1024 6144x4096" "$B 1024 6144x4096" "$A 512 3840x4096" "$A 512 3968x4096")
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$(( (i + r) % ${#P[@]} ))]}; set +f
    timeout 60 ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
