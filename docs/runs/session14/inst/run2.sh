#!/bin/bash
# fourteenth session call 3: non-default sm90 instantiations at M = 32 / 64 / 128 / 256 against the defaults, cuBLAS bf16 in the same call
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/s14; xz -dkf w4a16_bench.xz; chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2; do
  timeout 200 ./w4a16_bench --m 32,64 --nk 57344x8192,8192x28672,10240x8192,8192x8192 --csv -q -o $L/m64_r$r.csv > $L/m64_r$r.log 2>&1
  echo "m64 r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader)"
  timeout 250 ./w4a16_bench --m 128,256 --csv -q -o $L/m256_r$r.csv > $L/m256_r$r.log 2>&1
  echo "m256 r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader)"
done
