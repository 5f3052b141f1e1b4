#!/bin/bash
# twenty-fourth session call 3: 128x128x128 and 128x128x64 with the activation tile multicast to two
# CTAs along N (2x1x1) against the default 128x128x128 / 128x256x64 tiles at M = 128..1024 (subset
# build; one bench process per problem with the five kernels and cuBLAS bf16, two rounds)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
P=("256 8192x8192" "256 10240x8192" "256 4096x4096" "256 6144x4096" "1024 6144x4096" "1024 4096x4096" "128 8192x8192" "256 8192x28672" "512 8192x8192" "1024 10240x8192")
for r in 1 2; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    timeout 90 ./w4a16_bench --m $1 --nk $2 --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
