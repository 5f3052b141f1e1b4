#!/bin/bash
# thirty-first session, call 7: the GPU tests of the default build with test_threads serving only the problems the build has
# kernels for and test_gemv_coverage keyed on the kernel set (unchanged on the default set)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
timeout 100 ./test_gpu_kernels > $L/test_gpu_kernels.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s $(tail -1 $L/test_gpu_kernels.txt)"
W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_CTAS=3 timeout 60 ./test_gpu_kernels > $L/tma_units.txt 2>&1; echo "tma_units rc $? ${SECONDS}s $(tail -1 $L/tma_units.txt)"
W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_GENERIC=1 timeout 60 ./test_gpu_kernels > $L/tma_generic.txt 2>&1; echo "tma_generic rc $? ${SECONDS}s $(tail -1 $L/tma_generic.txt)"
timeout 230 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s $(tail -1 $L/test_gpu_gemv.txt)"
