#!/bin/bash
# thirteenth session call 1: 256x128x64 (two consumer warpgroups of 128 rows) against the large-M tiles
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/big; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench test_gpu_kernels
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
W4A16_TEST_FILTER='*256x128x64*' timeout 120 ./test_gpu_kernels > $L/tests.txt 2>&1; echo "tests rc $?"; tail -3 $L/tests.txt
for r in 1 2; do
  timeout 150 ./w4a16_bench --m 128,256,512 --csv -q -o $L/mid_r$r.csv > /dev/null 2>&1
  echo "mid r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done
timeout 200 ./w4a16_bench --m 1024,4096 --csv -q -o $L/big.csv > /dev/null 2>&1
echo "big rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
