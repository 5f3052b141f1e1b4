#!/bin/bash
# gemv session 4, device run 4: final A/B (the brief's command), other dtypes/modes, tests, sanitizers
export LD_LIBRARY_PATH=$PWD/.carry/lib:$LD_LIBRARY_PATH
C=.carry/gemv
T0=$(date +%s)
ts() { echo "[$(( $(date +%s) - T0 ))s] $*" >> $OUT/log.txt; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu,driver_version --format=csv >> $OUT/log.txt
L=6144x4096,4096x4096,10240x8192,8192x8192,57344x8192,8192x28672,28672x4096,4096x14336
ts ab
( for rep in 1 2; do
  $C/bench_base --m 1,2,4,8,16 --nk $L --kernels 'w4a16_gemv*' --top 3 --csv -q | sed "s/^/base$rep,/"
  $C/bench_new --m 1,2,4,8,16 --nk $L --kernels 'w4a16_gemv*' --top 3 --csv -q | sed "s/^/new$rep,/"
done ) > $OUT/ab.csv 2>>$OUT/log.txt
ts other
B="--nk $L --kernels w4a16_gemv*tma --top 20 --csv --no-cublas -q"
( for x in "--dtype f16" "--mode pc" "--mode fgsz"; do
  t=$(echo $x | tr -d ' -')
  W4A16_GEMV_TMA_GENERIC=1 $C/bench_new --m 1,2,4,8 $B $x | sed "s/^/gen_$t,/"
  $C/bench_new --m 1,2,4,8 $B $x | sed "s/^/new_$t,/"
done ) > $OUT/other.csv 2>>$OUT/log.txt
ts tests
( W4A16_TEST_FILTER='w4a16_gemv_*' $C/test_gpu_kernels; echo "rc=$?"; W4A16_TEST_FILTER='w4a16_gemv_*' $C/test_gpu_gemv; echo "rc=$?" ) > $OUT/tests.log 2>&1
ts san
( K=w4a16_gemv_bf16_u4_fgs_n32_m4_k1024_s4_tma
  for tool in racecheck memcheck synccheck; do
    echo "== $K $tool"
    W4A16_TEST_FILTER=$K W4A16_TEST_QUICK=1 compute-sanitizer --tool $tool $C/test_gpu_kernels 2>&1 | grep -i 'summary\|PASSED\|FAILED'
    W4A16_TEST_FILTER=$K compute-sanitizer --tool $tool $C/test_gpu_gemv 2>&1 | grep -i 'summary\|PASSED\|FAILED\|OK'
  done
  for K in w4a16_gemv_f16_u4_fgs_n16_m8_k2048_s2_tma w4a16_gemv_bf16_u4_pc_n32_m8_k1024_s3_tma; do
  for tool in racecheck memcheck; do
    echo "== $K $tool"
    W4A16_TEST_FILTER=$K compute-sanitizer --tool $tool $C/test_gpu_gemv 2>&1 | grep -i 'summary\|PASSED\|FAILED\|OK'
  done; done ) > $OUT/san.log 2>&1
ts done
