#!/bin/bash
# thirtieth session, call 3: reset_probe (default and CUDA_MODULE_LOADING=EAGER); test_gpu_gemv of the
# default build (test_context_reset at M = 1) and of the scratch subset build whose context ID is
# always 1; hostcost_probe on the subset builds, HEAD and new interleaved, three more rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
./reset_probe 2>&1 | tee $L/reset.txt; CUDA_MODULE_LOADING=EAGER ./reset_probe 2>&1 | tee $L/reset_eager.txt
timeout 250 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s $(tail -1 $L/test_gpu_gemv.txt)"
timeout 60 ./test_gpu_gemv_stale > $L/test_gpu_gemv_stale.txt 2>&1; echo "stale rc $? ${SECONDS}s $(tail -1 $L/test_gpu_gemv_stale.txt)"
for rep in 3 4 5; do for mm in 1 4; do for b in hostcost_sub_head hostcost_sub_new; do
  timeout 30 ./$b $mm > $L/${b}_m${mm}_r$rep.txt 2>&1; done; done; done
for f in $L/hostcost_sub_*_r5.txt; do echo "== $f"; sed -n 3,7p $f; done
