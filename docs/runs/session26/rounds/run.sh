#!/bin/bash
# twenty-sixth session call 3: the profiler timing its candidates in rounds (every candidate one graph
# replay a round, the first one a step further along each round) instead of one after the other:
# test_timing (GPU: test_time_rounds, test_profile_ranked), test_select, test_cache; then the heuristic's
# first pick against the profiled best (w4a16 tune --compare-heuristic, the eight layers x M = 1, 2,
# 4, ..., 4096, --dump) for the dtype x mode x group combinations given as arguments
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
for t in test_timing test_select test_cache; do
  timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ') ${SECONDS}s"
done
grep "\[timing\]" $L/test_timing.log
for c in "$@"; do
  set -- $c
  timeout 170 ./w4a16 tune --compare-heuristic --dtype $1 --mode $2 --group $3 --no-store --dump $L/heur_$1_$2_$3.tsv > $L/heur_$1_$2_$3.md 2>&1
  echo "heuristic $c rc $? $(grep 'within 10%' $L/heur_$1_$2_$3.md) ${SECONDS}s"
done
