#!/bin/bash
# fifteenth session call 20: HEAD's default build (6a1b99f): GPU tests with the chunks on and off, the K-pair layers' bench
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/head; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench test_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for t in test_select test_gpu_gemv test_gpu_kernels; do timeout 250 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ')"; done
W4A16_SM90_SCHUNK=0 timeout 200 ./test_gpu_gemv > $L/test_gpu_gemv_schunk0.log 2>&1; echo "gemv SCHUNK=0 rc $? $(grep -E 'PASSED|FAILED' $L/test_gpu_gemv_schunk0.log | tr '\n' ' ')"
timeout 100 ./w4a16_bench --m 1,8,16,32 --nk 8192x8192,8192x28672 --kernels '*sm90*' --iterations 20 --top 2 --csv -q -o $L/bench.csv; echo "bench rc $?"
