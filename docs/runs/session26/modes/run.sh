#!/bin/bash
# twenty-sixth session call 9 (default build of 2580a3a): the heuristic against fresh profiles in
# rounds for the combinations not yet checked this session: bf16 group 64, f16 group 32, f16
# per-column, the eight layers x M = 1, 2, 4, ..., 4096 (--dump)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for c in "bf16 fgs 64" "f16 fgs 32" "f16 pc 128"; do
  set -- $c
  timeout 170 ./w4a16 tune --compare-heuristic --dtype $1 --mode $2 --group $3 --no-store --seed 16 --dump $L/heur_$1_$2_$3.tsv > $L/heur_$1_$2_$3.md 2>&1
  echo "heuristic $c rc $? $(grep 'within 10%' $L/heur_$1_$2_$3.md) ${SECONDS}s"
done
