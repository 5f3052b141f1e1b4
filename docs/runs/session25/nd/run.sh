#!/bin/bash
# twenty-fifth session call 12: non-default sm90 tiles against the default ones where a bar is at
# its edge or short: M = 64 on the 70B layers (128x64x256 2x1x1, 256x64x128 2x1x1, 256x64x128 with
# four consumer warpgroups against the default 128x64x256 1x1x1) and 6144x4096 M = 1024 (128x256x64
# 1x2x1 and 2x2x1 against the default 1x1x1 and 2x1x1). b_def: default build (HEAD), b_x: subset build
# of the five. One process per problem and kernel, no cuBLAS, three rounds (all.csv, variant = 0)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
P=()
for nk in 10240x8192 8192x8192 57344x8192 8192x28672; do
  P+=("b_def 64 $nk 128x64x256_1x1x1" "b_x 64 $nk 128x64x256_2x1x1" "b_x 64 $nk 256x64x128_2x1x1" "b_x 64 $nk 256x64x128_1x1x1_cooperative_wg4")
done
P+=("b_def 1024 6144x4096 128x256x64_1x1x1" "b_def 1024 6144x4096 128x256x64_2x1x1" "b_x 1024 6144x4096 128x256x64_1x2x1" "b_x 1024 6144x4096 128x256x64_2x2x1")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$(( (i + 7 * r) % ${#P[@]} ))]}
    set -f; timeout 60 ./$1 --m $2 --nk $3 --kernels "*bf16_u4_fgs_$4*" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
