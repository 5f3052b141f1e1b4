#!/bin/bash
# twenty-third session call 4: the activation copies by a second producer thread (Cfg::kActThread):
# 64x16x256 (K split, thread on) against 128x16x256 (off), and 128x16x256 / 128x64x256 with the
# thread too (w4a16_bench_at2: W4A16_SM90_ACT_THREAD=2), three rounds; variant 0 128-row as built,
# 1 64-row, 2 128-row with the thread
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 150 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "PASSED|FAIL" $L/tg.txt | tail -3
SECONDS=0
P=("16 10240x8192" "1 10240x8192" "16 57344x8192" "16 8192x8192" "16 8192x28672" "64 10240x8192" "64 57344x8192")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    T=16; [ $1 = 64 ] && T=64
    for j in 0 1 2; do
      v=$(( (j + r + i) % 3 )); B=./w4a16_bench; KK="*bf16_u4_fgs_128x${T}x256_1*"
      [ $v = 1 ] && KK="*bf16_u4_fgs_64x${T}x256_1*"
      [ $v = 2 ] && B=./w4a16_bench_at2
      set -f; timeout 60 $B --m $1 --nk $2 --kernels "$KK" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
