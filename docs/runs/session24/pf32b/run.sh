#!/bin/bash
# twenty-fourth session call 14: k-blocks / 4 prefetched for the 32-token tile_k 256 tiles in stream-K
# launches without data-parallel tiles (default build, new) against e552422 (old): GPU tests of the
# new build, then one process per problem and variant, rotating, three rounds (v0 old, v1 new):
# 128x32x256 at M = 17 / 24 / 32 on the eight layers, 128x16x256 and 128x64x256 as controls
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 200 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s" | tee -a $L/tk.txt
tr '\r' '\n' < $L/tk.txt | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt; grep -E "PASSED|FAILED" $L/tk_summary.txt | tail -3
SECONDS=0
timeout 200 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "PASSED|FAIL" $L/tg.txt | tail -3
SECONDS=0
G='*bf16_u4_fgs_128x32x256_1x1x1*'; E='*bf16_u4_fgs_128x16x256_1x1x1*'; F='*bf16_u4_fgs_128x64x256_1x1x1*'
LAY=(6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672)
P=()
for l in "${LAY[@]}"; do for m in 17 24 32; do P+=("$G $m $l"); done; done
P+=("$E 16 10240x8192" "$F 64 10240x8192" "$E 16 4096x14336")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 )); BIN=./bench_old; [ $v = 1 ] && BIN=./w4a16_bench
      set -f; timeout 60 $BIN --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 300 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
