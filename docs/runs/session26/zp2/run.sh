#!/bin/bash
# twenty-sixth session call 5: the "-zp" rows (runtime/select.c) live on a fresh profile (seed 13):
# test_select, test_timing; w4a16 tune --compare-heuristic for zero points, bf16 and f16 group 128,
# over the eight layers at M = 2..16 and at M = 1, 2, 4, ..., 4096 (--dump)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for t in test_select test_timing; do
  timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"
done
for dt in bf16 f16; do
  timeout 200 ./w4a16 tune --compare-heuristic --model llama3-8b,llama3-70b --m 2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 --dtype $dt --mode fgsz --group 128 --no-store --seed 13 --dump $L/dump_${dt}_fgsz_small.tsv > $L/heur_${dt}_fgsz_small.md 2>&1
  echo "small $dt rc $? $(grep 'within 10%' $L/heur_${dt}_fgsz_small.md) ${SECONDS}s"
  timeout 200 ./w4a16 tune --compare-heuristic --dtype $dt --mode fgsz --group 128 --no-store --seed 13 --dump $L/dump_${dt}_fgsz_all.tsv > $L/heur_${dt}_fgsz_all.md 2>&1
  echo "all $dt rc $? $(grep 'within 10%' $L/heur_${dt}_fgsz_all.md) ${SECONDS}s"
done
