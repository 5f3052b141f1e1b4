#!/bin/bash
# thirteenth session call 3: M = 128 / 256 as built, weights from L2 (DIAG_L2), no loads after the first stages (DIAG_NOLOAD)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/diag13; for f in *.xz; do xz -dkf $f; done; chmod +x bench_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
export W4A16_SM90_KPAIR=0
for r in 1 2; do
for v in base L2 NOLOAD; do
  timeout 100 ./bench_$v --m 128,256 --no-cublas --csv -q -o $L/${v}_r$r.csv > /dev/null 2>&1
  echo "$v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done; done
