#!/bin/bash
# thirty-first session, call 11: compute-sanitizer racecheck and synccheck over every bf16 scale-only
# instantiation of the full space (every sm90 tile x cluster x schedule, every GEMV and sm80 tile) on
# the quick cases, call 9's binary
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -T0 -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
for tl in racecheck:330 synccheck:200; do tool=${tl%:*}; lim=${tl#*:}
  W4A16_TEST_QUICK=1 W4A16_TEST_FILTER='*_bf16_u4_fgs_*' timeout $lim compute-sanitizer --tool $tool --error-exitcode 3 ./test_gpu_kernels > $L/$tool.raw 2>&1; rc=$?
  tr '\r' '\n' < $L/$tool.raw | grep -v "^case" > $L/$tool.log; rm -f $L/$tool.raw
  echo "$tool rc $rc ${SECONDS}s $(grep -cE '^\[       OK \]' $L/$tool.log) OK, $(grep -E 'SUMMARY' $L/$tool.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $L/$tool.log | tr '\n' ' ')"
done
