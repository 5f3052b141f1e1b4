#!/bin/bash
# fifteenth session call 13 (calls 12 the same with the chunk code in the one kernel): scale rows by chunks in the K pair only, a kernel of its own (template CHUNK): tests (every mode; K pair with groups of 256 and 13 k-blocks), a mutant, sanitizers, A/B against HEAD
# bench_old: HEAD b4e2297, bench_new / test_*: this change, 18 kernels (bf16/f16 x fgs/fgsz/pc 128x16x256 and 128x32x256, bf16 fgs 128x16x128 256x16x128 128x64x256 256x32x128_wg4 256x64x128 128x128x128)
# test_gpu_gemv_mutant: srow() returning the chunk's first rows for every k-block
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/sc2; for f in *.xz; do xz -dkf $f; done; chmod +x bench_* test_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
timeout 250 ./test_gpu_kernels > $L/kernels.log 2>&1; echo "kernels rc $? $(grep -E 'PASSED|FAILED' $L/kernels.log | tr '\n' ' ')"
timeout 200 ./test_gpu_gemv > $L/gemv.log 2>&1; echo "gemv rc $? $(grep -E 'PASSED|FAILED|SKIPPED' $L/gemv.log | tr '\n' ' ')"
timeout 200 ./test_gpu_gemv_mutant > $L/gemv_mutant.log 2>&1; echo "gemv MUTANT rc $? $(grep -E 'PASSED|FAILED' $L/gemv_mutant.log | tr '\n' ' ')"
for k in w4a16_sm90_bf16_u4_fgs_128x16x256_1x1x1_cooperative w4a16_sm90_f16_u4_fgsz_128x32x256_1x1x1_cooperative; do for tool in memcheck racecheck synccheck; do
  W4A16_TEST_FILTER=$k timeout 150 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/sang_${tool}_$k.log 2>&1
done; done
for r in 1 2 3 4; do for v in old new; do
  timeout 100 ./bench_$v --m 1,2,4,8,16,24,32 --nk 8192x8192,8192x28672,57344x8192,10240x8192,4096x4096 --kernels '*bf16_u4_fgs*' --no-cublas --csv -q -o $L/ab_${v}_r$r.csv
done; done
for r in 1 2; do for v in old new; do
  timeout 100 ./bench_$v --m 1,8,16,32 --nk 8192x8192,8192x28672 --dtype f16 --mode fgsz --no-cublas --csv -q -o $L/zp_${v}_r$r.csv
  timeout 100 ./bench_$v --m 1,8,16,32 --nk 8192x8192,8192x28672 --group 256 --no-cublas --csv -q -o $L/g256_${v}_r$r.csv
done; done
timeout 100 ./bench_new --m 1,4,8,16 --nk 8192x8192,8192x28672 --kernels '*bf16_u4_fgs_128x16x256*' --iterations 20 --csv -q -o $L/cublas.csv
