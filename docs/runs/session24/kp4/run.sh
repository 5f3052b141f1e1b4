#!/bin/bash
# twenty-fourth session call 17: the K pair's two-half handoff with its lead by tile (one k-block per
# 32 KB of rank 1's accumulators: 128x256x64 4, 128x128x128 2; default build, new) against d6b35cd
# (old): GPU tests, the lead around the default (W4A16_SM90_KPAIR_LEAD) one process per problem and
# variant, rotating, three rounds (v0 old, v1 new default, v2 / v3 new at the default - 1 / + 1 for
# 128x128x128, - 1 / + 2 for 128x256x64), then the M = 256 K-pair bars with cuBLAS (two rounds)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 150 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s" | tee -a $L/tk.txt
tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt; grep -E "PASSED|FAILED" $L/tk_summary.txt | tail -3
SECONDS=0
timeout 150 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "PASSED|FAIL|K pair:" $L/tg.txt | tail -4
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("D 256 4096x4096" "D 128 6144x4096" "D 128 8192x8192" "A 256 8192x8192" "A 512 4096x4096" "A 256 8192x28672")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    if [ $1 = D ]; then K=$D; LEADS=(x x 1 3); else K=$A; LEADS=(x x 3 6); fi
    for j in 0 1 2 3; do
      v=$(( (j + r + i) % 4 )); BIN=./w4a16_bench; [ $v = 0 ] && BIN=./bench_old
      set -f
      if [ $v -ge 2 ]; then W4A16_SM90_KPAIR_LEAD=${LEADS[$v]} timeout 60 $BIN --m $2 --nk $3 --kernels "$K" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      else timeout 60 $BIN --m $2 --nk $3 --kernels "$K" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; fi
      set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
P=("$A 256 8192x8192" "$D 256 4096x4096" "$A 256 8192x28672")
for r in 1 2; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    timeout 60 ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/bars.csv
  done
done
