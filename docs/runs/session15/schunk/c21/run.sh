#!/bin/bash
# fifteenth session call 21: diagnostic: chunks in every launch (=2) with and without the conservative wait at a unit's first STAGES k-blocks (no-wait: D may be wrong, timing only), and chunks off (=0)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/nw; for f in *.xz; do xz -dkf $f; done; chmod +x bench_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for r in 1 2 3; do for v in off wait nowait; do
  b=bench_$v; e=2; [ $v = off ] && { b=bench_wait; e=0; }
  W4A16_SM90_SCHUNK=$e timeout 120 ./$b --m 1,16,24,32 --nk 10240x8192,4096x14336,57344x8192,28672x4096 --no-cublas --iterations 20 --csv -q -o $L/ab_${v}_r$r.csv
  echo "bench $v r$r rc $?"
done; done
