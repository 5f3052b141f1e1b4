#!/bin/bash
# fifteenth session call 4: 16-token tiles outside the default set at M <= 16 (70B layers), split overrides
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/t16; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for r in 1 2 3; do
  timeout 150 ./w4a16_bench --m 1,4,8,16 --nk 10240x8192,8192x8192,57344x8192,8192x28672,6144x4096,4096x4096 --no-cublas --csv -q -o $L/t16_r$r.csv; echo "r$r rc $?"
  for s in 2 4 5 6; do
    W4A16_SM90_SPLIT=$s timeout 60 ./w4a16_bench --m 1,16 --nk 10240x8192,8192x8192 --kernels '*128x16x128_1x1x1_coop*,*64x16x256*,*64x16x128_1x1x1*' --no-cublas --csv -q -o $L/split${s}_r$r.csv; echo "split $s rc $?"
  done
done
