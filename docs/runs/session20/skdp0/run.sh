#!/bin/bash
# twentieth session call 8: all tiles by stream-K (W4A16_SM90_SK_DP=0) against data-parallel tiles
# first (=1), with the last partial through the ring (b1) and without (b0): v0 = b0 dp, v1 = b1 dp,
# v2 = b1 all stream-K, v3 = b0 all stream-K; one bench process per problem and variant, rotating
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; D='*bf16_u4_fgs_128x256x64_2x1x1*'
P=("$A 1024 6144x4096" "$D 1024 6144x4096" "$A 1024 10240x8192" "$A 256 57344x8192" "$A 256 28672x4096"
   "$A 512 28672x4096" "$D 1024 10240x8192" "$A 768 8192x28672" "$A 768 8192x8192")
B=(b0 b1 b1 b0); E=(1 1 0 0)
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2 3; do
      v=$(( (j + r + i) % 4 ))
      W4A16_SM90_SK_DP=${E[$v]} ./${B[$v]} --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 400 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
