#!/bin/bash
# fifteenth session call 5: activation multicast by chunks (one 3-D copy a CTA) for clusters along N: tests, sanitizers, A/B
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/mc; for f in *.xz; do xz -dkf $f; done; chmod +x bench_* test_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
timeout 150 ./test_gpu_kernels > $L/kernels.log 2>&1; echo "kernels rc $? $(grep -E 'PASSED|FAILED' $L/kernels.log | tr '\n' ' ')"
grep -E "FAIL|rror" $L/kernels.log | head -10
timeout 150 ./test_gpu_gemv > $L/gemv.log 2>&1; echo "gemv rc $? $(grep -E 'PASSED|FAILED|SKIPPED' $L/gemv.log | tr '\n' ' ')"
for k in w4a16_sm90_bf16_u4_fgs_128x64x256_2x1x1_cooperative w4a16_sm90_bf16_u4_fgs_128x128x128_2x2x1_cooperative; do for tool in memcheck racecheck synccheck; do
  W4A16_TEST_FILTER=$k W4A16_TEST_QUICK=1 timeout 120 compute-sanitizer --tool $tool ./test_gpu_kernels > $L/san_${tool}_$k.log 2>&1
  echo "$k $tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $L/san_${tool}_$k.log | tr '\n' ' ')"
done; done
for r in 1 2 3; do for v in old new; do
  timeout 120 ./bench_$v --m 32,64,128,256,1024 --nk 10240x8192,8192x8192,57344x8192,8192x28672,28672x4096,4096x14336 --kernels '*bf16_u4_fgs*' --no-cublas --csv -q -o $L/ab_${v}_r$r.csv
  echo "bench $v r$r rc $?"
done; done
timeout 100 ./bench_new --m 64,256 --nk 10240x8192,57344x8192 --kernels '*128x64x256*,*128x128x128_1x1x1*' --csv -q -o $L/cublas.csv; echo "cublas rc $?"
