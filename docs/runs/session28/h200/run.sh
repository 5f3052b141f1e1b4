#!/bin/bash
# twenty-eighth session: the rule table (tuned on H100 profiles) live on an H200 (w4a16 tune
# --compare-heuristic, profiles in rounds, the eight layers at M = 1, 2, 4, ..., 4096):
# bf16 scale-only, bf16 zero points, fp16 scale-only, bf16 per-column; then test_select
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for c in "bf16 fgs" "bf16 fgsz" "f16 fgs" "bf16 pc"; do
  set -- $c
  timeout 140 ./w4a16 tune --compare-heuristic --dtype $1 --mode $2 --no-store --cache /tmp/c.json \
    --dump $L/heur_$1_$2.tsv > $L/heur_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_$1_$2.md)"
done
for t in test_select; do timeout 60 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E '^\[  (PASSED|FAILED) ' $L/$t.log | tr '\n' ' ')"; done
