#!/bin/bash
# thirty-first session, call 8: the other tests with GPU parts (test_select, test_gemm_args, test_timing)
# and test_cache / test_cli, on the 15-kernel subset build of 2de8734 (run2.sh's), on the device
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
for t in test_select test_gemm_args test_timing test_cache test_cli; do
  mkdir -p /tmp/h_$t; HOME=/tmp/h_$t timeout 100 ./$t > $L/subset_$t.log 2>&1
  echo "$t rc $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $L/subset_$t.log | tr '\n' ' ') ${SECONDS}s"; done
