#!/bin/bash
# fourteenth session call 5: stream-K owners that do not wait for inner CTAs (diagnostic, D wrong) against the same kernels as built
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/s14; for v in base noinner; do xz -dkf bench_$v.xz; chmod +x bench_$v; done
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2 3; do for v in base noinner; do
  timeout 200 ./bench_$v --m 32,64,128 --no-cublas --csv -q -o $L/ni_${v}_r$r.csv > $L/ni_${v}_r$r.log 2>&1
  echo "$v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader)"
done; done
