#!/bin/bash
# twenty-seventh session: profiles in rounds at M = 1088..1536 (the M = 1025..1536 row of K > 8192 and its
# 128x128x128; the other rows of that range), bf16 scale-only and zero points, the eight layers
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for c in "bf16 fgs" "bf16 fgsz"; do
  set -- $c
  timeout 200 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m 1088,1152,1216,1280,1408,1536 --dtype $1 --mode $2 --no-store \
    --cache /tmp/c.json --dump $L/heur_$1_$2.tsv > $L/heur_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_$1_$2.md)"
done
