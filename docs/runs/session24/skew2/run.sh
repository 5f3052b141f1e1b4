#!/bin/bash
# twenty-fourth session call 8: stream-K's shrinking parts on the tiles of >= 128 tokens
# (W4A16_SM90_SKEW_ALL=1 against HEAD, the same subset builds as call 7): 128x128x128, 128x256x64 1x1x1
# and 2x1x1 in one process per problem and variant, the eight layers at M = 128..768, two rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
K='*bf16_u4_fgs_128x256x64_1x1x1*,*bf16_u4_fgs_128x256x64_2x1x1*,*bf16_u4_fgs_128x128x128_1x1x1*'
LAY=(6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672)
for r in 1 2; do
  for m in 128 192 256 384 512 768; do
    for i in "${!LAY[@]}"; do
      for j in 0 1; do
        v=$(( (j + r + i) % 2 ))
        timeout 60 ./bench_s$v --m $m --nk ${LAY[$i]} --kernels "$K" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
        tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
      done
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 400 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
