#!/bin/bash
# twenty-second session call 1: 128x16x256 at half an SM (4 stages, consumers at 96 registers: two
# CTAs an SM fit) with a grid of two CTAs an SM (b1) or one (b2: the next launch's CTA resident
# beside), against the default build (b0: 8 stages, one CTA an SM); the subset's GPU tests on b1/b2
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
timeout 150 ./tk2 > $L/tk2.txt 2>&1; echo "tk2 rc $?" | tee -a $L/tk2.txt; tail -3 $L/tk2.txt
timeout 150 ./tk1 > $L/tk1.txt 2>&1; echo "tk1 rc $?" | tee -a $L/tk1.txt; tail -3 $L/tk1.txt
W4A16_TEST_FILTER='*128x16x256*' timeout 200 ./tg2 > $L/tg2.txt 2>&1; echo "tg2 rc $?" | tee -a $L/tg2.txt; tail -3 $L/tg2.txt
SECONDS=0
E='*128x16x256*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$E 8 10240x8192" "$E 16 57344x8192" "$E 16 8192x28672" "$E 16 4096x14336" "$E 16 28672x4096" "$E 16 8192x8192")
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1 2; do
      v=$(( (j + r + i) % 3 ))
      ./b$v --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 360 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
