#!/bin/bash
# twenty-sixth session call 10 (default build of 042b016): the "-g64" rows live on fresh profiles in
# rounds (seed 17): bf16 group 64, f16 group 32,
# the eight layers x M = 1, 2, 4, ..., 4096 (--dump)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for c in "bf16 fgs 64" "f16 fgs 32"; do
  set -- $c
  timeout 170 ./w4a16 tune --compare-heuristic --dtype $1 --mode $2 --group $3 --no-store --seed 17 --dump $L/heur_$1_$2_$3.tsv > $L/heur_$1_$2_$3.md 2>&1
  echo "heuristic $c rc $? $(grep 'within 10%' $L/heur_$1_$2_$3.md) ${SECONDS}s"
done
