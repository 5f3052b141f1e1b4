#!/bin/bash
# twentieth session call 15: issue 3's M = 64 and M = 16 bars on the 70B layers, one bench process per problem and kernel
# (that kernel and cuBLAS in it: the ratio within a process), problems in rotating order, four rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*sm90_bf16_u4_fgs_128x64x256_1x1x1*'; B='*sm90_bf16_u4_fgs_128x16x256_1x1x1*'
P=("$A 64 8192x8192" "$A 64 10240x8192" "$A 64 57344x8192" "$A 64 8192x28672"
   "$B 16 8192x8192" "$B 16 10240x8192" "$B 16 57344x8192" "$B 16 8192x28672")
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$(( (i + 3 * r) % ${#P[@]} ))]}; set +f
    ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 450 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
