#!/bin/bash
# nineteenth session call 2: stream-K with data-parallel tiles first, W4A16_SM90_SK_DP = 0..3, one
# bench process per problem and variant, the variants in rotating order, six rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
A='*bf16_u4_fgs_128x256x64*'; B='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$A 256 28672x4096" "$A 256 57344x8192" "$A 512 28672x4096" "$A 512 10240x8192" "$A 1024 6144x4096"
   "$A 1024 10240x8192" "$B 256 10240x8192" "$B 256 28672x4096" "$B 512 6144x4096" "$B 512 10240x8192"
   "$B 256 8192x8192")
echo "variant,round,$(head -1 < /dev/null)" > /dev/null
for r in 1 2 3 4 5 6; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    for j in 0 1 2 3; do
      v=$(( (j + r + i) % 4 ))
      W4A16_SM90_SK_DP=$v ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 500 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
