#!/bin/bash
# twenty-seventh session: the M = 33..64 and 257..512 rows refitted on heur4 live, at M values that profile held and
# some it did not (288, 352, 416, 480), bf16 and f16 scale-only, bf16 zero
# points, the eight layers
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
M=${MS:-48,64,288,320,352,416,480,512}
for c in "bf16 fgs $M" "f16 fgs $M" "bf16 fgsz $M"; do
  set -- $c
  timeout 280 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m $3 --dtype $1 --mode $2 --no-store \
    --cache /tmp/c.json --dump $L/heur_$1_$2.tsv > $L/heur_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_$1_$2.md)"
done
