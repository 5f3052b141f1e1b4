#!/bin/bash
# Twenty-seventh session: bench_rounds.diff (session26) applied on main; test_gpu_gemv (f93778b host mend), then
# test_timing (GPU: test_time_rounds, test_time_with_extra, test_profile_ranked); then the best sm90
# kernel of each M = 256 / 4096 bar problem with cuBLAS bf16, one process per problem and variant
# (0: as before, the kernel then cuBLAS's algorithms one after the other; 1: --rounds, kernel and
# cuBLAS's algorithms in the same rounds), rotating, two rounds; analyse with
# docs/runs/session20/pairs.py per variant (all.csv lines: variant,round,<csv>)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 200 ./test_timing > $L/test_timing.log 2>&1; echo "test_timing rc $? $(grep -E 'PASSED|FAILED' $L/test_timing.log | tr '\n' ' ') ${SECONDS}s"
grep "\[timing\]" $L/test_timing.log
timeout 200 ./test_gpu_gemv > $L/test_gpu_gemv.log 2>&1; echo "test_gpu_gemv rc $? $(grep -E 'PASSED|FAILED' $L/test_gpu_gemv.log | tr '\n' ' ') ${SECONDS}s"
# the twenty-fifth session's section 5 picks (session25/bars/pairs.txt): every M = 256 / 4096 miss, M = 1024 6144x4096
P=("256 8192x8192 128x256x64_1x1x1" "256 10240x8192 128x256x64_2x1x1" "256 4096x4096 128x128x128_1x1x1"
   "256 6144x4096 128x128x128_1x1x1" "4096 8192x8192 128x256x64_1x1x1" "4096 28672x4096 128x256x64_1x1x1"
   "4096 57344x8192 128x256x64_2x1x1" "1024 6144x4096 128x256x64_2x1x1" "4096 10240x8192 128x256x64_1x1x1"
   "4096 4096x14336 128x256x64_1x1x1" "4096 4096x4096 128x256x64_1x1x1" "4096 6144x4096 128x256x64_1x1x1")
for r in 1 2; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    for j in 0 1; do
      v=$(( (j + r + i) % 2 )); extra=""; [ $v = 1 ] && extra="--rounds"
      timeout 120 ./w4a16_bench --m $1 --nk $2 --kernels "w4a16_sm90_bf16_u4_fgs_$3_cooperative" --iterations 20 $extra --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
