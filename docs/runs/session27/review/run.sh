#!/bin/bash
# twenty-seventh session's review mends (timing.c's time_with failure path, the bench's --rounds path
# tidied): test_timing, then 8192x8192 M = 256 and 4096 with --rounds (every sm90 bf16 fgs kernel and cuBLAS)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
timeout 200 ./test_timing > $L/test_timing.log 2>&1; echo "test_timing rc $? $(grep -E '^\[  (PASSED|FAILED) ' $L/test_timing.log | tr '\n' ' ')"
for m in 256 4096; do
  set -f; timeout 120 ./w4a16_bench --m $m --nk 8192x8192 --kernels '*sm90_bf16_u4_fgs_*' --rounds --iterations 20 --csv -q -o $L/r_$m.csv; echo "bench M=$m rc $?"; set +f
done
