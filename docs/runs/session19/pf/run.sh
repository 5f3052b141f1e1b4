#!/bin/bash
# nineteenth session call 5: the launch knobs on the last issue-3 bars at M <= 64 (10240x8192 M <= 16,
# 8192x8192 / 10240x8192 M = 64): prefetch depth before griddepcontrol.wait, scale chunks under
# stream-K; one bench process per problem and variant, variants rotating, four rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
V=("X=0" "W4A16_SM90_PREFETCH=8" "W4A16_SM90_PREFETCH=-2" "W4A16_SM90_PREFETCH=2" "W4A16_SM90_SCHUNK=2" "W4A16_SM90_PREFETCH=-8")
P=("*bf16_u4_fgs_128x16x256_1x1x1* 16 10240x8192" "*bf16_u4_fgs_128x16x256_1x1x1* 1 10240x8192"
   "*bf16_u4_fgs_128x16x128_1x1x1* 16 10240x8192" "*bf16_u4_fgs_128x16x256_1x1x1* 16 8192x8192"
   "*bf16_u4_fgs_128x64x256_1x1x1* 64 8192x8192" "*bf16_u4_fgs_128x64x256_1x1x1* 64 10240x8192")
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in "${!V[@]}"; do
      v=$(( (j + r + i) % ${#V[@]} ))
      env ${V[$v]} ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 480 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
