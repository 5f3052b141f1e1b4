#!/bin/bash
# twenty-fourth session call 11: stream-K over all tiles (W4A16_SM90_SK_DP=0, no data-parallel tiles
# first), now with the shrinking parts on the tiles of >= 128 tokens, against the default rule, where
# the default puts a data-parallel wave first; default build of e552422, one process per problem and
# variant, rotating, three rounds (v0 default, v1 SK_DP=0)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'
P=("$B 1024 6144x4096" "$A 1024 6144x4096" "$A 256 28672x4096" "$A 1024 4096x14336" "$A 256 57344x8192" "$B 512 10240x8192" "$A 768 6144x4096")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      set -f; W4A16_SM90_SK_DP=$((1 - v)) timeout 60 ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
