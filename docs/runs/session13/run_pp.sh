#!/bin/bash
# thirteenth session call 21: 64-row pingpong tiles (160 tiles on 10240x8192: no inner CTA under stream-K) against the 128-row ones at M = 17..64
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/pp; xz -dkf bench.xz; chmod +x bench
for r in 1 2; do
  timeout 100 ./bench --m 17,32,48,64 --no-cublas --csv -q -o $L/pp_r$r.csv; echo "r$r rc $?"
done
