#!/bin/bash
# fifteenth session call 16: diagnostic: device code compiled for stream-K only (K pair and split-K code removed) against HEAD's, on stream-K problems
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/sk; for f in *.xz; do xz -dkf $f; done; chmod +x bench_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for r in 1 2 3 4; do for v in old new; do
  timeout 120 ./bench_$v --m 32,64,128,256 --nk 10240x8192,57344x8192,4096x14336,28672x4096 --no-cublas --csv -q -o $L/ab_${v}_r$r.csv
  echo "bench $v r$r rc $?"
done; done
