#!/bin/bash
# fourteenth session call 4: the 8-token sm90 tiles (128x8x128, 128x8x256, 256x8x128, full space) against the 16-token defaults at M = 1..16
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/s14; xz -dkf w4a16_bench.xz; chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2 3; do
  timeout 200 ./w4a16_bench --m 1,2,4,8,16 --no-cublas --csv -q -o $L/t8_r$r.csv > $L/t8_r$r.log 2>&1
  echo "t8 r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader)"
done
