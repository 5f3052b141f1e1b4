#!/bin/bash
# fifteenth session call 2: does stream-K's makespan (max iterations per CTA) set 10240xK M = 64?
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/h15; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader
for r in 1 2 3 4; do
  timeout 120 ./w4a16_bench --m 64 --nk 10240x7680,10240x7936,10240x8192,10240x8448,10240x8704,8192x8192,8448x8192 --kernels '*128x64x256*' --iterations 20 --csv -q -o $L/gran_r$r.csv
  echo "r$r rc $?"
done
timeout 120 ./w4a16_bench --m 32,64 --nk 10240x8192,8192x8192,57344x8192,8192x28672 --iterations 20 --csv -q -o $L/m64.csv; echo "m64 rc $?"
