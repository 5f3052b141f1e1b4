#!/bin/bash
# twenty-third session call 11: the K pair's reduce-scatter for the ring tiles (each rank finishes
# half the tile) against daccb20 (rank 1 hands all to rank 0): GPU tests of the TM >= 64 default
# tiles, racecheck / synccheck through test_gpu_gemv's K-pair test on 128x256x64, A/B three rounds
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
for tool in racecheck synccheck memcheck; do
  W4A16_TEST_FILTER='*bf16_u4_fgs_128x256x64_1x1x1*' timeout 200 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/san_$tool.txt 2>&1
  echo "$tool rc $?" | tee -a $L/san_$tool.txt; tail -1 $L/san_$tool.txt
done
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'; E='*bf16_u4_fgs_256x64x128_1x1x1*'
P=("$A 256 8192x8192" "$A 256 6144x4096" "$A 256 8192x28672" "$D 128 8192x8192" "$D 256 4096x4096" "$A 512 3840x4096" "$A 1024 4096x4096" "$E 64 8192x8192")
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
done
head -1 /tmp/o.csv > $L/header.csv
