#!/bin/bash
# twenty-eighth session, on an H100: a decode profile of the final table (e506828) for the H100 rows,
# w4a16 tune --compare-heuristic (profiles in rounds) on the eight layers at M = 1..16: bf16 / fp16
# scale-only, bf16 zero points, bf16 per-column, groups of 128
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for c in "bf16 fgs" "f16 fgs" "bf16 fgsz" "bf16 pc"; do
  set -- $c
  timeout 130 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 \
    --dtype $1 --mode $2 --no-store --cache /tmp/c.json --dump $L/dec_$1_$2.tsv > $L/dec_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/dec_$1_$2.md)"
done
