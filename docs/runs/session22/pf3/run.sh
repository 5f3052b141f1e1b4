#!/bin/bash
# twenty-second session call 19: around the landed defaults (v0: k-blocks / 3 prefetched, shrinking
# parts): v1 W4A16_SM90_PREFETCH=5, v2 =6, v3 W4A16_SM90_SKEW=0; five rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
E='*bf16_u4_fgs_128x16x256*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$E 16 28672x4096")
EV=("" "W4A16_SM90_PREFETCH=5" "W4A16_SM90_PREFETCH=6" "W4A16_SM90_SKEW=0")
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2 3; do
      v=$(( (j + r + i) % 4 ))
      env ${EV[$v]} ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
