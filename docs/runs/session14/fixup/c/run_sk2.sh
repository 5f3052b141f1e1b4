#!/bin/bash
# fourteenth session call 16: two partials a step for the 64-token tiles too (new) against HEAD a45987d (base), four rounds
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/sk2; for f in *.xz; do xz -dkf $f; done; chmod +x bench_* test_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
timeout 200 ./test_gpu_gemv > $L/test_gpu_gemv.log 2>&1; echo "test_gpu_gemv rc $? $(grep -E 'PASSED|FAILED' $L/test_gpu_gemv.log | tr '\n' ' ')"
for r in 1 2 3 4; do for v in base new; do
  timeout 120 ./bench_$v --m 48,64,96 --kernels '*128x64x256*,*128x64x128*,*256x64x128*' --no-cublas --csv -q -o $L/sk_${v}_r$r.csv > $L/sk_${v}_r$r.log 2>&1
  echo "$v r$r rc $?"
done; done
timeout 100 ./bench_base --m 64 --nk 10240x8192,8192x8192,57344x8192,8192x28672 --kernels '*128x64x256*' --csv -q -o $L/cublas_base.csv > /dev/null 2>&1
timeout 100 ./bench_new --m 64 --nk 10240x8192,8192x8192,57344x8192,8192x28672 --kernels '*128x64x256*' --csv -q -o $L/cublas_new.csv > /dev/null 2>&1
echo done
