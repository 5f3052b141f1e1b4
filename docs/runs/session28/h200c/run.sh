#!/bin/bash
# twenty-eighth session: the final table (e506828: eight H200 decode rows) live on an H200, a third profile,
# held out from both fits: test_select, then w4a16 tune --compare-heuristic (profiles in rounds) on the
# eight layers at M = 1..8, 10, 12, 14, 16 (M = 7, 10, 14 in no profile before): bf16 / fp16 scale-only,
# bf16 zero points, bf16 per-column, groups of 128
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader | tee $L/gpu.txt
./w4a16 info > $L/info.txt 2>&1; grep GPU: $L/info.txt
for t in test_select; do timeout 60 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E '^\[  (PASSED|FAILED) ' $L/$t.log | tr '\n' ' ')"; done
SECONDS=0
for c in "bf16 fgs" "f16 fgs" "bf16 fgsz" "bf16 pc"; do
  set -- $c
  timeout 110 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m 1,2,3,4,5,6,7,8,10,12,14,16 --dtype $1 --mode $2 \
    --no-store --cache /tmp/c.json --dump $L/heur_$1_$2.tsv > $L/heur_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_$1_$2.md)"
done
