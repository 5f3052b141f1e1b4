#!/bin/bash
# fifteenth session call 1: split-K reduced in the kernel (W4A16_SM90_SPLIT_FIXUP=1): tests, sanitizers, A/B
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/sf; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench test_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
export W4A16_SM90_SPLIT_FIXUP=1
timeout 150 ./test_gpu_gemv > $L/gemv.log 2>&1; echo "gemv rc $? $(grep -E 'PASSED|FAILED|SKIPPED' $L/gemv.log | tr '\n' ' ')"
grep -E "FAIL|error|Error" $L/gemv.log | head -10
timeout 150 ./test_gpu_kernels > $L/kernels.log 2>&1; echo "kernels rc $? $(grep -E 'PASSED|FAILED' $L/kernels.log | tr '\n' ' ')"
grep -E "FAIL|rror" $L/kernels.log | head -10
for tool in memcheck racecheck synccheck; do
  W4A16_TEST_FILTER=w4a16_sm90_bf16_u4_fgs_128x16x128_1x1x1_cooperative W4A16_TEST_QUICK=1 timeout 120 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/san_$tool.log 2>&1
  echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $L/san_$tool.log | tr '\n' ' ')"
done
for r in 1 2 3; do for v in off on; do
  if [ $v = off ]; then export W4A16_SM90_SPLIT_FIXUP=0; else export W4A16_SM90_SPLIT_FIXUP=1; fi
  timeout 100 ./w4a16_bench --m 1,4,8,16,32,64,128 --kernels '*sm90_bf16_u4_fgs_*' --no-cublas --csv -q -o $L/ab_${v}_r$r.csv
  echo "bench $v r$r rc $?"
done; done
