#!/bin/bash
# fifteenth session call 17: scale rows by chunks also tile by tile / split-K with long units (W4A16_SM90_SCHUNK=3) against the K pair only (=1), same binary
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/sc5; for f in *.xz; do xz -dkf $f; done; chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for r in 1 2 3; do for v in 1 3; do
  W4A16_SM90_SCHUNK=$v timeout 120 ./w4a16_bench --m 1,4,16,32 --nk 57344x8192,10240x8192,4096x14336,28672x4096,6144x4096,4096x4096 --kernels '*bf16_u4_fgs*' --no-cublas --csv -q -o $L/ab_m${v}_r$r.csv
  W4A16_SM90_SCHUNK=$v timeout 100 ./w4a16_bench --m 1,16,32 --nk 57344x8192,10240x8192,28672x4096,4096x14336 --dtype f16 --mode fgsz --no-cublas --csv -q -o $L/zp_m${v}_r$r.csv
  echo "bench $v r$r rc $?"
done; done
