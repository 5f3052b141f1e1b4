#!/bin/bash
# thirtieth session, call 8: the GPU tests of HEAD 0f9ea6d's default build as ctest runs them:
# test_gpu_kernels, its TMA variants (W4A16_GEMV_TMA_CTAS=3; W4A16_GEMV_TMA_GENERIC=1), test_gpu_gemv,
# test_timing
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
timeout 100 ./test_gpu_kernels > $L/test_gpu_kernels.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s $(tail -1 $L/test_gpu_kernels.txt)"
W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_CTAS=3 timeout 60 ./test_gpu_kernels > $L/tma_units.txt 2>&1; echo "tma_units rc $? ${SECONDS}s $(tail -1 $L/tma_units.txt)"
W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_GENERIC=1 timeout 60 ./test_gpu_kernels > $L/tma_generic.txt 2>&1; echo "tma_generic rc $? ${SECONDS}s $(tail -1 $L/tma_generic.txt)"
timeout 60 ./test_timing > $L/test_timing.txt 2>&1; echo "test_timing rc $? ${SECONDS}s $(tail -1 $L/test_timing.txt)"
timeout 150 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s $(tail -1 $L/test_gpu_gemv.txt)"
