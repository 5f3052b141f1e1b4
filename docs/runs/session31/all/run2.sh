#!/bin/bash
# thirty-first session, call 10: the full space's test_gpu_kernels (call 9's binary) with the generic TMA
# consumer (W4A16_GEMV_TMA_GENERIC=1), then compute-sanitizer memcheck over every instantiation on the
# quick cases (W4A16_TEST_QUICK) in the time left
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -T0 -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_GENERIC=1 timeout 100 ./test_gpu_kernels > $L/tma_generic.raw 2>&1; rc=$?
tr '\r' '\n' < $L/tma_generic.raw | grep -v "^case" > $L/tma_generic.log; rm -f $L/tma_generic.raw
echo "tma_generic rc $rc ${SECONDS}s $(grep -cE '^\[       OK \]' $L/tma_generic.log) OK, $(grep -E '^\[  (PASSED|FAILED)' $L/tma_generic.log | tr '\n' ' ')"
W4A16_TEST_QUICK=1 timeout $((560 - SECONDS)) compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_kernels > $L/memcheck_all.raw 2>&1; rc=$?
tr '\r' '\n' < $L/memcheck_all.raw | grep -v "^case" > $L/memcheck_all.log; rm -f $L/memcheck_all.raw
echo "memcheck all rc $rc ${SECONDS}s $(grep -cE '^\[       OK \]' $L/memcheck_all.log) OK, $(grep -E 'ERROR SUMMARY' $L/memcheck_all.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $L/memcheck_all.log | tr '\n' ' ')"
tail -3 $L/memcheck_all.log
