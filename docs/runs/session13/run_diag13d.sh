#!/bin/bash
# thirteenth session call 6: M <= 64 tiles without the scale copy (NOSCALE)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/diag13; for f in ebench_*.xz; do xz -dkf $f; done; chmod +x ebench_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2; do
for v in base NOSCALE; do
  timeout 100 ./ebench_$v --m 1,16,32,64 --no-cublas --csv -q -o $L/${v}_r$r.csv > /dev/null 2>&1
  echo "$v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done; done
