#!/bin/bash
# thirteenth session call 4: M = 256 without activation loads (NOACT), without weight loads (NOW); 256x128x64 in halves (R2)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/diag13; for f in *.xz; do xz -dkf $f; done; chmod +x bench_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
export W4A16_SM90_KPAIR=0
for r in 1 2; do
for v in base NOACT NOW; do
  timeout 60 ./bench_$v --m 256 --no-cublas --csv -q --kernels '*128x128x128*,*128x256x64_1x1x1*' -o $L/${v}_r$r.csv > /dev/null 2>&1
  echo "$v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done
for v in R2 big; do
  timeout 100 ./bench_$v --m 256,512,1024 --no-cublas --csv -q --kernels '*256x128x64_1x1x1*,*128x128x128_1x1x1*' -o $L/${v}_r$r.csv > /dev/null 2>&1
  echo "$v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done; done
