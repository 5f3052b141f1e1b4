#!/bin/bash
# twenty-second session call 14: the shrinking parts with an amplitude of two k-blocks (scratch
# W4A16_SCRATCH_SKD=2, W4A16_SCRATCH_SKB=B: the first I%G/2 + B parts two longer, the last B two
# shorter) against the landed one (v0: one k-block, B = 40 on 10240x8192); v1 B = 20, v2 B = 40, v3 B = 53
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
W4A16_SCRATCH_SKD=2 W4A16_SCRATCH_SKB=9 timeout 150 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "tg rc $?" | tee -a $L/tg.txt; tail -2 $L/tg.txt
SECONDS=0
E='*128x16x256*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$E 8 10240x8192")
B=(0 20 40 53)
for r in 1 2 3 4 5 6; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2 3; do
      v=$(( (j + r + i) % 4 ))
      if [ $v = 0 ]; then e=""; else e="W4A16_SCRATCH_SKD=2 W4A16_SCRATCH_SKB=${B[$v]}"; fi
      env $e ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
