#!/bin/bash
# thirteenth session call 8: scale rows by the 2-D map from 1 row a stage (W4A16_SM90_S2D=1) against from 4 (default), 11 default bf16 tiles
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/diag13; xz -dkf s2d_bench.xz; chmod +x s2d_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2 3; do
for v in 4 1; do
  W4A16_SM90_S2D=$v timeout 150 ./s2d_bench --m 1,8,16,32,64,128,256 --no-cublas --csv -q -o $L/g128_s${v}_r$r.csv > /dev/null 2>&1
  echo "g128 $v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done; done
for r in 1 2; do
for v in 4 1; do
  W4A16_SM90_S2D=$v timeout 100 ./s2d_bench --m 1,16,64,256 --group 64 --no-cublas --csv -q -o $L/g64_s${v}_r$r.csv > /dev/null 2>&1
  echo "g64 $v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done; done
