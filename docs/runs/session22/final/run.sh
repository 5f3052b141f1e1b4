#!/bin/bash
# twenty-second session call 12: the default build (184 kernels) with the shrinking stream-K parts:
# GPU tests, sanitizers on 128x16x256 (test_gpu_gemv)
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
SECONDS=0
timeout 200 ./test_gpu_kernels > $L/tk.txt 2>&1; echo "test_gpu_kernels rc $? ${SECONDS}s" | tee -a $L/tk.txt; grep -E "PASSED|FAILED|FAIL" $L/tk.txt | tail -3
SECONDS=0
timeout 200 ./test_gpu_gemv > $L/tg.txt 2>&1; echo "test_gpu_gemv rc $? ${SECONDS}s" | tee -a $L/tg.txt; grep -E "OK|FAIL|PASSED" $L/tg.txt | tail -14
for tool in racecheck memcheck; do
  W4A16_TEST_FILTER='*bf16_u4_fgs_128x16x256*' timeout 120 compute-sanitizer --tool $tool ./test_gpu_gemv > $L/san_$tool.txt 2>&1
  echo "$tool rc $?" | tee -a $L/san_$tool.txt; tail -2 $L/san_$tool.txt
done
grep -v "^case\|\rcase" $L/tk.txt | tr '\r' '\n' | grep -v "^case" > $L/tk_summary.txt; rm -f $L/tk.txt
