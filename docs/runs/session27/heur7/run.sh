#!/bin/bash
# twenty-seventh session: the final rule table live (w4a16 tune --compare-heuristic, profiles in
# rounds, the eight layers at M = 1, 2, 4, ..., 4096): bf16 per-column, fp16 scale-only, bf16 zero
# points; then test_select and test_cli on the device
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for c in "bf16 pc" "f16 fgs" "bf16 fgsz"; do
  set -- $c
  timeout 170 ./w4a16 tune --compare-heuristic --dtype $1 --mode $2 --no-store --cache /tmp/c.json \
    --dump $L/heur_$1_$2.tsv > $L/heur_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_$1_$2.md)"
done
for t in test_select test_cli; do timeout 100 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E '^\[  (PASSED|FAILED) ' $L/$t.log | tr '\n' ' ')"; done
