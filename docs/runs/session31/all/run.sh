#!/bin/bash
# thirty-first session, call 9: test_gpu_kernels over the full configuration space
# (-DW4A16_KERNELS=all, archs 80;90a) of 2de8734: every instantiation against the float64 reference
# on every mode, group size and M of the test (the last run of the whole space was in the tenth
# session); then, with the time left, the TMA GEMV kernels again on three units per CTA
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -T0 -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
timeout 470 ./test_gpu_kernels > $L/all.raw 2>&1; rc=$?
tr '\r' '\n' < $L/all.raw | grep -v "^case" > $L/all.log; rm -f $L/all.raw
echo "all rc $rc ${SECONDS}s $(grep -cE '^\[       OK \]' $L/all.log) OK, $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $L/all.log | tr '\n' ' ')"
grep -E '^\[  FAILED  \]' $L/all.log | head -20
left=$((560 - SECONDS))
if [ $left -gt 30 ]; then
  W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_CTAS=3 timeout $left ./test_gpu_kernels > $L/tma_units.raw 2>&1; rc=$?
  tr '\r' '\n' < $L/tma_units.raw | grep -v "^case" > $L/tma_units.log; rm -f $L/tma_units.raw
  echo "tma_units rc $rc ${SECONDS}s $(grep -cE '^\[       OK \]' $L/tma_units.log) OK, $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $L/tma_units.log | tr '\n' ' ')"
fi
