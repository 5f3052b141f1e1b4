#!/bin/bash
# twenty-seventh session: the dtype-keyed decode rows live (w4a16 tune --compare-heuristic, profiles in
# rounds, the eight layers at M = 2, 3, 4, 6, 8): fp16 and bf16 scale-only
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for c in "f16 fgs" "bf16 fgs"; do
  set -- $c
  timeout 100 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m 2,3,4,6,8 --dtype $1 --mode $2 --no-store \
    --cache /tmp/c.json --dump $L/heur_$1_$2.tsv > $L/heur_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_$1_$2.md)"
done
timeout 100 ./test_select > $L/test_select.log 2>&1; echo "test_select rc $? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_select.log | tr '\n' ' ')"
