#!/bin/bash
# fifteenth session call 14: the default build with scale rows by chunks in the K pair: GPU tests, bench M <= 64 with cuBLAS
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/fin; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench test_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for t in test_select test_gpu_gemv test_gpu_kernels; do timeout 250 ./$t > $L/$t.log 2>&1; echo "$t rc $? $(grep -E 'PASSED|FAILED' $L/$t.log | tr '\n' ' ')"; done
for r in 1 2; do
timeout 200 ./w4a16_bench --m 1,16,32,64 --iterations 20 --top 3 --csv -q -o $L/bench_r$r.csv; echo "bench r$r rc $?"
done
