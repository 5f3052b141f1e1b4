#!/bin/bash
# twenty-eighth session, on an H200: the other H200 decode rows on single-layer profiles (h200d found the
# 4-token kernel's lead on 4096x4096 only among the eight layers): w4a16 tune --compare-heuristic per
# layer and M list below, bf16 / fp16 scale-only, bf16 zero points, bf16 per-column; then test_select
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for c in "bf16 fgs" "f16 fgs" "bf16 fgsz" "bf16 pc"; do
  set -- $c
  for shape in "8192 8192 1,2,4,8" "10240 8192 2,4,8" "28672 4096 1,2,4,8" "57344 8192 1,4,8" "4096 4096 1,2,4,9,12,16" "4096 14336 5,8"; do
    set -- $1 $2 $shape
    timeout 60 ./w4a16 tune --compare-heuristic --n $3 --k $4 --m $5 --dtype $1 --mode $2 \
      --no-store --cache /tmp/c.json --dump $L/e_$1_$2_$3x$4.tsv > $L/e_$1_$2_$3x$4.md 2>&1
    echo "$1 $2 $3x$4 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/e_$1_$2_$3x$4.md)"
  done
done
timeout 60 ./test_select > $L/test_select.log 2>&1; echo "test_select rc $? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_select.log | tr '\n' ' ')"
