#!/bin/bash
# thirty-first session, call 6: the same subset build with test_threads serving only the problems the
# build has kernels for and test_gemv_coverage skipped on a filtered set: test_gpu_gemv and
# test_gpu_kernels plainly, then racecheck and synccheck through test_gpu_gemv (call 5's racecheck ran
# out of time)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
for t in test_gpu_gemv test_gpu_kernels; do
  timeout 100 ./$t > $L/plain_$t.raw 2>&1; rc=$?; tr '\r' '\n' < $L/plain_$t.raw | grep -v "^case" > $L/plain_$t.log; rm $L/plain_$t.raw
  echo "$t rc $rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $L/plain_$t.log | tr '\n' ' ') ${SECONDS}s"; done
for tl in racecheck:330 synccheck:120; do tool=${tl%:*}; lim=${tl#*:}
  timeout $lim compute-sanitizer --tool $tool --error-exitcode 3 ./test_gpu_gemv > $L/${tool}_test_gpu_gemv.log 2>&1; rc=$?
  echo "$tool test_gpu_gemv rc $rc $(grep -E 'SUMMARY' $L/${tool}_test_gpu_gemv.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $L/${tool}_test_gpu_gemv.log | tr '\n' ' ') ${SECONDS}s"
done
