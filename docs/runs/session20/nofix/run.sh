#!/bin/bash
# twentieth session call 2: stream-K without the partials (diagnostic W4A16_SM90_SK_NOFIX=1, b1; wrong sums)
# against HEAD (b0), one bench process per problem and variant,
# variants in rotating order
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x128x128_1x1x1*'; C='*bf16_u4_fgs_128x64x256_1x1x1*'
D='*bf16_u4_fgs_128x256x64_2x1x1*'
P=("$A 1024 6144x4096" "$D 1024 6144x4096" "$A 1024 10240x8192" "$A 256 57344x8192" "$A 256 28672x4096"
   "$A 512 28672x4096" "$B 512 6144x4096" "$B 512 10240x8192" "$C 64 28672x4096" "$C 64 57344x8192"
   "$A 256 10240x8192" "$C 64 10240x8192" "$B 256 6144x4096")
for r in 1 2 3 4 5 6; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      ./b$v --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 480 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
