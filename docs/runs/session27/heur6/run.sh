#!/bin/bash
# twenty-seventh session: the decode rows (M = 2..4 on N = 8449..16384, zero points at M = 1 on N > 16384)
# live: w4a16 tune --compare-heuristic on the eight layers at M = 1..4 and 8, bf16 / f16 scale-only,
# bf16 / f16 zero points, bf16 per-column (profiles in rounds)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for c in "bf16 fgs" "f16 fgs" "bf16 fgsz" "f16 fgsz" "bf16 pc"; do
  set -- $c
  timeout 100 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m 1,2,3,4,8 --dtype $1 --mode $2 --no-store \
    --cache /tmp/c.json --dump $L/heur_$1_$2.tsv > $L/heur_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_$1_$2.md)"
done
