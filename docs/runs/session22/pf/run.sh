#!/bin/bash
# twenty-second session call 15: the prefetch depth before griddepcontrol.wait (W4A16_SM90_PREFETCH)
# with the shrinking parts, default build: v0 default (-4: k-blocks / 4), v1 -3, v2 -2, v3 8, v4 4
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
E='*bf16_u4_fgs_128x16x256*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$E 16 57344x8192")
V=(-4 -3 -2 8 4)
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2 3 4; do
      v=$(( (j + r + i) % 5 ))
      W4A16_SM90_PREFETCH=${V[$v]} ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
