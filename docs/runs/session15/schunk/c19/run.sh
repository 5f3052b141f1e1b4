#!/bin/bash
# fifteenth session call 19: scale rows by chunks for the 16-token tile_k 128 tiles (128x16x128, 256x16x128) too: =0 / =2 (every launch), same binary
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/c16; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for r in 1 2 3 4; do for v in 0 2; do
  W4A16_SM90_SCHUNK=$v timeout 120 ./w4a16_bench --m 1,4,8,16 --nk 10240x8192,28672x4096,4096x14336,6144x4096,4096x4096,57344x8192 --kernels '*x16x128*' --no-cublas --iterations 20 --csv -q -o $L/ab_m${v}_r$r.csv
  echo "bench $v r$r rc $?"
done; done
