#!/bin/bash
# thirteenth session call 5: M = 256 without the scale copy (NOSCALE), without the weight copy (NOWONLY), weights issued first (WFIRST)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/diag13; for f in bench_base.xz bench_NOW.xz bench_NOSCALE.xz bench_NOWONLY.xz bench_WFIRST.xz; do xz -dkf $f; done; chmod +x bench_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
export W4A16_SM90_KPAIR=0
for r in 1 2; do
for v in base NOW NOSCALE NOWONLY WFIRST; do
  timeout 60 ./bench_$v --m 128,256 --no-cublas --csv -q --kernels '*128x128x128*,*128x256x64_1x1x1*' -o $L/${v}_r$r.csv > /dev/null 2>&1
  echo "$v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done; done
