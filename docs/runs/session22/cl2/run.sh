#!/bin/bash
# twenty-second session call 6: what the cluster launch alone costs stream-K (scratch
# W4A16_SCRATCH_CL2: clusters of two, no pairs; v2) against plain stream-K (v0, W4A16_SM90_SKPAIR=0)
# and the pairs (v1)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
E='*128x16x256*'; G='*128x64x256*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$G 64 10240x8192" "$E 16 57344x8192")
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2; do
      v=$(( (j + r + i) % 3 ))
      if [ $v = 2 ]; then e="W4A16_SM90_SKPAIR=0 W4A16_SCRATCH_CL2=1"; else e="W4A16_SM90_SKPAIR=$v"; fi
      env $e ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
