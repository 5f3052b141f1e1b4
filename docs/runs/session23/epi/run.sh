#!/bin/bash
# twenty-third session call 9: the tensor-store epilogue by transposed stmatrix and packed
# conversions (new, build of the TM >= 64 default tiles) against HEAD's 2-byte stores (old, default
# build): GPU tests of the new build, racecheck / synccheck on 128x256x64, then A/B one process per
# problem and variant, rotating, three rounds (v0 old, v1 new)
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
timeout 150 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "PASSED|FAIL" $L/tg.txt | tail -3
for tool in racecheck synccheck; do
  W4A16_TEST_QUICK=1 W4A16_TEST_FILTER='*bf16_u4_fgs_128x256x64_1x1x1*' timeout 150 compute-sanitizer --tool $tool ./test_gpu_kernels > $L/san_$tool.txt 2>&1
  echo "$tool rc $?" | tee -a $L/san_$tool.txt; tail -1 $L/san_$tool.txt
done
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'; C='*bf16_u4_fgs_128x64x256_1x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'
P=("$A 1024 4096x4096" "$A 4096 4096x4096" "$B 1024 6144x4096" "$A 256 8192x8192" "$B 256 10240x8192" "$A 1024 8192x8192"
   "$C 64 10240x8192" "$D 256 6144x4096" "$A 4096 6144x4096")
for r in 1 2 3; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 )); BIN=./w4a16_bench_old; [ $v = 1 ] && BIN=./w4a16_bench
      set -f; timeout 60 $BIN --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv; set +f
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 200 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
