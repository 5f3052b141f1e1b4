#!/bin/bash
# twentieth session call 12: issue 3's open M >= 256 bars, one bench process per problem and kernel
# (that kernel and cuBLAS in it: the ratio within a process), problems in rotating order, four rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
A='*sm90_bf16_u4_fgs_128x256x64_1x1x1*'; D='*sm90_bf16_u4_fgs_128x256x64_2x1x1*'
P=("$A 1024 6144x4096" "$D 1024 6144x4096" "$A 1024 4096x4096" "$A 1024 4096x14336" "$D 1024 4096x14336"
   "$A 1024 57344x8192" "$A 256 8192x8192" "$A 256 10240x8192" "$D 256 10240x8192" "$A 1024 8192x8192")
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$(( (i + 3 * r) % ${#P[@]} ))]}; set +f
    ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 450 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
