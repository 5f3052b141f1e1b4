#!/bin/bash
# twenty-fourth session call 7: stream-K's shrinking parts (the twenty-second session's skew, built
# for the tiles of <= 16 tokens) on every tile where the launch has no data-parallel tiles
# (W4A16_SM90_SKEW_ALL=1, skew_all.diff) against HEAD; subset builds, one process per problem and
# variant, rotating, three rounds (v0 HEAD, v1 skew on all tiles)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'; E='*bf16_u4_fgs_128x64x256_1x1x1*'
P=("$A 256 10240x8192" "$B 256 10240x8192" "$D 128 10240x8192" "$D 256 6144x4096" "$A 256 4096x14336" "$E 64 10240x8192" "$E 32 10240x8192")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      set -f; timeout 60 ./bench_s$v --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
