#!/bin/bash
# twenty-third session call 3: is the K-split 64x16x256 bound by its producer's copies a stage? The
# scale rows by one copy of the 2-D map (W4A16_SM90_S2D=1: three copies a stage instead of four) on
# both tiles, three rounds (variant = tile * 2 + s2d)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
KS=('*bf16_u4_fgs_128x16x256_1*' '*bf16_u4_fgs_64x16x256_1*')
P=("16 10240x8192" "16 57344x8192" "16 8192x8192")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    for j in 0 1 2 3; do
      v=$(( (j + r + i) % 4 )); KK=${KS[$((v / 2))]}; S=4; [ $((v % 2)) = 1 ] && S=1
      set -f; W4A16_SM90_S2D=$S timeout 60 ./w4a16_bench --m $1 --nk $2 --kernels "$KK" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
