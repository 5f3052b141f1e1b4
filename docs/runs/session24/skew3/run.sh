#!/bin/bash
# twenty-fourth session call 9: stream-K's shrinking parts on the tiles of >= 128 tokens (the builds of
# call 7), one process per problem, kernel and variant, rotating, three rounds (v0 HEAD, v1 skew)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$D 256 6144x4096" "$D 384 4096x4096" "$D 192 6144x4096" "$D 128 6144x4096" "$D 128 4096x14336" "$A 512 8192x8192"
   "$A 384 57344x8192" "$A 512 57344x8192" "$A 384 10240x8192" "$A 768 8192x8192" "$A 256 28672x4096" "$A 384 28672x4096"
   "$B 512 4096x14336" "$A 192 10240x8192" "$A 256 8192x28672" "$B 768 6144x4096")
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
  [ $SECONDS -gt 330 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
