#!/bin/bash
# twenty-fourth session call 15: stream-K (now with shrinking parts for the tiles of >= 128 tokens)
# where the K pair runs (W4A16_SM90_KPAIR=0) against the K pair, default build of d6b35cd, one process
# per problem and variant, rotating, three rounds (v0 K pair, v1 stream-K)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$A 256 8192x8192" "$A 256 8192x28672" "$D 256 4096x4096" "$D 128 8192x8192" "$A 512 4096x4096" "$D 128 6144x4096")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      set -f; W4A16_SM90_KPAIR=$((1 - v)) timeout 60 ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
