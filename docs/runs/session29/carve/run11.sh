#!/bin/bash
# twenty-ninth session, call 11 (H200): ac46d90 (whole carveout, padded beside grids) against HEAD a2e76e3's
# build, w4a16 tune --compare-heuristic on the Llama-3-8B layers at M = 1..8, 12, 16, bf16 / fp16 scale-only
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for c in "bf16 fgs" "f16 fgs"; do
  set -- $c
  for b in w4a16_head w4a16; do
    timeout 100 ./$b tune --compare-heuristic --model llama3-8b --m 1,2,3,4,5,6,7,8,12,16 \
      --dtype $1 --mode $2 --no-store --cache /tmp/c.json --dump $L/h200_${b}_$1_$2.tsv > $L/h200_${b}_$1_$2.md 2>&1
    echo "$b $1 $2 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/h200_${b}_$1_$2.md)"
  done
done
