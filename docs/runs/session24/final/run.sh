#!/bin/bash
# twenty-fourth session call 10: the default build (184 kernels) with stream-K's shrinking parts on
# the tiles of >= 128 tokens: GPU tests, racecheck / synccheck through test_gpu_gemv (the skewed
# stream-K test among them) on the 128-row 1x1x1 bf16 tiles, then issue 3's bars (one bench process
# per problem and kernel with cuBLAS bf16, two rounds; pairs.py)
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
for tool in racecheck synccheck; do
  SECONDS=0
  W4A16_TEST_FILTER='*bf16_u4_fgs_128x*_1x1x1*' timeout 200 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/san_$tool.txt 2>&1
  echo "$tool rc $? ${SECONDS}s" | tee -a $L/san_$tool.txt; grep -E "SUMMARY|PASSED|FAIL" $L/san_$tool.txt | tail -3
done
SECONDS=0
A='*bf16_u4_fgs_128x256x64_1x1x1*'; B='*bf16_u4_fgs_128x256x64_2x1x1*'; D='*bf16_u4_fgs_128x128x128_1x1x1*'
E='*bf16_u4_fgs_128x16x256_1x1x1*'; F='*bf16_u4_fgs_128x64x256_1x1x1*'
P=("$A 256 8192x8192" "$B 256 10240x8192" "$D 256 6144x4096" "$D 256 4096x4096" "$A 1024 4096x4096" "$B 1024 6144x4096"
   "$A 1024 10240x8192" "$A 1024 4096x14336" "$A 1024 28672x4096" "$F 64 10240x8192" "$E 1 10240x8192" "$E 16 10240x8192")
for r in 1 2; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$(( (i + 5 * r) % ${#P[@]} ))]}; set +f
    timeout 60 ./w4a16_bench --m $2 --nk $3 --kernels "$1" --iterations 20 --csv -q -o /tmp/o.csv
    tail -n +2 /tmp/o.csv | sed "s/^/0,$r,/" >> $L/all.csv
  done
  echo "round $r ${SECONDS}s"
done
head -1 /tmp/o.csv > $L/header.csv
