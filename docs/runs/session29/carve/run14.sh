#!/bin/bash
# twenty-ninth session, call 14 (prepared, not run: no device time left): test_gpu_gemv after its reference and capture helpers (expect_reference,
# capture_gemm) serve test_long_k, test_graph_capture, test_tma_launch_plan and test_selected_workspace
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
timeout 200 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s"; grep -E "OK|FAIL|PASSED|ERROR" $L/test_gpu_gemv.txt
