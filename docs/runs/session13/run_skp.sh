#!/bin/bash
# thirteenth session call 20: stream-K over pairs (Params::skpair): tests, sanitizers, A/B against HEAD and W4A16_SM90_SKPAIR=0
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/skp; for f in *.xz; do xz -dkf $f; done; chmod +x bench_* test_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
timeout 200 ./test_gpu_gemv > $L/gemv.log 2>&1; echo "gemv rc $? $(grep -E 'PASSED|FAILED|SKIPPED' $L/gemv.log | tr '\n' ' ')"
grep -E "FAIL|error|Error" $L/gemv.log | head -10
timeout 200 ./test_gpu_kernels > $L/kernels.log 2>&1; echo "kernels rc $? $(grep -E 'PASSED|FAILED' $L/kernels.log | tr '\n' ' ')"
for tool in memcheck racecheck synccheck; do
  W4A16_TEST_FILTER=w4a16_sm90_bf16_u4_fgs_128x64x256_1x1x1_cooperative timeout 150 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/san_$tool.log 2>&1
  echo "$tool rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $L/san_$tool.log | tr '\n' ' ')"
done
for r in 1 2; do for v in old new off; do
  b=bench_$v; [ $v = off ] && b=bench_new
  if [ $v = off ]; then export W4A16_SM90_SKPAIR=0; else unset W4A16_SM90_SKPAIR; fi
  timeout 100 ./$b --m 1,8,16,32,48,64,96,128 --kernels '*sm90_bf16_u4_fgs_*' --no-cublas --csv -q -o $L/ab_${v}_r$r.csv
  echo "bench $v r$r rc $?"
done; done
