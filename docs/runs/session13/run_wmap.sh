#!/bin/bash
# thirteenth session call 11: TMA GEMV weights by one 3-D tensor-map copy (and M = 1 activations by an unswizzled map) (1), weights only (2), against bulk copies (0)
R=$PWD
export LD_LIBRARY_PATH=$R/.carry/lib:$LD_LIBRARY_PATH
L=$OUT/logs; mkdir -p $L
fin() { cd $OUT && tar cJf logs.txz logs && rm -rf logs; }
trap fin EXIT
cd $R/.carry/wmap; for f in *.xz; do xz -dkf $f; done; chmod +x bench_*
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for r in 1 2 3; do for v in 0 1 2; do
  timeout 100 ./bench_$v --m 1,2,4,8,16 --kernels '*gemv_bf16_u4_fgs_*_tma' --no-cublas --csv -q -o $L/w_w${v}_r$r.csv > /dev/null 2>&1
  echo "bench $v r$r rc $? $(nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active,temperature.gpu,power.draw --format=csv,noheader)"
done; done
