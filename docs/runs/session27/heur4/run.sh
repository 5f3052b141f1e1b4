#!/bin/bash
# twenty-seventh session: profiles in rounds at M = 40..64 and 320..512 (the M = 33..64 rows on N <= 4096 and the
# M = 385..512 rows' clusters: replayed 1.03-1.10x behind at M = 64 and 512), bf16 and f16 scale-only, bf16 zero
# points, the eight layers
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
M=${MS:-40,48,56,64,320,384,448,512}
for c in "bf16 fgs $M" "f16 fgs $M" "bf16 fgsz $M"; do
  set -- $c
  timeout 280 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m $3 --dtype $1 --mode $2 --no-store \
    --cache /tmp/c.json --dump $L/heur_$1_$2.tsv > $L/heur_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_$1_$2.md)"
done
