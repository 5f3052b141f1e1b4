#!/bin/bash
# twenty-sixth session call 4 (d2798fb's profiler, timing in rounds): zero-point profiles for the
# heuristic's "-zp" rows: w4a16 tune --compare-heuristic --dump over the eight layers at M = 2..16,
# bf16 and f16 group 128, twice each (a and b: fit on one, check on the other)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for run in a b; do
  for dt in bf16 f16; do
    timeout 200 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --dtype $dt --mode fgsz --group 128 --no-store --seed $([ $run = a ] && echo 11 || echo 12) --dump $L/dump_${dt}_fgsz_$run.tsv > $L/heur_${dt}_fgsz_$run.md 2>&1
    echo "$run $dt rc $? $(grep 'within 10%' $L/heur_${dt}_fgsz_$run.md) ${SECONDS}s"
  done
done
