#!/bin/bash
# twenty-seventh session, last call: the GPU tests on the default build of HEAD (bdbbd8e; host changes
# this session: bench --rounds, timing, the rule table): test_gpu_kernels (also with the TMA GEMV unit
# and generic-consumer switches, as ctest runs them), test_gpu_gemv, test_select, test_timing, test_cli,
# test_cache
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
t() { local name=$1; shift; env "$@" timeout 300 ./${name%%.*} > $L/$name.log 2>&1; echo "$name rc $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $L/$name.log | tr '\n' ' ') ${SECONDS}s"; }
t test_gpu_kernels
t test_gpu_kernels.tma_units W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_CTAS=3
t test_gpu_kernels.tma_generic W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_GENERIC=1
t test_gpu_gemv
t test_select
t test_timing
t test_cli
t test_cache
