#!/bin/bash
# thirtieth session, call 7: test_gpu_gemv with test_threads (six host threads, kernel NULL, first in the
# binary), three processes; w4a16_bench --eager's text header
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
SECONDS=0
for i in 1 2 3; do
  timeout 150 ./test_gpu_gemv > $L/test_gpu_gemv_$i.txt 2>&1; echo "test_gpu_gemv $i rc $? ${SECONDS}s $(tail -1 $L/test_gpu_gemv_$i.txt)"
  grep -E "test_threads" $L/test_gpu_gemv_$i.txt | head -3
  [ $SECONDS -gt 330 ] && break
done
timeout 30 ./w4a16_bench --m 1 --nk 4096x4096 --kernels 'w4a16_gemv_bf16_u4_fgs_n16_m4_k2048_s3_tma' --eager -q | head -8
