#!/bin/bash
# fifteenth session call 18: scale rows by chunks for 128x64x256 too (kSChunk for TM <= 64): =0 / =1 (K pair) / =2 (every launch), same binary
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/c64; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for r in 1 2 3 4; do for v in 0 1 2; do
  W4A16_SM90_SCHUNK=$v timeout 120 ./w4a16_bench --m 40,48,64,96,128 --nk 10240x8192,8192x8192,8192x28672,57344x8192,28672x4096,4096x14336 --kernels '*128x64x256*' --no-cublas --iterations 20 --csv -q -o $L/ab_m${v}_r$r.csv
  echo "bench $v r$r rc $?"
done; done
for v in 0 2; do W4A16_SM90_SCHUNK=$v timeout 100 ./w4a16_bench --m 64 --nk 10240x8192,8192x8192,57344x8192,8192x28672 --kernels '*128x64x256*' --iterations 20 --csv -q -o $L/cublas_m$v.csv; done
