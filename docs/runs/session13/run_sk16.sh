#!/bin/bash
# thirteenth session call 16: stream-K for the 128-k 16-token tiles at M <= 16 (W4A16_SM90_STREAMK_MIN_M=1) against split-K
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/def; xz -dkf w4a16_bench.xz; chmod +x w4a16_bench
for r in 1 2 3; do for v in split sk; do
  if [ $v = sk ]; then export W4A16_SM90_STREAMK_MIN_M=1; else unset W4A16_SM90_STREAMK_MIN_M; fi
  ./w4a16_bench --m 1,4,8,16 --kernels '*sm90_bf16_u4_fgs_128x16x128_1x1x1*,*sm90_bf16_u4_fgs_256x16x128_1x1x1*,*sm90_bf16_u4_fgs_128x16x256_1x1x1*' --no-cublas --csv -q -o $L/${v}_r$r.csv
done; done
