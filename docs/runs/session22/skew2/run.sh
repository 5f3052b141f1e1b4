#!/bin/bash
# twenty-second session call 11: stream-K parts that shrink with the CTA index as landed
# (W4A16_SM90_SKEW = 0: v0, default: v1); subset build (128x16x256, 128x64x256, 128x256x64 bf16 fgs):
# GPU tests, sanitizers on 128x16x256, then A/B in one binary
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
timeout 200 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $?" | tee -a $L/tg.txt; grep -E "OK|FAIL|PASSED|ERROR" $L/tg.txt | tail -14
W4A16_TEST_QUICK=1 timeout 120 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $?" | tee -a $L/tk.txt; grep -E "worst|PASSED|FAIL" $L/tk.txt | tail -5
for tool in racecheck synccheck memcheck; do
  W4A16_TEST_FILTER='*128x16x256*' timeout 150 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/san_$tool.txt 2>&1
  echo "$tool rc $?" | tee -a $L/san_$tool.txt; tail -2 $L/san_$tool.txt
done
SECONDS=0
E='*128x16x256*'; G='*128x64x256*'; H='*128x256x64_1x1x1*'
P=("$E 16 10240x8192" "$E 1 10240x8192" "$E 8 10240x8192" "$G 64 10240x8192" "$G 32 10240x8192" "$E 16 57344x8192" "$E 16 8192x28672"
   "$E 16 4096x14336" "$E 16 28672x4096" "$G 64 28672x4096" "$H 256 10240x8192" "$E 1 6144x4096")
for r in 1 2 3 4 5; do
  for i in "${!P[@]}"; do
    set -f; set -- ${P[$i]}; set +f
    for j in 0 1; do
      v=$(( (j + r + i) % 2 ))
      W4A16_SM90_SKEW=$v ./w4a16_bench --m $2 --nk $3 --kernels "$1" --no-cublas --iterations 20 --csv -q -o /tmp/o.csv
      tail -n +2 /tmp/o.csv | sed "s/^/$v,$r,/" >> $L/all.csv
    done
  done
  echo "round $r ${SECONDS}s"
  [ $SECONDS -gt 280 ] && break
done
head -1 /tmp/o.csv > $L/header.csv
