#!/bin/bash
# fourteenth session call 18: the stream-K owner's flag polls without __nanosleep (s0) against __nanosleep(32) (s32, HEAD), four rounds
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/sl; for f in *.xz; do xz -dkf $f; done; chmod +x bench_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for r in 1 2 3 4; do for v in s32 s0; do
  timeout 120 ./bench_$v --m 16,32,64,128 --no-cublas --csv -q -o $L/sl_${v}_r$r.csv > /dev/null 2>&1
  timeout 60 ./bench_$v --m 32,64 --nk 3072x3072,2048x2048,3584x3584,3072x8192,5120x5120 --no-cublas --csv -q -o $L/slg_${v}_r$r.csv > /dev/null 2>&1
  echo "$v r$r rc $?"
done; done
