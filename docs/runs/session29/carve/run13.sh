#!/bin/bash
# twenty-ninth session, call 13: test_gpu_gemv with test_tma_launch_plan (ac46d90 + the test); the same
# test under W4A16_GEMV_TMA_CTAS=128 (no padding: must fail) on one kernel
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 200 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s"; grep -E "OK|FAIL|PASSED|skip" $L/test_gpu_gemv.txt
W4A16_TEST_FILTER='*f16_u4_fgs_n32_m4_k1024_s4_tma' W4A16_GEMV_TMA_CTAS=128 CMOCKA_TEST_ABORT=0 timeout 60 ./test_gpu_gemv > $L/test_nopad.txt 2>&1; echo "no padding: rc $?"; grep -E "tma_launch_plan|not padded" $L/test_nopad.txt | head -5
