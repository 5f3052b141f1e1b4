#!/bin/bash
# thirty-first session, call 5: compute-sanitizer on a subset build of 2a53a94 (15 kernels: sm90
# 128x128x128 cooperative and 64x128x128 pingpong in each cluster 1x1x1 / 2x1x1 / 1x2x1 / 2x2x1,
# 128x16x256 cooperative, zero-point 128x256x64 2x1x1; the TMA GEMV 32x4x1024 s4 (grid padded, the
# next kernel's CTAs beside), 16x8x1024 s4 and zero-point 32x8x1024 s3; the register-staged GEMV
# 16x8x1024 split-K 8; sm80 128x16x128): memcheck, racecheck and synccheck through test_gpu_kernels
# (W4A16_TEST_QUICK), then memcheck and racecheck through test_gpu_gemv
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
san() {  # tool binary limit [env...]
  local tool=$1 bin=$2 lim=$3; shift 3
  env "$@" timeout $lim compute-sanitizer --tool $tool --error-exitcode 3 ./$bin > $L/${tool}_$bin.raw 2>&1; local rc=$?
  tr '\r' '\n' < $L/${tool}_$bin.raw | grep -v "^case" > $L/${tool}_$bin.log; rm -f $L/${tool}_$bin.raw
  echo "$tool $bin rc $rc $(grep -E 'SUMMARY' $L/${tool}_$bin.log | tail -1) $(grep -E '^\[  (PASSED|FAILED)' $L/${tool}_$bin.log | tr '\n' ' ') ${SECONDS}s"
}
san memcheck test_gpu_kernels 120 W4A16_TEST_QUICK=1
san racecheck test_gpu_kernels 150 W4A16_TEST_QUICK=1
san synccheck test_gpu_kernels 90 W4A16_TEST_QUICK=1
san memcheck test_gpu_gemv 110
san racecheck test_gpu_gemv 100
