#!/bin/bash
# twenty-eighth session, on an H100: the three decode rows fitted on h100dec, on fresh profiles (three
# runs): w4a16 tune --compare-heuristic (profiles in rounds) on 4096x4096 at M = 1..4 and 57344x8192
# at M = 9..16, bf16 / fp16 scale-only, bf16 zero points, bf16 per-column; then test_select
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for run in a b c; do
for c in "bf16 fgs" "f16 fgs" "bf16 fgsz" "bf16 pc"; do
  set -- $c
  for shape in "4096 4096 1,2,3,4" "57344 8192 9,10,11,12,13,14,15,16"; do
    set -- $1 $2 $shape
    timeout 60 ./w4a16 tune --compare-heuristic --n $3 --k $4 --m $5 --dtype $1 --mode $2 \
      --no-store --cache /tmp/c.json --dump $L/d_$1_$2_$3_$run.tsv > $L/d_$1_$2_$3_$run.md 2>&1
    echo "$run $1 $2 $3 rc $? ${SECONDS}s $(grep -E 'within 10%' $L/d_$1_$2_$3_$run.md)"
  done
done; done
timeout 60 ./test_select > $L/test_select.log 2>&1; echo "test_select rc $? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_select.log | tr '\n' ' ')"
