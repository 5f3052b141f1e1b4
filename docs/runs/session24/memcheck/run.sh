#!/bin/bash
# twenty-fourth session call 18: compute-sanitizer memcheck through test_gpu_gemv (the K pair's
# two-half handoff, skewed stream-K) on the 128-row 1x1x1 bf16 tiles, default build of 04d35c1
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
W4A16_TEST_FILTER='*bf16_u4_fgs_128x*_1x1x1_cooperative' timeout 400 compute-sanitizer --tool memcheck ./test_gpu_gemv > $L/san_memcheck.txt 2>&1
echo "memcheck rc $? ${SECONDS}s" | tee -a $L/san_memcheck.txt; grep -E "SUMMARY|PASSED|FAIL|K pair:" $L/san_memcheck.txt | tail -4
