#!/bin/bash
# twenty-second session call 3: diagnostic (wrong sums) - 128x16x256's k-block weight copy as one
# contiguous 16 KB run (W4A16_SM90_DIAG_WCONTIG=1, b1) against the 8 runs of 2 KB of the packed
# layout (b0, same source without the switch); one bench process per problem and variant, 5 rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
E='*128x16x256*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$E 16 57344x8192" "$E 16 8192x28672" "$E 16 8192x8192")
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      ./b$v --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 300 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
