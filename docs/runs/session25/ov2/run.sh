#!/bin/bash
# twenty-fifth session call 3: the overlap mainloop in S wgmma groups a k-block, the previous block waited
# for and its stage released after group R (b_SR; W4A16_SM90_OV_SPLIT=S, W4A16_SM90_OV_REL=R; b_10 is
# HEAD). Subset builds (128x256x64, 128x128x128 bf16 fgs 1x1x1); one bench process per problem x
# kernel x variant, rotating, three rounds.
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
P=("128x128x128 256 8192x8192" "128x128x128 256 4096x4096" "128x128x128 256 6144x4096" "128x128x128 512 4096x4096"
   "128x256x64 256 8192x8192" "128x256x64 1024 4096x4096" "128x256x64 1024 6144x4096")
V=(10 21 20 40 41)
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    for j in 0 1 2 3 4; do
      v=$(( (j + r + i) % 5 ))
      set -f
      timeout 60 ./b_${V[$v]} --m $2 --nk $3 --kernels "*bf16_u4_fgs_$1_1x1x1*" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
