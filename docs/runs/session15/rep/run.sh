#!/bin/bash
# fifteenth session call 7: HEAD's default build, repeated rounds of the bar problems (M = 1 GEMV on the 8B layers, M = 16 / 64 / 256 sm90)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/def; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench test_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for r in 1 2 3 4 5; do
  timeout 60 ./w4a16_bench --m 1 --nk 4096x4096,6144x4096,4096x14336,28672x4096 --kernels '*gemv*' --iterations 20 --top 3 --csv -q -o $L/m1_r$r.csv; echo "m1 r$r rc $?"
done
for r in 1 2 3; do
  timeout 150 ./w4a16_bench --m 16,64,256 --nk 57344x8192,8192x28672,10240x8192,8192x8192 --kernels '*sm90*' --iterations 20 --top 2 --csv -q -o $L/sm90_r$r.csv; echo "sm90 r$r rc $?"
done
