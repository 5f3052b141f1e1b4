#!/bin/bash
# thirteenth session, review: one thread-safe cache of resident clusters (cluster kernels and the K pair)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/rev; for f in *.xz; do xz -dkf $f; done; chmod +x test_* w4a16_bench
for t in test_gpu_gemv test_gpu_kernels; do timeout 200 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ')"; done
timeout 100 ./w4a16_bench --m 16,64,1024 --nk 8192x8192,10240x8192 --no-cublas -q --top 3 > $L/bench.txt 2>&1; echo "bench rc $?"; grep -E "^M=|^ +1 " $L/bench.txt | head -12
