#!/bin/bash
# twenty-seventh session: the final rule table live (w4a16 tune --compare-heuristic, profiles in
# rounds): bf16 scale-only on the eight layers at M = 1, 2, 4, ..., 4096 (the standard check), and at
# M = 576, 704, 768, 1024, 1536, 2048 bf16 zero points and fp16 scale-only
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 200 ./w4a16 tune --compare-heuristic --dtype bf16 --mode fgs --no-store --cache /tmp/c.json \
  --dump $L/heur_bf16_fgs_all.tsv > $L/heur_bf16_fgs_all.md 2>&1
echo "bf16 fgs all rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_bf16_fgs_all.md)"
M=576,704,768,1024,1536,2048
for c in "bf16 fgsz" "f16 fgs"; do
  set -- $c
  timeout 150 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m $M --dtype $1 --mode $2 --no-store \
    --cache /tmp/c.json --dump $L/heur_$1_$2.tsv > $L/heur_$1_$2.md 2>&1
  echo "$1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/heur_$1_$2.md)"
done
