#!/bin/bash
# twenty-fourth session call 4: 128x128x128 (1x1x1, 2x1x1) against 128x256x64 at M = 256 on the 70B
# layers, one bench process per problem and kernel with cuBLAS bf16, three rounds (pairs.py)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'; E='*bf16_u4_fgs_128x128x128_2x1x1*'
P=("$A 256 8192x8192" "$D 256 8192x8192" "$E 256 8192x8192" "$B 256 10240x8192" "$D 256 10240x8192" "$E 256 10240x8192"
   "$A 256 8192x28672" "$D 256 8192x28672" "$D 256 57344x8192" "$A 256 57344x8192")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$(( (i + 3 * r) % ${#P[@]} ))]}; set +f
    timeout 60 ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
