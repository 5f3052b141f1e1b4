#!/bin/bash
# twentieth session call 9: stream-K over all tiles where W = 1 would leave pieces of under 32 k-blocks
# (kSkRing tiles; b1) against the data-parallel tiles first (b0, both with the ring); fitting problem
# 6144x4096 M = 1024 and held-out shapes of 192 tiles; one bench process per problem and variant
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
timeout 90 ./test_gpu_gemv > $L/test_gpu_gemv.log 2>&1; echo "test_gpu_gemv rc=$? $(grep -c 'OK \]' $L/test_gpu_gemv.log) ok"
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; D='*bf16_u4_fgs_128x256x64_2x1x1*'
P=("$A 1024 6144x4096" "$D 1024 6144x4096" "$A 1536 4096x4096" "$D 1536 4096x4096" "$A 1000 6144x4096"
   "$D 1000 6144x4096" "$A 1400 4096x4096" "$A 768 8192x8192")
for r in 1 2 3 4 5 6; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      ./b$v --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 400 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
