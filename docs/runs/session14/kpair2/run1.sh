#!/bin/bash
# fourteenth session call 2: the 16-token tiles at M = 1..16 with stream-K / K pair in place of split-K (W4A16_SM90_STREAMK=2, MIN_M=1) against the build's rules
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/s14; xz -dkf w4a16_bench.xz; chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2 3; do for v in base sk2; do
  if [ $v = sk2 ]; then export W4A16_SM90_STREAMK=2 W4A16_SM90_STREAMK_MIN_M=1; else unset W4A16_SM90_STREAMK W4A16_SM90_STREAMK_MIN_M; fi
  timeout 120 ./w4a16_bench --m 1,8,16 --kernels '*sm90*' --no-cublas --csv -q -o $L/m16_${v}_r$r.csv > $L/m16_${v}_r$r.log 2>&1
  echo "bench $v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader)"
done; done
