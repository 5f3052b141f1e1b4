#!/bin/bash
# twenty-third session call 1: the K-split 64-row tiles (Cfg::kKs) on a subset build: GPU tests on
# them, racecheck / synccheck, then 64x16x256 against 128x16x256 (M <= 16) and 64x64x256 against
# 128x64x256 (M = 64), one bench process per problem and kernel, rotating, three rounds
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 120 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s" | tee -a $L/tk.txt
tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt; grep -E "PASSED|FAILED|worst" $L/tk_summary.txt | tail -12
SECONDS=0
timeout 150 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "PASSED|FAIL|OK \]" $L/tg.txt | tail -14
for tool in racecheck synccheck; do
  W4A16_TEST_FILTER='*bf16_u4_fgs_64x16x256*' timeout 120 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/san_$tool.txt 2>&1
  echo "$tool rc $?" | tee -a $L/san_$tool.txt; tail -2 $L/san_$tool.txt
done
SECONDS=0
A='*bf16_u4_fgs_128x16x256_1*'; B='*bf16_u4_fgs_64x16x256_1*'; C='*bf16_u4_fgs_128x64x256_1*'; D='*bf16_u4_fgs_64x64x256_1*'
P=("16 10240x8192" "1 10240x8192" "16 8192x8192" "16 57344x8192" "16 8192x28672" "16 28672x4096" "16 4096x14336" "64 10240x8192" "64 8192x8192" "64 57344x8192")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -- ${P[$i]}
    if [ $1 -le 16 ]; then K0=$A; K1=$B; else K0=$C; K1=$D; fi
    for j in 0 1; do
      v=$(( (j + r + i) % 2 )); KK=$K0; [ $v = 1 ] && KK=$K1
      set -f; timeout 60 ./w4a16_bench --m $1 --nk $2 --kernels "$KK" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 240 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
