#!/bin/bash
# thirteenth session call 12: default build (fafb252), M = 512..4096, s2d from one row (new) against from four (old), cuBLAS bf16 in the same call
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/def; for f in w4a16_bench.xz; do xz -dkf $f; done; chmod +x w4a16_bench
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2; do for v in new old; do
  if [ $v = old ]; then export W4A16_SM90_S2D=4; else unset W4A16_SM90_S2D; fi
  timeout 250 ./w4a16_bench --m 512,1024,2048,4096 --kernels '*sm90_bf16_u4_fgs_*x128x128*,*sm90_bf16_u4_fgs_*x256x64*,*sm90_bf16_u4_fgs_128x64x256*' --csv -q -o $L/large_${v}_r$r.csv > /dev/null 2>&1
  echo "bench $v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done; done
