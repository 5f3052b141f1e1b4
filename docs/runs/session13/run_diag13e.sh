#!/bin/bash
# thirteenth session call 7: the scale row by a 2-D tensor-map copy at one row a stage (S2D1) against the bulk copy
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/diag13; for f in fbench_*.xz; do xz -dkf $f; done; chmod +x fbench_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2 3; do
for v in base S2D1; do
  timeout 100 ./fbench_$v --m 1,16,64,128,256,1024 --no-cublas --csv -q -o $L/${v}_r$r.csv > /dev/null 2>&1
  echo "$v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done; done
