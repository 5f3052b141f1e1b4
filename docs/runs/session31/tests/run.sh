#!/bin/bash
# thirty-first session, call 2: the GPU tests of the default build with the driver entry points in one
# header (common/driver_fn.cuh) and w4a16_select_kernel taking the caller's device record; then
# hostcost_probe (session30/host) on the same build at M = 1 and 4, three rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
for t in test_gemm_args test_select test_timing; do
  timeout 60 ./$t > $L/$t.txt 2>&1; echo "$t rc $? ${SECONDS}s $(tail -1 $L/$t.txt)"; done
timeout 100 ./test_gpu_kernels > $L/test_gpu_kernels.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s $(tail -1 $L/test_gpu_kernels.txt)"
W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_CTAS=3 timeout 60 ./test_gpu_kernels > $L/tma_units.txt 2>&1; echo "tma_units rc $? ${SECONDS}s $(tail -1 $L/tma_units.txt)"
W4A16_TEST_FILTER='*_tma' W4A16_GEMV_TMA_GENERIC=1 timeout 60 ./test_gpu_kernels > $L/tma_generic.txt 2>&1; echo "tma_generic rc $? ${SECONDS}s $(tail -1 $L/tma_generic.txt)"
for rep in 1 2 3; do for mm in 1 4; do timeout 30 ./hostcost $mm > $L/hostcost_m${mm}_r$rep.txt 2>&1; done; done
sed -n 1,12p $L/hostcost_m1_r3.txt
timeout 230 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s $(tail -1 $L/test_gpu_gemv.txt)"
