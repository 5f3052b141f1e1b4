#!/bin/bash
# twenty-third session call 14: issue 3's M = 4096 bar on the eight layers (default build of 370ba34):
# 128x256x64 1x1x1 and 2x1x1, one bench process per problem and kernel with cuBLAS bf16, one round
# (median and minimum of the replays: the card reaches its power limit partway through)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for nk in 6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672; do
  for k in '*bf16_u4_fgs_128x256x64_1x1x1*' '*bf16_u4_fgs_128x256x64_2x1x1*'; do
    set -f; timeout 100 ./w4a16_bench --m 4096 --nk $nk --kernels "$k" --iterations 20 --csv -q -o /tmp/o.csv; set +f
    tail -n +2 /tmp/o.csv | sed "s/^/0,1,/" >> $L/all.csv
  done
  echo "$nk ${SECONDS}s"
  [ $SECONDS -gt 300 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a $L/gpu.txt
