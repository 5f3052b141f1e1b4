#!/bin/bash
# twenty-second session call 18: test_gpu_gemv after test_stream_k_skew derives the expected skew from
# the launch's rule (default build)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
timeout 200 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "OK|PASSED|FAIL" $L/tg.txt | tail -13
W4A16_SM90_SKEW=0 W4A16_TEST_FILTER='*fgs_128x16x256*' timeout 100 ./test_gpu_gemv > $L/tg_off.txt 2>&1; echo "skew off rc $?" | tee -a $L/tg_off.txt; grep -E "PASSED|FAIL" $L/tg_off.txt | tail -3
