#!/bin/bash
# thirtieth session, call 6: w4a16_bench --eager (working tree on a364a17): test_timing (test_time_eager), then
# 4096x4096 and 8192x8192 at M = 1, 16, 64 and 57344x8192 at M = 1, bf16 scale-only, every GEMV and sm90
# kernel and cuBLASLt, eager and as graph replays
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 120 ./test_timing > $L/test_timing.txt 2>&1; echo "test_timing rc $? ${SECONDS}s"; grep -E "eager|PASSED|FAILED|OK \]|ERROR" $L/test_timing.txt
for mode in eager graph; do
  flag=""; [ $mode = eager ] && flag="--eager"
  set -f
  timeout 150 ./w4a16_bench --m 1,16,64 --nk 4096x4096,8192x8192 --kernels '*gemv_bf16_u4_fgs_*,*sm90_bf16_u4_fgs_*' $flag --top 4 -q > $L/bench_$mode.txt 2>&1
  timeout 60 ./w4a16_bench --m 1 --nk 57344x8192 --kernels '*gemv_bf16_u4_fgs_*,*sm90_bf16_u4_fgs_*' $flag --top 4 --csv -q -o $L/bench_${mode}_70b.csv 2>&1
  set +f
  echo "$mode ${SECONDS}s"
done
cat $L/bench_eager.txt
