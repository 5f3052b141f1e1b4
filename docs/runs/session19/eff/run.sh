#!/bin/bash
# nineteenth session call 6: stream-K (with its data-parallel tiles first) also where the runtime's
# rule leaves tile by tile (W4A16_SM90_STREAMK=1: wherever a wave is part-empty), M = 512..2048; and the
# heuristic's choice against the best kernel at M = 256..1024
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
SECONDS=0
V=("X=0" "W4A16_SM90_STREAMK=1")
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$B 1024 6144x4096" "$A 2048 6144x4096" "$A 1024 8192x8192" "$B 1024 8192x8192" "$A 2048 10240x8192"
   "$B 512 8192x8192" "$A 1024 4096x14336" "$A 1024 8192x28672" "$B 1024 10240x8192")
for r in 1 2 3 4; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in "${!V[@]}"; do
      v=$(( (j + r + i) % ${#V[@]} ))
      env ${V[$v]} ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 300 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
timeout 200 ./w4a16 tune --compare-heuristic --m 256,512,1024 --model llama3-8b,llama3-70b --no-store --dump $L/heur_big.tsv > $L/heur_big.txt 2>&1; echo "heur rc $? ${SECONDS}s"
