#!/bin/bash
# twenty-ninth session, call 10: grids of at most one unit per SM padded to sms (one CTA of the launch
# on every SM) against W4A16_GEMV_TMA_PAD=1 (padded to 2 x sms, as in calls 8-9): place_probe and
# carveout_probe (fresh processes), test_gpu_gemv
R=$PWD; export LD_LIBRARY_PATH=$R/.carry/lib
L=$OUT/logs; mkdir -p $L
cd /tmp; for f in $R/.carry/a/*.xz; do xz -dc $f > $(basename $f .xz); chmod +x $(basename $f .xz); done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee $L/gpu.txt
for p in 1 2; do
  echo "== sms $p"; timeout 60 ./place_probe 2 24 240 1 2>&1
  echo "== PAD=1 $p"; W4A16_GEMV_TMA_PAD=1 timeout 60 ./place_probe 2 24 240 1 2>&1
done | tee $L/place.txt
for p in 1 2; do
  echo "== sms $p"; timeout 60 ./carveout_probe bPb 2>&1
  echo "== PAD=1 $p"; W4A16_GEMV_TMA_PAD=1 timeout 60 ./carveout_probe bPb 2>&1
done | tee $L/carveout.txt
timeout 150 ./test_gpu_gemv > $L/test_gpu_gemv.txt 2>&1; echo "test_gpu_gemv rc $? $(tail -1 $L/test_gpu_gemv.txt)"
